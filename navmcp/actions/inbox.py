"""Actions on your inbox (`/inbox`, navmcp.feeds.inbox): marking entries read, dismissing them."""

from __future__ import annotations

from pydantic import Field, model_validator

from navmcp.actions.action import Action, Outcome, Params
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.pages import Request

EntryId = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_-]{1,64}$", title="Entry",
                description="an entry's id, as the inbox lists it")


class Entries(Params):
    entry: str | None = EntryId
    all: bool = Field(False, description="every entry up to `until` (or up to now)")
    until: str | None = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_-]{1,64}$",
                              description="with all: an entry's id; entries newer than it are left as they are")

    @model_validator(mode="after")
    def _one_or_all(self):
        if (self.entry is None) == (not self.all):
            raise ValueError("give entry (one entry's id) or all: true")
        return self


def _until(req: Request, p: Entries) -> str | None:
    if p.until is None:
        return None
    at = inbox.entry_time(req.tx, req.user["id"], p.until)
    if at is None:
        raise InvalidActionParams("'until': no such entry in your inbox",
                                  fields=(FieldError("until", "no such entry in your inbox"),))
    return at


def _missing() -> InvalidActionParams:
    return InvalidActionParams("'entry': no such entry in your inbox (dismissed already?)",
                               fields=(FieldError("entry", "no such entry in your inbox"),))


def mark_read(req: Request, p: Entries) -> Outcome:
    until = _until(req, p)
    n = inbox.mark_read(req.tx, req.user["id"], p.entry, until)
    if p.entry is not None and not n and inbox.entry_time(req.tx, req.user["id"], p.entry) is None:
        raise _missing()
    return Outcome(f"Marked {n} entr{'y' if n == 1 else 'ies'} read.", req.path)


def dismiss(req: Request, p: Entries) -> Outcome:
    until = _until(req, p)
    n = inbox.dismiss(req.tx, req.user["id"], p.entry, until)
    if p.entry is not None and not n:
        raise _missing()
    return Outcome(f"Dismissed {n} entr{'y' if n == 1 else 'ies'}.", req.path)


def has_unread(req: Request) -> str | None:
    return None if req.facts.get("unread") else "nothing in your inbox is unread"


def has_entries(req: Request) -> str | None:
    return None if req.facts.get("entries") else "your inbox is empty"


ACTIONS = [
    Action("mark_read", ("inbox",), "Mark one entry read (entry), or all of them up to a point (all, until?).",
           mark_read, Entries, when=has_unread),
    Action("dismiss", ("inbox",), "Remove one entry (entry), or all of them up to a point (all, until?), from your inbox.",
           dismiss, Entries, when=has_entries),
]
