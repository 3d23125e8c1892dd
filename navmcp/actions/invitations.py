"""Invitations on a studio's members page (navmcp.identity.invitations): an admin creates a link a person
opens in a browser to join, and revokes one."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.identity import invitations
from navmcp.pages import Request


class CreateInvitation(Params):
    role: Literal["member", "admin"] = Field("member", description="the role it grants")
    uses: int = Field(1, ge=1, le=invitations.MOST_USES, title="Uses",
                      description=f"how many people may join by it (at most {invitations.MOST_USES})")
    days: int = Field(invitations.INVITE_DAYS, ge=1, le=invitations.MOST_DAYS, title="Days valid",
                      description=f"days until it expires (at most {invitations.MOST_DAYS})")


def create_invitation(req: Request, p: CreateInvitation) -> Outcome:
    token = invitations.create(req.tx, req.studio["id"], req.user["id"], p.role, p.uses, p.days)
    people = "one person" if p.uses == 1 else f"up to {p.uses} people"
    return Outcome(f"Invitation created: share the link `{invitations.PREFIX}{token}` (this server's address in "
                   f"front). It lets {people} join as {p.role} within {p.days} day(s), each in a browser, where "
                   "they sign in or create an account; it is shown only now.", req.path)


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


ACTIONS = [
    Action("create_invitation", ("members",), "Create an invitation link a person opens in a browser to join.",
           create_invitation, CreateInvitation, who=rules.admin),
    Action("revoke_invitation", ("members",), "Revoke an invitation: its link stops working.",
           revoke_invitation, RevokeInvitation, who=rules.admin, when=open_invitations),
]
