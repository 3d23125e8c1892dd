"""Actions on studios: creating one, its members, and creating items in it."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Body, Deadline, Handle, Name, Options, ShortText, Tags, Title, UserHandle
from navmcp.clock import now
from navmcp.content import domain, mentions
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.feeds import changes, inbox
from navmcp.identity import invitations, new_id, user_by_handle
from navmcp.pages import Request
from navmcp.render import quoted


class CreateStudio(Params):
    handle: Handle = Field(title="Short name for its web address",
                           description="URL name: lowercase letters, digits, '-' (e.g. 'team')")
    name: Name = Field(description="display name")
    description: ShortText = Field("", description="what the studio is for")


def create_studio(req: Request, p: CreateStudio) -> Outcome:
    # The insert is the uniqueness check: a SELECT would not see other people's studios on the
    # hosted store (row-level security), and two creators racing must not both pass it.
    sid, stamp = new_id(), now()
    if not req.tx.execute("INSERT INTO studios (id, handle, name, description, created_by, created_at)"
                          " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                          (sid, p.handle, p.name, p.description, req.user["id"], stamp)):
        raise ActionFailed(f"the handle '{p.handle}' is taken; choose another")
    req.tx.execute("INSERT INTO memberships (studio_id, user_id, role, created_at) VALUES (?, ?, 'admin', ?)",
                   (sid, req.user["id"], stamp))
    req.studio = {"id": sid, "handle": p.handle}
    return Outcome(f"Created studio {quoted(p.name)}; you are its admin.", f"/studios/{p.handle}")


class AddMember(Params):
    handle: UserHandle = Field(title="Person", description="handle of a person who made it findable, or of a member "
                                                           "(a leading '@' is optional)")
    role: Literal["member", "admin"] | None = Field(
        None, description="role in this studio; if left out: member for a newcomer, unchanged for a member")


def add_member(req: Request, p: AddMember) -> Outcome:
    """A member's role changes at once; a newcomer is invited (navmcp.identity.invitations.invite)
    and joins only by accepting it: nobody is added without agreeing (docs/privacy.md)."""
    _lock_members(req)
    user = user_by_handle(req.tx, p.handle)
    before = user and req.tx.scalar("SELECT role FROM memberships WHERE studio_id = ? AND user_id = ?",
                                    (req.studio["id"], user["id"]))
    # Someone is invited only by a handle they made findable. Whether the handle is nobody's, a
    # deleted account's, or someone's who did not choose to be found, the answer is the same: it
    # must not tell which (docs/privacy.md).
    if user is None or (before is None and not user["findable"]):
        raise InvalidActionParams(f"'handle': no such person you can add: @{p.handle}. People are added by a handle "
                                  f"they made findable (`make_findable`, on their /whoami page): ask them for it",
                                  fields=(FieldError("handle", "no such person you can add"),))
    role = p.role or before or "member"  # "add carol" makes sure she is in; it never demotes her
    if before is None:  # the studio's lock (above) keeps another add of the same person from racing this one
        if invitations.pending_for(req.tx, req.studio["id"], user["id"]):
            return Outcome(f"@{p.handle} is invited already and has not answered yet; nothing changed (to invite "
                           "them with another role, revoke that invitation first: revoke_invitation).", req.path,
                           changed=False)
        invitations.invite(req.tx, req.studio["id"], req.user["id"], user, role, invitations.INVITE_DAYS)
        return Outcome(f"Invited @{p.handle} to join as {role}: they are not a member until they accept the "
                       f"invitation waiting in their inbox (within {invitations.INVITE_DAYS} days); nobody is "
                       "added without agreeing.", req.path)
    named = "an admin" if role == "admin" else "a member"
    if before == role:
        return Outcome(f"@{p.handle} was already {named}; nothing changed.", req.path, changed=False)
    if before == "admin":
        _keep_an_admin(req, losing=user["id"])
    # A role change: no consent asked again (the hosted store checks an insert's, not an update's).
    req.tx.execute("UPDATE memberships SET role = ? WHERE studio_id = ? AND user_id = ?",
                   (role, req.studio["id"], user["id"]))
    return Outcome(f"@{p.handle} is now {named} of this studio.", req.path)


class RemoveMember(Params):
    handle: UserHandle = Field(title="Person", description="handle of a current member (a leading '@' is optional)")


def remove_member(req: Request, p: RemoveMember) -> Outcome:
    _lock_members(req)
    # Found among this studio's members, deleted accounts included: an admin must be able to
    # remove someone whose account was deleted (user_by_handle no longer finds them).
    user = req.tx.one("SELECT u.id, m.role FROM memberships m JOIN users u ON u.id = m.user_id"
                      " WHERE m.studio_id = ? AND u.handle = ?", (req.studio["id"], p.handle))
    if user is None:
        raise InvalidActionParams(f"'handle': @{p.handle} is not a member of this studio",
                                  fields=(FieldError("handle", "is not a member of this studio"),))
    if user["role"] == "admin":
        _keep_an_admin(req, losing=user["id"])
    req.tx.execute("DELETE FROM memberships WHERE studio_id = ? AND user_id = ?", (req.studio["id"], user["id"]))
    if user["id"] == req.user["id"]:  # you left: the members page is no longer yours to see
        return Outcome("You left this studio.", "/")
    return Outcome(f"Removed @{p.handle} from this studio.", req.path)


# The others in a studio, and its admins, whose accounts work: a deleted account's membership
# keeps its place on the members page but administers nothing, and keeps no studio alive.
_OTHERS = """SELECT coalesce(sum(CASE WHEN u.deleted_at IS NULL THEN 1 ELSE 0 END), 0) AS others,
                   coalesce(sum(CASE WHEN m.role = 'admin' AND u.deleted_at IS NULL THEN 1 ELSE 0 END), 0) AS admins
              FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.studio_id = ? AND m.user_id <> ?"""


LAST_MEMBER = ("you are this studio's last member: leaving would leave it to nobody. delete_studio deletes it, with "
               "everything in it, and frees its handle; to keep it, add someone first (add_member)")


def not_the_last_admin(req: Request) -> str | None:
    """Anyone may leave but the last admin of a studio others are still in, and its last member
    (who deletes it instead: `delete_studio`, its own action, never a consequence of leaving)."""
    left = req.tx.one(_OTHERS, (req.studio["id"], req.user["id"]))
    if not left["others"]:
        return LAST_MEMBER
    if req.role == "admin" and not left["admins"]:
        return "you are this studio's last admin: make another member an admin first (add_member with role admin)"
    return None


def the_last_member(req: Request) -> str | None:
    """Only the last member may delete a studio: nobody else's work goes with it."""
    others = req.tx.one(_OTHERS, (req.studio["id"], req.user["id"]))["others"]
    if others:
        return (f"only a studio's last member can delete it, and {others} other member(s) are in it: "
                "leave it instead (leave_studio)")
    return None


class LeaveStudio(Params):
    pass


def leave_studio(req: Request, p: LeaveStudio) -> Outcome:
    req.tx.lock("studios", req.studio["id"])  # after the other membership changes in flight
    role = req.tx.scalar("SELECT role FROM memberships WHERE studio_id = ? AND user_id = ?",
                         (req.studio["id"], req.user["id"]))
    if role is None:
        raise ActionFailed("you are no longer a member of this studio")
    if not req.tx.one(_OTHERS, (req.studio["id"], req.user["id"]))["others"]:  # the others left meanwhile
        raise ActionFailed(LAST_MEMBER)
    if role == "admin":  # checked again under the lock
        _keep_an_admin(req, losing=req.user["id"])
    req.tx.execute("DELETE FROM memberships WHERE studio_id = ? AND user_id = ?", (req.studio["id"], req.user["id"]))
    return Outcome("You left this studio.", "/")


class DeleteStudio(Params):
    confirm: str = Field(max_length=100, title="Type the studio's short name to confirm",
                         description="the studio's handle (as in its web address), to confirm")


def delete_studio(req: Request, p: DeleteStudio) -> Outcome:
    """The last member deletes the studio, once they named it: a studio nobody is in answers
    nobody, and would keep its handle from anyone else for ever."""
    req.tx.lock("studios", req.studio["id"])  # after the other membership changes in flight
    handle = req.studio["handle"]
    if reason := the_last_member(req):  # someone joined meanwhile
        raise ActionFailed(reason)
    if p.confirm.strip().removeprefix("/studios/") != handle:
        raise InvalidActionParams(f"'confirm': type the studio's handle, '{handle}', to delete it with everything in it",
                                  fields=(FieldError("confirm", f"must be '{handle}'"),))
    items = req.tx.scalar("SELECT count(*) FROM items WHERE studio_id = ?", (req.studio["id"],))
    if not req.tx.execute("DELETE FROM studios WHERE id = ?", (req.studio["id"],)):  # its rows go with it
        raise ActionFailed("the database refused to delete the studio (its members may have just changed): reload the page")
    # Watchers of its pages hear of it, as of any studio-wide change, and are ended (no longer a
    # member); the act itself is audited under no studio, as there is none left to show it under.
    changes.record(req.tx, req.user["id"], req.studio["id"], None, "delete_studio")
    req.studio = None
    return Outcome(f"Deleted the studio '{handle}' with its {items} item(s); the handle '{handle}' is free again.", "/")


def _lock_members(req: Request) -> None:
    """Membership changes of one studio queue up (hosted store: a row lock on the studio); once it
    is our turn, make sure we are still an admin — another admin may have demoted us meanwhile."""
    req.tx.lock("studios", req.studio["id"])
    if not req.tx.one("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ? AND role = 'admin'",
                      (req.studio["id"], req.user["id"])):
        raise ActionFailed("you are no longer an admin of this studio")


def _keep_an_admin(req: Request, losing: str) -> None:
    """Refuse to end `losing`'s admin role when no other admin would be left. Counted before the
    write: on the hosted store an admin who removes themselves no longer sees the studio's
    memberships afterwards (row-level security), so a count after it would read 0."""
    # Two admins demoting each other at once would each still see the other; the studio row lock
    # taken above makes the second wait and count again (the hosted store's READ COMMITTED).
    # A deleted account's admin role administers nothing: it does not count.
    if not req.tx.scalar("SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id"
                         " WHERE m.studio_id = ? AND m.role = 'admin' AND u.deleted_at IS NULL AND m.user_id <> ?",
                         (req.studio["id"], losing)):
        raise ActionFailed("a studio must keep at least one admin whose account is not deleted: make another "
                           "member an admin first (add_member with role admin)")


class CreateNote(Params):
    title: Title
    body: Body = Field(title="Text", description="markdown text; mention another item's URL to link them")
    tags: Tags = []


def create_note(req: Request, p: CreateNote) -> Outcome:
    item = domain.insert_item(req.tx, req.studio, req.user, "note", p.title, p.body, p.tags)
    _tell_mentioned(req, item["id"], p.body)
    return Outcome(f"Created note {quoted(p.title)}.", domain.item_url(req.studio["handle"], item))


class CreateDecision(Params):
    question: Title = Field(description="the question to decide")
    description: ShortText = Field("", description="what it is about; a consent proposal's text")
    options: Options = Field([], description="initial option titles (at most 20)")
    deadline: Deadline | None = None
    tags: Tags = []
    anonymous: bool = Field(False, description="show only counts, never who voted how (to everyone, for good)")
    kind: Literal["acceptance", "consent", "dots", "times"] = Field("acceptance", description=(
        "how it is decided: acceptance (accept options, prefer one), consent (a proposal that passes unless "
        "objected to), dots (spread dots across options), times (a time poll: its options are times)"))
    # The length bound is the text's, inside the Optional: on the Optional it met quorum_text's None ("").
    quorum: Annotated[str, StringConstraints(max_length=10), BeforeValidator(lambda v: str(v) if type(v) is int else v),
                      AfterValidator(kinds.quorum_text)] | None = Field(
        None, description="members who must respond for a result: a number (3) or a share (50%)")
    dots: int | None = Field(None, ge=1, le=20, description="kind dots: the dots each member has (3 if left out)")
    max_objections: int | None = Field(None, ge=0, le=1000, description=(
        "kind consent: the objections it passes with (0 if left out)"))
    duration_minutes: int | None = Field(None, ge=5, le=1440, description="kind times: how long it lasts (60 if left out)")

    @model_validator(mode="after")
    def _kind_settings(self) -> CreateDecision:
        given = {"dots": self.dots, "max_objections": self.max_objections, "duration_minutes": self.duration_minutes}
        self._settings, self.options = kinds.settings_for(kinds.KINDS[self.kind], given, self.options)
        return self

    _settings: dict[str, Any] = PrivateAttr(default_factory=dict)


def create_decision(req: Request, p: CreateDecision) -> Outcome:
    kind = kinds.KINDS[p.kind]
    item = domain.insert_item(req.tx, req.studio, req.user, "decision", p.question, p.description, p.tags,
                              deadline=p.deadline, anonymous=p.anonymous, quorum=p.quorum,
                              decision_kind=None if p.kind == kinds.DEFAULT else p.kind,
                              kind_settings=json.dumps(p._settings, sort_keys=True) if p._settings else None)
    for title in p.options:
        domain.insert_option(req.tx, req.user, item["id"], title)
    kind.created(req, item, p._settings)
    _tell_mentioned(req, item["id"], p.description)
    what = "decision" if p.kind == "acceptance" else kind.describe(p._settings)
    said = f" with {len(p.options)} option(s)" if kind.has_options else ""
    return Outcome(f"Created {what} {quoted(p.question)}{said}.", domain.item_url(req.studio["handle"], item))


class CreateCommitment(Params):
    title: Title
    description: ShortText = ""
    critical_mass: int = Field(title="People needed", ge=1, le=100_000, description="participants needed for it to take effect")
    limit: int | None = Field(None, title="At most", ge=1, le=100_000,
                              description="most participants, at least critical_mass; reaching it closes the commitment")
    deadline: Deadline | None = None
    tags: Tags = []

    @field_validator("limit")
    @classmethod
    def _limit_reachable(cls, limit: int | None, info: ValidationInfo) -> int | None:
        mass = info.data.get("critical_mass")  # absent when critical_mass itself was refused
        if limit is not None and mass is not None and limit < mass:
            raise ValueError(f"must be at least the number of people needed ({mass})")
        return limit


def create_commitment(req: Request, p: CreateCommitment) -> Outcome:
    item = domain.insert_item(req.tx, req.studio, req.user, "commitment", p.title, p.description, p.tags,
                              deadline=p.deadline, critical_mass=p.critical_mass, participant_limit=p.limit)
    _tell_mentioned(req, item["id"], p.description)
    return Outcome(f"Created commitment {quoted(p.title)} (critical mass {p.critical_mass}).",
                   domain.item_url(req.studio["handle"], item))


def _tell_mentioned(req: Request, item_id: str, text: str) -> None:
    inbox.notify(req, "mention", mentions.mentioned(req.tx, req.studio["id"], req.role, text), item_id)


ACTIONS = [
    Action("create_studio", ("home",), "Create a studio; you become its admin.", create_studio, CreateStudio),
    Action("add_member", ("members",), "Invite a findable person to this studio (they join when they accept), "
           "or change a member's role.", add_member, AddMember,
           who=rules.admin),
    Action("remove_member", ("members",), "Remove a member from this studio.", remove_member, RemoveMember,
           who=rules.admin),
    Action("leave_studio", ("members",), "Leave this studio (its last admin must make another admin first; "
           "its last member deletes it instead: delete_studio).", leave_studio, LeaveStudio,
           who=rules.member, when=not_the_last_admin),
    Action("delete_studio", ("members",), "Delete this studio with everything in it and free its handle (its "
           "last member only), naming it in confirm.", delete_studio, DeleteStudio,
           who=rules.member, when=the_last_member),
    Action("create_note", ("studio",), "Write a note; returns its URL.", create_note, CreateNote, who=rules.member),
    Action("create_decision", ("studio",), "Ask a question the studio decides (by acceptance voting, a consent "
           "proposal, a dot vote or a time poll: kind); returns its URL.",
           create_decision, CreateDecision, who=rules.member),
    Action("create_commitment", ("studio",), "Propose something that happens once enough people join; returns its URL.",
           create_commitment, CreateCommitment, who=rules.member),
]
