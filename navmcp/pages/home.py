"""Pages about you and about navmcp itself: home, whoami, help."""

from __future__ import annotations

from typing import Any

from navmcp.errors import NotFound
from navmcp.pages import PAGE_SIZE, Request
from navmcp.identity import now

HOME = ("Home", "/")


def resolve_home(req: Request) -> None:
    pass


def your_studios(req: Request) -> list[dict[str, Any]]:
    return req.tx.all(
        """SELECT s.handle, s.name, s.description, m.role
             FROM memberships m JOIN studios s ON s.id = m.studio_id
            WHERE m.user_id = ? ORDER BY s.handle LIMIT 200""",
        (req.user["id"],),
    )


def view_home(req: Request) -> dict[str, Any]:
    tx, uid, now_ = req.tx, req.user["id"], now()
    open_clause = "i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > ?)"
    awaiting_votes = tx.all(
        f"""SELECT i.id, i.title, i.kind, i.deadline, s.handle AS studio
              FROM items i JOIN memberships m ON m.studio_id = i.studio_id AND m.user_id = ?
              JOIN studios s ON s.id = i.studio_id
             WHERE i.kind = 'decision' AND {open_clause}
               AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = i.id AND v.user_id = ?)
             ORDER BY i.created_at DESC LIMIT ?""",
        (uid, now_, uid, PAGE_SIZE),
    )
    near_mass = tx.all(
        f"""SELECT i.id, i.title, i.kind, i.critical_mass, s.handle AS studio,
                   (SELECT count(*) FROM participants p WHERE p.commitment_id = i.id) AS joined,
                   EXISTS (SELECT 1 FROM participants p WHERE p.commitment_id = i.id AND p.user_id = ?) AS you_joined
              FROM items i JOIN memberships m ON m.studio_id = i.studio_id AND m.user_id = ?
              JOIN studios s ON s.id = i.studio_id
             WHERE i.kind = 'commitment' AND {open_clause}
             ORDER BY i.created_at DESC LIMIT 200""",
        (uid, uid, now_),
    )
    # "Near" critical mass: not yet reached, and you could help reach it.
    near_mass = [c for c in near_mass if c["joined"] < c["critical_mass"] and not c["you_joined"]][:PAGE_SIZE]
    return {
        "title": "Home",
        "breadcrumb": [HOME],
        "studios": your_studios(req),
        "awaiting_votes": awaiting_votes,
        "near_mass": near_mass,
    }


def resolve_whoami(req: Request) -> None:
    pass


def view_whoami(req: Request) -> dict[str, Any]:
    return {
        "title": "Who am I",
        "breadcrumb": [HOME, ("Who am I", "/whoami")],
        "studios": your_studios(req),
        "client": req.client,
    }


HELP_TOPICS = {
    "navigation": "How navigation works",
    "urls": "The URL map",
    "decisions": "Decisions and voting",
    "commitments": "Commitments and critical mass",
    "search": "Search, tags and cycles",
}


def resolve_help(req: Request) -> None:
    topic = req.args.get("topic")
    if topic is not None and topic not in HELP_TOPICS:
        raise NotFound(f"no help topic {topic!r}: topics are {', '.join(HELP_TOPICS)}")


def view_help(req: Request) -> dict[str, Any]:
    topic = req.args.get("topic")
    crumbs = [HOME, ("Help", "/help")]
    if topic:
        crumbs.append((HELP_TOPICS[topic], f"/help/{topic}"))
    return {
        "title": HELP_TOPICS[topic] if topic else "Help",
        "breadcrumb": crumbs,
        "topic": topic,
        "topics": HELP_TOPICS,
    }

