"""@mentions in what people write: `@handle` of a studio member, `@admins` (the studio's admins) and
`@everyone` (every member, when an admin writes it).

A handle counts only when it is a current member's: a mention of anyone else stays plain text and
tells nobody, so writing `@someone` cannot probe who exists. Read as Loomio reads them: not after a
letter, digit or `@` (an e-mail address mentions nobody), case-insensitive, and a trailing '-' is
punctuation ("thanks @sam-" mentions sam).
"""

from __future__ import annotations

import re

from navmcp.feeds.inbox import Members
from navmcp.store import Tx

# '@' first, then what came before it (the lookbehind), so the search skips to each '@' rather
# than trying the lookbehind at every character; a handle ends in a letter or digit.
MENTION = re.compile(r"@(?<![A-Za-z0-9_.@/]@)([A-Za-z0-9](?:[A-Za-z0-9-]{0,39}[A-Za-z0-9])?)")
MOST = 50  # distinct handles read from one text; more are left as text
GROUPS = ("admins", "everyone")


def handles(text: str) -> list[str]:
    """The distinct handles `text` mentions, lowercase, in the order written (at most MOST)."""
    if "@" not in text:
        return []
    # One findall and one lower(), not a loop over match objects: this runs on every comment and note written.
    found = MENTION.findall(text)
    return [h for h in dict.fromkeys(" ".join(found).lower().split(" ")) if len(h) <= 32][:MOST] if found else []


def mentioned(tx: Tx, studio_id: str, role: str | None, text: str) -> Members:
    """The ids of the members of `studio_id` that `text` mentions, written by someone whose role in
    the studio is `role` (`@everyone` counts for an admin only)."""
    names = handles(text)
    if not names:
        return Members()
    people = [n for n in names if n not in GROUPS]
    found = tx.member_ids(studio_id, people) if people else []
    everyone = "everyone" in names and role == "admin"
    if everyone or "admins" in names:  # every member, or the studio's admins
        found += [r["user_id"] for r in tx.all(
            "SELECT m.user_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.studio_id = ?"
            " AND u.deleted_at IS NULL" + ("" if everyone else " AND m.role = 'admin'"), (studio_id,))]
    return Members(sorted(set(found)))


def members_named(tx: Tx, studio_id: str, texts: list[str]) -> list[str]:
    """The handles of members of `studio_id` that `texts` mention (by handle; groups aside), sorted:
    what a page links and lists as mentions. Anyone else named stays plain text."""
    names = sorted({h for text in texts for h in handles(text)} - set(GROUPS))[:MOST]
    if not names:
        return []
    return [r["handle"] for r in tx.all(
        "SELECT u.handle FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.studio_id = ?"
        f" AND u.deleted_at IS NULL AND u.handle IN ({', '.join('?' * len(names))}) ORDER BY u.handle",
        (studio_id, *names))]


def member_handles(tx: Tx, studio_id: str) -> list[str]:
    """The handles a mention in `studio_id` may name: its members', then the groups."""
    rows = tx.all("SELECT u.handle FROM memberships m JOIN users u ON u.id = m.user_id"
                  " WHERE m.studio_id = ? AND u.deleted_at IS NULL ORDER BY u.handle LIMIT 500", (studio_id,))
    return [r["handle"] for r in rows] + list(GROUPS)
