"""`remind` on a decision: its creator or an admin tells the members who have not voted yet, with
one inbox entry each (navmcp.feeds.inbox), at most once a day per decision. Every kind has it: not voted
is no ballot and no answer (a stance, dots, times; navmcp.content.ballots)."""

from __future__ import annotations

from navmcp import kinds
from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.clock import ago, now
from navmcp.content import ballots
from navmcp.errors import ActionFailed
from navmcp.feeds import inbox
from navmcp.pages import Request

REMIND_EVERY = 86400  # seconds between two reminders of one decision

MOST_REMINDED = 10_000  # members told by one reminder at most


def remindable(req: Request) -> str | None:
    if reason := rules.is_open(req):
        return reason
    if not req.facts.get("options") and kinds.kind_of(req.item).has_options:
        return "it has no option to vote on yet"
    last = req.tx.scalar("SELECT reminded_at FROM reminders WHERE item_id = ?", (req.item["id"],))
    if last is not None and last > ago(REMIND_EVERY):
        return f"its voters were reminded less than a day ago ({last[:16].replace('T', ' ')} UTC)"
    if not [r for r in ballots.not_voted(req.tx, req.studio["id"], req.item["id"], 2) if r["id"] != req.user["id"]]:
        return "everyone else has voted already"
    return None


def remind(req: Request, p: Params) -> Outcome:
    waiting = [r["id"] for r in ballots.not_voted(req.tx, req.studio["id"], req.item["id"], MOST_REMINDED)]
    told = inbox.notify(req, "reminder", waiting, req.item["id"])
    if not told:
        raise ActionFailed("everyone else has voted already: there is nobody to remind")
    req.tx.execute("INSERT INTO reminders (item_id, reminded_at) VALUES (?, ?)"
                   " ON CONFLICT (item_id) DO UPDATE SET reminded_at = excluded.reminded_at", (req.item["id"], now()))
    return Outcome(f"Reminded {len(told)} member(s) who have not voted yet.", req.path)


ACTIONS = [
    Action("remind", ("decision",), "Remind the members who have not voted yet (at most once a day).", remind,
           who=rules.creator_or_admin, when=remindable),
]
