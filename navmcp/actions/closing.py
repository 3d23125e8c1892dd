"""A decision after it opens: a later deadline (`extend_decision`), reopened within a week of
closing (`reopen_decision`, its earlier result kept in its history), and the outcome statement its
closer writes (`close_decision`'s `outcome`, or `set_outcome` later). Each change a revision."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Deadline, ShortText
from navmcp.clock import ago, now
from navmcp.content import domain, revisions
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.pages import Request
from navmcp.render import utc

REOPEN_DAYS = 7  # a closed decision may be reopened this long after it closed

Outcome_ = Field(min_length=1, max_length=5_000, title="Outcome",
                 description="what was decided, in your words (a tie: which of the tied options is chosen)")


def result_said(req: Request) -> str:
    """The result of the decision as its answers stand, as its kind decides it (navmcp.kinds)."""
    return kinds.kind_of(req.item).verdict(req).text


def closed_at(item) -> str | None:
    """When a decision closed: by hand, or when its deadline passed; None while it is open."""
    if item["closed_at"]:
        return item["closed_at"]
    return item["deadline"] if domain.deadline_passed(item) else None


class ExtendDecision(Params):
    deadline: Deadline = Field(title="New deadline")
    base: int | None = Field(None, ge=1, le=1_000_000, title="Revision you read",
                             description="the revision you read; refused if another came since")


def extend_decision(req: Request, p: ExtendDecision) -> Outcome:
    revisions.check_base(req, p.base)
    item = req.item
    if item["deadline"] and p.deadline <= item["deadline"]:
        raise InvalidActionParams(f"'deadline': must be later than the deadline now, {utc(item['deadline'])}",
                                  fields=(FieldError("deadline", "must be later than the deadline now"),))
    number = revisions.save(req, {"deadline": (item["deadline"], p.deadline)}, deadline=p.deadline, updated_at=now())
    return Outcome(f"Deadline moved to {utc(p.deadline)}: revision {number}.", req.path)


class ReopenDecision(Params):
    deadline: Deadline | None = Field(None, title="New deadline",
                                      description="required when its deadline has passed; else optional")


def reopen_decision(req: Request, p: ReopenDecision) -> Outcome:
    item = req.item
    if domain.deadline_passed(item) and p.deadline is None:
        raise InvalidActionParams("'deadline': its deadline has passed: give a new one to reopen it",
                                  fields=(FieldError("deadline", "is required: the deadline has passed"),))
    changes = {"status": (f"closed at {utc(closed_at(item))}", "open"), "result": (result_said(req), "")}
    columns: dict[str, Any] = {"closed_at": None, "outcome": None, "updated_at": now()}
    if item["outcome"]:
        changes["outcome"] = (item["outcome"], "")
    if p.deadline is not None:
        changes["deadline"] = (item["deadline"], p.deadline)
        columns["deadline"] = p.deadline
    number = revisions.save(req, changes, **columns)
    return Outcome(f"Decision reopened: revision {number}; its earlier result is in its history "
                   f"({req.path}?history=1).", req.path)


def closed_lately(req: Request) -> str | None:
    """Closed (by hand or by its deadline) within the last REOPEN_DAYS days."""
    if req.facts.get("open"):
        return "the decision is open"
    when = closed_at(req.item)
    if when is None:  # full: not a decision's state
        return "the decision is not closed"
    if when < ago(REOPEN_DAYS * 86_400):
        return f"it closed more than {REOPEN_DAYS} days ago ({utc(when)})"
    return kinds.kind_of(req.item).reopen_refused(req)


class SetOutcome(Params):
    outcome: ShortText = Outcome_


def set_outcome(req: Request, p: SetOutcome) -> Outcome:
    old = req.item["outcome"]
    if p.outcome == old:
        return Outcome("Nothing changed: the outcome already reads that way.", req.path, changed=False)
    number = revisions.save(req, {"outcome": (old or "", p.outcome)}, outcome=p.outcome, updated_at=now())
    return Outcome(f"Outcome {'changed' if old else 'written'}: revision {number}.", req.path)


def closed(req: Request) -> str | None:
    return "the decision is open: close_decision takes an outcome" if req.facts.get("open") else None


ACTIONS = [
    Action("extend_decision", ("decision",), "Give the open decision a later deadline (a new revision).",
           extend_decision, ExtendDecision, who=rules.creator_or_admin, when=rules.is_open),
    Action("reopen_decision", ("decision",), f"Reopen the decision, within {REOPEN_DAYS} days of its closing; "
           "its earlier result stays in its history.", reopen_decision, ReopenDecision,
           who=rules.creator_or_admin, when=closed_lately),
    Action("set_outcome", ("decision",), "Write or change the closed decision's outcome statement (a new revision).",
           set_outcome, SetOutcome, who=rules.creator_or_admin, when=closed),
]
