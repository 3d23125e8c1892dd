"""Actions on notes and the comment action every item shares."""

from __future__ import annotations

from pydantic import Field, model_validator

from navmcp import domain, inbox, mentions
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Body, Comment, Tags, Title
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
    told = set(inbox.notify(req, "mention", mentions.mentioned(req.tx, req.studio["id"], req.role, p.body),
                            req.item["id"]))
    inbox.notify(req, "comment", [u for u in inbox.related(req.tx, req.item["id"]) if u not in told], req.item["id"])
    # Comments run oldest first, so the new one is on the last page: land there, not on page 1.
    pages = -(-req.tx.one("SELECT count(*) AS n FROM comments WHERE item_id = ?", (req.item["id"],))["n"] // PAGE_SIZE)
    return Outcome("Comment added.", req.path if pages <= 1 else f"{req.path}?page={pages}")


def confirm_read(req: Request, p: Params) -> Outcome:
    req.tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                   (req.item["id"], req.user["id"], now()))
    return Outcome("Confirmed that you read this note.", req.path)


def not_confirmed(req: Request) -> str | None:
    return "you already confirmed reading it" if req.facts.get("confirmed") else None


class EditNote(Params):
    title: Title | None = None
    body: Body | None = Field(None, title="Text", description="replaces the whole body")
    tags: Tags | None = Field(None, description="replaces the tags")

    @model_validator(mode="after")
    def _something(self):
        if self.title is None and self.body is None and self.tags is None:
            raise ValueError("give at least one of title, body, tags")
        return self


def edit_note(req: Request, p: EditNote) -> Outcome:
    item = req.item
    changed = [name for name in ("title", "body") if getattr(p, name) is not None and getattr(p, name) != item[name]]
    if p.tags is not None and set(p.tags) != {r["tag"] for r in req.tx.all(
            "SELECT tag FROM item_tags WHERE item_id = ?", (item["id"],))}:
        changed.append("tags")
    if not changed:  # an edit to what is there already is no edit: the note's Updated time stays
        return Outcome("Nothing changed: the note already reads that way.", req.path)
    title = p.title if "title" in changed else item["title"]
    body = p.body if "body" in changed else item["body"]
    domain.update_item(req.tx, item["id"], title=title, body=body, updated_at=now())
    if "body" in changed:  # who the new text mentions, and the old did not, is told
        before = set(mentions.mentioned(req.tx, req.studio["id"], req.role, item["body"]))
        inbox.notify(req, "mention", [u for u in mentions.mentioned(req.tx, req.studio["id"], req.role, body)
                                      if u not in before], item["id"])
        # The note links what its body and its comments mention: the links are made again from the
        # new body and the comments, which the edit leaves as they were.
        req.tx.execute("DELETE FROM links WHERE from_item = ?", (item["id"],))
        comments = req.tx.all("SELECT body FROM comments WHERE item_id = ? AND body LIKE '%/studios/%'", (item["id"],))
        domain.link_mentions(req.tx, req.studio, item["id"], "\n".join([body, *(c["body"] for c in comments)]))
    if "tags" in changed:
        req.tx.execute("DELETE FROM item_tags WHERE item_id = ?", (item["id"],))
        domain.set_tags(req.tx, item["id"], p.tags)
    return Outcome(f"Updated the note's {', '.join(changed)}.", req.path)


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
    Action("add_comment", ITEM_PAGES, "Comment on this item.", add_comment, AddComment, who=rules.member,
           changes_facts=False),
    Action("confirm_read", ("note",), "Confirm that you have read this note.", confirm_read,
           who=rules.member, when=not_confirmed),
    Action("edit_note", ("note",), "Change the note's title, body or tags.", edit_note, EditNote, who=rules.author),
    Action("pin", ("note",), "Pin this note to the top of the studio feed.", _set_pin(1), who=rules.admin, when=unpinned),
    Action("unpin", ("note",), "Remove this note from the pinned items.", _set_pin(0), who=rules.admin, when=pinned),
]
