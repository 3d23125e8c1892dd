"""Workspace facts shared by pages and actions: statuses, tallies, links, tags.

Statuses are derived from rows at the moment of asking (a deadline passes without a write), so
the page and the action rule judge the same thing the same way.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from navmcp.clock import now, stamp
from navmcp.content.text import look_alike_key
from navmcp.errors import ActionFailed
from navmcp.identity import new_id
from navmcp.render import quoted, utc
from navmcp.store import Row, Tx

KIND_LETTER = {"note": "n", "decision": "d", "commitment": "c"}
LETTER_KIND = {v: k for k, v in KIND_LETTER.items()}
_ITEM_URL = re.compile(r"/studios/([a-z0-9][a-z0-9-]{0,31})/([ndc])/([A-Za-z0-9_-]{1,64})")


def item_url(studio_handle: str, item: Row) -> str:
    return f"/studios/{studio_handle}/{KIND_LETTER[item['kind']]}/{item['id']}"


def deadline_passed(item: Row, at: str | None = None) -> bool:
    return bool(item.get("deadline")) and item["deadline"] <= (at or now())


def is_open(item: Row) -> bool:
    """`item`: a whole items row; a commitment's carries its participant count (kept by triggers)."""
    if item["closed_at"] or deadline_passed(item):
        return False
    if item["kind"] == "commitment" and item["participant_limit"] is not None:
        return item["participant_count"] < item["participant_limit"]
    return True


def closed_reason(item: Row) -> str:
    if item["closed_at"]:
        return f"it closed at {utc(item['closed_at'])}"
    if deadline_passed(item):
        return f"its deadline passed at {utc(item['deadline'])}"
    return "it is full"


def tally(tx: Tx, decision_id: str, user_id: str = "") -> list[Row]:
    """Options with accept and prefer counts, best first (most accepted, then most preferred);
    `my_accept`/`my_prefer`: `user_id`'s vote on each (None where they have none). A prefer counts
    only with an accept (a ballot can no longer pair a prefer with a reject; older rows may)."""
    return tx.all(
        """SELECT o.id, o.title, o.created_at,
                  coalesce(sum(v.accept), 0) AS accepts, coalesce(sum(v.accept * v.prefer), 0) AS prefers,
                  max(CASE WHEN v.user_id = ? THEN v.accept END) AS my_accept,
                  max(CASE WHEN v.user_id = ? THEN v.prefer END) AS my_prefer
             FROM options o LEFT JOIN votes v ON v.option_id = o.id
            WHERE o.decision_id = ?
            GROUP BY o.id, o.title, o.created_at
            ORDER BY accepts DESC, prefers DESC, o.created_at, o.id""",
        (user_id, user_id, decision_id),
    )


OPTIONS_SQL = """SELECT o.id, o.title, o.created_at,
                        EXISTS (SELECT 1 FROM votes v WHERE v.option_id = o.id AND v.user_id = ?) AS mine
                   FROM options o WHERE o.decision_id = ? ORDER BY o.created_at, o.id"""


def options(tx: Tx, decision_id: str, user_id: str) -> list[Row]:
    """The options without their tallies (what an action's rules and handler read), oldest first;
    `mine`: whether `user_id` has a vote on it."""
    return tx.all(OPTIONS_SQL, (user_id, decision_id))


def winners(options: list[Row]) -> list[Row]:
    """The result of a closed decision: the top option(s); a tie names all of them."""
    if not options or options[0]["accepts"] == 0:
        return []
    top = (options[0]["accepts"], options[0]["prefers"])
    return [o for o in options if (o["accepts"], o["prefers"]) == top]


def set_tags(tx: Tx, item_id: str, tags: list[str]) -> None:
    for tag in sorted(set(tags)):
        tx.execute("INSERT INTO item_tags (item_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING", (item_id, tag))


def link_mentions(tx: Tx, studio: Row, item_id: str, text: str) -> None:
    """Link an item to every item of the same studio whose URL its text mentions.

    Mentions of other studios are ignored: a link must not reveal what another studio holds.
    """
    for handle, letter, target in set(_ITEM_URL.findall(text)):
        if handle != studio["handle"] or target == item_id:
            continue
        if tx.one("SELECT 1 FROM items WHERE id = ? AND studio_id = ? AND kind = ?",
                  (target, studio["id"], LETTER_KIND[letter])):
            tx.execute("INSERT INTO links (from_item, to_item) VALUES (?, ?) ON CONFLICT DO NOTHING",
                       (item_id, target))


def insert_item(tx: Tx, studio: Row, user: Row, kind: str, title: str, body: str, tags: list[str],
                **extra) -> Row:
    stamp = now()
    row = {"id": new_id(), "studio_id": studio["id"], "kind": kind, "title": title, "body": body,
           "created_by": user["id"], "created_at": stamp, "updated_at": stamp,
           "deadline": extra.get("deadline"), "critical_mass": extra.get("critical_mass"),
           "participant_limit": extra.get("participant_limit"), "anonymous": int(bool(extra.get("anonymous")))}
    # navmcp.kinds: written when given (an acceptance decision without a quorum has none of them)
    row.update({k: extra[k] for k in ("decision_kind", "quorum", "kind_settings") if extra.get(k) is not None})
    cols = ", ".join(row)
    tx.execute(f"INSERT INTO items ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    set_tags(tx, row["id"], tags)
    link_mentions(tx, studio, row["id"], body)
    return row


def update_item(tx: Tx, item_id: str, **columns: object) -> None:
    """Write `columns` of one item. The hosted store skips a change the acting user may not make
    (row-level security and the items trigger, migration 20261125000022) rather than refusing it:
    an unchanged row is a refusal here, so no reply or audit row claims what did not happen."""
    sets = ", ".join(f"{name} = ?" for name in columns)
    if not tx.execute(f"UPDATE items SET {sets} WHERE id = ?", (*columns.values(), item_id)):
        raise ActionFailed("the database refused the change (your role here may have just changed): reload the page")


def insert_option(tx: Tx, user: Row, decision_id: str, title: str) -> Row:
    # Compared as they look (text.look_alike_key), not byte for byte: a decision has 20 options at most.
    key = look_alike_key(title)
    for (existing,) in tx.tuples("SELECT title FROM options WHERE decision_id = ?", (decision_id,)):
        if look_alike_key(existing) == key:
            raise ActionFailed(f"an option titled {quoted(existing)} already exists"
                               + ("" if existing == title else f", and {quoted(title)} looks the same"))
    row = {"id": new_id(), "decision_id": decision_id, "title": title, "created_by": user["id"], "created_at": now()}
    tx.execute("INSERT INTO options (id, decision_id, title, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
               tuple(row.values()))
    return row


def touch(tx: Tx, item_id: str) -> None:
    tx.execute("UPDATE items SET updated_at = ? WHERE id = ?", (now(), item_id))


# --- cycles -----------------------------------------------------------------------------------

CYCLES = ("today", "yesterday", "this-week", "last-week", "this-month")


def cycle_window(cycle: str, at: datetime | None = None) -> tuple[str, str]:
    """[start, end) of a named cycle in UTC, as store timestamps."""
    at = at or datetime.now(UTC)
    day = at.replace(hour=0, minute=0, second=0, microsecond=0)
    week = day - timedelta(days=day.weekday())
    if cycle == "today":
        start, end = day, day + timedelta(days=1)
    elif cycle == "yesterday":
        start, end = day - timedelta(days=1), day
    elif cycle == "this-week":
        start, end = week, week + timedelta(days=7)
    elif cycle == "last-week":
        start, end = week - timedelta(days=7), week
    elif cycle == "this-month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    else:
        raise ValueError(cycle)
    return stamp(start), stamp(end)
