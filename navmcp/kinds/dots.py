"""Dot votes: options as in acceptance voting; each member spreads N dots (`dots`, 3 by default, 1
to 20, set at creation) across them, several on one option if they like. Allocating again
replaces your dots. The options are listed by dots, with who put how many; the most dots win."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.decisions import find_option, open_with_options
from navmcp.actions.fields import OptionRef
from navmcp.clock import now
from navmcp.content import domain
from navmcp.errors import FieldError, InvalidActionParams
from navmcp.pages.request import Request
from navmcp.render import quoted

MAX_DOTS = 20
NAMES_SHOWN = 10  # per option: who put dots on it, the most first; the rest are counted


class Dots(kinds.Kind):
    name = "dots"
    label = "dot vote"
    actions = ("add_option", "allocate", "close_decision", "remind", "edit_decision")
    settings = {"dots": 3}

    def describe(self, settings: dict[str, Any]) -> str:
        n = settings.get("dots", 3)
        return f"dot vote, {n} dot{'s' if n != 1 else ''} each"

    def view(self, req: Request, data: dict[str, Any]) -> None:
        tx, item = req.tx, req.item
        per = kinds.settings_of(item).get("dots", 3)
        totals = {r["option_id"]: r for r in tx.all(
            """SELECT option_id, sum(amount) AS dots, count(*) AS voters FROM responses
                WHERE decision_id = ? GROUP BY option_id""", (item["id"],))}
        givers: dict[str, list[dict[str, Any]]] = {}
        for r in tx.all(
                """SELECT option_id, handle, amount FROM (
                       SELECT r.option_id, u.handle, r.amount,
                              row_number() OVER (PARTITION BY r.option_id ORDER BY r.amount DESC, u.handle) AS n
                         FROM responses r JOIN users u ON u.id = r.user_id WHERE r.decision_id = ?) AS g
                    WHERE n <= ? ORDER BY option_id, n""", (item["id"], NAMES_SHOWN)):
            givers.setdefault(r["option_id"], []).append({"handle": r["handle"], "dots": r["amount"]})
        if item.get("anonymous"):  # counts only, never who gave what
            givers = {}
        numbered = sorted(data["options"], key=lambda o: (o["created_at"], o["id"]))
        ranked = []
        for number, o in enumerate(numbered, 1):
            t = totals.get(o["id"]) or {"dots": 0, "voters": 0}
            ranked.append({"id": o["id"], "title": o["title"], "number": number, "dots": int(t["dots"]),
                           "voters": int(t["voters"]), "givers": givers.get(o["id"], []),
                           "more_givers": int(t["voters"]) - len(givers.get(o["id"], []))})
        ranked.sort(key=lambda o: (-o["dots"], o["number"]))
        mine = {r["option_id"]: r["amount"] for r in tx.all(
            "SELECT option_id, amount FROM responses WHERE decision_id = ? AND user_id = ?", (item["id"], req.user["id"]))}
        data["by_dots"] = ranked
        data["dots_each"] = per
        data["your_dots"] = [{"number": o["number"], "title": o["title"], "id": o["id"], "dots": mine[o["id"]]}
                             for o in sorted(ranked, key=lambda o: o["number"]) if o["id"] in mine]
        data["your_dots_used"] = sum(mine.values())
        data["responded"] = kinds.responded(req)

    def result(self, req: Request, data: dict[str, Any]) -> kinds.Verdict:
        ranked = data["by_dots"]
        if not ranked or ranked[0]["dots"] == 0:
            return kinds.Verdict(False, "no dots were given")
        top = [o for o in ranked if o["dots"] == ranked[0]["dots"]]
        said = " / tie with ".join(quoted(o["title"]) for o in top)
        return kinds.Verdict(len(top) == 1, f"{said} ({top[0]['dots']} dots)")


class Allocation(Params):
    option: Annotated[OptionRef, BeforeValidator(lambda v: str(v) if type(v) is int else v)] = Field(
        description="an option's number or title as the page shows it, or its id",
        json_schema_extra={"x-shape": "number | title | id"})
    dots: int = Field(ge=1, le=MAX_DOTS, description="how many of your dots go on this option")


class Allocate(Params):
    dots: list[Allocation] = Field(title="Your dots", min_length=1, max_length=20, description=(
        "where your dots go, one entry per option; their sum at most your dots; allocating again replaces your dots"))


def allocate(req: Request, p: Allocate) -> Outcome:
    options = req.facts["options"]  # oldest first: the page's numbers
    per = kinds.settings_of(req.item).get("dots", 3)
    chosen: dict[str, tuple[dict[str, Any], int]] = {}
    for i, a in enumerate(p.dots):
        option = find_option(options, a.option)
        if option is None:
            names = "; ".join(f"{n}. {quoted(o['title'])} (id {o['id']})" for n, o in enumerate(options, 1))
            raise InvalidActionParams(f"'dots.{i}.option': no option {quoted(a.option)}. Name one by its number, "
                                      f"its title or its id. Options: {names}",
                                      fields=(FieldError(f"dots.{i}.option", "no such option"),))
        if option["id"] in chosen:
            raise InvalidActionParams(f"'dots.{i}.option': {quoted(option['title'])} is named twice; put all the dots "
                                      "you give it in one entry", fields=(FieldError(f"dots.{i}.option", "named twice"),))
        chosen[option["id"]] = (option, a.dots)
    total = sum(n for _, n in chosen.values())
    if total > per:
        raise InvalidActionParams(f"'dots': you have {per} dots and gave {total}; take {total - per} off",
                                  fields=(FieldError("dots", f"at most {per} dots in all"),))
    decision_id, uid, stamp = req.item["id"], req.user["id"], now()
    replaced = req.tx.execute("DELETE FROM responses WHERE decision_id = ? AND user_id = ?", (decision_id, uid))
    for option, n in chosen.values():
        req.tx.execute("INSERT INTO responses (decision_id, user_id, option_id, choice, amount, created_at)"
                       " VALUES (?, ?, ?, 'dots', ?, ?)", (decision_id, uid, option["id"], n, stamp))
    domain.touch(req.tx, decision_id)
    summary = ", ".join(f"{quoted(o['title'])} ×{n}" for o, n in chosen.values())
    return Outcome(("Dots replaced: " if replaced else "Dots given: ") + f"{summary} ({total} of {per} used).", req.path)


ACTIONS = [
    Action("allocate", ("decision",), "Spread your dots across the options (replaces your dots).", allocate, Allocate,
           who=rules.member, when=open_with_options),
]

KIND = kinds.register(Dots())
