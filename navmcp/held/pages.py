"""The held pages: `/studios/{h}/held` (the queue and the studio's rules) and
`/studios/{h}/held/{id}` (one held action: what will run, what it would do, whether its target
changed since, the rule, the approvals so far). Every member of the studio reads them.

A held action's status is judged when it is read: a pending one past its expiry reads "expired",
and one that nobody can approve any more (the last admin left) reads "failed", with that reason,
at once and everywhere (the approve action's rules read the same status).
"""

from __future__ import annotations

import json
from typing import Any

from navmcp.clock import now
from navmcp.errors import NotFound
from navmcp.held import rules, staleness
from navmcp.pages.request import PAGE_SIZE, Request, paginate
from navmcp.pages.studio import crumbs, resolve_studio
from navmcp.store import Row, Tx

NOBODY = "nobody can approve it any more (too few eligible approvers are left in the studio)"


def status(tx: Tx, held: Row, at: str | None = None) -> tuple[str, str]:
    """(status, reason) as of now: a pending hold past its expiry is expired; one nobody can approve
    any more has failed."""
    if held["status"] != "pending":
        return held["status"], held["reason"]
    if held["expires_at"] <= (at or now()):
        return "expired", f"nobody approved it before {held['expires_at'][:16].replace('T', ' ')} UTC"
    given = len(rules.counted(tx, held))
    if given < held["approvals"] and given + len(rules.candidates(tx, held)) < held["approvals"]:
        return "failed", NOBODY
    return "pending", ""


def resolve_queue(req: Request) -> None:
    resolve_studio(req)


def view_queue(req: Request) -> dict[str, Any]:
    studio = req.studio
    assert studio is not None
    total = req.tx.scalar("SELECT count(*) FROM held_actions WHERE studio_id = ?", (studio["id"],))
    pager = paginate(req, total)
    rows = req.tx.all(
        """SELECT h.*, u.handle FROM held_actions h JOIN users u ON u.id = h.requester_id WHERE h.studio_id = ?
            ORDER BY CASE WHEN h.status = 'pending' THEN 0 ELSE 1 END, h.created_at DESC, h.id LIMIT ? OFFSET ?""",
        (studio["id"], PAGE_SIZE, pager["offset"]))
    at = now()
    base = f"/studios/{studio['handle']}/held"
    for row in rows:
        row["status"], row["reason"] = status(req.tx, row, at)
        row["link"] = f"{base}/{row['id']}"
    handles = _handles(req.tx, studio["id"])
    found = req.tx.all("SELECT * FROM hold_rules WHERE studio_id = ? AND (owner_id IS NULL OR owner_id = ?)"
                       " ORDER BY created_at, id", (studio["id"], req.user["id"]))
    rule_list = [{"id": r["id"], "text": rules.describe(r, handles), "mine": r["owner_id"] is not None} for r in found]
    return {"title": f"Held actions in {studio['name']}", "breadcrumb": crumbs(req, ("Held", base)),
            "held": rows, "rules": rule_list, "pager": pager}


def resolve_held(req: Request) -> None:
    resolve_studio(req)
    studio = req.studio
    assert studio is not None
    held = req.tx.one("""SELECT h.*, u.handle FROM held_actions h JOIN users u ON u.id = h.requester_id
                          WHERE h.id = ? AND h.studio_id = ?""", (req.args["held"], studio["id"]))
    if held is None:
        raise NotFound(f"no page at {req.path}: no held action {req.args['held']} in this studio; "
                       f"/studios/{studio['handle']}/held lists them")
    req.facts["held"] = held
    req.facts["status"], req.facts["reason"] = status(req.tx, held)
    req.facts["approved_by_you"] = req.tx.scalar(
        "SELECT 1 FROM held_approvals WHERE held_id = ? AND user_id = ?", (held["id"], req.user["id"])) is not None


def view_held(req: Request) -> dict[str, Any]:
    studio = req.studio
    assert studio is not None
    held = req.facts["held"]
    base = f"/studios/{studio['handle']}/held"
    changed = staleness.changed(req.tx, held, _target(req.tx, held))
    handles = _handles(req.tx, studio["id"])
    approvals = req.tx.all("""SELECT a.note, a.created_at, u.handle FROM held_approvals a JOIN users u ON u.id = a.user_id
                               WHERE a.held_id = ? ORDER BY a.created_at""", (held["id"],))
    decided_by = handles.get(held["decided_by"] or "", "")
    return {
        "title": f"Held: {held['action']} on {held['url']}",
        "breadcrumb": crumbs(req, ("Held", base), (held["id"], f"{base}/{held['id']}")),
        "held": held, "status": req.facts["status"], "reason": req.facts["reason"],
        "params": json.dumps(json.loads(held["params"]), indent=2, sort_keys=True, ensure_ascii=False),
        "needs": rules.approver_words(held["approvers"], held["approvals"], bool(held["own_counts"]), handles),
        "changed": changed,
        "approvals": approvals, "decided_by": decided_by,
    }


def _target(tx: Tx, held: Row) -> Row | None:
    """The held action's target item as it is now (its id and time), or None."""
    parts = held["url"].split("?", 1)[0].split("/")
    if len(parts) == 5 and parts[3] in ("n", "d", "c"):
        return tx.one("SELECT id, updated_at FROM items WHERE id = ? AND studio_id = ?", (parts[4], held["studio_id"]))
    return None


def _handles(tx: Tx, studio_id: str) -> dict[str, str]:
    return {r["id"]: r["handle"] for r in tx.all(
        "SELECT u.id, u.handle FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.studio_id = ?", (studio_id,))}
