"""Search pages: within one studio (`/studios/{h}/search`) and across all of yours (`/search`).

Both list items, not hits (navmcp.content.search): one row per item with where it was found and the best
snippet of what matched, and how many of its options and comments match besides.
"""

from __future__ import annotations

from typing import Any

from navmcp import kinds
from navmcp.clock import now
from navmcp.content import search
from navmcp.content.domain import KIND_LETTER
from navmcp.pages.home import HOME, your_studios
from navmcp.pages.request import PAGE_SIZE, Request, paginate
from navmcp.pages.studio import crumbs


def view_studio_search(req: Request) -> dict[str, Any]:
    base = f"/studios/{req.studio['handle']}"
    data = _found(req, {req.studio["id"]: req.studio["handle"]})
    q = data["q"]
    return {"title": f"Search {req.studio['name']}" + (f": {q}" if q else ""),
            "breadcrumb": crumbs(req, ("Search", f"{base}/search")), "base": base, "everywhere": False, **data}


def view_workspace_search(req: Request) -> dict[str, Any]:
    studios = {s["id"]: s["handle"] for s in your_studios(req)}
    data = _found(req, studios)
    q = data["q"]
    return {"title": "Search" + (f": {q}" if q else ""), "breadcrumb": [HOME, ("Search", "/search")],
            "base": "", "everywhere": True, **data}


def _found(req: Request, studios: dict[str, str]) -> dict[str, Any]:
    q = req.query.get("q", "").strip()
    query = search.parse(q)  # raises InvalidQuery, which names the filters there are
    results, pager, windowed = [], None, False
    if query is None and q:  # words of no letters or digits ("("): nothing to look for, nothing found
        pager = paginate(req, 0)
    elif query is not None:
        page = req.page_number()
        hits, total, windowed = req.tx.search(list(studios), query, now(), PAGE_SIZE, (page - 1) * PAGE_SIZE)
        pager = paginate(req, total, at_least=windowed)
        if hits:
            results = _rows(req, hits, query, studios)
    # `windowed`: the count is a lower bound: a source of matches was cut at the newest SEARCH_WINDOW
    # (navmcp.content.search), or the store stopped reading once the page was known (navmcp.store.ranked).
    return {"q": q, "results": results, "pager": pager, "help": search.HELP, "windowed": windowed,
            "window": search.SEARCH_WINDOW}


def _rows(req: Request, hits: list[dict[str, Any]], query: search.Query, studios: dict[str, str]) -> list[dict[str, Any]]:
    ids = [h["item_id"] for h in hits]
    marks = ", ".join("?" * len(ids))
    items = {r["id"]: r for r in req.tx.all(
        f"""SELECT i.id, i.studio_id, i.kind, i.title, i.body, i.updated_at, i.pinned, i.closed_at, i.deadline,
                   i.participant_count, i.critical_mass FROM items i WHERE i.id IN ({marks})""", ids)}
    texts: dict[str, str] = {}  # what matched beside its item: an option's title, a comment's body
    for table, column, key in (("options", "title", "option_id"), ("comments", "body", "comment_id")):
        wanted = [h[key] for h in hits if h[key]]
        if wanted:
            texts.update((r["id"], r[column]) for r in req.tx.all(
                f"SELECT id, {column} FROM {table} WHERE id IN ({', '.join('?' * len(wanted))})", wanted))
    at = now()
    rows = []
    for h in hits:
        item = items[h["item_id"]]
        handle = studios[item["studio_id"]]
        found_in = search.TIERS[h["tier"]]
        if found_in in ("text", "title"):  # a title match shows its text too: the words in context
            snippet = search.snippet(item["body"], query) or None
        elif found_in == "option":
            snippet = texts.get(h["option_id"], "")
        elif found_in == "comment":
            snippet = search.snippet(texts.get(h["comment_id"], ""), query)
        else:
            snippet = None
        deadline = item["deadline"]
        rows.append({
            "id": item["id"], "kind": item["kind"], "title": item["title"], "updated_at": item["updated_at"],
            "pinned": item["pinned"], "studio": handle,
            "url": f"/studios/{handle}/{KIND_LETTER[item['kind']]}/{item['id']}",
            "closed": item["closed_at"] is not None or (deadline is not None and deadline <= at),
            "deadline": deadline, "participant_count": item["participant_count"],
            "critical_mass": item["critical_mass"],
            "found_in": found_in, "matched": found_in, "snippet": snippet,
            "tag": query.tag_word if found_in == "tag" else None,
            # matches besides the one shown
            "more_options": h["options"] - (found_in == "option"), "more_comments": h["comments"] - (found_in == "comment"),
        })
    kinds.list_results(req, rows)
    return rows
