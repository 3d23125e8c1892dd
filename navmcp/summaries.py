"""What a change was, in a few words, for a watcher's notification (issue 42): "vote by @bob",
"closed: 'Lisbon'", "comment by @carol". A watcher waiting for a decision to close need not read
the page again after every vote.

A summary is read as the watcher (`store.read(user_id=…)`: row-level security on PostgreSQL) and
says only what the page it watches shows its members: who voted is left out on an anonymous
decision, as its page leaves it out; a result is the one the decision's page gives. The feed asks
for one only for a watcher who is a member of the change's studio (`changes.Feed.dispatch`).
"""

from __future__ import annotations

from typing import Any

from navmcp.changes import Change

# Answers that say who answered, unless the decision is anonymous (its page does not name them).
RESPONSES = frozenset({"vote", "allocate", "answer", "consent", "object"})
# The action's name in a summary where a bare name would read oddly.
WORDS = {"add_comment": "comment", "join_commitment": "join", "leave_commitment": "leave",
         "create_decision": "new decision", "create_note": "new note", "create_commitment": "new commitment"}
SUMMARY_CHARS = 120  # a summary is a line, not a page: a long title or result is cut


def about(store, change: Change, user_id: str) -> dict[str, str] | None:
    """`{"kind": action name, "summary": words}` of `change` as `user_id` may see it, or None
    when the change names no action (an invitation accepted, say)."""
    if not change.action:
        return None
    with store.read(user_id=user_id) as tx:
        return {"kind": change.action, "summary": _cut(_words(tx, change, user_id))}


def _words(tx, change: Change, user_id: str) -> str:
    action = change.action or ""
    actor = tx.scalar("SELECT handle FROM users WHERE id = ?", (change.user_id,))
    by = f" by @{actor}" if actor else ""
    item = tx.one("SELECT * FROM items WHERE id = ? AND studio_id = ?", (change.item_id, change.studio_id)) \
        if change.item_id else None
    if item is None:
        return WORDS.get(action, action.replace("_", " ")) + by
    if action in RESPONSES and item["kind"] == "decision" and item.get("anonymous"):
        return f"{action} (anonymous)"
    if action in ("close_decision", "close_poll"):
        return f"closed: {_verdict(tx, item, user_id)}"
    if action == "join_commitment":
        return f"join{by} ({item['participant_count']} of {item['critical_mass']} joined)"
    return WORDS.get(action, action.replace("_", " ")) + by


def _verdict(tx, item: dict[str, Any], user_id: str) -> str:
    """The result the decision's page gives (its kind's, the quorum judged)."""
    from navmcp import kinds
    from navmcp.pages.request import Request

    user = tx.one("SELECT * FROM users WHERE id = ?", (user_id,))
    studio = tx.one("SELECT * FROM studios WHERE id = ?", (item["studio_id"],))
    req = Request(tx=tx, user=user, client="feed", path="", query={}, args={}, studio=studio, item=item)
    return kinds.verdict_of(req, item).text


def _cut(text: str) -> str:
    text = " ".join(text.split())  # one line: a title's newlines cannot make it look like more
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"
