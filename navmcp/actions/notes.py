"""Actions on notes and the comment action every item shares."""

from __future__ import annotations

from pydantic import Field

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Comment
from navmcp.clock import now
from navmcp.content import attachments, domain, mentions
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.identity import new_id
from navmcp.pages import PAGE_SIZE, Request
from navmcp.store import Row


class AddComment(Params):
    body: Comment = Field(title="Comment", description="markdown text")
    reply_to: str | None = Field(None, min_length=1, max_length=64, title="In reply to",
                                 description="a comment's id")


def add_comment(req: Request, p: AddComment) -> Outcome:
    parent = _thread_of(req, p.reply_to) if p.reply_to else None
    req.tx.execute(
        "INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at, parent_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id(), req.item["id"], req.studio["id"], p.body, req.user["id"], now(), parent and parent["id"]))
    domain.link_mentions(req.tx, req.studio, req.item["id"], p.body)
    domain.touch(req.tx, req.item["id"])
    told = set(inbox.notify(req, "mention", mentions.mentioned(req.tx, req.studio["id"], req.role, p.body),
                            req.item["id"]))
    # Who the item concerns hear of a comment, and a reply's parent author (`p.reply_to`'s, which
    # may be a reply in the thread) with them: once, as one entry; one mentioned was told already.
    concerned = inbox.related(req.tx, req.item)
    if parent:
        concerned.add(req.tx.one("SELECT created_by FROM comments WHERE id = ?", (p.reply_to,))["created_by"])
    inbox.notify(req, "comment", [u for u in concerned if u not in told], req.item["id"])
    if parent:
        return Outcome("Reply added.", f"{req.path}?comment={parent['id']}")
    # Threads run oldest first, so a new one is on the last page: land there, not on page 1.
    pages = -(-req.tx.one("SELECT count(*) AS n FROM comments WHERE item_id = ? AND parent_id IS NULL",
                          (req.item["id"],))["n"] // PAGE_SIZE)
    return Outcome("Comment added.", req.path if pages <= 1 else f"{req.path}?page={pages}")


def _thread_of(req: Request, comment_id: str) -> Row:
    """The comment a reply joins: the one named, or the thread it is a reply in (one level deep)."""
    found = req.tx.one("SELECT id, parent_id, created_by, deleted_at FROM comments WHERE id = ? AND item_id = ?",
                       (comment_id, req.item["id"]))
    if found is None:
        raise InvalidActionParams(f"'reply_to': no comment {comment_id!r} on this {req.item['kind']}",
                                  fields=(FieldError("reply_to", "no such comment here"),))
    if found["parent_id"]:
        found = req.tx.one("SELECT id, parent_id, created_by, deleted_at FROM comments WHERE id = ?",
                           (found["parent_id"],))
    if found["deleted_at"]:
        raise InvalidActionParams("'reply_to': that thread's comment was deleted: comment on the item instead",
                                  fields=(FieldError("reply_to", "was deleted"),))
    return found


class DeleteComment(Params):
    comment: str = Field(min_length=1, max_length=64, title="Which comment",
                         description="the comment's id")


def delete_comment(req: Request, p: DeleteComment) -> Outcome:
    """Its text and revisions go at once (nothing keeps deleted text, the audit included); a comment
    with replies stays as "[deleted]", so that they keep their place."""
    found = req.tx.one("SELECT id, created_by, parent_id, deleted_at FROM comments WHERE id = ? AND item_id = ?",
                       (p.comment, req.item["id"]))
    if found is None or found["deleted_at"]:
        raise InvalidActionParams(f"'comment': no comment {p.comment!r} on this {req.item['kind']}"
                                  + (" (it was deleted)" if found else ""),
                                  fields=(FieldError("comment", "no such comment here"),))
    if found["created_by"] != req.user["id"] and req.role != "admin":
        raise InvalidActionParams("'comment': only its author or a studio admin may delete a comment",
                                  fields=(FieldError("comment", "is not yours: only its author or an admin may delete it"),))
    if req.tx.one("SELECT 1 FROM comments WHERE parent_id = ? LIMIT 1", (found["id"],)):
        if not req.tx.execute("UPDATE comments SET body = '', deleted_at = ?, deleted_by = ? WHERE id = ?",
                              (now(), req.user["id"], found["id"])):
            raise ActionFailed("the database refused the change (your role here may have just changed): reload the page")
        req.tx.execute("DELETE FROM revisions WHERE comment_id = ?", (found["id"],))
        attachments.remove_of_comment(req.tx, found["id"])
        said = "Comment deleted: its replies stay, under \"[deleted]\"."
    else:
        if not req.tx.execute("DELETE FROM comments WHERE id = ?", (found["id"],)):  # its revisions go with it
            raise ActionFailed("the database refused the change (your role here may have just changed): reload the page")
        said = "Comment deleted."
    domain.touch(req.tx, req.item["id"])
    return Outcome(said, f"{req.path}?comment={found['parent_id']}" if found["parent_id"] else req.path)


_LIVE_COMMENT = "SELECT 1 FROM comments WHERE item_id = ? AND deleted_at IS NULL{} LIMIT 1"


def may_delete_a_comment(req: Request) -> str | None:
    """A member with a comment of their own here; an admin, where there is any comment."""
    if reason := rules.member(req):
        return reason
    if req.role == "admin":
        found = req.tx.one(_LIVE_COMMENT.format(""), (req.item["id"],))
    else:
        found = req.tx.one(_LIVE_COMMENT.format(" AND created_by = ?"), (req.item["id"], req.user["id"]))
    return None if found else "there is no comment here you may delete"


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
    Action("delete_comment", ITEM_PAGES, "Delete a comment (yours; an admin: any).",
           delete_comment, DeleteComment, who=may_delete_a_comment),
    Action("confirm_read", ("note",), "Confirm that you have read this note.", confirm_read,
           who=rules.member, when=not_confirmed),
    Action("pin", ("note",), "Pin this note to the top of the studio feed.", _set_pin(1), who=rules.admin, when=unpinned),
    Action("unpin", ("note",), "Remove this note from the pinned items.", _set_pin(0), who=rules.admin, when=pinned),
]
