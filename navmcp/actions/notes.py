"""Actions on notes and the comment action every item shares."""

from __future__ import annotations

from pydantic import Field

from navmcp import domain
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Comment
from navmcp.clock import now
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.identity import new_id
from navmcp.pages import PAGE_SIZE, Request
from navmcp.store import Row


class AddComment(Params):
    body: Comment = Field(title="Comment", description="markdown text")
    reply_to: str | None = Field(None, min_length=1, max_length=64, title="In reply to",
                                 description="a comment's id on this item, to reply in its thread (one level: "
                                             "a reply to a reply joins its thread)")


def add_comment(req: Request, p: AddComment) -> Outcome:
    parent = _thread_of(req, p.reply_to) if p.reply_to else None
    req.tx.execute(
        "INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at, parent_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id(), req.item["id"], req.studio["id"], p.body, req.user["id"], now(), parent and parent["id"]))
    domain.link_mentions(req.tx, req.studio, req.item["id"], p.body)
    domain.touch(req.tx, req.item["id"])
    if parent:
        # inbox (issue 43): a reply notifies the parent's author (`p.reply_to`'s, else the thread's) — wire it here.
        return Outcome("Reply added.", f"{req.path}?comment={parent['id']}")
    # Threads run oldest first, so a new one is on the last page: land there, not on page 1.
    pages = -(-req.tx.one("SELECT count(*) AS n FROM comments WHERE item_id = ? AND parent_id IS NULL",
                          (req.item["id"],))["n"] // PAGE_SIZE)
    return Outcome("Comment added.", req.path if pages <= 1 else f"{req.path}?page={pages}")


def _thread_of(req: Request, comment_id: str) -> Row:
    """The comment a reply joins: the one named, or the thread it is a reply in (one level deep)."""
    found = req.tx.one("SELECT id, parent_id, created_by FROM comments WHERE id = ? AND item_id = ?",
                       (comment_id, req.item["id"]))
    if found is None:
        raise InvalidActionParams(f"'reply_to': no comment {comment_id!r} on this {req.item['kind']}",
                                  fields=(FieldError("reply_to", "no such comment here"),))
    if found["parent_id"]:
        found = req.tx.one("SELECT id, parent_id, created_by FROM comments WHERE id = ?", (found["parent_id"],))
    return found


def confirm_read(req: Request, p: Params) -> Outcome:
    req.tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                   (req.item["id"], req.user["id"], now()))
    return Outcome("Confirmed that you read this note.", req.path)


def not_confirmed(req: Request) -> str | None:
    return "you already confirmed reading it" if req.facts.get("confirmed") else None


def _set_pin(value: int):
    def run(req: Request, p: Params) -> Outcome:
        domain.update_item(req.tx, req.item["id"], pinned=value)
        return Outcome("Pinned to the studio feed." if value else "Unpinned.", req.path)
    return run


def pinned(req: Request) -> str | None:
    return None if req.item["pinned"] else "it is not pinned"


def unpinned(req: Request) -> str | None:
    return "it is already pinned" if req.item["pinned"] else None


ITEM_PAGES = ("note", "decision", "commitment")

ACTIONS = [
    # A first comment of yours makes edit_comment valid here: it changes what the rules read.
    Action("add_comment", ITEM_PAGES, "Comment on this item.", add_comment, AddComment, who=rules.member),
    Action("confirm_read", ("note",), "Confirm that you have read this note.", confirm_read,
           who=rules.member, when=not_confirmed),
    Action("pin", ("note",), "Pin this note to the top of the studio feed.", _set_pin(1), who=rules.admin, when=unpinned),
    Action("unpin", ("note",), "Remove this note from the pinned items.", _set_pin(0), who=rules.admin, when=pinned),
]
