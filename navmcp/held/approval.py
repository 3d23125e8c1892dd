"""Deciding a held action: `approve(note?, anyway?)`, `reject(note)`, `withdraw`, and the rules'
own actions (`set_hold_rule`, `remove_hold_rule`, in the browser only).

Approval is judged when it happens: the approver must be eligible now (`rules.eligible`); the held
row is locked first, so two approvers at once run it once. On the last approval the whole action is
judged again as the requester, on this transaction's fresh data (the page resolved as them, the
action's who/when rules, its params parsed again) and run in a savepoint of the same transaction,
with row-level security judging the requester (`Tx.act_as`); a refusal ends the hold as failed with
the reason, and nothing of the action is written. A target changed since the request needs
`anyway=true`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from navmcp.actions.action import Action, Outcome, Params
from navmcp.clock import now
from navmcp.errors import ActionFailed, NavError
from navmcp.feeds import changes, inbox
from navmcp.held import rules, staleness
from navmcp.identity import new_id
from navmcp.pages import make_request
from navmcp.pages.request import Request
from navmcp.store import Row

# The action table's `check` (navmcp.actions binds it: the table holds these actions, so they can't
# import it): (page name, action name, request) → (the action, the names valid there).
Judge = Callable[[str, str, Request], tuple[Action, list[str]]]
_judge: list[Judge] = []


def bind(judge: Judge) -> None:
    _judge[:] = [judge]


class ApproveParams(Params):
    note: Annotated[str, Field(max_length=500, description="optional note for the requester")] = ""
    anyway: Annotated[bool, Field(description="approve although the target changed since it was requested")] = False


class RejectParams(Params):
    note: Annotated[str, Field(min_length=1, max_length=500,
                               description="why, in a sentence; the requester and their agent read it")]


class RuleParams(Params):
    actions: Annotated[str, Field(min_length=1, max_length=1000, pattern=r"^(\*|[a-z_]{1,40}(,[a-z_]{1,40})*)$",
                                  description="'*' (every write) or action names separated by commas, "
                                              "e.g. close_decision,remove_member")] = "*"
    whose: Literal["agents", "everyone"] = "agents"
    approvers: Annotated[str, Field(min_length=1, max_length=400,
                                    pattern=r"^(self|admins|members|@?[a-z0-9-]{1,32}(,@?[a-z0-9-]{1,32})*)$",
                                    description="self (you, for your own agents), admins, members, or handles "
                                                "separated by commas")] = "admins"
    approvals: Annotated[int, Field(ge=1, le=5)] = 1
    own_counts: bool = False
    in_client: bool = False
    expires_hours: Annotated[int, Field(ge=1, le=720)] = rules.DEFAULT_HOURS
    scope: Literal["studio", "mine"] = "studio"


class RemoveRuleParams(Params):
    rule: Annotated[str, Field(min_length=1, max_length=64, description="the rule's id, as the held page lists it")]


def _held(req: Request) -> Row:
    return req.facts["held"]


def _browser_only(req: Request) -> str | None:
    return None if req.browser else rules.BROWSER_ONLY


def _pending(req: Request) -> str | None:
    status = req.facts["status"]
    return None if status == "pending" else f"this held action is {status}, no longer waiting"


# A held action is decided by a person in their browser session: over MCP or a token, an agent
# (anyone's) could otherwise approve what an agent asked. The one exception is the person's own
# answer in their MCP client to a signed elicitation (navmcp.held.elicit), where the rule allowed it.
IN_BROWSER = "a held action is decided in a person's browser session, never over MCP or with a token"


def _may_decide(req: Request) -> str | None:
    if not req.browser and not (req.in_client and _held(req)["in_client"]):
        return IN_BROWSER
    return rules.eligible(req.tx, _held(req), req.user["id"]) or (
        "you approved it already" if req.facts.get("approved_by_you") else None)


def _may_reject(req: Request) -> str | None:
    if not req.browser:
        return IN_BROWSER
    reason = rules.eligible(req.tx, _held(req), req.user["id"])
    if reason and req.user["id"] == _held(req)["requester_id"]:
        return "you asked for it: withdraw it instead"
    return reason


def _requester(req: Request) -> str | None:
    return None if req.user["id"] == _held(req)["requester_id"] else "only the person who asked for it withdraws it"


def _lock(req: Request) -> Row:
    """The held row, locked until this transaction ends, and still pending (else refused)."""
    held = _held(req)
    req.tx.execute("UPDATE held_actions SET status = status WHERE id = ?", (held["id"],))  # the row lock
    fresh = req.tx.one("SELECT * FROM held_actions WHERE id = ?", (held["id"],))
    assert fresh is not None
    if fresh["status"] != "pending":
        raise ActionFailed(f"it was {fresh['status']} meanwhile", url=req.url)
    if fresh["expires_at"] <= now():
        raise ActionFailed("it expired before this answer", url=req.url)
    return fresh


def _end(req: Request, held: Row, status: str, reason: str = "") -> None:
    req.tx.execute("UPDATE held_actions SET status = ?, reason = ?, decided_at = ?, decided_by = ? WHERE id = ?",
                   (status, reason[:1000], now(), req.user["id"], held["id"]))
    if status != "withdrawn":  # the requester hears of a decision not theirs (notify leaves the actor out)
        inbox.notify(req, "approval_decided", [held["requester_id"]], held_id=held["id"])


def approve(req: Request, p: ApproveParams) -> Outcome:
    held = _lock(req)
    if (reason := rules.eligible(req.tx, held, req.user["id"])) is not None:
        raise ActionFailed(reason, url=req.url)
    req.tx.execute("INSERT INTO held_approvals (held_id, user_id, note, created_at) VALUES (?, ?, ?, ?)",
                   (held["id"], req.user["id"], p.note, now()))
    given = len(rules.counted(req.tx, held))
    if given < held["approvals"]:
        return Outcome(f"Approved ({given} of {held['approvals']}): it waits for {held['approvals'] - given} more.",
                       req.path)
    return _run(req, held, p.anyway)


def _run(req: Request, held: Row, anyway: bool) -> Outcome:
    """The last approval: judge the whole action again as the requester, and run it, or end as failed."""
    tx = req.tx
    tx.execute("SAVEPOINT held_run")
    try:
        # The decision first, while the approver is surely a member: the action may take them out of
        # the studio (an admin's agent's remove_member of the member approving it), and PostgreSQL
        # judges a decision by who its maker is when it is written (migration 20261129000170). A
        # refusal below rolls it back with the action.
        _end(req, held, "executed")
        with tx.act_as(held["requester_id"]):
            requester = tx.one("SELECT * FROM users WHERE id = ? AND deleted_at IS NULL", (held["requester_id"],))
            if requester is None:
                raise ActionFailed("the person who asked for it has no account any more")
            spec, as_them = make_request(tx, requester, held["client"], held["url"], acting=True)
            spec.resolve(as_them)
            if not anyway and (what := staleness.changed(tx, held, as_them.item)) is not None:
                raise _Changed(what)
            action, valid = _judge[0](spec.name, held["action"], as_them)
            parsed = action.parse(json.loads(held["params"]), as_them, valid)
            outcome = action.run(as_them, parsed)
            if outcome.changed:
                changes.record(tx, held["requester_id"], held["studio_id"],
                               as_them.item["id"] if as_them.item else changes.item_of(outcome.url), held["action"])
    except _Changed as e:
        tx.execute("ROLLBACK TO SAVEPOINT held_run")
        tx.execute("RELEASE SAVEPOINT held_run")
        raise ActionFailed(f"{held['url']} changed since the request ({e.args[0]}): read it, then approve with "
                           "anyway=true if it should still run", url=req.url) from None
    except NavError as e:
        tx.execute("ROLLBACK TO SAVEPOINT held_run")
        tx.execute("RELEASE SAVEPOINT held_run")
        _end(req, held, "failed", reason=e.message)
        return Outcome(f"Approved, but {held['action']} could not run now: {e.message} The held action ended as "
                       "failed; nothing of it was written.", req.path)
    tx.execute("RELEASE SAVEPOINT held_run")
    # What it did, written once by the one who ran it (an empty message would leave it writable).
    tx.execute("UPDATE held_actions SET result_message = ?, result_url = ? WHERE id = ?",
               ((outcome.message or "done")[:2000], outcome.url[:500], held["id"]))
    req.facts["held_run"] = {"user_id": held["requester_id"], "client": held["client"], "url": held["url"],
                             "action": held["action"], "params": json.loads(held["params"]),
                             "outcome": f"{'ok' if outcome.changed else 'unchanged'}, approved by @{req.user['handle']}"
                                        f"{' (browser)' if req.browser else ' via ' + req.client}"}
    # The action may have taken the approver out of the studio (remove_member): then home is where they are.
    still = tx.scalar("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?", (held["studio_id"], req.user["id"]))
    # What the action does once its write is done (create_invitation's e-mail) follows the approval's:
    # the same outcome, said as the approval's (the approval changed the held action either way).
    return dataclasses.replace(outcome, message=f"Approved: {held['action']} ran as @{requester['handle']}. "
                                                f"{outcome.message}", url=req.path if still else "/", changed=True)


class _Changed(Exception):
    pass


def reject(req: Request, p: RejectParams) -> Outcome:
    held = _lock(req)
    _end(req, held, "rejected", reason=p.note)
    return Outcome(f"Rejected: {held['action']} will not run. The requester reads your note.", req.path)


def withdraw(req: Request, p: Params) -> Outcome:
    held = _lock(req)
    _end(req, held, "withdrawn", reason="withdrawn by the requester")
    return Outcome(f"Withdrawn: {held['action']} will not run.", req.path)


def set_rule(req: Request, p: RuleParams) -> Outcome:
    studio = req.studio
    assert studio is not None
    if p.scope == "studio" and req.role != "admin":
        raise ActionFailed("the studio's rules are set by its admins; set scope=mine for your own agents")
    approvers = p.approvers
    if approvers not in ("self", "admins", "members"):
        ids = []
        for handle in approvers.replace("@", "").split(","):
            row = req.tx.one("SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id AND m.studio_id = ?"
                             " WHERE u.handle = ?", (studio["id"], handle))
            if row is None:
                raise ActionFailed(f"@{handle} is no member of this studio")
            ids.append(row["id"])
        approvers = ",".join(sorted(set(ids)))
    if approvers == "self" and p.scope != "mine":
        raise ActionFailed("approvers=self is for your own agents: set scope=mine")
    if approvers == "self":
        own_counts = True
    else:
        own_counts = p.own_counts
    rule_id = new_id(8)
    req.tx.execute("INSERT INTO hold_rules (id, studio_id, owner_id, actions, whose, approvers, approvals, own_counts,"
                   " in_client, expires_hours, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (rule_id, studio["id"], req.user["id"] if p.scope == "mine" else None, p.actions, p.whose, approvers,
                    p.approvals, int(own_counts), int(p.in_client), p.expires_hours, req.user["id"], now()))
    return Outcome(f"Rule {rule_id} set: from now on, {p.whose if p.whose == 'everyone' else 'agent'} writes "
                   f"({p.actions}) wait for approval.", req.path)


def remove_rule(req: Request, p: RemoveRuleParams) -> Outcome:
    studio = req.studio
    assert studio is not None
    rule = req.tx.one("SELECT * FROM hold_rules WHERE id = ? AND studio_id = ?", (p.rule, studio["id"]))
    if rule is None:
        raise ActionFailed(f"no rule {p.rule} in this studio")
    if rule["owner_id"] is None and req.role != "admin":
        raise ActionFailed("the studio's rules are removed by its admins")
    if rule["owner_id"] is not None and rule["owner_id"] != req.user["id"]:
        raise ActionFailed("that rule is another member's own")
    req.tx.execute("DELETE FROM hold_rules WHERE id = ?", (rule["id"],))
    return Outcome(f"Rule {rule['id']} removed; held actions already waiting still wait.", req.path)


ACTIONS = [
    Action("approve", ("held",), "Approve the held action; the last approval runs it as the requester.",
           approve, ApproveParams, who=_may_decide, when=_pending),
    Action("reject", ("held",), "Reject the held action with a note saying why; it will not run.",
           reject, RejectParams, who=_may_reject, when=_pending),
    Action("withdraw", ("held",), "Take back your own held action; it will not run.",
           withdraw, who=_requester, when=_pending),
    Action("set_hold_rule", ("held_queue",), "Make writes in this studio wait for approval (in the browser only).",
           set_rule, RuleParams, who=_browser_only),
    Action("remove_hold_rule", ("held_queue",), "Remove a hold rule (in the browser only).",
           remove_rule, RemoveRuleParams, who=_browser_only),
]
