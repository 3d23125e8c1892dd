"""One item's page: a note, a decision or a commitment, with its comments and links."""

from __future__ import annotations

from typing import Any

from navmcp import domain
from navmcp.errors import NotFound
from navmcp.pages import PAGE_SIZE, Request
from navmcp.pages.studio import crumbs, paginate, resolve_studio, with_urls
from navmcp.render import body_part

COMMENT_CHARS = 1000  # a comment in the list shows this much; `?comment=ID` shows it in full
LINKS_SHOWN = 20
KIND_LABEL = {"note": "Note", "decision": "Decision", "commitment": "Commitment"}


def _resolve_item(req: Request, kind: str) -> None:
    resolve_studio(req)
    # In a write transaction this queues concurrent writers on the same item (hosted store), so
    # the facts below (participant count, options, open or not) cannot change under the action.
    req.tx.lock("items", req.args["item"])
    item = req.tx.one(
        """SELECT i.*, u.handle AS author FROM items i JOIN users u ON u.id = i.created_by
            WHERE i.id = ? AND i.studio_id = ? AND i.kind = ?""",
        (req.args["item"], req.studio["id"], kind),
    )
    if item is None:
        raise NotFound(f"no page at {req.path}: see /studios/{req.studio['handle']} for its items")
    req.item = item
    req.facts["is_author"] = item["created_by"] == req.user["id"]
    req.facts["open"] = domain.is_open(req.tx, item)


def resolve_note(req: Request) -> None:
    _resolve_item(req, "note")
    req.facts["confirmed"] = bool(req.tx.one(
        "SELECT 1 FROM reads WHERE note_id = ? AND user_id = ?", (req.item["id"], req.user["id"])))


def resolve_decision(req: Request) -> None:
    _resolve_item(req, "decision")
    req.facts["options"] = domain.tally(req.tx, req.item["id"])
    req.facts["voted"] = bool(req.tx.one(
        "SELECT 1 FROM votes WHERE decision_id = ? AND user_id = ?", (req.item["id"], req.user["id"])))


def resolve_commitment(req: Request) -> None:
    _resolve_item(req, "commitment")
    req.facts["count"] = domain.participant_count(req.tx, req.item["id"])
    req.facts["joined"] = bool(req.tx.one(
        "SELECT 1 FROM participants WHERE commitment_id = ? AND user_id = ?", (req.item["id"], req.user["id"])))


def _common(req: Request) -> dict[str, Any]:
    """What every item page shows: metadata, body (one part of it), comments, links, tags."""
    tx, item = req.tx, req.item
    part, parts = body_part(item["body"], req.page_number("part"))
    number = min(req.page_number("part"), parts)
    # The three counts the page shows, in one statement.
    counts = tx.one("""SELECT (SELECT count(*) FROM comments WHERE item_id = ?) AS comments,
                              (SELECT count(*) FROM links WHERE from_item = ?) AS links_to,
                              (SELECT count(*) FROM links WHERE to_item = ?) AS linked_from""",
                    (item["id"], item["id"], item["id"]))
    pager = paginate(req, counts["comments"])
    select = "SELECT c.id, c.body, c.created_at, u.handle AS author FROM comments c JOIN users u ON u.id = c.created_by"
    single = req.query.get("comment")
    if single:
        comments = tx.all(f"{select} WHERE c.item_id = ? AND c.id = ?", (item["id"], single))
        if not comments:
            raise NotFound(f"no comment {single!r} on {req.path}")
    else:
        comments = tx.all(f"{select} WHERE c.item_id = ? ORDER BY c.created_at, c.seq LIMIT ? OFFSET ?",
                          (item["id"], PAGE_SIZE, pager["offset"]))
    for c in comments:  # bounded pages: long comments are cut, with the URL of the full text
        c["full_url"] = None
        if not single and len(c["body"]) > COMMENT_CHARS:
            c["body"], c["full_url"] = c["body"][:COMMENT_CHARS], f"{req.path}?comment={c['id']}"
    # Links both ways in one statement: each half ordered and limited on its own.
    links = tx.all(
        """SELECT * FROM (SELECT 1 AS outgoing, i.id, i.kind, i.title FROM links l JOIN items i ON i.id = l.to_item
                           WHERE l.from_item = ? ORDER BY i.title LIMIT ?) AS lt
           UNION ALL
           SELECT * FROM (SELECT 0 AS outgoing, i.id, i.kind, i.title FROM links l JOIN items i ON i.id = l.from_item
                           WHERE l.to_item = ? ORDER BY i.title LIMIT ?) AS lf""",
        (item["id"], LINKS_SHOWN, item["id"], LINKS_SHOWN))
    links_to = [{"id": r["id"], "kind": r["kind"], "title": r["title"]} for r in links if r["outgoing"]]
    linked_from = [{"id": r["id"], "kind": r["kind"], "title": r["title"]} for r in links if not r["outgoing"]]
    label = KIND_LABEL[item["kind"]]
    return {
        "title": item["title"],
        "breadcrumb": crumbs(req, (f"{label}: {item['title']}", req.path)),
        "item": item,
        "kind_label": label,
        "open": req.facts["open"],
        "tags": domain.tags_of(tx, item["id"]),
        "studio": req.studio,
        "body": part,
        "body_part": {"number": number, "parts": parts,
                      "next": req.url_with(part=number + 1) if number < parts else None,
                      "prev": req.url_with(part=number - 1) if number > 1 else None},
        "comments": comments,
        "single_comment": req.path if single else None,
        "pager": pager,
        "links_more": {  # links beyond the LINKS_SHOWN listed: counted, so nothing is silently missing
            "to": counts["links_to"] - len(links_to),
            "from": counts["linked_from"] - len(linked_from)},
        "links_to": with_urls(req, links_to),
        "linked_from": with_urls(req, linked_from),
    }


def view_note(req: Request) -> dict[str, Any]:
    data = _common(req)
    readers = req.tx.all(
        """SELECT u.handle, r.confirmed_at FROM reads r JOIN users u ON u.id = r.user_id
            WHERE r.note_id = ? ORDER BY r.confirmed_at LIMIT ?""", (req.item["id"], PAGE_SIZE))
    data["readers"] = readers
    data["reader_count"] = req.tx.scalar("SELECT count(*) FROM reads WHERE note_id = ?", (req.item["id"],))
    data["confirmed"] = req.facts["confirmed"]
    return data


def view_decision(req: Request) -> dict[str, Any]:
    data = _common(req)
    tx, item = req.tx, req.item
    options = req.facts["options"]
    data["options"] = options
    counts = tx.one("""SELECT (SELECT count(DISTINCT user_id) FROM votes WHERE decision_id = ?) AS voters,
                              (SELECT count(*) FROM memberships WHERE studio_id = ?) AS members""",
                    (item["id"], req.studio["id"]))
    data["voters"], data["members"] = counts["voters"], counts["members"]
    data["your_votes"] = tx.all(
        """SELECT o.title, v.accept, v.prefer FROM votes v JOIN options o ON o.id = v.option_id
            WHERE v.decision_id = ? AND v.user_id = ? ORDER BY o.created_at""", (item["id"], req.user["id"]))
    data["result"] = None if data["open"] else domain.winners(options)
    data["closed_reason"] = None if data["open"] else domain.closed_reason(tx, item)
    return data


def view_commitment(req: Request) -> dict[str, Any]:
    data = _common(req)
    tx, item = req.tx, req.item
    count = req.facts["count"]
    data["count"] = count
    data["joined"] = req.facts["joined"]
    data["needed"] = max(0, item["critical_mass"] - count)
    data["participants"] = tx.all(
        """SELECT u.handle, p.joined_at FROM participants p JOIN users u ON u.id = p.user_id
            WHERE p.commitment_id = ? ORDER BY p.joined_at LIMIT ?""", (item["id"], PAGE_SIZE))
    data["closed_reason"] = None if data["open"] else domain.closed_reason(tx, item)
    return data
