"""Helpers shared by the page, action and walkthrough tests (plain functions, no fixtures)."""

from __future__ import annotations

import re
from typing import Any

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def outside_fences(markdown: str) -> str:
    """The markdown with every fenced code block removed (CommonMark rules for fence closing)."""
    kept, fence = [], None
    for line in markdown.split("\n"):  # CommonMark line ends only (not \u2028, \x85, ...)
        if fence is None:
            m = _FENCE_OPEN.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                continue
            kept.append(line)
        else:
            stripped = line.strip()
            if (len(line) - len(line.lstrip(" ")) <= 3 and stripped and set(stripped) == {fence[0]}
                    and len(stripped) >= len(fence)):
                fence = None
    assert fence is None, "a fence was left open: the rest of the page would be swallowed"
    return "\n".join(kept)


def listed_actions(markdown: str) -> list[str]:
    """Action names under `## Available actions`, read as a markdown reader would (fences skipped)."""
    text = outside_fences(markdown)
    headings = [m.start() for m in re.finditer(r"^## Available actions\s*$", text, re.M)]
    assert len(headings) == 1, f"expected exactly one actions heading, found {len(headings)}"
    section = text[headings[0]:]
    nxt = re.search(r"^#{1,2} ", section[3:], re.M)
    if nxt:
        section = section[: nxt.start() + 3]
    return re.findall(r"^- `([a-z_]+)`", section, re.M)


def header_lines(markdown: str) -> tuple[str, str]:
    lines = markdown.splitlines()
    return lines[0], next(line for line in lines[1:] if line.startswith("URL:"))


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


def role_listed(markdown: str, handle: str) -> str | None:
    """The role under which a members page lists @handle ("admin" or "member"), or None."""
    role = None
    for line in markdown.splitlines():
        if line in ("Admins:", "Members:"):
            role = line[:-2].lower()
        elif line.startswith(f"| @{handle} |"):
            return role
    return None


_INVITED = re.compile(r"^Invited @([a-z0-9-]+) ")


def add_member(ws, admin, members_url: str, params: dict[str, Any], **options: Any):
    """`add_member` on `members_url` as `admin`, and, where it invited a newcomer (issue 43: nobody is
    added without agreeing), that person accepting the invitation in their browser: for tests that
    need someone in a studio. A role change of a member is the action alone. Returns its Result."""
    from navmcp.identity import Principal

    result = ws.execute(admin, members_url, "add_member", params, **options)
    invited = _INVITED.match(result.message)
    if invited:
        admin_id = admin.user_id if isinstance(admin, Principal) else admin["id"]
        with ws.store.read(user_id=admin_id) as tx:  # the admin sees their studio's invitations
            made = tx.one("SELECT i.id, i.invitee_id FROM invitations i JOIN studios s ON s.id = i.studio_id"
                          " WHERE s.handle = ? AND i.invitee_handle = ? AND i.uses = 0 AND i.declined_at IS NULL"
                          " AND i.revoked_at IS NULL", (members_url.split("/")[2], invited.group(1)))
        ws.execute(Principal(made["invitee_id"]), "/inbox", "accept_invitation", {"invitation": made["id"]},
                   browser=True)
    return result


def accepts(ws, handle: str) -> None:
    """`handle` accepts every invitation waiting for them, as in their browser (an agent cannot):
    after `add_member` over a surface the test does not accept on (HTTP, MCP)."""
    from navmcp.identity import invitations, user_by_handle

    with ws.store.read() as tx:
        user = user_by_handle(tx, handle)
    with ws.store.read(user_id=user["id"]) as tx:
        waiting = invitations.addressed_to(tx, user["id"])
    assert waiting, f"no invitation waits for @{handle}"
    for made in waiting:
        ws.execute(user, "/inbox", "accept_invitation", {"invitation": made["id"]}, browser=True)


def accepts_at(home, handle: str) -> None:
    """`accepts`, on the SQLite workspace at `home` (a server process's), in process."""
    from navmcp.app import App
    from navmcp.config import Config

    app = App(Config(home=home, database_url=None, token=None))
    try:
        accepts(app.workspace, handle)
    finally:
        app.store.close()
