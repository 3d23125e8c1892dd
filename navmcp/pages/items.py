"""One item's page: a note, a decision or a commitment, with its comments and links."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from navmcp import domain
from navmcp.errors import NotFound
from navmcp.pages import PAGE_SIZE, Request
from navmcp.pages.studio import crumbs, paginate, resolve_studio, with_urls
from navmcp.render import body_part

KIND_LABEL = {"note": "Note", "decision": "Decision", "commitment": "Commitment"}
COMMENT_CHARS = 1500  # a listed comment shows at most this much; ?comment=ID shows it whole


def _resolve_item(req: Request, kind: str) -> None:
    resolve_studio(req)
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
    total_comments = tx.scalar("SELECT count(*) FROM comments WHERE item_id = ?", (item["id"],))
    pager = paginate(req, total_comments)
    comments = tx.all(
        """SELECT c.id, c.body, c.created_at, u.handle AS author FROM comments c JOIN users u ON u.id = c.created_by
            WHERE c.item_id = ? ORDER BY c.created_at, c.seq LIMIT ? OFFSET ?""",
        (item["id"], PAGE_SIZE, pager["offset"]),
    )
    _cut_comments(req, comments)
    links_to = tx.all(
        "SELECT i.id, i.kind, i.title FROM links l JOIN items i ON i.id = l.to_item WHERE l.from_item = ? ORDER BY i.title LIMIT 50",
        (item["id"],))
    linked_from = tx.all(
        "SELECT i.id, i.kind, i.title FROM links l JOIN items i ON i.id = l.from_item WHERE l.to_item = ? ORDER BY i.title LIMIT 50",
        (item["id"],))
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
        "pager": pager,
        "links_to": with_urls(req, links_to),
        "linked_from": with_urls(req, linked_from),
    }


def _cut_comments(req: Request, comments: list[dict[str, Any]]) -> None:
    """Keep the page bounded: a listed comment shows its first COMMENT_CHARS characters and the URL
    of its whole text (`?comment=ID`, which lists that one comment in full)."""
    wanted = req.query.get("comment")
    if wanted:
        comments[:] = req.tx.all(
            """SELECT c.id, c.body, c.created_at, u.handle AS author FROM comments c JOIN users u ON u.id = c.created_by
                WHERE c.item_id = ? AND c.id = ?""", (req.item["id"], wanted))
        if not comments:
            raise NotFound(f"no comment {wanted!r} on {req.path}: its comments are listed at {req.path}")
    for c in comments:
        c["chars"], c["full_url"] = len(c["body"]), None
        if not wanted and len(c["body"]) > COMMENT_CHARS:
            c["body"] = c["body"][:COMMENT_CHARS]
            c["full_url"] = f"{req.path}?{urlencode({'comment': c['id']})}"


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
    data["voters"] = tx.scalar("SELECT count(DISTINCT user_id) FROM votes WHERE decision_id = ?", (item["id"],))
    data["members"] = tx.scalar("SELECT count(*) FROM memberships WHERE studio_id = ?", (req.studio["id"],))
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
