"""Time polls: the options are times (given with their zone, kept in UTC), each `duration_minutes`
long (60 by default). Members answer yes, if need be (`maybe`) or no per time; answering again
replaces your answers. The best time has the most yes, then the most if-need-be, then is the
earliest. Closing (`close_poll`) fixes a time and can create a commitment for it with everyone who
said yes joined."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BeforeValidator, Field

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.decisions import find_option, open_with_options, open_with_room
from navmcp.actions.fields import OptionRef
from navmcp.clock import now
from navmcp.content import domain
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.pages.request import Request
from navmcp.render import quoted

ANSWERS = ("yes", "maybe", "no")
ANSWER_WORDS = {"yes": "yes", "maybe": "if need be", "no": "no"}
TIME_FORMAT = "%Y-%m-%d %H:%M UTC"  # a time's title, as stored: sorts as the times do
NAMES_SHOWN = 10


def time_title(value: str) -> str:
    """A time as given (ISO 8601, with its zone or a zone's name after it; UTC if none) as stored."""
    text = " ".join(str(value).split())
    zone: Any = UTC
    head, _, last = text.rpartition(" ")
    if head and ("/" in last or last == "UTC"):
        try:
            zone = ZoneInfo(last) if last != "UTC" else UTC
            text = head
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"no time zone {last[:40]!r}: use a name such as Europe/Lisbon, or an offset") from None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise ValueError(f"{text[:60]!r} is not a time: write it as 2026-12-04T10:00+01:00, 2026-12-04 10:00 "
                         "Europe/Lisbon or 2026-12-04 09:00 (UTC)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def in_zone(title: str, zone: str | None) -> str:
    """A stored time as the reader reads it: in their zone (`?tz=`), with its weekday."""
    moment = datetime.strptime(title, TIME_FORMAT).replace(tzinfo=UTC)
    if zone:
        try:
            local = moment.astimezone(ZoneInfo(zone))
            return local.strftime("%a %Y-%m-%d %H:%M ") + zone
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return moment.strftime("%a %Y-%m-%d %H:%M UTC")


class Times(kinds.Kind):
    name = "times"
    label = "time poll"
    actions = ("add_time", "answer", "close_poll", "remind", "edit_decision")
    settings = {"duration_minutes": 60}
    responded_label = "Answered"

    def describe(self, settings: dict[str, Any]) -> str:
        return f"time poll, {settings.get('duration_minutes', 60)} min"

    def check_settings(self, settings: dict[str, Any], options: list[str]) -> list[str]:
        return [time_title(o) for o in options]

    def view(self, req: Request, data: dict[str, Any]) -> None:
        tx, item = req.tx, req.item
        zone = _zone(req.query.get("tz"))
        counts: dict[str, dict[str, int]] = {}
        for r in tx.all("""SELECT option_id, choice, count(*) AS n FROM responses WHERE decision_id = ?
                            GROUP BY option_id, choice""", (item["id"],)):
            counts.setdefault(r["option_id"], {})[r["choice"]] = int(r["n"])
        yes_names: dict[str, list[str]] = {}
        for r in tx.all(
                """SELECT option_id, handle FROM (
                       SELECT r.option_id, u.handle, row_number() OVER (PARTITION BY r.option_id ORDER BY u.handle) AS n
                         FROM responses r JOIN users u ON u.id = r.user_id
                        WHERE r.decision_id = ? AND r.choice = 'yes') AS y
                    WHERE n <= ? ORDER BY option_id, n""", (item["id"], NAMES_SHOWN)):
            yes_names.setdefault(r["option_id"], []).append(r["handle"])
        mine = {r["option_id"]: r["choice"] for r in tx.all(
            "SELECT option_id, choice FROM responses WHERE decision_id = ? AND user_id = ?", (item["id"], req.user["id"]))}
        numbered = sorted(data["options"], key=lambda o: (o["created_at"], o["id"]))
        grid = []
        for number, o in enumerate(numbered, 1):
            c = counts.get(o["id"], {})
            grid.append({"id": o["id"], "title": o["title"], "number": number, "shown": in_zone(o["title"], zone),
                         "yes": c.get("yes", 0), "maybe": c.get("maybe", 0), "no": c.get("no", 0),
                         "yes_names": yes_names.get(o["id"], []), "mine": mine.get(o["id"])})
        grid.sort(key=lambda t: t["title"])  # in time order; the numbers stay those of the options
        data["grid"] = grid
        data["zone"] = zone or "UTC"
        data["duration_minutes"] = kinds.settings_of(item).get("duration_minutes", 60)
        data["your_answers"] = [t for t in grid if t["mine"]]
        data["answer_words"] = ANSWER_WORDS
        best = best_times(grid)
        data["best"] = best
        data["responded"] = kinds.responded(req)
        data["commitment"] = _made_commitment(req)

    def reopen_refused(self, req: Request) -> str | None:
        # Its commitment has people joined for the time it fixed: reopening would leave a meeting
        # the poll no longer decides, and closing again would make a second one.
        made = _made_commitment(req)
        if made is None:
            return None
        return (f"closing the poll created the commitment {quoted(made['title'])} ({made['url']}) for the time "
                f"it fixed: a new time is a new time poll")

    def result(self, req: Request, data: dict[str, Any]) -> kinds.Verdict:
        best = data["best"]
        if not best:
            return kinds.Verdict(False, "nobody answered yes or if need be")
        said = " / tie with ".join(in_zone(t["title"], None) for t in best)
        return kinds.Verdict(len(best) == 1, f"{said} ({best[0]['yes']} yes, {best[0]['maybe']} if need be)")


def best_times(grid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ranked = sorted(grid, key=lambda t: (-t["yes"], -t["maybe"], t["title"]))
    if not ranked or (ranked[0]["yes"] == 0 and ranked[0]["maybe"] == 0):
        return []
    top = (ranked[0]["yes"], ranked[0]["maybe"])
    return [t for t in ranked if (t["yes"], t["maybe"]) == top]


def _zone(name: str | None) -> str | None:
    if not name:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


def _made_commitment(req: Request) -> dict[str, Any] | None:
    """The commitment closing the poll created: the one of this studio linking to it, by its creator."""
    row = req.tx.one("""SELECT c.id, c.title FROM links l JOIN items c ON c.id = l.from_item
                         WHERE l.to_item = ? AND c.kind = 'commitment' AND c.studio_id = ?
                         ORDER BY c.created_at, c.id LIMIT 1""", (req.item["id"], req.studio["id"]))
    if row is None:
        return None
    return {"title": row["title"], "url": f"/studios/{req.studio['handle']}/c/{row['id']}"}


# --- actions ---------------------------------------------------------------------------------------


class AddTime(Params):
    start: str = Field(title="Time", min_length=1, max_length=80, description=(
        "when it starts: 2026-12-04T10:00+01:00, 2026-12-04 10:00 Europe/Lisbon, or 2026-12-04 09:00 (UTC)"))


def add_time(req: Request, p: AddTime) -> Outcome:
    try:
        title = time_title(p.start)
    except ValueError as e:
        raise InvalidActionParams(f"'start': {e}", fields=(FieldError("start", str(e)),)) from None
    domain.insert_option(req.tx, req.user, req.item["id"], title)
    domain.touch(req.tx, req.item["id"])
    return Outcome(f"Added the time {in_zone(title, None)}.", req.path)


class TimeAnswer(Params):
    option: Annotated[OptionRef, BeforeValidator(lambda v: str(v) if type(v) is int else v)] = Field(
        description="a time's number as the page shows it, its time as stored (2026-12-04 10:00 UTC), or its id",
        json_schema_extra={"x-shape": "number | time | id"})
    answer: Literal["yes", "maybe", "no"] = Field(description="yes; maybe: if need be; no")


class Answer(Params):
    times: list[TimeAnswer] = Field(title="Your answers", min_length=1, max_length=20, description=(
        "one entry per time you answer; a time left out has no answer from you; answering again replaces your answers"))


def answer(req: Request, p: Answer) -> Outcome:
    options = req.facts["options"]
    chosen: dict[str, tuple[dict[str, Any], str]] = {}
    for i, a in enumerate(p.times):
        option = find_option(options, a.option)
        if option is None:
            try:  # a time as the reader typed it, in any form time_title reads
                title = time_title(a.option)
                option = next((o for o in options if o["title"] == title), None)
            except ValueError:
                option = None
        if option is None:
            names = "; ".join(f"{n}. {o['title']} (id {o['id']})" for n, o in enumerate(options, 1))
            raise InvalidActionParams(f"'times.{i}.option': no time {quoted(a.option)}. Name one by its number, its "
                                      f"time or its id. Times: {names}",
                                      fields=(FieldError(f"times.{i}.option", "no such time"),))
        if option["id"] in chosen:
            raise InvalidActionParams(f"'times.{i}.option': {option['title']} is named twice; answer each time once",
                                      fields=(FieldError(f"times.{i}.option", "named twice"),))
        chosen[option["id"]] = (option, a.answer)
    decision_id, uid, stamp = req.item["id"], req.user["id"], now()
    replaced = req.tx.execute("DELETE FROM responses WHERE decision_id = ? AND user_id = ?", (decision_id, uid))
    for option, said in chosen.values():
        req.tx.execute("INSERT INTO responses (decision_id, user_id, option_id, choice, created_at)"
                       " VALUES (?, ?, ?, ?, ?)", (decision_id, uid, option["id"], said, stamp))
    domain.touch(req.tx, decision_id)
    summary = ", ".join(f"{in_zone(o['title'], None)}: {ANSWER_WORDS[s]}" for o, s in
                        sorted(chosen.values(), key=lambda c: c[0]["title"]))
    return Outcome(("Answers replaced: " if replaced else "Answers recorded: ") + summary + ".", req.path)


class ClosePoll(Params):
    time: Annotated[OptionRef, BeforeValidator(lambda v: str(v) if type(v) is int else v)] | None = Field(
        None, title="Chosen time", description="the time to meet: its number, time or id; the best time if left out")
    create_commitment: bool = Field(True, title="Create a commitment", description=(
        "create a commitment for the chosen time, with everyone who answered yes to it joined"))


def close_poll(req: Request, p: ClosePoll) -> Outcome:
    data: dict[str, Any] = {"options": req.facts["options"]}
    KIND.view(req, data)
    grid = data["grid"]
    if p.time is not None:
        chosen = next((t for t in grid if t["id"] == (find_option(req.facts["options"], p.time) or {}).get("id")), None)
        if chosen is None:
            raise InvalidActionParams(f"'time': no time {quoted(p.time)} in this poll",
                                      fields=(FieldError("time", "no such time"),))
    elif data["best"]:
        chosen = data["best"][0]  # of a tie, the earliest
    elif p.create_commitment:
        raise ActionFailed("nobody answered yes or if need be to any time: name the time to meet (time), or close "
                           "without a commitment (create_commitment false)")
    else:
        chosen = None
    stamp = now()
    domain.update_item(req.tx, req.item["id"], closed_at=stamp, updated_at=stamp)
    inbox.notify(req, "decision_closed", [req.item["created_by"], *inbox.voters(req.tx, req.item["id"])], req.item["id"])
    members = kinds.members_now(req)
    verdict = kinds.quorum_result(req.item, data["responded"], members, KIND.result(req, data))
    said = f"Poll closed. Result: {verdict.text}."
    if chosen is None:
        return Outcome(said, req.path)
    when = in_zone(chosen["title"], None)
    if not p.create_commitment:
        return Outcome(f"{said} Chosen time: {when}.", req.path)
    yes = [r["user_id"] for r in req.tx.all(
        """SELECT r.user_id FROM responses r WHERE r.decision_id = ? AND r.option_id = ? AND r.choice = 'yes'
              AND EXISTS (SELECT 1 FROM memberships m WHERE m.studio_id = ? AND m.user_id = r.user_id)
            ORDER BY r.created_at, r.user_id""", (req.item["id"], chosen["id"], req.studio["id"]))]
    duration = kinds.settings_of(req.item).get("duration_minutes", 60)
    title = f"Meet: {req.item['title']}"
    title = title if len(title) <= 200 else title[:199] + "…"
    body = f"{when}, {duration} minutes: the time chosen in the time poll {req.path}."
    commitment = domain.insert_item(req.tx, req.studio, req.user, "commitment", title, body, [],
                                    critical_mass=max(1, len(yes)))
    for uid in yes:
        req.tx.execute("INSERT INTO participants (commitment_id, user_id, joined_at) VALUES (?, ?, ?)",
                       (commitment["id"], uid, stamp))
    url = domain.item_url(req.studio["handle"], commitment)
    return Outcome(f"{said} Chosen time: {when}. Created the commitment {quoted(title)} with the {len(yes)} "
                   f"member(s) who said yes joined: {url}", url)


ACTIONS = [
    Action("add_time", ("decision",), "Add a time to the poll.", add_time, AddTime,
           who=rules.member, when=open_with_room),
    Action("answer", ("decision",), "Answer yes, if need be (maybe) or no per time (replaces your answers).", answer,
           Answer, who=rules.member, when=open_with_options),
    Action("close_poll", ("decision",), "Close the poll at a time; by default create a commitment for it with everyone "
           "who said yes joined.", close_poll, ClosePoll, who=rules.creator_or_admin, when=rules.is_open),
]

KIND = kinds.register(Times())
