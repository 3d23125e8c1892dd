"""The inbox: what happened that concerns a user, as entries written in the action's own transaction.

Writing: an action calls `notify(req, kind, user_ids, item_id)` — the one function to write entries
with. It runs inside the action's write transaction, so a change that rolls back leaves no entry.
Entries go only to current members of the action's studio, never to the actor (your own actions
never notify you); a burst on one item folds into one unread entry ("3 new comments on …"); a
user's entries are kept KEEP_DAYS. Rows hold ids only (who it is for, the studio and item, who
acted, through which client), as the change feed does; the page joins the names when it is read.

Reading: `unread_count`, `newest` (home) and `entries` (the `/inbox` page): unread first, then
read, newest first; dismissed entries are gone from both. Entries of studios the user has left
are not shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from navmcp.clock import ago, now

if TYPE_CHECKING:
    from navmcp.pages.request import Request
    from navmcp.store import Tx

KEEP_DAYS = 90
COUNT_CAP = 1000  # unread entries counted at most (then "more than")

# Every kind of entry, and whether a burst of it on one item folds into one unread entry.
KINDS: dict[str, bool] = {
    "mention": True,            # someone mentioned you (@handle, @admins, @everyone)
    "comment": True,            # a comment on an item you created or commented on
    "decision_closed": False,   # a decision you created or voted on closed
    "commitment_mass": False,   # a commitment you created or joined reached critical mass
    "commitment_closed": False,  # a commitment you created or joined closed
    "added": False,             # you were added to a studio
    "invited": False,           # an admin invited you to a studio (outside it: you are no member; navmcp.identity.invitations)
    "reminder": True,           # the creator or an admin reminds you to vote
    "deadline": False,          # what awaits your vote or your joining is due within a day (navmcp.feeds.due)
    "approval_requested": True,  # an agent's write waits for your approval (navmcp.held)
    "approval_decided": False,  # your agent's held write was approved and run, rejected or failed
}


def notify(req: Request, kind: str, user_ids: Iterable[str], item_id: str | None = None,
           held_id: str | None = None) -> list[str]:
    """Write an entry of `kind` about `item_id` (or the studio itself; or the held action `held_id`)
    in the acting request's studio for each of `user_ids` who is a member of it, the actor left out.
    Returns the ids written for."""
    if kind not in KINDS:
        raise ValueError(f"unknown inbox entry kind {kind!r}")
    actor = req.user["id"]
    wanted = sorted({u for u in user_ids if u and u != actor})
    if not wanted or req.studio is None:
        return []
    # The store keeps to the members among them (PostgreSQL: in the function, as row-level security
    # asks) and says whom it wrote for, so this module runs no membership query of its own.
    return req.tx.note_inbox(now(), kind, req.studio["id"], item_id, actor, (req.client or "")[:100], wanted,
                             KINDS[kind], ago(KEEP_DAYS * 86400), held_id)


def related(tx: Tx, item_id: str) -> set[str]:
    """Who an item concerns: its creator and whoever commented on it."""
    # UNION ALL and a set: UNION would build a temporary b-tree to drop the repeats.
    return {r[0] for r in tx.tuples("SELECT created_by FROM items WHERE id = ?"
                                     " UNION ALL SELECT created_by FROM comments WHERE item_id = ?", (item_id, item_id))}


def voters(tx: Tx, decision_id: str) -> list[str]:
    """Who voted on a decision: ballots of an acceptance decision, answers of the other kinds
    (navmcp.kinds: stances, dots, times)."""
    return [r["user_id"] for r in tx.all("SELECT user_id FROM votes WHERE decision_id = ?"
                                         " UNION SELECT user_id FROM responses WHERE decision_id = ?",
                                         (decision_id, decision_id))]


def participants(tx: Tx, commitment_id: str) -> list[str]:
    return [r["user_id"] for r in tx.all("SELECT user_id FROM participants WHERE commitment_id = ?", (commitment_id,))]


# A user's entries in the studios they are in (and any outside a studio), not dismissed.
# Entries about a deleted item wait, unseen, for its restore (navmcp.content.deletion; the few deleted items, once).
_MINE = ("e.user_id = ? AND e.dismissed_at IS NULL"
         " AND (e.studio_id IS NULL OR e.studio_id IN (SELECT studio_id FROM memberships WHERE user_id = ?))"
         " AND (e.item_id IS NULL OR e.item_id NOT IN (SELECT id FROM items WHERE deleted_at IS NOT NULL))")
_COLUMNS = """e.id, e.kind, e.count, e.client, e.created_at, e.updated_at, e.read_at, e.item_id, e.held_id,
              s.handle AS studio, s.name AS studio_name, i.kind AS item_kind, i.title,
              i.closed_at AS item_closed_at, i.deadline AS item_deadline, i.participant_count, i.critical_mass,
              a.handle AS actor"""
_JOINS = """inbox e LEFT JOIN studios s ON s.id = e.studio_id LEFT JOIN items i ON i.id = e.item_id
            LEFT JOIN users a ON a.id = e.actor_id"""


def unread_count(tx: Tx, user_id: str) -> int:
    """Unread entries, counted up to COUNT_CAP + 1 (more than COUNT_CAP: say "more than")."""
    return tx.scalar(f"SELECT count(*) FROM (SELECT 1 FROM inbox e WHERE {_MINE} AND e.read_at IS NULL LIMIT ?) AS c",
                     (user_id, user_id, COUNT_CAP + 1))


def counts(tx: Tx, user_id: str) -> tuple[int, int]:
    """(unread, all) entries, not dismissed."""
    row = tx.one(f"SELECT count(*) AS total, coalesce(sum(CASE WHEN e.read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread"
                 f" FROM inbox e WHERE {_MINE}", (user_id, user_id))
    return (row["unread"], row["total"]) if row else (0, 0)


def newest(tx: Tx, user_id: str, most: int) -> list[dict[str, Any]]:
    """The newest unread entries."""
    return _rows(tx, f"SELECT {_COLUMNS} FROM {_JOINS} WHERE {_MINE} AND e.read_at IS NULL"
                     " ORDER BY e.updated_at DESC, e.id LIMIT ?", (user_id, user_id, most))


def entries(tx: Tx, user_id: str, unread: int, offset: int, most: int) -> list[dict[str, Any]]:
    """A page of entries: unread first, then read, each newest first. `unread` is how many unread
    entries there are: each part is read down its own index, never sorted as a whole."""
    rows: list[dict[str, Any]] = []
    if offset < unread:
        rows = _rows(tx, f"SELECT {_COLUMNS} FROM {_JOINS} WHERE {_MINE} AND e.read_at IS NULL"
                         " ORDER BY e.updated_at DESC, e.id LIMIT ? OFFSET ?", (user_id, user_id, most, offset))
    if len(rows) < most:
        rows += _rows(tx, f"SELECT {_COLUMNS} FROM {_JOINS} WHERE {_MINE} AND e.read_at IS NOT NULL"
                          " ORDER BY e.updated_at DESC, e.id LIMIT ? OFFSET ?",
                      (user_id, user_id, most - len(rows), max(0, offset - unread)))
    return rows


_LETTER = {"note": "n", "decision": "d", "commitment": "c"}


def _rows(tx: Tx, sql: str, args: tuple) -> list[dict[str, Any]]:
    rows = tx.all(sql, args)
    for row in rows:
        studio = f"/studios/{row['studio']}" if row["studio"] else "/"
        row["url"] = (f"{studio}/{_LETTER[row['item_kind']]}/{row['item_id']}" if row["item_kind"]
                      else f"{studio}/held/{row['held_id']}" if row["held_id"] else "/inbox" if row["kind"] == "invited"
                      else studio)
        row["unread"] = row["read_at"] is None
        # what it is about: user text (an invitation's studio is named where it is answered, on /inbox)
        row["name"] = (row["title"] if row["item_kind"] else "the invitations for you" if row["kind"] == "invited"
                       else row["studio_name"])
        row["before"], row["after"] = _said(row)
        # A closed decision's result is the kind's to say, as its page says it (`results`): user text
        row["result"] = None
        closed = row["item_closed_at"] or (row["item_deadline"] and row["item_deadline"] <= now())
        row["closed_decision"] = row["item_id"] if row["kind"] == "decision_closed" and closed else None
        for key in ("item_id", "held_id", "item_kind", "title", "studio_name", "item_closed_at", "item_deadline",
                    "participant_count", "critical_mass"):  # the page needs them said once, above
            del row[key]
    return rows


def _said(row: dict[str, Any]) -> tuple[str, str]:
    """The words around the name of what an entry is about ("@ana commented on" … ""): navmcp's own
    words and handles only, so a template quotes the user's text between them apart."""
    who = f"@{row['actor']}" if row["actor"] else "someone"
    n, kind = row["count"], row["kind"]
    if kind == "comment":
        return (f"{n} new comments on", f", the last by {who}") if n > 1 else (f"{who} commented on", "")
    if kind == "mention":
        return (f"{who} mentioned you {n} times in", "") if n > 1 else (f"{who} mentioned you in", "")
    if kind == "reminder":
        return f"{who} reminds you to vote on", ""
    if kind == "deadline":  # navmcp.feeds.due: nobody acted
        due = f" (deadline {row['item_deadline'][:16].replace('T', ' ')} UTC)" if row["item_deadline"] else ""
        if row["item_kind"] == "commitment":
            return "Due within a day and still short of critical mass:", due
        return "Due within a day, awaiting your vote:", due
    if kind == "decision_closed":
        return f"{who} closed", ""
    if kind == "commitment_closed":  # its outcome, as lists say it
        said = f", {row['participant_count']} of {row['critical_mass']} joined" if row["critical_mass"] else ""
        return f"{who} closed", said
    if kind == "commitment_mass":
        return "", f" reached critical mass (the last to join: {who})"
    if kind == "added":
        return f"{who} added you to", ""
    if kind == "invited":
        return f"{who} invited you to a studio: see", ""
    if kind == "approval_requested":
        return (f"{n} held actions wait for your approval in", f", the last asked by {who}'s agent") if n > 1 else (
            f"{who}'s agent asks for your approval in", "")
    if kind == "approval_decided":
        return f"{who} decided your agent's held action in", ""
    return kind, ""


def results(req: Request, rows: list[dict[str, Any]]) -> None:
    """Each closed decision's entry with its result (`result`, user text: option titles), as the
    decision's page states it now (`kinds.list_results`); a decision reopened since has none."""
    from navmcp import kinds  # kinds write entries themselves (closing a time poll)

    closed = {row["closed_decision"]: {"id": row["closed_decision"], "kind": "decision", "closed": True}
              for row in rows if row["closed_decision"]}
    if closed:
        kinds.list_results(req, list(closed.values()))
    for row in rows:
        found = closed.get(row.pop("closed_decision"))
        row["result"] = found.get("result") if found else None


def mark_read(tx: Tx, user_id: str, entry: str | None, until: str | None) -> int:
    """Mark one entry read, or every unread one last changed at or before `until` (a time)."""
    if entry is not None:
        return tx.execute("UPDATE inbox SET read_at = ? WHERE id = ? AND user_id = ? AND read_at IS NULL",
                          (now(), entry, user_id))
    return tx.execute("UPDATE inbox SET read_at = ? WHERE user_id = ? AND read_at IS NULL AND updated_at <= ?",
                      (now(), user_id, until or now()))


def dismiss(tx: Tx, user_id: str, entry: str | None, until: str | None) -> int:
    """Dismiss one entry, or every entry last changed at or before `until` (a time)."""
    if entry is not None:
        return tx.execute("UPDATE inbox SET dismissed_at = ? WHERE id = ? AND user_id = ? AND dismissed_at IS NULL",
                          (now(), entry, user_id))
    return tx.execute("UPDATE inbox SET dismissed_at = ? WHERE user_id = ? AND dismissed_at IS NULL AND updated_at <= ?",
                      (now(), user_id, until or now()))


def entry_time(tx: Tx, user_id: str, entry: str) -> str | None:
    return tx.scalar("SELECT updated_at FROM inbox WHERE id = ? AND user_id = ?", (entry, user_id))
