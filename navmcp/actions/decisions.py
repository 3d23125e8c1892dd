"""Actions on decisions: options, acceptance votes, closing."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import OptionRef, ShortText, Title
from navmcp.clock import now
from navmcp.content import domain
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.pages import Request
from navmcp.render import inline, quoted
from navmcp.store import Row


class AddOption(Params):
    title: Title = Field(title="Option")


def add_option(req: Request, p: AddOption) -> Outcome:
    domain.insert_option(req.tx, req.user, req.item["id"], p.title)
    domain.touch(req.tx, req.item["id"])
    return Outcome(f"Added option {quoted(p.title)}.", req.path)


class Ballot(Params):
    # A number may come as a JSON number: it is read as the text it would be.
    option: Annotated[OptionRef, BeforeValidator(lambda v: str(v) if type(v) is int else v)] = Field(
        description="an option's number or title as the page shows it, or its id",
        json_schema_extra={"x-shape": "number | title | id"})
    accept: bool = Field(True, description="you could live with this option")
    prefer: bool = Field(False, description="this is the option you want most (only an option you accept)")

    @model_validator(mode="after")
    def _prefer_what_you_accept(self) -> Ballot:
        # A prefer breaks ties between accepted options: on a rejected one it would tip a result
        # the voter voted against.
        if self.prefer and not self.accept:
            raise ValueError("prefer needs accept: you can only prefer an option you accept")
        return self


MAX_BALLOTS = 20


class Vote(Params):
    votes: list[Ballot] = Field(title="Your vote", min_length=1, max_length=MAX_BALLOTS,
                                description="one entry per option you vote on; voting again replaces your vote")


# A new ballot updates the rows of the options it names in place (one B-tree write per row, where
# a delete and a re-insert wrote the table and its three indexes twice) and deletes only the votes
# on options it leaves out.
_UPSERT_VOTES = {n: "INSERT INTO votes (decision_id, option_id, user_id, accept, prefer, created_at) VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?, ?)"] * n)
                    + " ON CONFLICT (option_id, user_id) DO UPDATE"
                      " SET accept = excluded.accept, prefer = excluded.prefer, created_at = excluded.created_at"
                 for n in range(1, MAX_BALLOTS + 1)}
_DELETE_LEFT_OUT = {n: "DELETE FROM votes WHERE decision_id = ? AND user_id = ? AND option_id NOT IN ("
                       + ", ".join(["?"] * n) + ")" for n in range(1, MAX_BALLOTS + 1)}


def find_option(options: list[Row], given: str) -> Row | None:
    """The option a ballot names, in the options' own order (oldest first, as the page numbers
    them): its id, its title as typed or as the page shows it, or its number ("2", "#2", "2.")."""
    text = given.strip()
    for o in options:
        if text in (o["id"], o["title"]):
            return o
    for o in options:
        if text in (inline(o["title"]), " ".join(o["title"].split())):  # as displayed, or unquoted
            return o
    number = _NUMBER.fullmatch(text)
    if number and 1 <= int(number.group(1)) <= len(options):
        return options[int(number.group(1)) - 1]
    return None


_NUMBER = re.compile(r"#?(\d{1,3})\.?")


def vote(req: Request, p: Vote) -> Outcome:
    options = req.facts["options"]  # oldest first (domain.options): the page's numbers
    chosen = {}
    for i, ballot in enumerate(p.votes):
        option = find_option(options, ballot.option)
        if option is None:
            names = "; ".join(f"{n}. {quoted(o['title'])} (id {o['id']})" for n, o in enumerate(options, 1))
            raise InvalidActionParams(f"'votes.{i}.option': no option {quoted(ballot.option)}. Name one by its "
                                      f"number, its title or its id. Options: {names}",
                                      fields=(FieldError(f"votes.{i}.option", "no such option"),))
        if option["id"] in chosen:  # one ballot, one say per option: not the last of two, silently
            raise InvalidActionParams(f"'votes.{i}.option': {quoted(option['title'])} is named twice; name each "
                                      "option once", fields=(FieldError(f"votes.{i}.option", "named twice"),))
        chosen[option["id"]] = (option, ballot)
    decision_id, uid, stamp = req.item["id"], req.user["id"], now()
    # Your votes as read in this transaction, which holds the item (see _resolve_item): a ballot
    # naming every option you voted on before leaves nothing to delete.
    mine = [o["id"] for o in options if o["mine"]]
    replaced = bool(mine)
    if any(option_id not in chosen for option_id in mine):
        req.tx.execute(_DELETE_LEFT_OUT[len(chosen)], (decision_id, uid, *chosen))
    values: list[object] = []  # the ballots in one statement
    for option, ballot in chosen.values():
        values += (decision_id, option["id"], uid, int(ballot.accept), int(ballot.prefer), stamp)
    req.tx.execute(_UPSERT_VOTES[len(chosen)], values)
    summary = ", ".join(
        f"{quoted(o['title'])}: {'accept' if b.accept else 'reject'}{' + prefer' if b.prefer else ''}"
        for o, b in chosen.values())
    return Outcome(("Vote replaced: " if replaced else "Vote recorded: ") + summary + ".", req.path)


def has_options(req: Request) -> str | None:
    return None if req.facts.get("options") else "the decision has no options yet; add_option first"


MAX_OPTIONS = 20  # keeps a decision page (options, your vote, a tied result) bounded


def open_with_room(req: Request) -> str | None:
    if reason := rules.is_open(req):
        return reason
    return f"the decision has the maximum of {MAX_OPTIONS} options" if len(req.facts["options"]) >= MAX_OPTIONS else None


def open_with_options(req: Request) -> str | None:
    return rules.is_open(req) or has_options(req)


class CloseDecision(Params):
    outcome: ShortText | None = Field(None, title="Outcome", description=(
        "what was decided, in your words, shown above the tally (a tie: which of the tied options is chosen); "
        "set_outcome writes it later"))


def close_decision(req: Request, p: CloseDecision) -> Outcome:
    domain.update_item(req.tx, req.item["id"], closed_at=now(), updated_at=now(),
                       **({"outcome": p.outcome} if p.outcome else {}))
    inbox.notify(req, "decision_closed", [req.item["created_by"], *inbox.voters(req.tx, req.item["id"])], req.item["id"])
    said = kinds.kind_of(req.item).close_message(req)  # the result as its kind decides
    tie = " / tie with " in said and not p.outcome
    return Outcome(said + (" A tie: set_outcome says which is chosen." if tie else ""), req.path)


ACTIONS = [
    Action("add_option", ("decision",), "Add an option to vote on.", add_option, AddOption,
           who=rules.member, when=open_with_room),
    Action("vote", ("decision",), "Vote: accept or reject options and mark the ones you prefer.", vote, Vote,
           who=rules.member, when=open_with_options, changes_facts=False),
    Action("close_decision", ("decision",), "Close voting and fix the result.", close_decision, CloseDecision,
           who=rules.creator_or_admin, when=rules.is_open),
]
