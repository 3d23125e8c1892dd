"""Your e-mail digest, on /whoami (navmcp.feeds.mail): the address it goes to, and whether you want it."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from navmcp.actions.action import Action, Outcome, Params
from navmcp.feeds import mail
from navmcp.pages import Request

ADDRESS = re.compile(r"^[^@\s<>\"',;]{1,64}@[A-Za-z0-9.-]{1,200}\.[A-Za-z]{2,63}$")


class SetEmail(Params):
    email: str = Field(max_length=254, title="E-mail address", description=(
        "where your daily digest of unread inbox entries goes (only you see it); empty to remove it"))

    @field_validator("email")
    @classmethod
    def _address(cls, value: str) -> str:
        if value and not ADDRESS.match(value):
            raise ValueError("must be an e-mail address, e.g. ana@example.org (or empty, to remove yours)")
        return value


def set_email(req: Request, p: SetEmail) -> Outcome:
    mail.set_email(req.tx, req.user["id"], p.email or None)
    req.facts["mail"] = mail.settings(req.tx, req.user["id"])
    if not p.email:
        return Outcome("Your e-mail address is removed: no digest goes out.", req.path)
    return Outcome("Your daily digest of unread inbox entries goes to that address (where this server sends "
                   "e-mail); digest_off stops it.", req.path)


def _set_digest(on: bool, said: str):
    def run(req: Request, p: Params) -> Outcome:
        mail.set_digest(req.tx, req.user["id"], on)
        req.facts["mail"] = mail.settings(req.tx, req.user["id"])
        return Outcome(said, req.path)
    return run


def digest_is(on: bool):
    def rule(req: Request) -> str | None:
        settings = req.facts.get("mail")
        if settings is None:
            return "you have given no e-mail address (set_email)"
        return None if bool(settings["digest"]) == on else f"your digest is {'off' if on else 'on'} already"
    return rule


ACTIONS = [
    Action("set_email", ("whoami",), "Set (or remove) the address your daily inbox digest goes to.", set_email,
           SetEmail),
    Action("digest_off", ("whoami",), "Stop the daily e-mail digest.", _set_digest(False, "Your digest is off."),
           when=digest_is(True)),
    Action("digest_on", ("whoami",), "Send the daily e-mail digest again.", _set_digest(True, "Your digest is on."),
           when=digest_is(False)),
]
