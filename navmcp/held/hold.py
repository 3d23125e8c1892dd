"""The hold: a covered write, validated as any other, stored instead of applied.

`hold` runs inside the write's own transaction, after the action's rules and params passed: it runs
the handler once in a savepoint and rolls it back (the preview: what it would do, or the refusal
it would meet, which is then the answer as for any write), and stores exactly what will run. A
retry of the same request while it is pending answers with the same hold.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from navmcp.clock import from_now, now
from navmcp.errors import ActionFailed
from navmcp.feeds import changes, inbox
from navmcp.held import rules
from navmcp.identity import new_id
from navmcp.store import Row

if TYPE_CHECKING:
    from navmcp.actions.action import Action, Params
    from navmcp.pages.request import Request

PENDING_CAP = 20  # held actions one person may have waiting in one studio


def digest(action: str, url: str, params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([action, url, params], sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def held_url(studio_handle: str, held_id: str) -> str:
    return f"/studios/{studio_handle}/held/{held_id}"


def hold(req: Request, action: Action, raw: dict[str, Any] | None, parsed: Params, rule: Row) -> dict[str, Any]:
    """Store the write `action(parsed)` on `req`'s page as held by `rule`; its summary for the agent."""
    params = {k: v for k, v in (raw or {}).items() if v is not None}  # as Action.parse reads them
    key = digest(action.name, req.url, params)
    studio = req.studio
    assert studio is not None
    at = now()
    same = req.tx.one("SELECT * FROM held_actions WHERE requester_id = ? AND studio_id = ? AND digest = ?"
                      " AND status = 'pending' AND expires_at > ?", (req.user["id"], studio["id"], key, at))
    if same is not None:
        return summary(req, same, again=True)
    waiting = req.tx.scalar("SELECT count(*) FROM held_actions WHERE requester_id = ? AND studio_id = ?"
                            " AND status = 'pending' AND expires_at > ?", (req.user["id"], studio["id"], at))
    if waiting >= PENDING_CAP:
        raise ActionFailed(f"{action.name} is held by a rule of this studio, and you already have {waiting} held "
                           f"actions waiting here (at most {PENDING_CAP}): withdraw one at /studios/{studio['handle']}"
                           "/held, or wait until they are decided", url=req.url)
    # The target as the agent read it, before the preview runs (an edit's handler updates the row
    # the request holds, as well as the table the savepoint rolls back).
    version, revision = (req.item["updated_at"], req.item.get("revision")) if req.item else (None, None)
    preview = _preview(req, action, parsed)
    row = {
        "id": new_id(10), "studio_id": studio["id"], "requester_id": req.user["id"], "client": (req.client or "")[:100],
        "url": req.url, "action": action.name, "params": json.dumps(params, sort_keys=True, ensure_ascii=False),
        "digest": key, "preview": preview[:2000], "target_version": version,
        "target_revision": revision,
        "rule_id": rule["id"], "rule_text": rules.describe(rule)[:1000], "approvers": rule["approvers"],
        "approvals": rule["approvals"], "own_counts": rule["own_counts"], "in_client": rule["in_client"],
        "created_at": at,
        "expires_at": from_now(timedelta(hours=rule["expires_hours"])),
    }
    req.tx.execute(f"INSERT INTO held_actions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                   tuple(row.values()))
    changes.record(req.tx, req.user["id"], studio["id"], "held-" + row["id"])
    held = req.tx.one("SELECT * FROM held_actions WHERE id = ?", (row["id"],))
    assert held is not None
    inbox.notify(req, "approval_requested", rules.candidates(req.tx, held), held_id=held["id"])
    return summary(req, held, again=False)


def _preview(req: Request, action: Action, parsed: Params) -> str:
    """What the action would do: its handler's message, run in a savepoint and rolled back. A refusal
    it meets is raised, as for any write (nothing is held that could not run now)."""
    req.tx.execute("SAVEPOINT held_preview")
    try:
        outcome = action.run(req, parsed)
    finally:
        req.tx.execute("ROLLBACK TO SAVEPOINT held_preview")
        req.tx.execute("RELEASE SAVEPOINT held_preview")
    return outcome.message


def summary(req: Request, held: Row, again: bool) -> dict[str, Any]:
    """The agent's answer: not done yet, where it waits, for whom and until when."""
    studio = req.studio
    assert studio is not None
    url = held_url(studio["handle"], held["id"])
    needs = rules.approver_words(held["approvers"], held["approvals"], bool(held["own_counts"]))
    expires = held["expires_at"][:16].replace("T", " ")
    message = (f"Not done yet — held for approval{' (the same request is already waiting)' if again else ''}. "
               f"{held['action']} on {held['url']} waits at {url} for {needs}, until {expires} UTC. Nothing has "
               f"changed. Watch that page (subscriptions/listen or resources/subscribe) or read it later: it will "
               f"say executed, rejected, withdrawn, expired or failed, and link what was done.")
    return {"message": message, "url": url,
            "held": {"id": held["id"], "url": url, "status": "pending", "needs": needs,
                     "expires_at": held["expires_at"]}}
