"""Your inbox (`/inbox`): what happened that concerns you, unread first, then read, newest first."""

from __future__ import annotations

from typing import Any

from navmcp.feeds import inbox
from navmcp.identity import invitations
from navmcp.pages.request import PAGE_SIZE, Request, paginate


def resolve_inbox(req: Request) -> None:
    req.facts["unread"], req.facts["entries"] = inbox.counts(req.tx, req.user["id"])
    req.facts["invitations"] = invitations.addressed_to(req.tx, req.user["id"])  # waiting for your answer


def view_inbox(req: Request) -> dict[str, Any]:
    unread, total = req.facts["unread"], req.facts["entries"]
    pager = paginate(req, total)
    rows = inbox.entries(req.tx, req.user["id"], unread, pager["offset"], PAGE_SIZE) if total else []
    inbox.results(req, rows)
    return {"title": "Inbox", "breadcrumb": [("Home", "/"), ("Inbox", "/inbox")],
            "entries": rows, "unread": unread, "pager": pager, "invitations": req.facts["invitations"]}
