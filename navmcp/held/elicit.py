"""Approval in the MCP client: a held action offered to the client's person as a form elicitation.

Where a modern (2026-07-28) client declares form elicitation, and the held action's rule allows
approval in the client (`in_client`), and the person the agent acts for may give its last approval,
`execute_action` answers with `resultType: "input_required"` instead of "not done yet": one
`elicitation/create` ("Your agent wants to … Allow it?") and a `requestState`. The client shows the
form to its person and retries the same call with their answer (MCP's multi round-trip requests).

The state comes back through the client, so it is signed (HMAC with the workspace's secret) and
short-lived (STATE_SECONDS), and binds the person, the held action and the call's own arguments.
A bad, forged, expired or missing answer decides nothing: the call is answered as it was first
(the same hold, pending, at its page), never with the hold lost or approved.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from navmcp.held import rules
from navmcp.store import Row, Tx

KEY = "approve"  # the input request's key in `inputRequests` / `inputResponses`
STATE_SECONDS = 600  # how long an elicitation's answer is taken
NOTE_MOST = 500


class BadState(Exception):
    """A `requestState` this server did not sign for this person and call, or signed too long ago."""


def call_digest(action: str, params: Any, url: Any) -> str:
    """The call as the agent made it: a retry must repeat it exactly."""
    return hashlib.sha256(json.dumps([action, params, url], sort_keys=True, ensure_ascii=False,
                                     default=str).encode()).hexdigest()


def _key(secret: bytes) -> bytes:
    return hmac.new(secret, b"navmcp held-action elicitation state", hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(secret: bytes, user_id: str, held_id: str, held_url: str, digest: str, at: float | None = None) -> str:
    payload = _b64(json.dumps({"u": user_id, "h": held_id, "p": held_url, "d": digest,
                               "e": int((time.time() if at is None else at) + STATE_SECONDS)},
                              separators=(",", ":")).encode())
    return payload + "." + _b64(hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest())


def verify(secret: bytes, state: Any, user_id: str, digest: str, at: float | None = None) -> tuple[str, str]:
    """(held id, held page URL) that `state` was signed for, for this person and this very call;
    BadState otherwise."""
    if not isinstance(state, str) or len(state) > 2000 or state.count(".") != 1:
        raise BadState("the answer came without the state this server gave with the question")
    payload, mac = state.split(".")
    try:
        given = _unb64(mac)
    except ValueError:
        raise BadState("the answer's state is not one this server signed") from None
    if not hmac.compare_digest(given, hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest()):
        raise BadState("the answer's state is not one this server signed")
    facts = json.loads(_unb64(payload))
    if facts["u"] != user_id or facts["d"] != digest:
        raise BadState("the answer's state was given for another person or another call")
    if facts["e"] < (time.time() if at is None else at):
        raise BadState(f"the question was asked more than {STATE_SECONDS // 60} minutes ago")
    return facts["h"], facts["p"]


def offer(tx: Tx, held_id: str, user_id: str) -> Row | None:
    """The held action, if `user_id` (the person the agent acts for) may give it its last approval
    in the client now; else None (it waits for the browser)."""
    from navmcp.held.pages import status  # (the held pages import the page table, which imports them)

    held = tx.one("SELECT * FROM held_actions WHERE id = ?", (held_id,))
    if held is None or not held["in_client"] or status(tx, held)[0] != "pending":
        return None
    if rules.eligible(tx, held, user_id) is not None:
        return None
    given = rules.counted(tx, held)
    if any(r["user_id"] == user_id for r in given) or len(given) + 1 < held["approvals"]:
        return None
    return held


def input_required(held: Row, state: str) -> dict[str, Any]:
    """The `tools/call` result that asks the client's person."""
    message = (f"Your agent wants to run {held['action']} on {held['url']}. It would do: "
               f"{held['preview'][:300]} Allow it?")
    schema = {"type": "object", "required": ["answer"], "properties": {
        "answer": {"type": "string", "title": "Your answer",
                   "oneOf": [{"const": "approve", "title": "Allow"}, {"const": "reject", "title": "Don't allow"}]},
        "note": {"type": "string", "title": "Note (optional)", "maxLength": NOTE_MOST}}}
    return {"resultType": "input_required",
            "inputRequests": {KEY: {"method": "elicitation/create",
                                    "params": {"mode": "form", "message": message, "requestedSchema": schema}}},
            "requestState": state}


def read(responses: Any) -> tuple[str, str]:
    """What the person answered: ("approve", note), ("withdraw", "") — they said no, and a held
    action its requester turns down is withdrawn — or ("wait", "") for no answer, a dismissed form
    or one that does not read as either (the hold stays pending)."""
    answer = responses.get(KEY) if isinstance(responses, dict) else None
    if not isinstance(answer, dict):
        return "wait", ""
    if answer.get("action") == "decline":
        return "withdraw", ""
    content = answer.get("content")
    if answer.get("action") != "accept" or not isinstance(content, dict):
        return "wait", ""
    note = content.get("note")
    note = note[:NOTE_MOST] if isinstance(note, str) else ""
    if content.get("answer") == "approve":
        return "approve", note
    if content.get("answer") == "reject":
        return "withdraw", ""
    return "wait", ""
