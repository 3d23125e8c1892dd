"""Actions on notes and the comment action every item shares."""

from __future__ import annotations

from pydantic import Field

from navmcp import domain
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Comment
from navmcp.clock import now
from navmcp.identity import new_id
from navmcp.pages import PAGE_SIZE, Request


class AddComment(Params):
    body: Comment = Field(title="Comment", description="markdown text")


def add_comment(req: Request, p: AddComment) -> Outcome:
    req.tx.execute(
        "INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (new_id(), req.item["id"], req.studio["id"], p.body, req.user["id"], now()))
    domain.link_mentions(req.tx, req.studio, req.item["id"], p.body)
    domain.touch(req.tx, req.item["id"])
    # Comments run oldest first, so the new one is on the last page: land there, not on page 1.
    pages = -(-req.tx.one("SELECT count(*) AS n FROM comments WHERE item_id = ?", (req.item["id"],))["n"] // PAGE_SIZE)
    return Outcome("Comment added.", req.path if pages <= 1 else f"{req.path}?page={pages}")


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
