"""Decision kinds: how a decision is decided, one module per kind behind one interface (`Kind`).

A decision's kind is fixed when it is created (`create_decision`'s `kind`, the item's
`decision_kind`; none on an older decision: acceptance). A kind owns its voting rules: which of the
decision page's actions it offers (`actions`, and rules of its own for them, `rules`), what the
page shows (`view`, and its templates `kinds/<name>.md.j2` and `html/kinds/<name>.html.j2`), who
has responded, and the result (`result`). Every kind shares the quorum (`quorum_result`): a decision
closed below its quorum has the result "no quorum", never one that looks decided.

The kinds register themselves here when their modules are imported (`navmcp.actions` imports them
with their actions): a fourth kind is one module and its two templates, and its name in
`navmcp.actions`. This module imports no kind, so pages can ask it for the kind of the page they
show without importing the actions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from navmcp.feeds import changes
from navmcp.kinds.names import DEFAULT, NAMES

if TYPE_CHECKING:  # at run time only its names: navmcp.content.search, below the store, reads them
    from navmcp.pages.request import Request
    from navmcp.store import Row


Rule = Callable[["Request"], "str | None"]


@dataclass(frozen=True)
class Verdict:
    """A decision's result in words, and whether it decided anything (a tie or "no quorum" did not)."""

    decided: bool
    text: str


class Kind:
    """One kind of decision. Subclasses set the names and override what differs."""

    name = ""
    label = ""  # the Kind fact on the page: "consent proposal"
    # The decision page's actions this kind offers; an action another kind offers and this one does
    # not is refused here (`gate`). Actions no kind names (add_comment) are every kind's.
    actions: tuple[str, ...] = ()
    # create_decision's parameters this kind reads, with their defaults (stored with the item as
    # `kind_settings`; refused on a decision of another kind).
    settings: dict[str, Any] = {}
    has_options = True  # create_decision's `options` (a consent proposal has none)
    responded_label = "Voters"  # the facts table's name for those who responded

    def rules(self) -> dict[str, Rule]:
        """Rules of this kind's own for shared actions (a consent proposal closes early only once
        everyone has responded): action name → rule, judged after the kind's gate."""
        return {}

    def describe(self, settings: dict[str, Any]) -> str:
        return self.label

    def check_settings(self, settings: dict[str, Any], options: list[str]) -> list[str]:
        """Options as this kind stores them (a time poll's times, read and written in UTC); raises
        ValueError naming what is wrong."""
        return options

    def created(self, req: Request, item: Row, settings: dict[str, Any]) -> None:
        """After the item and its options are written (a consent proposal's first version)."""

    def resolve(self, req: Request) -> None:
        """The facts this kind's action rules and handlers read (the options are read already)."""

    def view(self, req: Request, data: dict[str, Any]) -> None:
        """The kind's own page data, added to `data` (which has the item's common data and the
        decision's `options`); sets `responded` (members who responded) and, once closed, `verdict`."""
        raise NotImplementedError

    def closing_data(self, req: Request) -> dict[str, Any]:
        """What `view` reads, when the decision is being closed (the options as an action reads them)."""
        return {"options": req.facts.get("options", []), "open": False, "members": members_now(req)}

    def close_message(self, req: Request) -> str:
        """What closing says: the result as it stands, the quorum judged."""
        return f"Decision closed. Result: {self.verdict(req).text}."

    def verdict(self, req: Request) -> Verdict:
        """The result as the decision's answers stand now, the quorum judged (closing says it;
        reopening keeps it in the history)."""
        data = self.closing_data(req)
        self.view(req, data)
        return quorum_result(req.item, data["responded"], data["members"], self.result(req, data))

    def reopen_refused(self, req: Request) -> str | None:
        """Why this closed decision may not be reopened, beyond the rule every kind shares; None if it may."""
        return None

    def result(self, req: Request, data: dict[str, Any]) -> Verdict:
        raise NotImplementedError


def members_now(req: Request) -> int:
    return int(req.tx.scalar("SELECT count(*) FROM memberships WHERE studio_id = ?", (req.studio["id"],)))


# Members who responded, among the studio's members now (a former member's answers stay, and count
# in tallies, but not towards the quorum, as on the page's "N of M members").
RESPONDED = """SELECT count(DISTINCT r.user_id) FROM responses r WHERE r.decision_id = ?
                  AND EXISTS (SELECT 1 FROM memberships m WHERE m.studio_id = ? AND m.user_id = r.user_id)"""


def responded(req: Request) -> int:
    return int(req.tx.scalar(RESPONDED, (req.item["id"], req.studio["id"])))


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    if kind.name in KINDS:
        raise RuntimeError(f"decision kind {kind.name!r} registered twice")
    if kind.name not in NAMES:
        raise RuntimeError(f"decision kind {kind.name!r} is not in navmcp.kinds.NAMES")
    KINDS[kind.name] = kind
    return kind


def settings_for(kind: Kind, given: dict[str, Any], options: list[str]) -> tuple[dict[str, Any], list[str]]:
    """create_decision's kind settings and options, checked for `kind`: its settings with their
    defaults, and its options as it stores them. Raises ValueError naming the parameter."""
    for name, value in given.items():
        if value is not None and name not in kind.settings:
            owners = [k.name for k in KINDS.values() if name in k.settings]
            raise ValueError(f"{name} is a setting of kind {' or '.join(owners)}, not of {kind.name}")
    if options and not kind.has_options:
        raise ValueError(f"a {kind.label} has no options: its text is the description")
    settings = {name: given.get(name) if given.get(name) is not None else default
                for name, default in kind.settings.items()}
    return settings, kind.check_settings(settings, options)


def kind_name(item: Row) -> str:
    return item.get("decision_kind") or DEFAULT


def kind_of(item: Row) -> Kind:
    return KINDS[kind_name(item)]


def settings_of(item: Row) -> dict[str, Any]:
    text = item.get("kind_settings")
    return json.loads(text) if text else {}


# --- quorum ------------------------------------------------------------------------------------


def quorum_text(value: int | str | None) -> str | None:
    """`create_decision`'s quorum as stored: a number of members ("3") or a share of them ("50%");
    raises ValueError for anything else."""
    if value is None or value == "":
        return None
    text = str(value).strip().replace(" ", "")
    share = text.endswith("%")
    number = text[:-1] if share else text
    if not number.isdigit() or len(number) > 6:
        raise ValueError("must be a number of members (3) or a share of them (50%)")
    n = int(number)
    if n < 1 or (share and n > 100):
        raise ValueError("must be at least 1 member, or a share from 1% to 100%")
    return f"{n}%" if share else str(n)


def quorum_needed(quorum: str | None, members: int) -> int | None:
    """How many members must respond for a result, with `members` in the studio now."""
    if not quorum:
        return None
    if quorum.endswith("%"):
        return max(1, math.ceil(int(quorum[:-1]) * members / 100))
    return int(quorum)


def quorum_result(item: Row, responded: int, members: int, verdict: Verdict) -> Verdict:
    needed = quorum_needed(item.get("quorum"), members)
    if needed is not None and responded < needed:
        return Verdict(False, f"no quorum ({responded} of the {needed} needed responded)")
    return verdict


def verdict_of(req: Request, item: Row) -> Verdict:
    """A closed decision's result as its page and its closing say it (the quorum judged), for a
    list's row: `item` is the decision's whole row, in `req.studio`."""
    from navmcp.content import domain

    sub = replace(req, item=item, facts={}, acting=True)
    sub.facts["options"] = domain.options(req.tx, item["id"], req.user["id"])
    kind = kind_of(item)
    data = kind.closing_data(sub)
    kind.view(sub, data)
    return quorum_result(item, data["responded"], data["members"], kind.result(sub, data))


def told_result(tx, change) -> str | None:
    """A closed decision's result as its page states it, for the change feed's summary of its
    closing (`navmcp.feeds.changes`): `change` names the decision and who closed it; `tx` reads as them.
    None if the decision is open again, or gone from what they may read."""
    from navmcp.pages.request import Request

    item = tx.one("SELECT * FROM items WHERE id = ? AND kind = 'decision' AND closed_at IS NOT NULL",
                  (change.item_id,))
    if item is None:
        return None
    studio = tx.one("SELECT * FROM studios WHERE id = ?", (item["studio_id"],))
    user = tx.one("SELECT * FROM users WHERE id = ?", (change.user_id,))
    if studio is None or user is None:
        return None
    req = Request(tx=tx, user=user, client="", path="", query={}, args={}, studio=studio)
    return verdict_of(req, item).text


changes.RESULT[:] = [told_result]  # the change feed tells a closing's result through it


def list_results(req: Request, rows: list[dict[str, Any]]) -> None:
    """A list's closed decisions' results (`result`, `verdict_of`) and their closers' outcome
    statements (`outcome`), so "what did we decide" is answered from the list. Rows carry `id`,
    `kind` and `closed`; they may be in several of the user's studios (a search across them)."""
    closed = {r["id"]: r for r in rows if r["kind"] == "decision" and r.get("closed")}
    if not closed:
        return
    marks = ", ".join("?" * len(closed))
    items = req.tx.all(f"SELECT * FROM items WHERE id IN ({marks})", tuple(closed))
    studios = {s["id"]: s for s in req.tx.all(
        f"SELECT * FROM studios WHERE id IN ({', '.join('?' * len(items))})", tuple(i["studio_id"] for i in items))}
    for item in items:
        row = closed[item["id"]]
        row["result"] = verdict_of(replace(req, studio=studios[item["studio_id"]]), item).text
        row["outcome"] = item.get("outcome")


# --- the gate on the decision page's actions ---------------------------------------------------------


def gate(actions: list[Any]) -> list[Any]:
    """The actions with each decision page action's `when` judged by the kind first: one a kind
    does not offer is refused on its decisions (409, naming the kind), and the kind's own rule for
    it, if any, is judged after the action's. Listing and execution read the same rule."""
    offered: dict[str, set[str]] = {}
    for kind in KINDS.values():
        for name in kind.actions:
            offered.setdefault(name, set()).add(kind.name)
    gated = []
    for action in actions:
        if "decision" in action.on and action.name in offered:
            action = replace(action, when=_kind_rule(action.name, offered[action.name], action.when))
        gated.append(action)
    return gated


def _kind_rule(name: str, kinds: set[str], when: Rule | None) -> Rule:
    def rule(req: Request) -> str | None:
        if req.item is None or req.item.get("kind") != "decision":
            return when(req) if when else None
        kind = kind_of(req.item)
        if kind.name not in kinds:
            return f"a {kind.label} has no {name}: its actions are {', '.join(kind.actions)}"
        if when and (reason := when(req)):
            return reason
        own = kind.rules().get(name)
        return own(req) if own else None

    return rule
