"""One item's page: a note, a decision or a commitment, with its comments and links."""

from __future__ import annotations

from typing import Any

from navmcp import kinds
from navmcp.content import attachments, ballots, domain, mentions, revisions
from navmcp.errors import NotFound
from navmcp.pages.request import PAGE_SIZE, Request, paginate, url_with
from navmcp.pages.studio import crumbs, no_studio, with_urls
from navmcp.render import FULL_BODY_CHARS, body_part
from navmcp.store import Row, row_maker

COMMENT_CHARS = 1000  # a comment in the list shows this much; `?comment=ID` shows it in full
LINKS_SHOWN = 20
KIND_LABEL = {"note": "Note", "decision": "Decision", "commitment": "Commitment"}


# The studio (with your role in it), the item, its author and the facts the action rules read, in one
# statement. The item is a LEFT JOIN so that "no such studio for you" and "no such item" stay apart.
# Facts are the columns after `author`; their `?` come first (they are in the select list).
_RESOLVE = """SELECT s.*, m.role, i.*, u.handle AS author{facts}
                FROM studios s JOIN memberships m ON m.studio_id = s.id AND m.user_id = ?
                LEFT JOIN items i ON i.id = ? AND i.studio_id = s.id AND i.kind = ?
                LEFT JOIN users u ON u.id = i.created_by
               WHERE s.handle = ?"""
_FACTS = {
    "note": ", EXISTS (SELECT 1 FROM reads WHERE note_id = i.id AND user_id = ?) AS confirmed",
    "decision": "",  # its options carry whether they hold your vote (`domain.options`)
    # A commitment's participant count is a column of the item (migration 0007): `i.participant_count`.
    "commitment": ", EXISTS (SELECT 1 FROM participants WHERE commitment_id = i.id AND user_id = ?) AS joined",
}
_RESOLVE_SQL = {kind: _RESOLVE.format(facts=facts) for kind, facts in _FACTS.items()}


def _resolve_item(req: Request, kind: str) -> tuple:
    """Resolve the studio and the item; return the values of the kind's fact columns."""
    # In a write transaction this queues concurrent writers on the same item (hosted store), so
    # the facts below (participant count, options, open or not) cannot change under the action.
    req.tx.lock("items", req.args["item"])
    req.tx.hold_membership(req.args["studio"])  # your role stays as read until the action ends
    uid = req.user["id"]
    fact_args = (uid,) if _FACTS[kind] else ()
    found = req.tx.record(_RESOLVE_SQL[kind], (*fact_args, uid, req.args["item"], kind, req.args["studio"]))
    if found is None:
        raise no_studio(req)
    names, row = found
    role, author = names.index("role"), names.index("author")
    req.role = row[role]
    req.studio = row_maker(names[:role])(row)
    if row[author] is None:  # no such item here (or its author is not visible to you)
        raise NotFound(f"no page at {req.path}: see /studios/{req.studio['handle']} for its items")
    req.item = item = row_maker(names[role + 1:author + 1])(row[role + 1:author + 1])
    facts = row[author + 1:]
    req.facts["is_author"] = item["created_by"] == uid
    req.facts["open"] = domain.is_open(item)
    return facts


def resolve_kind(req: Request, kind: str) -> None:
    """The studio and the item of one kind, with that kind's facts (a file's page is under its item)."""
    {"note": resolve_note, "decision": resolve_decision, "commitment": resolve_commitment}[kind](req)


def resolve_note(req: Request) -> None:
    (confirmed,) = _resolve_item(req, "note")
    req.facts["confirmed"] = bool(confirmed)


def resolve_decision(req: Request) -> None:
    _resolve_item(req, "decision")
    req.facts["options"] = (domain.options if req.acting else domain.tally)(req.tx, req.item["id"], req.user["id"])


def resolve_commitment(req: Request) -> None:
    (joined,) = _resolve_item(req, "commitment")
    req.facts["count"] = req.item["participant_count"]
    req.facts["joined"] = bool(joined)


# The counts an item page shows, in one statement: comments, links both ways, and the kind's own
# (their `?` follow: the item id for a note; for a decision the item and studio ids, twice, then the
# studio id). A decision's voters are counted apart: those still members ("N of M members") and
# former members, whose votes stay cast and counted in the tally but who are not among the M.
_COUNTS = """SELECT (SELECT count(*) FROM comments WHERE item_id = ? AND parent_id IS NULL) AS comments,
                    (SELECT count(*) FROM links WHERE from_item = ?) AS links_to,
                    (SELECT count(*) FROM links WHERE to_item = ?) AS linked_from"""
_VOTERS = """(SELECT count(DISTINCT v.user_id) FROM votes v WHERE v.decision_id = ?
                 AND {} EXISTS (SELECT 1 FROM memberships m WHERE m.studio_id = ? AND m.user_id = v.user_id))"""
_COUNTS_SQL = {
    "note": _COUNTS + ", (SELECT count(*) FROM reads WHERE note_id = ?) AS readers",
    "decision": _COUNTS + f""", {_VOTERS.format("")} AS voters, {_VOTERS.format("NOT")} AS former_voters,
                               (SELECT count(*) FROM memberships WHERE studio_id = ?) AS members""",
    "commitment": _COUNTS,
}


def _common(req: Request, *more_args: str) -> tuple[dict[str, Any], Row]:
    """What every item page shows: metadata, body (one part of it), comments, links, tags; and the
    page's counts (`_COUNTS_SQL`; `more_args` for the kind's own)."""
    tx, item = req.tx, req.item
    asked = req.page_number("part")
    part, parts = body_part(item["body"], asked)
    number = min(asked, parts)
    # ?full=1: the whole body and every comment, uncut, when the body fits a page; else its parts,
    # as without it. `?full=1&from=ID`: the comments from that one on, without the body.
    fits = len(item["body"]) <= FULL_BODY_CHARS
    whole_fits = parts > 1 and fits
    start = req.query.get("from") if req.query.get("full") == "1" else None
    full = req.query.get("full") == "1" and fits and asked == 1 and not req.query.get("comment")
    if full and not start:
        part = item["body"]
    # A part past the end of a body keeps its URL, as a page past the end of a list does, and says
    # so (with the last part's URL) instead of showing another part under the number asked for.
    past = req.url_with(part=parts) if asked > parts and item["body"] else None
    counts = tx.one(_COUNTS_SQL[item["kind"]], (item["id"], item["id"], item["id"], *more_args))
    # The comments' pages carry no part of the body (nor the body's URL parameters): they are one
    # list, whichever part of the text was being read.
    pager = paginate(req, counts["comments"], drop=("after", "part", "full"))
    single = req.query.get("comment")
    history = req.query.get("history") == "1"
    thread = None
    # The markdown shows `everything` in place of `comments`; the web page's comments stay as without it.
    everything = _everything(req, FULL_BODY_CHARS - (0 if start else len(part)), start) if full else None
    if single:
        comments = tx.all(f"{_COMMENT} WHERE c.item_id = ? AND c.id = ?", (item["id"], single))
        if not comments:
            raise NotFound(f"no comment {single!r} on {req.path}")
        comments[0].update(replies=[], reply_count=0, thread_url=f"{req.path}?comment={single}")
        if not history and comments[0]["parent_id"] is None:  # a thread: its comment, then every reply
            thread = _thread(req, comments[0])
    else:  # a page of threads, each with its newest replies
        comments = tx.all(f"{_COMMENT} WHERE c.item_id = ? AND c.parent_id IS NULL"
                          " ORDER BY c.created_at, c.seq LIMIT ? OFFSET ?", (item["id"], PAGE_SIZE, pager["offset"]))
        _newest_replies(req, comments)
    for c in comments:  # bounded pages: long comments are cut, with the URL of the full text
        for shown in (c, *c.get("replies", ())):
            shown["full_url"] = None
            if not single and len(shown["body"]) > COMMENT_CHARS:
                shown["body"], shown["full_url"] = shown["body"][:COMMENT_CHARS], f"{req.path}?comment={shown['id']}"
    # Links both ways and the tags in one statement: each part ordered (and the links limited) on
    # its own, told apart by `part` (1: links to, 0: linked from, 2: tags, in `title`). A links part
    # the counts say is empty is left out: it would cost a sort, and the union copies every value.
    parts_sql: list[str] = []
    args: list[Any] = []
    for which, count, near, far in ((1, "links_to", "from_item", "to_item"), (0, "linked_from", "to_item", "from_item")):
        if counts[count]:
            parts_sql.append(f"""SELECT * FROM (SELECT {which} AS part, i.id, i.kind, i.title FROM links l
                                  JOIN items i ON i.id = l.{far} WHERE l.{near} = ?
                                 ORDER BY i.title, i.id LIMIT ?) AS l{which}""")
            args += (item["id"], LINKS_SHOWN)
    tags_sql = "SELECT 2 AS part, NULL AS id, NULL AS kind, tag AS title FROM item_tags WHERE item_id = ? ORDER BY tag"
    sql = " UNION ALL ".join([*parts_sql, f"SELECT * FROM ({tags_sql}) AS tg"]) if parts_sql else tags_sql
    links_to: list[Row] = []
    linked_from: list[Row] = []
    tags: list[str] = []
    for r in tx.all(sql, (*args, item["id"])):
        which = r.pop("part")
        if which == 2:
            tags.append(r["title"])
        else:
            (links_to if which else linked_from).append(r)
    label = KIND_LABEL[item["kind"]]
    data = {
        "title": item["title"],
        "breadcrumb": crumbs(req, (f"{label}: {item['title']}", req.path)),
        "item": item,
        "kind_label": label,
        "open": req.facts["open"],
        "tags": tags,
        "studio": req.studio,
        "body": "" if past or start else part,
        "body_part": {"number": number, "parts": parts, "asked": asked, "past": past, "full": full,
                      "chars": len(item["body"]),
                      "whole": f"{req.path}?full=1" if whole_fits and not full else None,
                      "next": None if full else _part_url(req, number + 1) if number < parts else None,
                      "prev": _part_url(req, number - 1) if number > 1 else None},
        # What this view of the item shows (a page shows no text twice): "main" its text's first
        # part (or all of it) and the first comments, "part" a later part of the text alone,
        # "comments" a later page of comments (or one comment) alone.
        "view": "history" if history else "comments" if single or start or pager["number"] > 1
                else "part" if asked > 1 else "main",
        "everything": everything,  # ?full=1: every comment and reply, in order, within the page bound
        "full_chars": FULL_BODY_CHARS,
        # ?history=1: the item's revisions (with ?comment=ID, that comment's), newest first
        "history": revisions.history(req, single) if history else None,
        "history_url": f"{req.path}?history=1",
        "comments": comments,
        # its files (name, type, size, uploader, URL), listed and never embedded
        "files": attachments.listing(tx, req.studio["handle"], item) if not single and not history else [],
        "single_comment": req.path if single else None,
        "thread": thread,  # ?comment=ID of a thread's comment: its replies, a page at a time
        "item_url": req.path,
        "pager": pager,
        "links_more": {  # links beyond the LINKS_SHOWN listed: counted, so nothing is silently missing
            "to": counts["links_to"] - len(links_to),
            "from": counts["linked_from"] - len(linked_from)},
        "links_to": with_urls(req, links_to),
        "linked_from": with_urls(req, linked_from),
        # the members its text and the comments shown mention (@handle): listed, and linked for people
        "mentions": mentions.members_named(tx, req.studio["id"], [part, *(c["body"] for c in comments),
                                                                  *(c["body"] for c in (everything or {}).get("rows", ()))]),
    }
    return data, counts


_COMMENT = ("SELECT c.id, c.parent_id, c.body, c.created_at, c.revision, u.handle AS author, c.deleted_at,"
            " d.handle AS deleted_by FROM comments c JOIN users u ON u.id = c.created_by"
            " LEFT JOIN users d ON d.id = c.deleted_by")
REPLIES_SHOWN = 3  # a thread in the list shows its newest replies; `?comment=ID` shows them all
# The newest replies of some threads, oldest first, with each thread's number of replies.
_NEWEST_REPLIES = """SELECT * FROM (
    SELECT c.id, c.parent_id, c.body, c.created_at, c.revision, u.handle AS author, c.seq, c.deleted_at,
           row_number() OVER (PARTITION BY c.parent_id ORDER BY c.created_at DESC, c.seq DESC) AS newest,
           count(*) OVER (PARTITION BY c.parent_id) AS replies
      FROM comments c JOIN users u ON u.id = c.created_by
     WHERE c.item_id = ? AND c.parent_id IN ({})) AS r
 WHERE r.newest <= ? ORDER BY r.created_at, r.seq"""


def _newest_replies(req: Request, threads: list[Row]) -> None:
    """Each thread's newest REPLIES_SHOWN replies (`replies`, oldest first) and how many it has."""
    for t in threads:
        t["replies"], t["reply_count"], t["thread_url"] = [], 0, f"{req.path}?comment={t['id']}"
    if not threads:
        return
    by_id = {t["id"]: t for t in threads}
    sql = _NEWEST_REPLIES.format(", ".join("?" * len(threads)))
    for r in req.tx.all(sql, (req.item["id"], *by_id, REPLIES_SHOWN)):
        thread = by_id[r["parent_id"]]
        thread["reply_count"] = r.pop("replies")
        del r["newest"], r["seq"]
        thread["replies"].append(r)


def _thread(req: Request, comment: Row) -> dict[str, Any]:
    """A thread in full: its replies, oldest first, a page at a time (`?comment=ID&page=N`)."""
    total = req.tx.scalar("SELECT count(*) FROM comments WHERE parent_id = ?", (comment["id"],))
    pager = paginate(req, total, drop=("after", "part", "full"))
    replies = req.tx.all(f"{_COMMENT} WHERE c.parent_id = ? ORDER BY c.created_at, c.seq LIMIT ? OFFSET ?",
                         (comment["id"], PAGE_SIZE, pager["offset"]))
    for r in replies:
        r["full_url"] = None
    return {"replies": replies, "pager": pager}


# Every comment of an item in reading order: each thread (oldest first) followed by its replies
# (oldest first). Its `?` are the item id, then (with `from`) the item id and the comment id.
_EVERYTHING = """WITH f AS (
    SELECT c.id, c.parent_id, c.body, c.created_at, c.revision, u.handle AS author, c.deleted_at,
           d.handle AS deleted_by, coalesce(p.created_at, c.created_at) AS t_at, coalesce(p.seq, c.seq) AS t_seq,
           CASE WHEN c.parent_id IS NULL THEN 0 ELSE 1 END AS r, c.seq
      FROM comments c JOIN users u ON u.id = c.created_by LEFT JOIN users d ON d.id = c.deleted_by
      LEFT JOIN comments p ON p.id = c.parent_id
     WHERE c.item_id = ?)
SELECT id, parent_id, body, created_at, revision, author, deleted_at, deleted_by FROM f {where}
 ORDER BY t_at, t_seq, r, created_at, seq LIMIT ?"""
_EVERYTHING_SQL = {False: _EVERYTHING.format(where=""), True: _EVERYTHING.format(
    where="WHERE (t_at, t_seq, r, created_at, seq) >= (SELECT t_at, t_seq, r, created_at, seq FROM f WHERE id = ?)")}
_EVERYTHING_BATCH = 200


def _everything(req: Request, budget: int, start: str | None) -> dict[str, Any]:
    """`?full=1`: every comment and reply, uncut and in reading order, as long as their text fits
    `budget` characters (the page bound that protects clients; at least one comment a page).
    Where it stops, `next` is the one URL that continues (`?full=1&from=ID`)."""
    if start and not req.tx.scalar("SELECT count(*) FROM comments WHERE item_id = ? AND id = ?",
                                   (req.item["id"], start)):
        raise NotFound(f"no comment {start!r} on {req.path}")
    rows: list[Row] = []
    used, after = 0, start
    while True:
        args = (req.item["id"], after) if after else (req.item["id"],)
        batch = req.tx.all(_EVERYTHING_SQL[bool(after)], (*args, _EVERYTHING_BATCH + (1 if after != start else 0)))
        if after != start:
            batch = batch[1:]  # the row the batch started from was shown on the batch before
        for r in batch:
            if rows and used + len(r["body"]) > budget:
                return {"rows": rows, "next": url_with(req.path, {"full": "1", "from": r["id"]})}
            used += len(r["body"])
            r["full_url"] = None
            rows.append(r)
        if len(batch) < _EVERYTHING_BATCH:
            return {"rows": rows, "next": None}
        after = batch[-1]["id"]


def _part_url(req: Request, number: int) -> str:
    return url_with(req.path, {}, part=number)


def view_note(req: Request) -> dict[str, Any]:
    data, counts = _common(req, req.item["id"])
    data["readers"] = req.tx.all(
        """SELECT u.handle, r.confirmed_at FROM reads r JOIN users u ON u.id = r.user_id
            WHERE r.note_id = ? ORDER BY r.confirmed_at, r.user_id LIMIT ?""", (req.item["id"], PAGE_SIZE))
    data["reader_count"] = counts["readers"]
    data["confirmed"] = req.facts["confirmed"]
    return data


def view_decision(req: Request) -> dict[str, Any]:
    item = req.item
    studio_id = req.studio["id"]
    data, counts = _common(req, item["id"], studio_id, item["id"], studio_id, studio_id)
    options = req.facts["options"]
    data["options"] = options
    # The page numbers the options in their own order (oldest first), which votes do not change:
    # a vote may name an option by the number it saw.
    data["numbered_options"] = sorted(options, key=_oldest_first)
    data["voters"], data["members"] = counts["voters"], counts["members"]
    data["former_voters"] = counts["former_voters"]
    # Your vote is in the tally (its `my_` columns), in the options' own order here, oldest first.
    data["your_votes"] = [{"title": o["title"], "accept": o["my_accept"], "prefer": o["my_prefer"]}
                          for o in sorted(options, key=_oldest_first) if o["my_accept"] is not None]
    data["anonymous"] = bool(item.get("anonymous"))
    if data["anonymous"]:
        data["ballots"], data["not_voted"], data["not_voted_count"] = [], [], 0
    else:
        data["ballots"] = ballots.who_voted(req.tx, item["id"])
        data["not_voted"] = [r["handle"] for r in ballots.not_voted(req.tx, studio_id, item["id"])]
        data["not_voted_count"] = (len(data["not_voted"]) if len(data["not_voted"]) < ballots.MOST_NAMED
                                   else ballots.not_voted_count(req.tx, studio_id, item["id"]))
    data["result"] = None if data["open"] else domain.winners(options)
    # How it is decided (navmcp.kinds): the kind's own data, and its result once closed.
    kind, settings = kinds.kind_of(item), kinds.settings_of(item)
    kind.view(req, data)
    data["decision_kind"] = {"name": kind.name, "label": kind.describe(settings), "settings": settings,
                             "responded_label": kind.responded_label, "quorum": item.get("quorum"),
                             "quorum_needed": kinds.quorum_needed(item.get("quorum"), data["members"])}
    data["verdict"] = None if data["open"] else vars(
        kinds.quorum_result(item, data["responded"], data["members"], kind.result(req, data)))
    data["closed_reason"] = None if data["open"] else domain.closed_reason(item)
    return data


def _oldest_first(option: Row) -> tuple[str, str]:
    return option["created_at"], option["id"]


def view_commitment(req: Request) -> dict[str, Any]:
    data, _ = _common(req)
    tx, item = req.tx, req.item
    count = req.facts["count"]
    data["count"] = count
    data["joined"] = req.facts["joined"]
    data["needed"] = max(0, item["critical_mass"] - count)
    data["participants"] = tx.all(
        """SELECT u.handle, p.joined_at FROM participants p JOIN users u ON u.id = p.user_id
            WHERE p.commitment_id = ? ORDER BY p.joined_at, p.user_id LIMIT ?""", (item["id"], PAGE_SIZE))
    data["closed_reason"] = None if data["open"] else domain.closed_reason(item)
    return data
