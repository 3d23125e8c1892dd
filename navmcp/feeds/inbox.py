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

import functools
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


# Kinds whose entries are a row for each person, however many are told (the rest may be one pack,
# navmcp.store's `note_inbox`): who a comment tells (the item's creator and commenters) changes
# with who writes it, and a pack folds only a burst for the same people, so a discussion among
# five would be an entry per comment rather than one per person ("11 new comments on …").
ROW_EACH = frozenset({"comment"})


class Members(list):
    """User ids read as members of the acting request's studio in this transaction, sorted and
    distinct (`navmcp.content.mentions.mentioned`): `notify` tells the store it need not check them
    again."""


def notify(req: Request, kind: str, user_ids: Iterable[str], item_id: str | None = None,
           held_id: str | None = None) -> list[str]:
    """Write an entry of `kind` about `item_id` (or the studio itself; or the held action `held_id`)
    in the acting request's studio for each of `user_ids` who is a member of it, the actor left out.
    Returns the ids written for."""
    if kind not in KINDS:
        raise ValueError(f"unknown inbox entry kind {kind!r}")
    actor = req.user["id"]
    checked = isinstance(user_ids, Members)  # sorted and distinct too
    wanted = [u for u in user_ids if u != actor] if checked else sorted({u for u in user_ids if u and u != actor})
    if not wanted or req.studio is None:
        return []
    # The store keeps to the members among them (PostgreSQL: in the function, as row-level security
    # asks) and says whom it wrote for, so this module runs no membership query of its own.
    return req.tx.note_inbox(now(), kind, req.studio["id"], item_id, actor, (req.client or "")[:100], wanted,
                             KINDS[kind], ago(KEEP_DAYS * 86400), held_id, checked=checked, pack=kind not in ROW_EACH)


def related(tx: Tx, item: dict[str, Any]) -> set[str]:
    """Who an item (its row, as the request has it) concerns: its creator and whoever commented on it."""
    # A set, not DISTINCT: that would build a temporary b-tree to drop the repeats.
    return {item["created_by"], *(r[0] for r in tx.tuples("SELECT created_by FROM comments WHERE item_id = ?",
                                                           (item["id"],)))}


def voters(tx: Tx, decision_id: str) -> list[str]:
    """Who voted on a decision: ballots of an acceptance decision, answers of the other kinds
    (navmcp.kinds: stances, dots, times)."""
    return [r["user_id"] for r in tx.all("SELECT user_id FROM votes WHERE decision_id = ?"
                                         " UNION SELECT user_id FROM responses WHERE decision_id = ?",
                                         (decision_id, decision_id))]


def participants(tx: Tx, commitment_id: str) -> list[str]:
    return [r["user_id"] for r in tx.all("SELECT user_id FROM participants WHERE commitment_id = ?", (commitment_id,))]


# A user's entries in the studios they are in (and any outside a studio), not dismissed: their own
# rows (`inbox e`) and, where the store keeps a large fan-out as one pack (`tx.inbox_packs`), the
# packs naming them (`inbox_packs e`) with their own marks on them (`inbox_marks k`). Each part is
# read down its own index; a compound SELECT's ORDER BY merges them, so a page stops as early as one
# part alone would. {read} is the read time's column, {id} the entry's id (a pack's is "p" and its
# number). A person's mark on a pack holds until the pack changes after it (another burst folded
# in): then it is unread, and shown, again, as a row of their own would be a new entry.
# Entries about a deleted item wait, unseen, for its restore (navmcp.content.deletion; the few deleted items, once).
_MINE = ("e.user_id = ? AND e.dismissed_at IS NULL"
         " AND (e.studio_id IS NULL OR e.studio_id IN (SELECT studio_id FROM memberships WHERE user_id = ?))"
         " AND (e.item_id IS NULL OR e.item_id NOT IN (SELECT id FROM items WHERE deleted_at IS NOT NULL))")
_PACKED = ("instr(e.recipients, ?) > 0 AND (k.dismissed_at IS NULL OR k.dismissed_at < e.updated_at)"
           " AND e.studio_id IN (SELECT studio_id FROM memberships WHERE user_id = ?)"
           " AND (e.item_id IS NULL OR e.item_id NOT IN (SELECT id FROM items WHERE deleted_at IS NOT NULL))")
_MARKS = "inbox_packs e LEFT JOIN inbox_marks k ON k.pack_id = e.id AND k.user_id = ?"
_COLUMNS = """{id} AS id, e.kind, e.count, e.client, e.created_at, e.updated_at AS updated_at, {read} AS read_at,
              e.item_id, {held} AS held_id, s.handle AS studio, s.name AS studio_name, i.kind AS item_kind, i.title,
              i.closed_at AS item_closed_at, i.deadline AS item_deadline, i.participant_count, i.critical_mass,
              a.handle AS actor"""
_JOINS = """LEFT JOIN studios s ON s.id = e.studio_id LEFT JOIN items i ON i.id = e.item_id
            LEFT JOIN users a ON a.id = e.actor_id"""
_OWN = {"id": "e.id", "read": "e.read_at", "held": "e.held_id"}
_PACK = {"id": "'p' || e.id", "read": "(CASE WHEN k.read_at >= e.updated_at THEN k.read_at END)", "held": "NULL"}


@functools.cache
def _union_sql(select: str, where: str, joins: str, packs: bool) -> str:
    sql = f"SELECT {select.format(**_OWN)} FROM inbox e {joins} WHERE {_MINE} {where.format(**_OWN)}"
    if packs:
        sql += f" UNION ALL SELECT {select.format(**_PACK)} FROM {_MARKS} {joins} WHERE {_PACKED} {where.format(**_PACK)}"
    return sql


def _union(tx: Tx, user_id: str, select: str, where: str = "", joins: str = "") -> tuple[str, list[Any]]:
    """The user's entries as `select` (with {id}, {read}, {held}) `where` (with {read}) in both parts."""
    if tx.inbox_packs:
        return _union_sql(select, where, joins, True), [user_id, user_id, user_id, f",{user_id},", user_id]
    return _union_sql(select, where, joins, False), [user_id, user_id]


def unread_count(tx: Tx, user_id: str) -> int:
    """Unread entries, counted up to COUNT_CAP + 1 (more than COUNT_CAP: say "more than")."""
    sql, args = _union(tx, user_id, "1", "AND {read} IS NULL")
    return tx.scalar(f"SELECT count(*) FROM ({sql} LIMIT ?) AS c", (*args, COUNT_CAP + 1))


def counts(tx: Tx, user_id: str) -> tuple[int, int]:
    """(unread, all) entries, not dismissed."""
    sql, args = _union(tx, user_id, "{read} AS read_at")
    row = tx.one(f"SELECT count(*) AS total, coalesce(sum(CASE WHEN read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread"
                 f" FROM ({sql}) AS e", args)
    return (row["unread"], row["total"]) if row else (0, 0)


def _page(tx: Tx, user_id: str, read: str, most: int, offset: int = 0) -> list[dict[str, Any]]:
    sql, args = _union(tx, user_id, _COLUMNS, f"AND {{read}} IS {read}", _JOINS)
    return _rows(tx, f"{sql} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?", (*args, most, offset))


def newest(tx: Tx, user_id: str, most: int) -> list[dict[str, Any]]:
    """The newest unread entries."""
    return _page(tx, user_id, "NULL", most)


def entries(tx: Tx, user_id: str, unread: int, offset: int, most: int) -> list[dict[str, Any]]:
    """A page of entries: unread first, then read, each newest first. `unread` is how many unread
    entries there are: each part is read down its own index, never sorted as a whole."""
    rows: list[dict[str, Any]] = []
    if offset < unread:
        rows = _page(tx, user_id, "NULL", most, offset)
    if len(rows) < most:
        rows += _page(tx, user_id, "NOT NULL", most - len(rows), max(0, offset - unread))
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


def _pack(entry: str) -> int | None:
    """A pack's number, from its entry's id ("p12"); None for a row of the user's own (whose ids
    are hex on both stores, so never begin with "p")."""
    # a number past SQLite's integers is no pack's (and could not be bound)
    number = int(entry[1:]) if entry[:1] == "p" and entry[1:].isdigit() and len(entry) <= 20 else None
    return number if number is not None and number < 1 << 63 else None


# Marking a pack's entry is the user's own row (`inbox_marks`), made when first needed; a mark made
# before the pack last changed is marked again (see _PACKED).
_MARK = ("INSERT INTO inbox_marks (pack_id, user_id, {mark}) SELECT e.id, ?, ? FROM inbox_packs e"
         " WHERE {which} AND instr(e.recipients, ?) > 0"
         " ON CONFLICT (pack_id, user_id) DO UPDATE SET {mark} = excluded.{mark} WHERE inbox_marks.{mark} IS NULL"
         " OR inbox_marks.{mark} < (SELECT p.updated_at FROM inbox_packs p WHERE p.id = inbox_marks.pack_id)")


def _marked(tx: Tx, user_id: str, mark: str, entry: str | None, until: str | None) -> int:
    """Set `mark` (read_at or dismissed_at) on one entry, or on every one last changed at or before `until`."""
    at = now()
    if entry is not None:
        pack = _pack(entry)
        if pack is None:
            return tx.execute(f"UPDATE inbox SET {mark} = ? WHERE id = ? AND user_id = ? AND {mark} IS NULL",
                              (at, entry, user_id))
        if not tx.inbox_packs:
            return 0
        return tx.execute(_MARK.format(mark=mark, which="e.id = ?"), (user_id, at, pack, f",{user_id},"))
    n = tx.execute(f"UPDATE inbox SET {mark} = ? WHERE user_id = ? AND {mark} IS NULL AND updated_at <= ?",
                   (at, user_id, until or at))
    if tx.inbox_packs:
        n += tx.execute(_MARK.format(mark=mark, which="e.updated_at <= ?"), (user_id, at, until or at, f",{user_id},"))
    return n


def mark_read(tx: Tx, user_id: str, entry: str | None, until: str | None) -> int:
    """Mark one entry read, or every unread one last changed at or before `until` (a time)."""
    return _marked(tx, user_id, "read_at", entry, until)


def dismiss(tx: Tx, user_id: str, entry: str | None, until: str | None) -> int:
    """Dismiss one entry, or every entry last changed at or before `until` (a time)."""
    return _marked(tx, user_id, "dismissed_at", entry, until)


def entry_time(tx: Tx, user_id: str, entry: str) -> str | None:
    pack = _pack(entry)
    if pack is None:
        return tx.scalar("SELECT updated_at FROM inbox WHERE id = ? AND user_id = ?", (entry, user_id))
    if not tx.inbox_packs:
        return None
    return tx.scalar("SELECT updated_at FROM inbox_packs WHERE id = ? AND instr(recipients, ?) > 0", (pack, f",{user_id},"))
