"""The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for held writes.

Where a modern client declares the extension on its `tools/call`, a held `execute_action` answers
with a task (`resultType: "task"`) instead of "not done yet", and the client polls `tasks/get`:
pending is `working` (with who must approve, where); executed is `completed` with the result the
call would have had; rejected, withdrawn, expired or failed is `completed` with `isError` and the
reason ("failed" is the extension's word for a JSON-RPC error only). `tasks/cancel` withdraws it,
for its requester. The task id is the held action's id, and a task is read as its held page is:
by members of its studio only (anyone else, like an unknown id, is told there is no such task).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from navmcp.held import rules
from navmcp.held.hold import held_url
from navmcp.store import Row, Tx

POLL_MILLISECONDS = 30_000  # people approve in minutes or hours, not seconds
KEEP_SECONDS = 86_400  # a task is kept a day past its hold's expiry


def _seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _base(held: Row, status: str, message: str) -> dict[str, Any]:
    return {"taskId": held["id"], "status": status, "statusMessage": message, "createdAt": held["created_at"],
            "lastUpdatedAt": held["decided_at"] or held["created_at"],
            "ttlSeconds": int(_seconds(held["expires_at"]) - _seconds(held["created_at"])) + KEEP_SECONDS,
            "pollIntervalMilliseconds": POLL_MILLISECONDS}


def created(held: Row, studio_handle: str) -> dict[str, Any]:
    """The `tools/call` result for a write just held: its task, working."""
    return {**_base(held, "working", _waiting(held, studio_handle)), "resultType": "task"}


def _waiting(held: Row, studio_handle: str) -> str:
    return (f"held for approval by {rules.approver_words(held['approvers'], held['approvals'], bool(held['own_counts']))}"
            f" at {held_url(studio_handle, held['id'])}, until {held['expires_at'][:16].replace('T', ' ')} UTC")


def find(tx: Tx, task_id: Any, user_id: str) -> tuple[Row, str] | None:
    """(the held action, its studio's handle) the task names, if `user_id` may read its page."""
    if not isinstance(task_id, str) or not 0 < len(task_id) <= 64:
        return None
    row = tx.one("""SELECT h.*, s.handle AS studio_handle FROM held_actions h JOIN studios s ON s.id = h.studio_id
                     JOIN memberships m ON m.studio_id = h.studio_id AND m.user_id = ? WHERE h.id = ?""",
                 (user_id, task_id))
    return None if row is None else (row, row["studio_handle"])


def detailed(tx: Tx, held: Row, studio_handle: str) -> dict[str, Any]:
    """The task as `tasks/get` answers it, from the held action's status as of now."""
    from navmcp.held.pages import status as status_now  # (the held pages import the page table, which imports them)

    status, reason = status_now(tx, held)
    if status == "pending":
        return _base(held, "working", _waiting(held, studio_handle))
    if status == "executed":
        message, url = held["result_message"], held["result_url"]
        result = {"content": [{"type": "text", "text": f"✓ {message}\nURL: {url}\n"}],
                  "structuredContent": {"ok": True, "message": message, "url": url, "actions": []}, "isError": False}
        return {**_base(held, "completed", f"approved and run: {message}"), "result": result}
    text = f"{held['action']} on {held['url']} did not run: it was {status}" + (f" ({reason})" if reason else "") + "."
    result = {"content": [{"type": "text", "text": text}],
              "structuredContent": {"ok": False, "message": text, "url": held_url(studio_handle, held["id"]),
                                    "actions": []}, "isError": True}
    return {**_base(held, "completed", text), "result": result}
