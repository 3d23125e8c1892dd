"""Deleted items: a note, decision or commitment deleted softly, restored, or purged for good.

`delete_item` marks the item (`deleted_at`, `deleted_by`, migration 0160 / 20261129000160); from
that moment it is in no list, count, search, cycle, tag, inbox entry, completion or link of anyone's,
and its votes count nowhere. For KEEP_DAYS its page stays reachable for those who may restore it
(its creator and the studio's admins: `may_restore`), and the studio's Deleted list shows it to
them; everyone else reads it as a page that does not exist. After KEEP_DAYS it is gone for them too
(`expired`), and the purge (`purge`) deletes its row and everything of it: options, votes, answers,
participants, comments, revisions, attachments, reads, links, tags, inbox entries (the foreign keys
cascade), its change rows and the held actions waiting on its pages. The purge runs with writes
(each delete and restore, and every PURGE_EVERY-th audited action of a process), as the audit's
pruning does: a page never shows an expired item, whenever its rows go.
The audit keeps who deleted and restored what (the action and the URL, as for every action),
never the text.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from navmcp.clock import ago, moment, stamp
from navmcp.errors import NotFound
from navmcp.store import Row, Tx

KEEP_DAYS = 30
PURGE_MOST = 100  # items one purge deletes at most (the next one takes the rest)
PURGE_EVERY = 1024  # audited actions of a process between two purges (besides every delete and restore)
_audited = itertools.count(1)


def cutoff() -> str:
    """Items deleted before this moment are past restoring (as stored text)."""
    return ago(KEEP_DAYS * 86400)


def purge_at(deleted_at: str) -> str:
    """When an item deleted at `deleted_at` is purged."""
    return stamp(moment(deleted_at) + timedelta(days=KEEP_DAYS))


def expired(item: Row) -> bool:
    return bool(item.get("deleted_at")) and item["deleted_at"] < cutoff()


def may_restore(item: Row, user_id: str, role: str | None) -> bool:
    """Its creator or an admin of its studio: who may delete it, restore it, and see it meanwhile."""
    return item["created_by"] == user_id or role == "admin"


def check_visible(item: Row, user_id: str, role: str | None, path: str, studio_handle: str) -> None:
    """A deleted item's page: for those who may restore it, until it expires; NotFound for anyone
    else, worded as for an item that never was (nothing says what it was)."""
    if expired(item) or not may_restore(item, user_id, role):
        raise NotFound(f"no page at {path}: see /studios/{studio_handle} for its items")


def purge(tx: Tx) -> int:
    """Delete for good, with everything of theirs, the items deleted more than KEEP_DAYS ago (at
    most PURGE_MOST): how many went."""
    return tx.purge_deleted(cutoff(), PURGE_MOST)


def purge_now_and_then(tx: Tx) -> None:
    """A purge with every PURGE_EVERY-th audited action of this process."""
    if next(_audited) % PURGE_EVERY == 0:
        purge(tx)


# The studio's Deleted list: for an admin every item deleted in it (not yet expired), for anyone
# else their own; newest deletion first, down the index of deleted items (migration 0160).
_DELETED = """SELECT i.id, i.kind, i.title, i.created_by, i.deleted_at, d.handle AS deleted_by, u.handle AS author
                FROM items i LEFT JOIN users d ON d.id = i.deleted_by LEFT JOIN users u ON u.id = i.created_by
               WHERE i.studio_id = ? AND i.deleted_at IS NOT NULL AND i.deleted_at >= ?{mine}
               ORDER BY i.deleted_at DESC, i.id LIMIT ? OFFSET ?"""
_DELETED_COUNT = """SELECT count(*) FROM items i
                     WHERE i.studio_id = ? AND i.deleted_at IS NOT NULL AND i.deleted_at >= ?{mine}"""


def _mine(role: str | None) -> str:
    return "" if role == "admin" else " AND i.created_by = ?"


def count_listed(tx: Tx, studio_id: str, user_id: str, role: str | None) -> int:
    args: tuple[Any, ...] = (studio_id, cutoff()) + (() if role == "admin" else (user_id,))
    return tx.scalar(_DELETED_COUNT.format(mine=_mine(role)), args)


def listed(tx: Tx, studio_id: str, user_id: str, role: str | None, most: int, offset: int) -> list[Row]:
    args: tuple[Any, ...] = (studio_id, cutoff()) + (() if role == "admin" else (user_id,))
    rows = tx.all(_DELETED.format(mine=_mine(role)), (*args, most, offset))
    for row in rows:
        row["purge_at"] = purge_at(row["deleted_at"])
    return rows


def find_listed(tx: Tx, studio_id: str, item_id: str) -> Row | None:
    """A deleted item of this studio, not yet expired, by id (the Deleted list's restore_item)."""
    return tx.one("SELECT * FROM items WHERE id = ? AND studio_id = ? AND deleted_at IS NOT NULL AND deleted_at >= ?",
                  (item_id, studio_id, cutoff()))


def notice(tx: Tx, item: Row) -> dict[str, Any]:
    """What a deleted item's page says of its deletion: by whom, when, and until when it may come back."""
    by = tx.scalar("SELECT handle FROM users WHERE id = ?", (item["deleted_by"],)) if item["deleted_by"] else None
    return {"by": by, "at": item["deleted_at"], "purge_at": purge_at(item["deleted_at"])}


# What a studio's deleted items (not yet purged) added to a cycle's per-day counts (migration 0200,
# kept by triggers as rows come and go): the items created and closed in the window, the comments,
# ballots (one per voter, decision and day, as the day counts count them) and joins made on them.
# Read down the index of the studio's deleted items, so a studio with none pays one probe.
_ADDED = """SELECT
    (SELECT count(*) FROM items i WHERE i.studio_id = ? AND i.deleted_at IS NOT NULL
        AND i.created_at >= ? AND i.created_at < ?) AS created,
    (SELECT count(*) FROM items i WHERE i.studio_id = ? AND i.deleted_at IS NOT NULL
        AND i.closed_at >= ? AND i.closed_at < ?) AS closed,
    (SELECT count(*) FROM items i JOIN comments c ON c.item_id = i.id WHERE i.studio_id = ?
        AND i.deleted_at IS NOT NULL AND c.created_at >= ? AND c.created_at < ?) AS comments,
    (SELECT count(*) FROM (SELECT DISTINCT v.decision_id, v.user_id, substr(v.created_at, 1, 10) AS day
                             FROM items i JOIN votes v ON v.decision_id = i.id WHERE i.studio_id = ?
                              AND i.deleted_at IS NOT NULL AND v.created_at >= ? AND v.created_at < ?) b) AS votes,
    (SELECT count(*) FROM items i JOIN participants p ON p.commitment_id = i.id WHERE i.studio_id = ?
        AND i.deleted_at IS NOT NULL AND p.joined_at >= ? AND p.joined_at < ?) AS joins"""


def without_deleted(tx: Tx, activity: dict[str, int], studio_id: str, since: str, till: str) -> dict[str, int]:
    """A cycle's counts (`Tx.cycle_activity`) less what the studio's deleted items added to them."""
    if tx.one("SELECT 1 FROM items WHERE studio_id = ? AND deleted_at IS NOT NULL LIMIT 1", (studio_id,)) is None:
        return activity
    added = tx.one(_ADDED, (studio_id, since, till) * 5) or {}
    return {key: n - (added.get(key) or 0) for key, n in activity.items()}
