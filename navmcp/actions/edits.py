"""Edits: a note, a decision, a commitment or a comment changed after it was written. Every edit
is a revision (`navmcp.revisions`): who, when, through which client, the old and the new value;
an edit naming the revision it read (`base`) is refused when another came since."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from navmcp import domain, inbox, mentions, revisions
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Body, Comment, Deadline, ShortText, Tags, Title
from navmcp.clock import now
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.pages import Request
from navmcp.store import Row

Base = int | None
BASE = Field(None, ge=1, le=1_000_000, title="Revision you read",
             description="the revision you read (refused if not the latest)")


class _Edit(Params):
    """An edit changes at least one field: `base` alone changes nothing."""

    @model_validator(mode="after")
    def _something(self):
        if all(getattr(self, name) is None for name in type(self).model_fields if name not in ("base", "comment")):
            named = ", ".join(n for n in type(self).model_fields if n not in ("base", "comment"))
            raise ValueError(f"give at least one of {named}")
        return self


class EditNote(_Edit):
    title: Title | None = None
    body: Body | None = Field(None, title="Text", description="replaces the whole body")
    tags: Tags | None = Field(None, description="replaces the tags")
    base: Base = BASE


class EditDecision(_Edit):
    question: Title | None = None
    description: ShortText | None = None
    deadline: Deadline | None = None
    tags: Tags | None = Field(None, description="replaces the tags")
    base: Base = BASE


class EditCommitment(_Edit):
    title: Title | None = None
    description: ShortText | None = None
    deadline: Deadline | None = None
    limit: int | None = Field(None, title="At most", ge=1, le=100_000,
                              description="most participants: not below those already in, nor critical mass")
    tags: Tags | None = Field(None, description="replaces the tags")
    base: Base = BASE


# A parameter of an edit → the item's column it writes (the ones not named here write their own).
COLUMN = {"question": "title", "description": "body", "limit": "participant_limit"}


def edit_item(req: Request, p: Params) -> Outcome:
    """edit_note, edit_decision, edit_commitment: the fields given that differ from the item's, as one revision."""
    item = req.item
    base = getattr(p, "base", None)
    revisions.check_base(req, base)
    changes: dict[str, tuple[Any, Any]] = {}
    columns: dict[str, Any] = {}
    for name in type(p).model_fields:
        value = getattr(p, name)
        if name in ("base", "tags") or value is None:
            continue
        column = COLUMN.get(name, name)
        if value != item[column]:
            changes[name] = (item[column], value)
            columns[column] = value
    if isinstance(p, EditCommitment) and p.limit is not None:
        _limit_reachable(req, p.limit)
    old_tags = sorted(r["tag"] for r in req.tx.all("SELECT tag FROM item_tags WHERE item_id = ?", (item["id"],)))
    tags = getattr(p, "tags", None)
    if tags is not None and set(tags) != set(old_tags):
        changes["tags"] = (old_tags, sorted(set(tags)))
    kind = item["kind"]
    if not changes:  # an edit to what is there already is no edit: no revision, the Updated time stays
        return Outcome(f"Nothing changed: the {kind} already reads that way (revision {item['revision']}).", req.path)
    number = revisions.save(req, changes, **columns, updated_at=now())
    if "body" in columns:
        _tell_newly_mentioned(req, item["body"], columns["body"])
        # The item links what its text and its comments mention: made again from the new text and
        # the comments, which the edit leaves as they were.
        req.tx.execute("DELETE FROM links WHERE from_item = ?", (item["id"],))
        comments = req.tx.all("SELECT body FROM comments WHERE item_id = ? AND body LIKE '%/studios/%'", (item["id"],))
        domain.link_mentions(req.tx, req.studio, item["id"], "\n".join([columns["body"], *(c["body"] for c in comments)]))
    if "tags" in changes:
        req.tx.execute("DELETE FROM item_tags WHERE item_id = ?", (item["id"],))
        domain.set_tags(req.tx, item["id"], tags or [])
    return Outcome(f"Updated the {kind}'s {', '.join(changes)}: revision {number}.", req.path)


def _tell_newly_mentioned(req: Request, old: str | None, new: str) -> None:
    """Whom the new text mentions and the old did not is told (issue 43's inbox)."""
    before = set(mentions.mentioned(req.tx, req.studio["id"], req.role, old or ""))
    inbox.notify(req, "mention", [u for u in mentions.mentioned(req.tx, req.studio["id"], req.role, new)
                                  if u not in before], req.item["id"])


def _limit_reachable(req: Request, limit: int) -> None:
    item = req.item
    if limit < item["participant_count"]:
        raise InvalidActionParams(f"'limit': {item['participant_count']} people have joined: the limit cannot be below that",
                                  fields=(FieldError("limit", f"must be at least {item['participant_count']}, who joined"),))
    if limit < item["critical_mass"]:
        raise InvalidActionParams(f"'limit': must be at least the critical mass, {item['critical_mass']}",
                                  fields=(FieldError("limit", f"must be at least {item['critical_mass']}"),))


class EditComment(Params):
    comment: str = Field(min_length=1, max_length=64, title="Which comment",
                         description="your comment's id")
    body: Comment = Field(title="Text", description="replaces the comment's text (markdown)")
    base: Base = BASE


def _own_comment(req: Request, comment_id: str) -> Row:
    found = req.tx.one("SELECT id, body, created_by, revision FROM comments WHERE id = ? AND item_id = ?"
                       " AND deleted_at IS NULL", (comment_id, req.item["id"]))
    if found is None:
        raise InvalidActionParams(f"'comment': no comment {comment_id!r} on this {req.item['kind']}",
                                  fields=(FieldError("comment", "no such comment here"),))
    if found["created_by"] != req.user["id"]:
        raise InvalidActionParams("'comment': only its author may edit a comment",
                                  fields=(FieldError("comment", "is not yours: only its author may edit it"),))
    return found


def edit_comment(req: Request, p: EditComment) -> Outcome:
    comment = _own_comment(req, p.comment)
    revisions.check_base(req, p.base, comment)
    if p.body == comment["body"]:
        return Outcome(f"Nothing changed: the comment already reads that way (revision {comment['revision']}).",
                       f"{req.path}?comment={comment['id']}")
    number = revisions.save(req, {"body": (comment["body"], p.body)}, comment, body=p.body)
    _tell_newly_mentioned(req, comment["body"], p.body)
    domain.link_mentions(req.tx, req.studio, req.item["id"], p.body)
    domain.touch(req.tx, req.item["id"])
    return Outcome(f"Comment edited: revision {number}.", f"{req.path}?comment={comment['id']}")


_HAS_COMMENT = "SELECT 1 FROM comments WHERE item_id = ? AND created_by = ? AND deleted_at IS NULL LIMIT 1"


def wrote_a_comment(req: Request) -> str | None:
    """A member with a comment of their own on the item."""
    if reason := rules.member(req):
        return reason
    if req.tx.one(_HAS_COMMENT, (req.item["id"], req.user["id"])) is None:
        return "you have no comment here to edit"
    return None


ACTIONS = [
    Action("edit_note", ("note",), "Change the note's title, body or tags (a new revision).", edit_item, EditNote,
           who=rules.author),
    Action("edit_decision", ("decision",), "Change the question, description, deadline or tags of the open "
           "decision (a new revision).", edit_item, EditDecision, who=rules.creator_or_admin, when=rules.is_open),
    Action("edit_commitment", ("commitment",), "Change the title, description, deadline, limit or tags of the "
           "open commitment (a new revision).", edit_item, EditCommitment, who=rules.creator_or_admin,
           when=rules.is_open),
    Action("edit_comment", ("note", "decision", "commitment"), "Change the text of a comment you wrote "
           "(a new revision).", edit_comment, EditComment, who=wrote_a_comment),
]
