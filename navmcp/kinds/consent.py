"""Consent proposals: one proposal, no options. Members consent or object (an objection carries its
reason) and may change their stance; the author may amend the proposal (a new version: stances
given on an older one stay, shown as such, and those members are asked again). It passes unless
more objections stand than its limit (`max_objections`, 0 by default). Its creator or an admin may
close it before its deadline once every member has taken a stance (with no deadline, at any time)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.actions.fields import Body, Title, _no_nul
from navmcp.clock import now
from navmcp.content import domain, revisions
from navmcp.pages.request import PAGE_SIZE, Request
from navmcp.render import quoted
from navmcp.store import Row

MAX_OBJECTIONS = 1000

Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=10, max_length=2000),
                   AfterValidator(_no_nul)]


class Consent(kinds.Kind):
    name = "consent"
    label = "consent proposal"
    # no edit_decision: its text changes by amend, a new version members are asked about again
    actions = ("consent", "object", "amend", "close_decision", "remind")
    settings = {"max_objections": 0}
    has_options = False
    responded_label = "Responded"

    def rules(self) -> dict[str, kinds.Rule]:
        return {"close_decision": everyone_responded}

    def describe(self, settings: dict[str, Any]) -> str:
        limit = settings.get("max_objections", 0)
        return self.label if not limit else f"{self.label}, passes with up to {limit} objection{'s' if limit > 1 else ''}"

    def created(self, req: Request, item: Row, settings: dict[str, Any]) -> None:
        req.tx.execute("INSERT INTO proposal_versions (decision_id, version, body, note, created_by, created_at)"
                       " VALUES (?, 1, ?, '', ?, ?)", (item["id"], item["body"], req.user["id"], item["created_at"]))

    def view(self, req: Request, data: dict[str, Any]) -> None:
        item, tx = req.item, req.tx
        version = current_version(req)
        stances = tx.all(
            """SELECT u.handle, r.choice, r.reason, r.version, r.created_at,
                      EXISTS (SELECT 1 FROM memberships m WHERE m.studio_id = ? AND m.user_id = r.user_id) AS member
                 FROM responses r JOIN users u ON u.id = r.user_id
                WHERE r.decision_id = ? AND r.option_id = ''
                ORDER BY r.created_at, u.handle""", (req.studio["id"], item["id"]))
        for s in stances:
            s["member"] = bool(s["member"])
            s["current"] = s["version"] == version["version"]
        # Members who have not responded, by handle, a page of them at most (and their number).
        waiting_sql = """FROM memberships m JOIN users u ON u.id = m.user_id
                         WHERE m.studio_id = ? AND u.deleted_at IS NULL AND NOT EXISTS (
                               SELECT 1 FROM responses r WHERE r.decision_id = ? AND r.user_id = m.user_id)"""
        args = (req.studio["id"], item["id"])
        waiting = [r["handle"] for r in tx.all(f"SELECT u.handle {waiting_sql} ORDER BY u.handle LIMIT ?",
                                              (*args, PAGE_SIZE))]
        mine = next((s for s in stances if s["handle"] == req.user["handle"]), None)
        data["proposal"] = version
        data["objections"] = [s for s in stances if s["choice"] == "object"]
        data["consents"] = [s for s in stances if s["choice"] == "consent"]
        data["asked_again"] = [s["handle"] for s in stances if not s["current"] and s["member"]]
        data["not_responded"] = waiting
        data["not_responded_count"] = tx.scalar(f"SELECT count(*) {waiting_sql}", args)
        data["your_stance"] = mine
        data["max_objections"] = kinds.settings_of(item).get("max_objections", 0)
        data["responded"] = sum(1 for s in stances if s["member"])

    def result(self, req: Request, data: dict[str, Any]) -> kinds.Verdict:
        standing = len(data["objections"])
        if standing > data["max_objections"]:
            return kinds.Verdict(False, f"blocked: {standing} objection{'s' if standing != 1 else ''} "
                                        f"(at most {data['max_objections']} allowed)")
        return kinds.Verdict(True, "passed" + (f" with {standing} objection{'s' if standing != 1 else ''}"
                                               if standing else ""))


def current_version(req: Request) -> Row:
    return req.tx.one("""SELECT version, note, created_at FROM proposal_versions WHERE decision_id = ?
                          ORDER BY version DESC LIMIT 1""", (req.item["id"],)) or {
        "version": 1, "note": "", "created_at": req.item["created_at"]}


def everyone_responded(req: Request) -> str | None:
    """Closing before the deadline waits for everyone's stance; with no deadline it may close at any time."""
    if not req.item["deadline"]:
        return None
    waiting = req.tx.scalar(
        """SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.studio_id = ? AND u.deleted_at IS NULL AND NOT EXISTS (
                  SELECT 1 FROM responses r WHERE r.decision_id = ? AND r.user_id = m.user_id)""",
        (req.studio["id"], req.item["id"]))
    if waiting:
        return (f"a consent proposal closes at its deadline; before it only once every member has taken a stance "
                f"({waiting} ha{'s' if waiting == 1 else 've'} not)")
    return None


_STANCE = """INSERT INTO responses (decision_id, user_id, option_id, choice, amount, reason, version, created_at)
             VALUES (?, ?, '', ?, 0, ?, ?, ?)
             ON CONFLICT (decision_id, user_id, option_id) DO UPDATE
             SET choice = excluded.choice, reason = excluded.reason, version = excluded.version,
                 created_at = excluded.created_at"""


def _take_stance(req: Request, choice: str, reason: str) -> tuple[int, str | None]:
    version = current_version(req)["version"]
    before = req.tx.scalar("SELECT choice FROM responses WHERE decision_id = ? AND user_id = ? AND option_id = ''",
                           (req.item["id"], req.user["id"]))
    req.tx.execute(_STANCE, (req.item["id"], req.user["id"], choice, reason, version, now()))
    domain.touch(req.tx, req.item["id"])
    return version, before


def consent(req: Request, p: Params) -> Outcome:
    version, before = _take_stance(req, "consent", "")
    said = "changed your objection to consent" if before == "object" else "consented"
    return Outcome(f"You {said} to version {version} of the proposal.", req.path)


class Object(Params):
    reason: Reason = Field(title="Your objection", description=(
        "why you object: what would make it unsafe or wrong to go ahead (10 to 2000 characters); shown to everyone"))


def object_(req: Request, p: Object) -> Outcome:
    version, before = _take_stance(req, "object", p.reason)
    said = "Your objection is updated" if before == "object" else "You object"
    return Outcome(f"{said} to version {version} of the proposal: {quoted(p.reason[:80])}.", req.path)


class Amend(Params):
    text: Body = Field(title="The proposal, amended", description="the whole proposal as it now reads (markdown)")
    note: Title | None = Field(None, title="What changed", description="a line saying what changed")


def amend(req: Request, p: Amend) -> Outcome:
    version = current_version(req)["version"] + 1
    stamp = now()
    req.tx.execute("INSERT INTO proposal_versions (decision_id, version, body, note, created_by, created_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", (req.item["id"], version, p.text, p.note or "", req.user["id"], stamp))
    # the item's text is the latest version's: an edit kept as a revision too (navmcp.content.revisions)
    revisions.save(req, {"body": (req.item["body"], p.text)}, body=p.text, updated_at=stamp)
    domain.link_mentions(req.tx, req.studio, req.item["id"], p.text)
    asked = req.tx.scalar("SELECT count(*) FROM responses WHERE decision_id = ? AND option_id = ''", (req.item["id"],))
    return Outcome(f"Amended: the proposal is now version {version}"
                   + (f"; the {asked} stance(s) given on earlier versions are shown as such, and those members asked again."
                      if asked else "."), req.path)


ACTIONS = [
    Action("consent", ("decision",), "Consent to the proposal as it now reads (changes an objection).", consent,
           who=rules.member, when=rules.is_open),
    Action("object", ("decision",), "Object to the proposal, with your reason (changes your stance).", object_, Object,
           who=rules.member, when=rules.is_open),
    Action("amend", ("decision",), "Amend your proposal: a new version; earlier stances are shown as given on "
           "their version.", amend, Amend, who=rules.author, when=rules.is_open),
]

KIND = kinds.register(Consent())
