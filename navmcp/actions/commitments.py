"""Actions on commitments: join, leave, close. A commitment that reaches its limit closes."""

from __future__ import annotations

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.clock import now
from navmcp.content import domain
from navmcp.feeds import inbox
from navmcp.pages import Request


def join_commitment(req: Request, p: Params) -> Outcome:
    item = req.item
    req.tx.execute("INSERT INTO participants (commitment_id, user_id, joined_at) VALUES (?, ?, ?)",
                   (item["id"], req.user["id"], now()))
    count = req.facts["count"] + 1
    message = f"Joined ({count} of critical mass {item['critical_mass']}"
    message += f", limit {item['participant_limit']})." if item["participant_limit"] else ")."
    told: set[str] = set()
    if count == item["critical_mass"]:
        message += " Critical mass reached."
        told = set(inbox.notify(req, "commitment_mass", [item["created_by"], *inbox.participants(req.tx, item["id"])],
                                item["id"]))
    if item["participant_limit"] is not None and count >= item["participant_limit"]:
        domain.update_item(req.tx, item["id"], closed_at=now(), updated_at=now())
        inbox.notify(req, "commitment_closed", [u for u in [item["created_by"], *inbox.participants(req.tx, item["id"])]
                                                if u not in told], item["id"])
        message += " The limit is reached: the commitment is now closed."
    else:
        domain.touch(req.tx, item["id"])
    return Outcome(message, req.path)


def leave_commitment(req: Request, p: Params) -> Outcome:
    req.tx.execute("DELETE FROM participants WHERE commitment_id = ? AND user_id = ?", (req.item["id"], req.user["id"]))
    domain.touch(req.tx, req.item["id"])
    return Outcome("You left the commitment.", req.path)


def open_not_joined(req: Request) -> str | None:
    # Someone already in is offered leave_commitment, not a join that could do nothing.
    return rules.is_open(req) or ("you have already joined it; leave_commitment takes you out"
                                  if req.facts.get("joined") else None)


def joined_and_open(req: Request) -> str | None:
    return rules.is_open(req) or (None if req.facts.get("joined") else "you have not joined it")


def close_commitment(req: Request, p: Params) -> Outcome:
    domain.update_item(req.tx, req.item["id"], closed_at=now(), updated_at=now())
    inbox.notify(req, "commitment_closed", [req.item["created_by"], *inbox.participants(req.tx, req.item["id"])],
                 req.item["id"])
    reached = req.facts["count"] >= req.item["critical_mass"]
    return Outcome("Commitment closed " + ("with critical mass reached." if reached else
                   f"short of critical mass ({req.facts['count']} of {req.item['critical_mass']})."), req.path)


ACTIONS = [
    Action("join_commitment", ("commitment",), "Join the commitment.", join_commitment,
           who=rules.member, when=open_not_joined),
    Action("leave_commitment", ("commitment",), "Leave a commitment you joined.", leave_commitment,
           who=rules.member, when=joined_and_open),
    Action("close_commitment", ("commitment",), "Close the commitment to new participants.", close_commitment,
           who=rules.creator, when=rules.is_open),
]
