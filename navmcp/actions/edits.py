"""Edits: a note, a decision, a commitment or a comment changed after it was written. Every edit
is a revision (`navmcp.content.revisions`): who, when, through which client, the old and the new value;
an edit naming the revision it read (`base`) is refused when another came since."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Body, Comment, Deadline, OptionRef, ShortText, Tags, Title
from navmcp.clock import now
from navmcp.content import domain, mentions, revisions, text
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.feeds import inbox
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


class Rename(Params):
    option: OptionRef = Field(description="an option's number or title as the page shows it, or its id")
    title: Title = Field(title="New title")


MAX_OPTION_EDITS = 20  # a decision's options, at most (decisions.MAX_OPTIONS)


class EditDecision(_Edit):
    question: Title | None = None
    description: ShortText | None = None
    deadline: Deadline | None = None
    tags: Tags | None = Field(None, description="replaces the tags")
    rename_options: list[Rename] | None = Field(None, title="Rename options", max_length=MAX_OPTION_EDITS,
                                                description="options nobody has voted on yet, each with its new title")
    remove_options: list[OptionRef] | None = Field(None, title="Remove options", max_length=MAX_OPTION_EDITS,
                                                   description="options nobody has voted on yet (number, title or id)")
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
        if name in ("base", "tags", "rename_options", "remove_options") or value is None:
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
    options = _option_edits(req, p) if isinstance(p, EditDecision) else None
    if options is not None:
        changes["options"] = (options[0], options[1])
    kind = item["kind"]
    if not changes:  # an edit to what is there already is no edit: no revision, the Updated time stays
        return Outcome(f"Nothing changed: the {kind} already reads that way (revision {item['revision']}).", req.path,
                       changed=False)
    number = revisions.save(req, changes, **columns, updated_at=now())
    if options is not None:
        _write_option_edits(req, options[2], options[3])
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


_VOTED_OPTIONS = ("SELECT option_id FROM votes WHERE decision_id = ?"
                  " UNION SELECT option_id FROM responses WHERE decision_id = ?")


def _option_edits(req: Request, p: EditDecision) -> tuple[list[str], list[str], dict[str, str], list[str]] | None:
    """The options' titles before and after, the renames ({id: title}) and removals (ids) that
    change something; None when none do. An option somebody voted on keeps its title and its place:
    a vote is for what the voter read (refused here, and by the store's rules on PostgreSQL)."""
    if not p.rename_options and not p.remove_options:
        return None
    from navmcp.actions.decisions import find_option  # decisions' own module imports this one's neighbours
    from navmcp.kinds import kind_of, times

    options = domain.options(req.tx, req.item["id"], req.user["id"])
    voted = {r["option_id"] for r in req.tx.all(_VOTED_OPTIONS, (req.item["id"], req.item["id"]))}

    def pick(field: str, given: str) -> Row:
        option = find_option(options, given)
        if option is None:
            names = "; ".join(f"{n}. {o['title']} (id {o['id']})" for n, o in enumerate(options, 1))
            raise InvalidActionParams(f"'{field}': no option {given!r}. Options: {names or 'none'}",
                                      fields=(FieldError(field, "no such option"),))
        if option["id"] in voted:
            raise InvalidActionParams(f"'{field}': {option['title']!r} has votes: an option somebody voted on "
                                      "cannot be renamed or removed (add_option adds another)",
                                      fields=(FieldError(field, "has votes: cannot be renamed or removed"),))
        return option

    removed = [pick(f"remove_options.{i}", given)["id"] for i, given in enumerate(p.remove_options or [])]
    renamed: dict[str, str] = {}
    for i, r in enumerate(p.rename_options or []):
        option = pick(f"rename_options.{i}.option", r.option)
        title = r.title
        if kind_of(req.item).name == "times":  # a time poll's option is a time, stored as time_title writes it
            try:
                title = times.time_title(title)
            except ValueError as e:
                raise InvalidActionParams(f"'rename_options.{i}.title': {e}",
                                          fields=(FieldError(f"rename_options.{i}.title", str(e)),)) from None
        if option["id"] in removed or option["id"] in renamed:
            raise InvalidActionParams(f"'rename_options.{i}.option': {option['title']!r} is named twice",
                                      fields=(FieldError(f"rename_options.{i}.option", "named twice"),))
        if title != option["title"]:
            renamed[option["id"]] = title
    if len(set(removed)) != len(removed):
        raise InvalidActionParams("'remove_options': an option is named twice",
                                  fields=(FieldError("remove_options", "names an option twice"),))
    if not renamed and not removed:
        return None
    before = [o["title"] for o in options]
    after = [renamed.get(o["id"], o["title"]) for o in options if o["id"] not in removed]
    keys = [text.look_alike_key(t) for t in after]
    if len(set(keys)) != len(keys):
        raise InvalidActionParams("'rename_options': two options would look the same",
                                  fields=(FieldError("rename_options", "two options would look the same"),))
    return before, after, renamed, removed


def _write_option_edits(req: Request, renamed: dict[str, str], removed: list[str]) -> None:
    for option_id in removed:
        if req.tx.execute("DELETE FROM options WHERE id = ? AND decision_id = ?", (option_id, req.item["id"])) != 1:
            raise ActionFailed("an option could not be removed: it has votes, or changed meanwhile")
    for option_id, title in renamed.items():
        if req.tx.execute("UPDATE options SET title = ? WHERE id = ? AND decision_id = ?",
                          (title, option_id, req.item["id"])) != 1:
            raise ActionFailed("an option could not be renamed: it has votes, or changed meanwhile")


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
                       f"{req.path}?comment={comment['id']}", changed=False)
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
           "decision, or rename or remove options nobody voted on (a new revision).", edit_item, EditDecision,
           who=rules.creator_or_admin, when=rules.is_open),
    Action("edit_commitment", ("commitment",), "Change the title, description, deadline, limit or tags of the "
           "open commitment (a new revision).", edit_item, EditCommitment, who=rules.creator_or_admin,
           when=rules.is_open),
    Action("edit_comment", ("note", "decision", "commitment"), "Change the text of a comment you wrote "
           "(a new revision).", edit_comment, EditComment, who=wrote_a_comment),
]
