"""Actions about yourself: whether studio admins may find you by your handle and add you; your
time zone (navmcp.clock.zones).

Adding someone to a studio takes their consent (docs/privacy.md): a handle they chose to make
findable. Accounts that people sign up for themselves start unfindable."""

from __future__ import annotations

from pydantic import Field, field_validator

from navmcp.actions.action import Action, Outcome, Params
from navmcp.clock import zones
from navmcp.errors import ActionFailed
from navmcp.pages import Request


def unfindable(req: Request) -> str | None:
    return "you are findable already" if req.user["findable"] else None


def findable(req: Request) -> str | None:
    return None if req.user["findable"] else "you are not findable"


def _set_findable(value: int, said: str):
    def run(req: Request, p: Params) -> Outcome:
        # Your own row, while your account works (the hosted store's users policy says the same).
        if not req.tx.execute("UPDATE users SET findable = ? WHERE id = ? AND deleted_at IS NULL",
                              (value, req.user["id"])):
            raise ActionFailed("your account was not found (deleted?)")
        req.user = {**req.user, "findable": value}  # what is valid afterwards reads the new value
        return Outcome(said.format(handle=req.user["handle"]), req.path)
    return run


class SetTimeZone(Params):
    zone: str = Field(title="Time zone", min_length=1, max_length=zones.MAX_NAME, description=(
        "an IANA zone name, e.g. Europe/Lisbon, America/New_York, Asia/Tokyo, or UTC; 'none' to set none "
        "(deadlines in UTC; the web app uses your browser's zone)"))

    @field_validator("zone")
    @classmethod
    def _known(cls, value: str) -> str:
        return "" if value.strip().lower() == "none" else zones.canonical(value)


def set_time_zone(req: Request, p: SetTimeZone) -> Outcome:
    # Your own row, while your account works (the hosted store's users policy says the same).
    if not req.tx.execute("UPDATE users SET time_zone = ? WHERE id = ? AND deleted_at IS NULL",
                          (p.zone or None, req.user["id"])):
        raise ActionFailed("your account was not found (deleted?)")
    req.user = {**req.user, "time_zone": p.zone or None}
    if not p.zone:
        return Outcome("No time zone set: deadlines are read and shown in UTC (the web app uses your browser's).",
                       req.path)
    return Outcome(f"Your time zone is {p.zone}: deadlines you give without a zone are read in it, and pages "
                   "show deadlines in it.", req.path)


ACTIONS = [
    Action("make_findable", ("whoami",),
           "Let studio admins who know your handle add you to their studios.",
           _set_findable(1, "You are findable: an admin who knows your handle @{handle} can invite you to a studio."),
           when=unfindable),
    Action("make_unfindable", ("whoami",),
           "Stop studio admins from adding you (you stay in the studios you are in).",
           _set_findable(0, "You are no longer findable: nobody can invite you to a studio; you stay in yours."),
           when=findable),
    Action("set_time_zone", ("whoami",), "Set your time zone: deadlines you type are read in it, pages show "
           "deadlines in it.", set_time_zone, SetTimeZone),
]
