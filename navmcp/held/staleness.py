"""Whether a held action's target changed since it was held, in what the action touches.

An item's time moves with every comment, vote or join, and a held close_decision is judged anew
when approved anyway; but an edit (edit_note, edit_decision, edit_commitment) sets fields, and is
stale only where a later revision of the item changed a field it sets: a comment, or an edit of
another field, leaves it as it was asked. Other actions count any change of the item.
"""

from __future__ import annotations

import json
from typing import Any

from navmcp.store import Row, Tx

EDITS = frozenset({"edit_note", "edit_decision", "edit_commitment"})
FIELD = {"rename_options": "options", "remove_options": "options"}  # an edit's parameter → the field it changes
NOT_FIELDS = frozenset({"base"})


def changed(tx: Tx, held: Row, item: Any) -> str | None:
    """What changed since `held` was asked, in words ("its question"; "the item"), or None. `item` is
    the target as it is now (a row with id and updated_at), or None for a write with no item."""
    if held["target_version"] is None or item is None or item["updated_at"] == held["target_version"]:
        return None
    if held["action"] not in EDITS or held["target_revision"] is None:
        return "the item"
    touched = {FIELD.get(name, name) for name in json.loads(held["params"]) if name not in NOT_FIELDS}
    since: set[str] = set()
    for row in tx.all("SELECT changes FROM revisions WHERE item_id = ? AND comment_id IS NULL AND number > ?",
                      (item["id"], held["target_revision"])):
        since.update(json.loads(row["changes"]))
    hit = sorted(touched & since)
    return f"its {', '.join(hit)}" if hit else None
