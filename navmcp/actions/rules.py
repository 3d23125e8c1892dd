"""Availability rules shared by actions: who may act, and in which state."""

from __future__ import annotations

from navmcp.content import domain
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


_CREATOR_HERE = """SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
                    WHERE m.studio_id = ? AND m.user_id = ? AND u.deleted_at IS NULL"""


def creator(req: Request) -> str | None:
    """Its creator; an admin too once the creator has left the studio (removed, or the account
    deleted): else a commitment nobody may close would stay open, and on everyone's home, for ever."""
    if req.facts.get("is_author"):
        return None
    if req.role == "admin" and req.tx.one(_CREATOR_HERE, (req.studio["id"], req.item["created_by"])) is None:
        return None
    return "only its creator may do this (a studio admin may too, once its creator has left the studio)"


def is_open(req: Request) -> str | None:
    if req.facts.get("open"):
        return None
    return f"the {req.item['kind']} is closed: {domain.closed_reason(req.item)}"
