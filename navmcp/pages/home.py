"""Pages about you and about navmcp itself: home, whoami, help."""

from __future__ import annotations

import operator
from typing import Any

from navmcp.errors import NotFound
from navmcp.identity import now
from navmcp.pages import PAGE_SIZE, Request
from navmcp.store import MIN_PREFIX, SEARCH_WINDOW

HOME = ("Home", "/")


def resolve_home(req: Request) -> None:
    pass


def your_studios(req: Request) -> list[dict[str, Any]]:
    return req.tx.all(
        """SELECT s.id, s.handle, s.name, s.description, m.role
             FROM memberships m JOIN studios s ON s.id = m.studio_id
            WHERE m.user_id = ? ORDER BY s.handle LIMIT 200""",
        (req.user["id"],),
    )


# One query per studio, each walking that studio's newest open items (index items_open_kind_created)
# and stopping after a page's worth; sorting all open items of all studios would grow with the data.
# Only what the lists show is read (each value read is a Python object made, forty rows a page),
# and the items' time only when several studios' lists are merged by it (`{time}`).
_OPEN = "i.studio_id = ? AND i.kind = ? AND i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > ?)"
# Awaiting your vote: a decision you can vote on (it has options) and have not voted on.
_AWAITING = ("SELECT i.id, i.title, i.deadline{time} FROM items i WHERE " + _OPEN
             + " AND EXISTS (SELECT 1 FROM options o WHERE o.decision_id = i.id)"
               " AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = i.id AND v.user_id = ?)"
               " ORDER BY i.created_at DESC LIMIT ?")
# "Near" critical mass: not yet reached, and you could help reach it. The count is the one kept on
# the item (migration 0007), not a count of participants per row walked.
_NEAR = ("SELECT i.id, i.title, i.critical_mass, i.participant_count{time} FROM items i WHERE " + _OPEN
         + " AND i.participant_count < i.critical_mass"
           " AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.commitment_id = i.id AND p.user_id = ?)"
           " ORDER BY i.created_at DESC LIMIT ?")
_HOME_SQL = {merged: (_AWAITING.format(time=", i.created_at" if merged else ""),
                      _NEAR.format(time=", i.created_at" if merged else "")) for merged in (False, True)}


def view_home(req: Request) -> dict[str, Any]:
    tx, uid, now_ = req.tx, req.user["id"], now()
    studios = your_studios(req)
    merged = len(studios) > 1
    awaiting_sql, near_sql = _HOME_SQL[merged]
    # Rows come as tuples and become the final dicts once; the studio is the same on every row of a
    # query: set here, not read per row.
    awaiting_votes, near_mass = [], []
    for studio in studios:
        handle = studio["handle"]
        for row in tx.tuples(awaiting_sql, (studio["id"], "decision", now_, uid, PAGE_SIZE)):
            awaiting_votes.append({"id": row[0], "title": row[1], "deadline": row[2], "studio": handle})
            if merged:
                awaiting_votes[-1]["created_at"] = row[3]
        for row in tx.tuples(near_sql, (studio["id"], "commitment", now_, uid, PAGE_SIZE)):
            near_mass.append({"id": row[0], "title": row[1], "critical_mass": row[2], "joined": row[3],
                              "studio": handle})
            if merged:
                near_mass[-1]["created_at"] = row[4]
    if merged:
        # Each studio's rows came newest first (times are text that sorts as it reads, in SQLite and
        # in PostgreSQL's "C" collation); one studio's are already the page, merged lists are cut to one.
        newest_first = operator.itemgetter("created_at")
        awaiting_votes = sorted(awaiting_votes, key=newest_first, reverse=True)[:PAGE_SIZE]
        near_mass = sorted(near_mass, key=newest_first, reverse=True)[:PAGE_SIZE]
    return {
        "title": "Home",
        "breadcrumb": [HOME],
        "studios": studios,
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
        "search_bounds": {"min_prefix": MIN_PREFIX, "window": SEARCH_WINDOW},
    }

