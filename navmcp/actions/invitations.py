"""Invitations (navmcp.identity.invitations): on a studio's members page an admin creates a link a person
opens in a browser to join (shown, or e-mailed where the server sends e-mail), or an invitation for
a person by a handle they made findable, and revokes one; on `/inbox` the person an invitation is
for accepts it (in their browser) or declines it."""

from __future__ import annotations

import smtplib
from typing import Literal

from pydantic import Field, field_validator

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import UserHandle
from navmcp.actions.mail import ADDRESS
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.feeds import mail
from navmcp.identity import invitations, user_by_handle
from navmcp.pages import Request


class CreateInvitation(Params):
    role: Literal["member", "admin"] = Field("member", description="the role it grants")
    uses: int = Field(1, ge=1, le=invitations.MOST_USES, title="Uses",
                      description=f"how many people may join by it (at most {invitations.MOST_USES})")
    days: int = Field(invitations.INVITE_DAYS, ge=1, le=invitations.MOST_DAYS, title="Days valid",
                      description=f"days until it expires (at most {invitations.MOST_DAYS})")
    handle: UserHandle | None = Field(None, title="Person", description=(
        "a findable person's handle: the invitation waits in their inbox for them to accept or decline "
        "(no link; uses is 1)"))
    email: str | None = Field(None, max_length=254, title="E-mail address", description=(
        "send the link to this address instead of showing it (where this server sends e-mail; uses is 1)"))

    @field_validator("email")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and not ADDRESS.match(value):
            raise ValueError("must be an e-mail address, e.g. ana@example.org")
        return value


def _nobody(handle: str) -> InvalidActionParams:
    # Whether the handle is nobody's, a deleted account's or someone's who did not choose to be found,
    # the answer is the same (docs/privacy.md), as add_member's.
    return InvalidActionParams(f"'handle': no such person you can invite: @{handle}. People are invited by a handle "
                               "they made findable (`make_findable`, on their /whoami page), or by a link",
                               fields=(FieldError("handle", "no such person you can invite"),))


def create_invitation(req: Request, p: CreateInvitation) -> Outcome:
    if p.handle is not None and p.email is not None:
        raise InvalidActionParams("give handle or email, not both",
                                  fields=(FieldError("email", "give handle or email, not both"),))
    if p.handle is not None:
        return _invite_person(req, p, p.handle)
    if p.email is not None:
        return _invite_by_email(req, p, p.email)
    token = invitations.create(req.tx, req.studio["id"], req.user["id"], p.role, p.uses, p.days)
    people = "one person" if p.uses == 1 else f"up to {p.uses} people"
    return Outcome(f"Invitation created: share the link `{invitations.PREFIX}{token}` (this server's address in "
                   f"front). It lets {people} join as {p.role} within {p.days} day(s), each in a browser, where "
                   "they sign in or create an account; it is shown only now.", req.path)


def _invite_person(req: Request, p: CreateInvitation, handle: str) -> Outcome:
    person = user_by_handle(req.tx, handle)
    if person is None or not person["findable"]:
        raise _nobody(handle)
    if req.tx.one("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?", (req.studio["id"], person["id"])):
        raise ActionFailed(f"@{handle} is a member of this studio already", url=req.url)
    if invitations.pending_for(req.tx, req.studio["id"], person["id"]):
        raise ActionFailed(f"an invitation waits for @{handle}'s answer already: revoke it first to send another",
                           url=req.url)
    invitations.invite(req.tx, req.studio["id"], req.user["id"], person, p.role, p.days)
    return Outcome(f"Invitation sent to @{handle} as {p.role}, valid {p.days} day(s): it waits in their inbox "
                   "until they accept it (in their browser) or decline it. Nobody is added without agreeing.", req.path)


def _invite_by_email(req: Request, p: CreateInvitation, address: str) -> Outcome:
    try:
        smtp, base = mail.configured(), mail.site_url()
    except ValueError as e:  # the operator's NAVMCP_SMTP_URL does not parse
        raise ActionFailed(f"this server's e-mail settings are wrong ({e}): create a link and share it yourself",
                           url=req.url) from None
    if smtp is None or base is None:
        raise ActionFailed("this server sends no e-mail (its operator sets NAVMCP_SMTP_URL and NAVMCP_BASE_URL): "
                           "create a link and share it yourself", url=req.url)
    token = invitations.create(req.tx, req.studio["id"], req.user["id"], p.role, 1, p.days)
    made = req.tx.scalar("SELECT id FROM invitations WHERE token_hash = ?", (invitations.token_hash(token),))
    studio_name, inviter = req.studio["name"], req.user["handle"]

    def send() -> str | None:  # after the invitation is written: no network wait inside the write
        try:
            mail.send_invitation(smtp, address, f"{base}{invitations.PREFIX}{token}", studio_name, inviter, p.role,
                                 p.days)
        except (OSError, smtplib.SMTPException) as e:
            return (f"But the e-mail could not be sent ({type(e).__name__}): revoke invitation {made} and create a "
                    "link to share instead.")
        return None

    # The address is not kept: it is neither shown to anyone nor stored (the link is the invitation).
    return Outcome(f"Invitation {made} e-mailed as a link to the address given: it lets one person join as {p.role} "
                   f"within {p.days} day(s), in a browser. The link is not shown here.", req.path, after=send)


class RevokeInvitation(Params):
    invitation: str = Field(max_length=64, pattern=r"^[A-Za-z0-9_-]{1,64}$", title="Invitation",
                            description="the invitation's id, as the members page lists it")


def revoke_invitation(req: Request, p: RevokeInvitation) -> Outcome:
    if not invitations.revoke(req.tx, req.studio["id"], p.invitation):
        raise InvalidActionParams("'invitation': no open invitation of this studio has that id",
                                  fields=(FieldError("invitation", "no open invitation of this studio has that id"),))
    return Outcome(f"Invitation {p.invitation} revoked: its link no longer works.", req.path)


def open_invitations(req: Request) -> str | None:
    return None if req.facts.get("open_invitations") else "this studio has no open invitation"


class AnswerInvitation(Params):
    invitation: str = Field(max_length=64, pattern=r"^[A-Za-z0-9_-]{1,64}$", title="Invitation",
                            description="the invitation's id, as your inbox lists it")


def _answer(accept: bool):
    def run(req: Request, p: AnswerInvitation) -> Outcome:
        studio = invitations.answer(req.tx, req.user["id"], p.invitation, accept)
        if studio is None:
            raise InvalidActionParams("'invitation': no invitation waits for your answer with that id",
                                      fields=(FieldError("invitation", "no invitation waits for your answer with that id"),))
        if accept:
            return Outcome(f"You joined {studio}.", f"/studios/{studio}")
        return Outcome(f"Invitation to {studio} declined: nobody was added.", req.path)
    return run


def invited(req: Request) -> str | None:
    return None if req.facts.get("invitations") else "no invitation waits for your answer"


def in_browser(req: Request) -> str | None:
    if reason := invited(req):
        return reason
    return None if req.browser else "an invitation is accepted by the person in their browser session, never over MCP"


ACTIONS = [
    Action("create_invitation", ("members",), "Create an invitation link a person opens in a browser to join.",
           create_invitation, CreateInvitation, who=rules.admin),
    Action("revoke_invitation", ("members",), "Revoke an invitation: its link stops working.",
           revoke_invitation, RevokeInvitation, who=rules.admin, when=open_invitations),
    Action("accept_invitation", ("inbox",), "Join the studio an invitation for you is to (in your browser).",
           _answer(True), AnswerInvitation, who=in_browser),
    Action("decline_invitation", ("inbox",), "Decline an invitation for you: nobody is added.",
           _answer(False), AnswerInvitation, when=invited),
]
