"""Studio-wide pages: the feed, members, cycles, search, tags and the audit log."""

from __future__ import annotations

import re
from typing import Any

from navmcp import kinds
from navmcp.clock import now
from navmcp.content import deletion
from navmcp.content.domain import CYCLES, KIND_LETTER, cycle_window
from navmcp.errors import NavError, NotFound
from navmcp.identity import invitations
from navmcp.pages.home import HOME
from navmcp.pages.request import PAGE_SIZE, Request, paginate

# What an item's line in a list shows (its title, URL, kind, status and last update): every value
# read per row is a Python object made, and a feed reads twenty rows. The deadline is read for the
# status: a passed deadline closes an item without a write (domain.is_open).
# A list row's columns: what it says of an item (a commitment's joins; a closed decision's result
# is asked of its kind, `with_urls`).
ITEM_COLUMNS = ("i.id, i.kind, i.title, i.updated_at, i.pinned, i.closed_at, i.deadline, i.participant_count,"
                " i.critical_mass")


def resolve_studio(req: Request) -> None:
    """The studio and your role in it. Not a member reads exactly like no such studio. To act,
    your role is held until the action ends (a demotion or removal waits, or is waited for)."""
    if req.acting:
        req.tx.hold_membership(req.args["studio"])
    resolve_members(req)


def resolve_members(req: Request) -> None:
    """`resolve_studio` for the members page, whose actions lock the studio and check your admin
    role again under that lock (actions.studios._lock_members): holding your membership first
    would take the two locks in the other order than a second admin's change, a deadlock."""
    handle = req.args["studio"]
    row = req.tx.one(
        """SELECT s.*, m.role FROM studios s
             JOIN memberships m ON m.studio_id = s.id AND m.user_id = ?
            WHERE s.handle = ?""",
        (req.user["id"], handle),
    )
    if row is None:
        raise no_studio(req)
    req.role = row.pop("role")
    req.studio = row
    if req.role == "admin":  # whether there is an invitation to revoke
        req.facts["open_invitations"] = invitations.open_count(req.tx, row["id"])


def no_studio(req: Request) -> NotFound:
    """No studio of yours by that handle (or none at all: the two read the same). The answer names
    your studios, the likeliest first, so a typo costs one call, not a detour through '/'."""
    import difflib

    handle = req.args.get("studio", "")
    mine = [r["handle"] for r in req.tx.all(
        "SELECT s.handle FROM memberships m JOIN studios s ON s.id = m.studio_id WHERE m.user_id = ?"
        " ORDER BY s.handle LIMIT 200", (req.user["id"],))]
    if not mine:
        return NotFound(f"no page at {req.path}: you belong to no studio yet; '/' lets you create one")
    close = difflib.get_close_matches(handle, mine, n=3, cutoff=0.6)
    rest = [h for h in mine if h not in close][:20 - len(close)]
    listed = ", ".join(f"/studios/{h}" for h in close + rest) + (" ..." if len(mine) > 20 else "")
    hint = f" Did you mean /studios/{close[0]}?" if close else ""
    return NotFound(f"no page at {req.path}: no studio of yours has that handle.{hint} Your studios: {listed}")


def crumbs(req: Request, *more: tuple[str, str]) -> list[tuple[str, str]]:
    studio = req.studio
    return [HOME, (studio["name"], f"/studios/{studio['handle']}"), *more]


def with_urls(req: Request, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's URL, and for a list's rows (ITEM_COLUMNS) whether the item is closed: closed by
    hand or by its limit, or past its deadline, as its own page says."""
    base = f"/studios/{req.studio['handle']}"
    at = now() if rows and "closed_at" in rows[0] else None
    for row in rows:
        row["url"] = f"{base}/{KIND_LETTER[row['kind']]}/{row['id']}"
        if at:  # domain.deadline_passed, inlined: it ran for every row of every list
            deadline = row["deadline"]
            row["closed"] = row["closed_at"] is not None or (deadline is not None and deadline <= at)
    if at:
        kinds.list_results(req, rows)
    return rows


# A position as `position` writes one: a time as the store keeps it (or the audit log's id), and a
# seq below 2**63. ASCII only: str.isdigit() takes "²" and "٣", and an unbounded number overflows
# both stores' integers; a NUL is refused by PostgreSQL in any text.
_POSITION = re.compile(r"([0-9T:.Z-]{1,40})~([0-9]{1,18})", re.ASCII)


def after(req: Request) -> tuple[str, int] | None:
    """The keyset position `<time>~<seq>` a Next link carried, or None (page 1, or a bare ?page=N,
    which still works by offset). The one reading of `after=` for every paged list; one that no
    Next link wrote is refused (400), as a bad URL, never passed to the store."""
    given = req.query.get("after")
    if not given:
        return None
    found = _POSITION.fullmatch(given)
    if found is None:
        raise NavError(f"after= in {req.path} is not a position a Next link gave: follow the page's Next link, "
                       f"or ask for a page by number ({req.path}?page=2)")
    if req.page_number() == 1:
        return None
    return found.group(1), int(found.group(2))


def position(rows: list[dict[str, Any]], column: str) -> str | None:
    return f"{rows[-1][column]}~{rows[-1]['seq']}" if rows else None


def view_studio(req: Request) -> dict[str, Any]:
    tx, sid = req.tx, req.studio["id"]
    # Item counts are kept by triggers (migration 0004): counting a million items on every visit
    # would dominate the page. The member count comes with them, as kind 'members'.
    counts = {r["kind"]: r["n"] for r in tx.all(
        "SELECT kind, n FROM studio_item_counts WHERE studio_id = ?"
        " UNION ALL SELECT 'members' AS kind, count(*) AS n FROM memberships WHERE studio_id = ?", (sid, sid))}
    members = counts.pop("members")
    total = sum(counts.values())
    pinned = tx.all(f"SELECT {ITEM_COLUMNS} FROM items i WHERE studio_id = ? AND pinned = 1 AND deleted_at IS NULL"
                    " ORDER BY updated_at DESC, seq DESC LIMIT ?", (sid, PAGE_SIZE + 1))
    # Items listed under Pinned are not listed again under Recent, unless more are pinned than one
    # page shows (then Recent is the one list that reaches them all).
    unpinned = ""
    if len(pinned) <= PAGE_SIZE:
        unpinned, total = " AND pinned = 0", total - len(pinned)
    pinned = pinned[:PAGE_SIZE]
    if start := after(req):
        recent = tx.all(
            f"SELECT {ITEM_COLUMNS}, i.seq FROM items i WHERE studio_id = ?{unpinned} AND deleted_at IS NULL"
            " AND (updated_at, seq) < (?, ?)"
            " ORDER BY updated_at DESC, seq DESC LIMIT ?", (sid, *start, PAGE_SIZE))
    else:
        recent = tx.all(
            f"SELECT {ITEM_COLUMNS}, i.seq FROM items i WHERE studio_id = ?{unpinned} AND deleted_at IS NULL"
            " ORDER BY updated_at DESC, seq DESC LIMIT ? OFFSET ?", (sid, PAGE_SIZE, (req.page_number() - 1) * PAGE_SIZE))
    pager = paginate(req, total, position(recent, "updated_at"))
    return {
        "title": req.studio["name"],
        "breadcrumb": crumbs(req),
        "studio": req.studio,
        "role": req.role,
        "counts": {"note": counts.get("note", 0), "decision": counts.get("decision", 0),
                   "commitment": counts.get("commitment", 0), "members": members},
        "pinned": with_urls(req, pinned),
        "recent": with_urls(req, recent),
        "pager": pager,
    }


def view_members(req: Request) -> dict[str, Any]:
    total = req.tx.scalar("SELECT count(*) FROM memberships WHERE studio_id = ?", (req.studio["id"],))
    pager = paginate(req, total)
    members = req.tx.all(
        """SELECT u.handle, u.name, u.deleted_at, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.studio_id = ? ORDER BY m.role, u.handle LIMIT ? OFFSET ?""",
        (req.studio["id"], PAGE_SIZE, pager["offset"]),
    )
    return {"title": f"Members of {req.studio['name']}",
            "breadcrumb": crumbs(req, ("Members", f"/studios/{req.studio['handle']}/members")),
            "members": members, "pager": pager,
            "invitations": invitations.listing(req.tx, req.studio["id"]) if req.role == "admin" else [],
            # the studio's archive, for its admins in their browser (navmcp.web.exports)
            "export": f"/studios/{req.studio['handle']}/export" if req.role == "admin" and req.browser else None}


def resolve_cycle(req: Request) -> None:
    resolve_studio(req)
    if req.args["cycle"] not in CYCLES:
        raise NotFound(f"no cycle {req.args['cycle']!r}: cycles are {', '.join(CYCLES)}")


# Closed in a cycle's window: by hand or by a limit (closed_at), or by a deadline that passed in it
# with the item still unclosed (no write marks that moment). Each half walks its own index. Each half
# and their union order by (time, id), a unique key: many items close in the same second, and a
# half cut at its limit by time alone could keep different ones of them for different pages.
CLOSED_BY_HAND = "FROM items i WHERE i.studio_id = ? AND i.closed_at >= ? AND i.closed_at < ? AND i.deleted_at IS NULL"
CLOSED_BY_DEADLINE = ("FROM items i WHERE i.studio_id = ? AND i.closed_at IS NULL AND i.deleted_at IS NULL"
                      " AND i.deadline >= ? AND i.deadline < ?")
# Counted from the index of open items with a deadline; those closed by hand come from the
# per-day counts of `cycle_activity` (migration 0200), as does the number created.
CLOSED_BY_DEADLINE_COUNT = f"SELECT count(*) {CLOSED_BY_DEADLINE}"
CLOSED_LIST = f"""
    SELECT * FROM (SELECT {ITEM_COLUMNS}, i.closed_at AS ended {CLOSED_BY_HAND} ORDER BY i.closed_at DESC, i.id LIMIT ?) AS h
    UNION ALL
    SELECT * FROM (SELECT {ITEM_COLUMNS}, i.deadline AS ended {CLOSED_BY_DEADLINE} ORDER BY i.deadline DESC, i.id LIMIT ?) AS d
    ORDER BY ended DESC, id LIMIT ? OFFSET ?"""


def view_cycle(req: Request) -> dict[str, Any]:
    """The cycle's items created and closed, each list with its own pages (`page`, `closed`): the
    first page shows the first of both and the counts; a later page of one list shows that list
    alone, so no row is listed twice however the pages are walked."""
    tx, sid, cycle = req.tx, req.studio["id"], req.args["cycle"]
    start, end = cycle_window(cycle)
    window = (sid, start, end)
    show_created = req.page_number("closed") == 1 or req.page_number() > 1
    show_closed = req.page_number() == 1 or req.page_number("closed") > 1
    # Counts per UTC day (a cycle is whole days): a few rows however busy the month was; less what
    # the studio's deleted items added to them (navmcp.content.deletion).
    activity = deletion.without_deleted(tx, tx.cycle_activity(*window), *window)
    total = activity["created"]
    created = []
    pos = after(req)
    if show_created:
        created = tx.all(
            f"""SELECT {ITEM_COLUMNS}, i.created_at, i.seq, u.handle AS author FROM items i JOIN users u ON u.id = i.created_by
                 WHERE i.studio_id = ? AND i.created_at >= ? AND i.created_at < ? AND i.deleted_at IS NULL
                 {"AND (i.created_at, i.seq) < (?, ?)" if pos else ""}
                 ORDER BY i.created_at DESC, i.seq DESC LIMIT ? OFFSET ?""",
            (*window, *(pos or ()), PAGE_SIZE, 0 if pos else paginate(req, total)["offset"]),
        )
    pager = paginate(req, total, position(created, "created_at"), drop=("after", "closed"))
    passed = (sid, start, min(end, now()))  # a deadline still to come closes nothing yet
    closed_count = activity["closed"] + tx.scalar(CLOSED_BY_DEADLINE_COUNT, passed)
    closed_pager = paginate(req, closed_count, drop=("after", "page"), key="closed")
    closed = []
    if show_closed:
        # Each half gives the rows up to the end of the page asked; the union is cut to the page.
        reach = closed_pager["offset"] + PAGE_SIZE
        closed = tx.all(CLOSED_LIST, (*window, reach, *passed, reach, PAGE_SIZE, closed_pager["offset"]))
    first = req.page_number() == 1 and req.page_number("closed") == 1
    base = f"/studios/{req.studio['handle']}"
    return {"title": f"{req.studio['name']}: {cycle.replace('-', ' ')}",
            "breadcrumb": crumbs(req, (cycle, f"{base}/cycles/{cycle}")),
            "cycle": cycle, "start": start, "end": end, "cycles": CYCLES, "base": base,
            "created": with_urls(req, created), "closed": with_urls(req, closed), "closed_count": closed_count,
            "activity": activity, "pager": pager, "closed_pager": closed_pager, "first": first,
            "show_created": show_created, "show_closed": show_closed}


def view_tag(req: Request) -> dict[str, Any]:
    tag = req.args["tag"]
    args = (req.studio["id"], tag)
    # The count is kept per studio and tag by triggers (migration 0202): one row at any size. The
    # tag rows carry their item's studio, time and seq (migration 0008): the page is a walk of one
    # index, and an offset (?page=N without its `after`) is skipped in it before any item is read.
    total = req.tx.scalar("SELECT coalesce((SELECT n FROM tag_counts WHERE studio_id = ? AND tag = ?), 0)", args)
    start = after(req)
    items = req.tx.all(
        f"""SELECT {ITEM_COLUMNS}, i.seq FROM (
                SELECT item_id, updated_at, seq FROM item_tags
                 WHERE studio_id = ? AND tag = ? {"AND (updated_at, seq) < (?, ?)" if start else ""}
                 ORDER BY updated_at DESC, seq DESC LIMIT ? OFFSET ?) t
              JOIN items i ON i.id = t.item_id ORDER BY t.updated_at DESC, t.seq DESC""",
        (*args, *(start or ()), PAGE_SIZE, 0 if start else paginate(req, total)["offset"]),
    )
    pager = paginate(req, total, position(items, "updated_at"))
    return {"title": f"Tagged {tag}",
            "breadcrumb": crumbs(req, (f"#{tag}", f"/studios/{req.studio['handle']}/tags/{tag}")),
            "tag": tag, "items": with_urls(req, items), "pager": pager}


def resolve_audit(req: Request) -> None:
    resolve_studio(req)
    if req.role != "admin":
        # Members know the studio exists; say plainly why they can't read its audit log.
        raise NotFound(f"no page at {req.path} for you: the audit log is for the studio's admins")


def view_audit(req: Request) -> dict[str, Any]:
    total = req.tx.scalar("SELECT count(*) FROM audit WHERE studio_id = ?", (req.studio["id"],))
    start = after(req)  # the audit log is ordered by id alone: the position is `id~id`
    entries = req.tx.all(
        f"""SELECT a.*, a.id AS seq, coalesce(u.handle, a.user_id) AS handle FROM audit a
              LEFT JOIN users u ON u.id = a.user_id
            WHERE a.studio_id = ? {"AND a.id < ?" if start else ""} ORDER BY a.id DESC LIMIT ? OFFSET ?""",
        (req.studio["id"], *((start[1],) if start else ()), PAGE_SIZE, 0 if start else paginate(req, total)["offset"]),
    )
    for e in entries:  # PostgreSQL's tie of a line to the change it records (audit_tied): the store's, not the page's
        e.pop("change_seq", None)
    pager = paginate(req, total, position(entries, "id"))
    return {"title": f"Audit log of {req.studio['name']}",
            "breadcrumb": crumbs(req, ("Audit", f"/studios/{req.studio['handle']}/audit")),
            "entries": entries, "pager": pager}
