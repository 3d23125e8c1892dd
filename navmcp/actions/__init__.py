"""The action table: name → pages it lives on → params model → who/when rules → handler.

The same two rules filter a page's listing and gate the execution (inside the write transaction,
on fresh data), so the page can never offer what the executor refuses or the reverse.
`who` answers "may this user do it here?" (refusal: 403); `when` answers "is it possible in this
state?" (refusal: 409). Each returns None when allowed, else a reason written for the agent.
"""

from __future__ import annotations

from navmcp import kinds
from navmcp.actions import (  # noqa: I001,E501
    attachments,
    closing,
    commitments,
    decisions,
    deletion,
    edits,
    inbox,
    invitations,
    mail,
    notes,
    people,
    reminders,
    studios,
)
from navmcp.actions.action import Action, Outcome, Params, param_docs  # first: it readies pydantic (lean.py)
from navmcp.errors import ActionUnavailable, echo
from navmcp.held import approval as held
from navmcp.kinds import acceptance, consent, dots, times  # each registers its kind (navmcp.kinds)
from navmcp.pages import Request

__all__ = ["ACTIONS", "BY_PAGE", "Action", "Outcome", "Params", "available", "check", "param_docs", "valid_here"]

ACTIONS: list[Action] = [*people.ACTIONS, *mail.ACTIONS, *studios.ACTIONS, *invitations.ACTIONS, *notes.ACTIONS,
                         *decisions.ACTIONS, *reminders.ACTIONS, *commitments.ACTIONS, *edits.ACTIONS, *closing.ACTIONS,
                         *inbox.ACTIONS, *held.ACTIONS, *attachments.ACTIONS,
                         *deletion.ACTIONS]
# The decision kinds' own actions; then every decision page action is judged by the decision's kind first.
ACTIONS = kinds.gate([*ACTIONS, *consent.ACTIONS, *dots.ACTIONS, *times.ACTIONS])
assert set(kinds.KINDS) == set(kinds.NAMES) and acceptance.KIND, "a decision kind is not imported here"


def _by_page(actions: list[Action]) -> dict[str, dict[str, Action]]:
    table: dict[str, dict[str, Action]] = {}
    for action in actions:
        for page in action.on:
            if action.name in table.setdefault(page, {}):
                raise RuntimeError(f"action {action.name!r} declared twice on page {page!r}")
            table[page][action.name] = action
    return table


BY_PAGE = _by_page(ACTIONS)


def available(page: str, req: Request) -> list[Action]:
    return [a for a in BY_PAGE.get(page, {}).values() if a.refusal(req) is None]


def check(page: str, name: str, req: Request) -> tuple[Action, list[str]]:
    """The action if valid here now, else `ActionUnavailable` naming the reason and what is valid."""
    valid: list[str] = []
    refused: tuple[str, bool] | None = None
    for a in BY_PAGE.get(page, {}).values():  # each rule judged once, for the listing and the gate
        reason = a.refusal(req)
        if reason is None:
            valid.append(a.name)
        elif a.name == name:
            refused = reason
    action = BY_PAGE.get(page, {}).get(name)
    if action is None:
        # Unknown here: name what is, with what each one needs, so the next call can be right.
        raise ActionUnavailable(
            f"{echo(name)} is not an action of {req.path}. " + valid_here(valid, BY_PAGE.get(page, {})),
            url=req.url, available=valid)
    if refused:
        why, forbidden = refused
        raise ActionUnavailable(
            f"{name} is not available: {why}. " + valid_here(valid),
            url=req.url, available=valid, forbidden=forbidden)
    return action, valid


held.bind(check)  # the last approval of a held action judges it again (navmcp.held.approval)


def valid_here(valid: list[str], actions: dict[str, Action] | None = None) -> str:
    """The actions valid here; with `actions`, each with its parameters (`name(a, b?)`, ? optional)."""
    if not valid:
        return "No actions are available here for you."
    if actions is None:
        return f"Available here: {', '.join(valid)}."
    return "Available here: " + ", ".join(f"{n}({_signature(actions[n])})" for n in valid) + "."


def _signature(action: Action) -> str:
    required = action.input_schema.get("required", [])
    return ", ".join(f"{n}{'' if n in required else '?'}" for n in action.input_schema.get("properties", {}))
