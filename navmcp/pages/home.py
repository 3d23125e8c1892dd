"""Pages about you and about navmcp itself: home, whoami, help."""

from __future__ import annotations

from typing import Any

from navmcp.clock import now
from navmcp.content.search import MIN_PREFIX, SEARCH_WINDOW
from navmcp.errors import NavError, NotFound
from navmcp.feeds import inbox, mail
from navmcp.held import rules as hold_rules
from navmcp.pages.request import PAGE_SIZE, Request, paginate

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


# What awaits you, as two lists with their own pages (`/awaiting`, `/near-mass`): decisions you can
# vote on (they have options) and have not voted on, the soonest deadline first and then the newest;
# commitments you have not joined that have not reached critical mass, the fewest joins to go first
# and then the newest. Home shows the first HOME_ROWS of each and their counts.
HOME_ROWS = 5
HOME_INBOX = 3  # the newest unread inbox entries home shows
# Home counts each list, across your studios, up to this many (then says "more than" it, with the
# link to the list, which counts all): counting stops at the cap, so a page's cost does not grow
# with a backlog (the app shell counts on every page). Below the cap home's number is the list's.
COUNT_CAP = 100
# The kind is written into the SQL, not bound: SQLite's planner compares a bound `kind = ?` with
# the partial index on open commitments (`kind = 'commitment'`, migration 0018), and a statement
# whose plan looked at a bound value is prepared again every time it runs (it was half of home's cost).
# A deleted item is in no list (navmcp.content.deletion); the indexes of open items leave it out too.
_OPEN = ("i.studio_id = ? AND i.kind = '{}' AND i.closed_at IS NULL AND i.deleted_at IS NULL"
         " AND (i.deadline IS NULL OR i.deadline > ?)")
# A decision with no option yet has nothing to vote on: its option count is a column of the item
# (migration 0025), read from the index of open items. Your vote or join is looked for by an outer
# join that finds none (an anti-join): SQLite runs it as a plain index probe, where a `NOT EXISTS`
# subquery is a subroutine run for each item. The user's id is the first argument (the join's),
# then the studio's and the time.
_AWAITING_FROM = "items i LEFT JOIN votes v ON v.decision_id = i.id AND v.user_id = ?"
_AWAITING_WHERE = _OPEN.format("decision") + " AND i.option_count > 0 AND v.decision_id IS NULL"
_NEAR_FROM = "items i LEFT JOIN participants p ON p.commitment_id = i.id AND p.user_id = ?"
_NEAR_WHERE = _OPEN.format("commitment") + " AND i.participant_count < i.critical_mass AND p.commitment_id IS NULL"
# Home reads each studio's first rows down an index (migration 0018): those with a deadline by
# deadline, those without by time; commitments by joins still needed, then time.
_AWAITING_DEADLINE = (f"SELECT i.id, i.title, i.deadline, i.created_at FROM {_AWAITING_FROM} WHERE {_AWAITING_WHERE}"
                      " AND i.deadline IS NOT NULL ORDER BY i.deadline, i.created_at DESC, i.id LIMIT ?")
_AWAITING_OPEN_ENDED = (f"SELECT i.id, i.title, i.deadline, i.created_at FROM {_AWAITING_FROM} WHERE {_AWAITING_WHERE}"
                        " AND i.deadline IS NULL ORDER BY i.created_at DESC, i.id LIMIT ?")
_NEAR = (f"SELECT i.id, i.title, i.critical_mass, i.participant_count, i.created_at, i.deadline"
         f" FROM {_NEAR_FROM} WHERE {_NEAR_WHERE}"
         " ORDER BY i.critical_mass - i.participant_count, i.created_at DESC, i.id LIMIT ?")
_CAPPED_COUNTS = {key: f"SELECT count(*) FROM (SELECT 1 FROM {source} WHERE {where} LIMIT ?) AS capped"
                  for key, source, where in (("awaiting", _AWAITING_FROM, _AWAITING_WHERE),
                                             ("near", _NEAR_FROM, _NEAR_WHERE))}


def _awaiting_order(row: dict[str, Any]) -> tuple:
    # deadline soonest first (none last), then newest: times are text that sorts as it reads
    return (row["deadline"] is None, row["deadline"] or "", _Newest(row["created_at"]), row["id"])


def _near_order(row: dict[str, Any]) -> tuple:
    return (row["critical_mass"] - row["joined"], _Newest(row["created_at"]), row["id"])


def _near_due_order(row: dict[str, Any]) -> tuple:
    # `/near-mass?order=deadline`: as the decisions awaiting you, the soonest deadline first
    return (row["deadline"] is None, row["deadline"] or "", _Newest(row["created_at"]), row["id"])


class _Newest(str):
    """A time that sorts newest first inside an ascending sort key."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)


def view_home(req: Request) -> dict[str, Any]:
    tx, uid, now_ = req.tx, req.user["id"], now()
    studios = your_studios(req)
    unread = inbox.unread_count(tx, uid)
    awaiting_votes, near_mass, counts = [], [], {"awaiting": 0, "near": 0}
    for studio in studios:
        sid, handle = studio["id"], studio["handle"]
        args = (uid, sid, now_)
        for sql in (_AWAITING_DEADLINE, _AWAITING_OPEN_ENDED):
            for row in tx.tuples(sql, (*args, HOME_ROWS)):
                awaiting_votes.append({"id": row[0], "title": row[1], "deadline": row[2], "created_at": row[3],
                                       "studio": handle})
        for row in tx.tuples(_NEAR, (*args, HOME_ROWS)):
            near_mass.append({"id": row[0], "title": row[1], "critical_mass": row[2], "joined": row[3],
                              "created_at": row[4], "deadline": row[5], "studio": handle})
        for key, sql in _CAPPED_COUNTS.items():
            if counts[key] <= COUNT_CAP:  # one count across the studios, stopped once past the cap
                counts[key] += tx.scalar(sql, (*args, COUNT_CAP + 1 - counts[key]))
    capped = {key: n > COUNT_CAP for key, n in counts.items()}
    newest = inbox.newest(tx, uid, HOME_INBOX) if unread else []
    inbox.results(req, newest)
    return {
        "title": "Home",
        "breadcrumb": [HOME],
        "studios": studios,
        "awaiting_votes": sorted(awaiting_votes, key=_awaiting_order)[:HOME_ROWS],
        "near_mass": sorted(near_mass, key=_near_order)[:HOME_ROWS],
        "awaiting_count": min(counts["awaiting"], COUNT_CAP), "near_count": min(counts["near"], COUNT_CAP),
        "awaiting_capped": capped["awaiting"], "near_capped": capped["near"],
        "counts_capped": capped["awaiting"] or capped["near"],  # the app shell's sum of both
        "lists": {"awaiting": "/awaiting", "near": "/near-mass"},
        "unread": min(unread, inbox.COUNT_CAP), "unread_capped": unread > inbox.COUNT_CAP,
        "inbox": newest,
        # held actions you may approve now, per studio (navmcp.held): the app shell counts them too
        "approvals": (approvals := hold_rules.awaiting(tx, uid, now_)),
        "approvals_count": sum(a["count"] for a in approvals),
    }


def resolve_list(req: Request) -> None:
    pass


# A whole list, a page at a time, read as home reads its first rows: each studio's rows down its
# index, only as many as the page asked for needs (its offset plus a page), merged here in home's
# order, so a page costs what it shows and what comes before it, never a sort of the whole backlog.
# The count stops LIST_AHEAD rows past the page's end (then the page says "or more"), as the rows do
# at it: a page's cost stays what it shows and what comes before it at any backlog (a fixed stop of
# 1,000 made /awaiting at a million items 16× its cost at a thousand: issue 41). Each later page counts
# further, and near the list's end the count is exact.
LIST_AHEAD = 5 * PAGE_SIZE
_LIST_ROWS = {
    "awaiting": ((f"SELECT i.id, i.title, i.deadline, i.created_at FROM {_AWAITING_FROM} WHERE {_AWAITING_WHERE}"
                  " AND i.deadline IS NOT NULL ORDER BY i.deadline, i.created_at DESC, i.id LIMIT ?",
                  f"SELECT i.id, i.title, i.deadline, i.created_at FROM {_AWAITING_FROM} WHERE {_AWAITING_WHERE}"
                  " AND i.deadline IS NULL ORDER BY i.created_at DESC, i.id LIMIT ?"), _awaiting_order),
    "near": ((f"SELECT i.id, i.title, i.critical_mass, i.participant_count AS joined, i.created_at, i.deadline FROM {_NEAR_FROM}"
              f" WHERE {_NEAR_WHERE} ORDER BY i.critical_mass - i.participant_count, i.created_at DESC, i.id LIMIT ?",),
             _near_order),
    # The same commitments, the soonest deadline first (none last), then the newest: what is due today.
    "near_due": ((f"SELECT i.id, i.title, i.critical_mass, i.participant_count AS joined, i.created_at, i.deadline"
                  f" FROM {_NEAR_FROM} WHERE {_NEAR_WHERE} AND i.deadline IS NOT NULL"
                  " ORDER BY i.deadline, i.created_at DESC, i.id LIMIT ?",
                  f"SELECT i.id, i.title, i.critical_mass, i.participant_count AS joined, i.created_at, i.deadline"
                  f" FROM {_NEAR_FROM} WHERE {_NEAR_WHERE} AND i.deadline IS NULL"
                  " ORDER BY i.created_at DESC, i.id LIMIT ?"), _near_due_order),
}
NEAR_ORDERS = {None: "near", "deadline": "near_due"}  # /near-mass?order=…


def _whole_list(req: Request, which: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One of home's lists in full, across your studios, in home's order, a page at a time."""
    queries, order = _LIST_ROWS[which]
    tx, uid, now_ = req.tx, req.user["id"], now()
    studios = tx.all("SELECT s.id, s.handle FROM memberships m JOIN studios s ON s.id = m.studio_id"
                     " WHERE m.user_id = ? ORDER BY s.handle", (uid,))
    reach = req.page_number("page") * PAGE_SIZE
    cap = reach + LIST_AHEAD
    total = 0
    for studio in studios:
        count = _CAPPED_COUNTS["near" if which == "near_due" else which]
        total += tx.scalar(count, (uid, studio["id"], now_, cap + 1 - total))
        if total > cap:
            break
    pager = paginate(req, min(total, cap), at_least=total > cap)
    rows: list[dict[str, Any]] = []
    for studio in studios:
        for sql in queries:
            rows += [{**row, "studio": studio["handle"]} for row in tx.all(sql, (uid, studio["id"], now_, reach))]
    rows.sort(key=order)
    return rows[pager["offset"]:reach], pager


def view_awaiting(req: Request) -> dict[str, Any]:
    rows, pager = _whole_list(req, "awaiting")
    return {"title": "Awaiting your vote", "breadcrumb": [HOME, ("Awaiting your vote", "/awaiting")],
            "which": "awaiting", "rows": rows, "pager": pager}


def view_near_mass(req: Request) -> dict[str, Any]:
    order = req.query.get("order")
    if order not in NEAR_ORDERS:
        raise NavError(f"order={order!r} in /near-mass: it takes order=deadline (the soonest deadline first), "
                       "or none (the fewest joins still needed first)")
    rows, pager = _whole_list(req, NEAR_ORDERS[order])
    return {"title": "Commitments that need you", "breadcrumb": [HOME, ("Commitments that need you", "/near-mass")],
            "which": "near", "by_deadline": order == "deadline", "rows": rows, "pager": pager}


def resolve_whoami(req: Request) -> None:
    req.facts["mail"] = mail.settings(req.tx, req.user["id"])  # your digest's address, yours alone


def view_whoami(req: Request) -> dict[str, Any]:
    return {
        "title": "Who am I",
        "breadcrumb": [HOME, ("Who am I", "/whoami")],
        "studios": your_studios(req),
        "client": req.client,
        "mail": req.facts["mail"],
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

