"""Availability rules shared by actions: who may act, and in which state."""

from __future__ import annotations

from navmcp import domain
from navmcp.pages import Request


def member(req: Request) -> str | None:
    return None if req.role in ("admin", "member") else "you are not a member of this studio"


def admin(req: Request) -> str | None:
    return None if req.role == "admin" else "only the studio's admins may do this"


def author(req: Request) -> str | None:
    return None if req.facts.get("is_author") else "only the author may do this"


def creator_or_admin(req: Request) -> str | None:
    if req.facts.get("is_author") or req.role == "admin":
        return None
    return "only its creator or a studio admin may do this"


def creator(req: Request) -> str | None:
    return None if req.facts.get("is_author") else "only its creator may do this"


def is_open(req: Request) -> str | None:
    if req.facts.get("open"):
        return None
    return f"the {req.item['kind']} is closed: {domain.closed_reason(req.item)}"
