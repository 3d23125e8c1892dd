"""One transaction on the embedded store's SQLite file (`SqliteTx`, the seam's `Tx`): its queries,
the change feed's and the inbox's rows, the history pruned as it grows, and search on the FTS5 tables
(migration 0001), with the query as `navmcp.store.fulltext` writes it.
"""

from __future__ import annotations

import contextlib
import json
import operator
import secrets
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from navmcp.clock import ago
from navmcp.content import search
from navmcp.content.search import Query
from navmcp.store.fulltext import fts5_any, fts5_match
from navmcp.store.ranked import Hit, ranked
from navmcp.store.seam import Row, row_maker

CHANGES_KEPT = 10_000  # change-feed rows kept (a watcher catches up from these); older ones are pruned
CHANGES_PRUNE_EVERY = 1024  # by every write whose sequence number is a multiple of this
INBOX_PRUNE_MOST = 100  # entries past their days deleted by one inbox write at most
_KEPT_FROM = ("SELECT min(coalesce((SELECT min(updated_at) FROM inbox), ?1),"
              " coalesce((SELECT min(updated_at) FROM inbox_packs), ?1))")


# The inbox's writes (`note_inbox`). Recipients go in as one JSON array, so each statement's text is
# the same whatever their number (an IN list of N placeholders is a new statement to parse for each
# N). The members among them, the actor left out, get an entry each: ids in the order given (the
# base, then the position: 4 hex digits, enough for any studio's members); with `fold` (1) an unread
# entry of the same item and kind is counted once more instead (migration 0250's unique index).
# The upsert keeps to the members itself; only when it wrote for fewer than it was given does
# `_MEMBERS` ask whom (the callers pass members, mostly: those an @mention named are). No
# RETURNING: SQLite buffers its rows in a temporary b-tree, about 10K instructions a row.
_MEMBERS = ("SELECT m.user_id FROM json_each(?) j CROSS JOIN memberships m"
            " WHERE m.studio_id = ? AND m.user_id = j.value AND m.user_id <> ? ORDER BY m.user_id")
_UPSERT = ("INSERT INTO inbox (id, user_id, kind, studio_id, item_id, held_id, actor_id, client, created_at, updated_at, fold)"
           " SELECT ? || printf('%04x', j.key), j.value, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM json_each(?) j"
           " CROSS JOIN memberships m WHERE m.studio_id = ? AND m.user_id = j.value AND j.value <> ?"
           " ON CONFLICT (item_id, kind, user_id, fold) WHERE read_at IS NULL AND dismissed_at IS NULL DO UPDATE"
           " SET count = count + 1, updated_at = excluded.updated_at, actor_id = excluded.actor_id, client = excluded.client")
# A fan-out of PACK_FROM members or more, where the caller allows (`pack`), is one `inbox_packs` row
# (migration 0320): recipients as ",id,…,", in the order given (sorted), so the next burst on the
# item for the same people folds into it. Fewer get a row each: a reader finds those down its own
# index, a pack only by testing each of its studio's packs.
PACK_FROM = 4
_PACK = ("INSERT INTO inbox_packs (id, kind, studio_id, item_id, actor_id, client, fold, created_at, updated_at, recipients)"
         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, kind, recipients, fold) DO UPDATE"
         " SET count = count + 1, updated_at = excluded.updated_at, actor_id = excluded.actor_id, client = excluded.client")
# Whom @mentions name: each handle looked up by the users' handle index and its membership by the
# memberships' key (CROSS JOIN keeps that order: SQLite otherwise walks every member of the studio
# and each one's user row); the handles as one JSON array, so the text is one statement for any
# number of them.
_MEMBER_IDS = ("SELECT group_concat(u.id) FROM json_each(?) j CROSS JOIN users u CROSS JOIN memberships m"
               " WHERE u.handle = j.value AND u.deleted_at IS NULL AND m.studio_id = ? AND m.user_id = u.id")
# Kinds as constant text, never bound (`status:open` adds `closed_at IS NULL`): why, at home's `_OPEN`.
_KIND = {kind: f"i.kind = '{kind}'" for kind in search.KINDS}


def search_filters(query: Query, at: str, tag: bool = True) -> tuple[list[str], list[Any]]:
    """A query's filters as conditions on `items i` (in SQLite's SQL), and their arguments. An item
    is open as its page says (domain.is_open): not closed, and no deadline passed at `at`. Without
    `tag`, the tag filter is left to the caller (who walks the tag's rows)."""
    where: list[str] = ["i.deleted_at IS NULL"]  # a deleted item is never found (navmcp.content.deletion)
    args: list[Any] = []
    if query.kind:  # written into the SQL from this table, not bound: see _KIND
        where.append(_KIND[query.kind])
    if query.decision_kind:  # an acceptance decision has none stored (navmcp.kinds.kind_name)
        where.append("coalesce(i.decision_kind, 'acceptance') = ?")
        args.append(query.decision_kind)
    if query.status:
        is_open = "(i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > ?))"
        where.append(is_open if query.status == "open" else f"NOT {is_open}")
        args.append(at)
    if query.tag and tag:
        where.append("EXISTS (SELECT 1 FROM item_tags t WHERE t.item_id = i.id AND t.tag = ?)")
        args.append(query.tag)
    return where, args


_COLUMN_NAME = operator.itemgetter(0)


def column_names(cursor: sqlite3.Cursor) -> tuple[str, ...]:
    return tuple(map(_COLUMN_NAME, cursor.description))


class SqliteTx:
    __slots__ = ("conn", "cursor", "users", "noted", "noting", "local")
    hosted = False  # no row-level security: the app's own SQL writes for anyone
    inbox_packs = True  # see `note_inbox`

    def __init__(self, conn: sqlite3.Connection, cursor: sqlite3.Cursor, users: dict[str, Row] | None = None,
                 noted: set[tuple] | None = None, local: Any = None):
        self.conn = conn
        self.cursor = cursor  # the store's (see SqliteStore); rows come back as tuples and become dicts here
        # In a group (see `SqliteStore.group`), the users' rows its calls have read, by id: one
        # snapshot for all of them, so a row read once holds for the rest unless the group itself
        # writes to users (`execute` forgets them then). None outside a group.
        self.users = users
        # In a grouped write, the changes its write transaction holds already (see `note_change`),
        # and those this write adds (kept once its savepoint is released). None outside a group.
        self.noted = noted
        self.noting: list[tuple] | None = None if noted is None else []
        self.local = local  # the store's state of this thread's connection (`inbox_kept_from`), if any

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = self.cursor.execute(sql, params)
        rows = cursor.fetchall()
        return list(map(row_maker(column_names(cursor)), rows)) if rows else rows

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        cursor = self.cursor.execute(sql, params)
        row = cursor.fetchone()
        return None if row is None else row_maker(column_names(cursor))(row)

    def tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.cursor.execute(sql, params).fetchall()

    def record(self, sql: str, params: Sequence[Any] = ()) -> tuple[tuple[str, ...], tuple] | None:
        cursor = self.cursor.execute(sql, params)
        row = cursor.fetchone()
        return None if row is None else (column_names(cursor), row)

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.cursor.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if self.users and "users" in sql:
            self.users.clear()
        return self.cursor.execute(sql, params).rowcount

    def find_user(self, handle: str, deleted: bool = False) -> Row | None:
        """A user by handle, whatever studios they are in (adding a member needs it); with
        `deleted`, a deleted account's too (its handle is not reused)."""
        return self.one("SELECT * FROM users WHERE handle = ?" + ("" if deleted else " AND deleted_at IS NULL"),
                        (handle,))

    def member_ids(self, studio_id: str, handles: Sequence[str]) -> list[str]:
        # One row (group_concat), not a row each; a handle is letters, digits and '-', so the JSON
        # array is made by joining them unless one is not (each row and json.dumps ~1.3K instructions a handle).
        joined = '","'.join(handles)
        given = f'["{joined}"]' if '"' not in joined and "\\" not in joined else json.dumps(list(handles))
        found = self.cursor.execute(_MEMBER_IDS, (given, studio_id)).fetchone()[0]
        return found.split(",") if found else []

    def note_change(self, at: str, studio_id: str | None, item_id: str | None, user_id: str,
                    action: str | None = None) -> None:
        """Record in the change feed (`navmcp.feeds.changes`) what this write changed; prune old rows. In a
        group, a change its write transaction holds already is not written again: watchers hear of
        a commit, not of each write in it (64 pipelined votes are one change of their page)."""
        if self.noted is not None:
            key = (studio_id, item_id, user_id, action)
            if key in self.noted:
                return
            self.noting.append(key)  # type: ignore[union-attr]
        seq = self.cursor.execute("INSERT INTO changes (at, studio_id, item_id, user_id, action) VALUES (?, ?, ?, ?, ?)",
                                  (at, studio_id, item_id, user_id, action)).lastrowid
        if seq is not None and seq % CHANGES_PRUNE_EVERY == 0:
            self.cursor.execute("DELETE FROM changes WHERE seq <= ?", (seq - CHANGES_KEPT,))

    def note_inbox(self, at: str, kind: str, studio_id: str, item_id: str | None, actor_id: str, client: str,
                   user_ids: Sequence[str], fold: bool, expired: str, held_id: str | None = None,
                   checked: bool = False, pack: bool = False) -> list[str]:
        # the pages each write touches are what it costs (migrations 0191, 0250, 0320)
        if pack and held_id is None and len(user_ids) >= PACK_FROM:
            # a pack holds whom it names: the members among them (asked first unless `checked`), not the actor
            user_ids = [u for u in user_ids if u != actor_id] if checked else [r[0] for r in self.cursor.execute(
                _MEMBERS, (json.dumps(list(user_ids)), studio_id, actor_id))]
            if len(user_ids) >= PACK_FROM:
                self.cursor.execute(_PACK, (time.time_ns(), kind, studio_id, item_id, actor_id, client,
                                            1 if fold else None, at, at, f",{','.join(user_ids)},"))
                self._prune_inbox(expired, at)
                return user_ids
        given = json.dumps(list(user_ids))
        written = self.cursor.execute(_UPSERT, (f"{time.time_ns() // 1000:013x}{secrets.token_hex(3)}", kind, studio_id,
                                                item_id, held_id, actor_id, client, at, at, 1 if fold else None,
                                                given, studio_id, actor_id)).rowcount
        members = sorted(user_ids) if written == len(user_ids) else [
            r[0] for r in self.cursor.execute(_MEMBERS, (given, studio_id, actor_id))]
        self._prune_inbox(expired, at)
        return members

    def _prune_inbox(self, expired: str, at: str) -> None:
        # Everyone's entries and packs past KEEP_DAYS, oldest first, a few per write: each walk stops
        # at the first kept. Then the oldest left says when the next can expire (times written only
        # grow), and until then no write of this connection need look: a DELETE opens every index of
        # its table, and two on every write cost ~120K instructions a comment, to delete nothing.
        # A write that rolls back clears that time (navmcp.store.sqlite's _Local): its prune is undone.
        local = self.local
        if local is not None and expired <= local.inbox_kept_from:
            return
        for table in ("inbox", "inbox_packs"):
            self.cursor.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table}"
                                " WHERE updated_at < ? ORDER BY updated_at LIMIT ?)", (expired, INBOX_PRUNE_MOST))
        if local is not None:
            local.inbox_kept_from = self.cursor.execute(_KEPT_FROM, (at,)).fetchone()[0]

    def prune_audit(self, days: int, most: int) -> None:
        # Oldest first by id (ids grow with time): the walk stops at the first line to keep.
        self.cursor.execute(
            """DELETE FROM audit WHERE id < min(coalesce((SELECT id FROM audit WHERE at >= ? ORDER BY id LIMIT 1),
                                                         (SELECT max(id) + 1 FROM audit)),
                                                (SELECT min(id) FROM audit) + ?)""",
            (ago(max(1, days) * 86400), max(1, most)))

    def purge_deleted(self, before: str, most: int) -> int:
        # The foreign keys cascade to everything of the items (their FTS rows go by triggers); the
        # change feed and the held actions name them only in text (an id, a path).
        gone = self.tuples("""SELECT i.id, s.handle, i.kind FROM items i JOIN studios s ON s.id = i.studio_id
                               WHERE i.deleted_at IS NOT NULL AND i.deleted_at < ? ORDER BY i.deleted_at LIMIT ?""",
                           (before, most))
        for item_id, handle, kind in gone:
            path = f"/studios/{handle}/{kind[0]}/{item_id}"
            self.cursor.execute("DELETE FROM held_actions WHERE url = ? OR substr(url, 1, ?) IN (?, ?)",
                                (path, len(path) + 1, path + "/", path + "?"))
            self.cursor.execute("DELETE FROM changes WHERE item_id = ?", (item_id,))
            self.cursor.execute("DELETE FROM items WHERE id = ?", (item_id,))
        if gone:  # FTS5 keeps a deleted row's words in its index until segments merge: merge them now
            for index in ("items_fts", "comments_fts", "options_fts"):
                self.cursor.execute(f"INSERT INTO {index}({index}) VALUES ('optimize')")
        return len(gone)

    def lock(self, table: str, row_id: str) -> None:
        """Queue writers on one row ("items" or "studios") until this transaction ends. Nothing to
        do here: a write transaction (BEGIN IMMEDIATE) already holds the whole file."""

    def hold_membership(self, studio_handle: str) -> None:
        """Keep the acting user's role in a studio from changing until this transaction ends.
        Nothing to do here either, for the same reason."""

    def act_as(self, user_id: str, client: str | None = None) -> contextlib.AbstractContextManager[None]:
        """No row-level security here: the app's own checks are the whole judgement."""
        return contextlib.nullcontext()

    def search(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
               offset: int) -> tuple[list[Row], int, bool]:
        if not studio_ids:
            return [], 0, False
        match, title = fts5_match(query), fts5_match(query, title_only=True)
        if not match:
            return self._filtered(studio_ids, query, at, limit, offset)
        return ranked(_SqliteSources(self, studio_ids, query, at, match, title or match), limit, offset)

    def _filtered(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
                  offset: int) -> tuple[list[Row], int, bool]:
        """Filters alone: every item they select, newest first, counted exactly (no window: nothing
        is ranked). Each studio's walk of its newest items (a tag's from the tag's index, migration
        0008) stops at the page's end; the count is the one the triggers keep (migration 0240)."""
        if query.excluded:  # `tag:x -draft`: a word left out is no key of the kept counts
            return self._filtered_by_reading(studio_ids, query, at, limit, offset)
        where, args = search_filters(query, at, tag=False)
        if query.tag:
            source, order = "item_tags t CROSS JOIN items i ON i.seq = t.seq", "t.updated_at"
            where[:0] = ["t.studio_id = ? AND t.tag = ?"]
        else:
            source, order = "items i", "i.updated_at"
            where.insert(0, "i.studio_id = ?")
        # Per studio, the index gives its items newest first and the walk stops at offset + limit;
        # ties of one instant are ordered by id (SQLite sorts only those: "RIGHT PART OF ORDER BY").
        # One walk per studio in a compound SELECT: the search pages pass at most 200 studios
        # (home.your_studios), within SQLite's 500 terms.
        walk = (f"SELECT * FROM (SELECT i.id AS item_id, {order} AS updated_at FROM {source}"
                f" WHERE {' AND '.join(where)} ORDER BY {order} DESC, i.id LIMIT ?)")
        walk_args: list[Any] = []
        for studio_id in studio_ids:
            walk_args += [studio_id, *([query.tag] if query.tag else []), *args, offset + limit]
        found = self.tuples(" UNION ALL ".join([walk] * len(studio_ids))
                            + " ORDER BY updated_at DESC, item_id LIMIT ? OFFSET ?", (*walk_args, limit, offset))
        rows: list[Row] = [{"item_id": item_id, "tier": 0, "option_id": None, "comment_id": None, "options": 0,
                            "comments": 0} for item_id, _ in found]
        return rows, self._filter_count(studio_ids, query, at), False

    def _filter_count(self, studio_ids: Sequence[str], query: Query, at: str) -> int:
        """How many items the filters select, from the counts kept per studio, tag, type, decision
        kind and state (migration 0240). Of the items not closed with a deadline (state 2), those
        whose deadline is still ahead are open: counted from the index of open deadlines."""
        studios = ", ".join("?" * len(studio_ids))
        keys, args = [f"studio_id IN ({studios})", "tag = ?"], [*studio_ids, query.tag or ""]
        if query.kind:
            keys.append("kind = ?")
            args.append(query.kind)
        if query.decision_kind:
            keys.append("decision_kind = ?")
            args.append(query.decision_kind)
        kept = dict.fromkeys((0, 1, 2), 0)
        kept.update(self.tuples(f"SELECT state, sum(n) FROM filter_counts WHERE {' AND '.join(keys)} GROUP BY state",
                                args))
        if query.status is None:
            return sum(kept.values())
        ahead = 0
        if kept[2]:
            where, more = search_filters(Query(kind=query.kind, tag=query.tag, decision_kind=query.decision_kind), at)
            ahead = self.scalar(f"SELECT count(*) FROM items i WHERE i.studio_id IN ({studios}) AND i.closed_at IS NULL"
                                f" AND i.deadline > ? AND {' AND '.join(where)}", (*studio_ids, at, *more))
        return kept[1] + ahead if query.status == "open" else kept[0] + kept[2] - ahead

    def _filtered_by_reading(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
                             offset: int) -> tuple[list[Row], int, bool]:
        """Filters with words left out: every item they select read and counted."""
        studios = ", ".join("?" * len(studio_ids))
        where, args = search_filters(query, at, tag=False)
        if query.tag:
            source = "item_tags t CROSS JOIN items i ON i.id = t.item_id"
            where.insert(0, f"t.tag = ? AND t.studio_id IN ({studios})")
            args = [query.tag, *studio_ids, *args]
        else:
            source = "items i"
            where.insert(0, f"i.studio_id IN ({studios})")
            args = [*studio_ids, *args]
        where.append("i.seq NOT IN (SELECT rowid FROM items_fts WHERE items_fts MATCH ?)")
        args.append(fts5_any(query.excluded))
        found = f"FROM {source} WHERE {' AND '.join(where)}"
        rows = self.all(f"""SELECT i.id AS item_id, 0 AS tier, NULL AS option_id, NULL AS comment_id, 0 AS options,
                                   0 AS comments, count(*) OVER () AS total {found}
                             ORDER BY i.updated_at DESC, i.id LIMIT ? OFFSET ?""", (*args, limit, offset))
        total = rows[0]["total"] if rows else self.scalar(f"SELECT count(*) {found}", args) if offset else 0
        for row in rows:
            del row["total"]
        return rows, total, False

    def cycle_activity(self, studio_id: str, since: str, till: str) -> dict[str, int]:
        # The per-day counts the triggers of migration 0200 keep: at most 31 rows for a month.
        row = self.cursor.execute(
            """SELECT coalesce(sum(created), 0), coalesce(sum(closed), 0), coalesce(sum(comments), 0),
                      coalesce(sum(ballots), 0), coalesce(sum(joins), 0)
                 FROM cycle_days WHERE studio_id = ? AND day >= ? AND day < ?""",
            (studio_id, since[:10], till[:10])).fetchone()
        return dict(zip(("created", "closed", "comments", "votes", "joins"), row))


def dict_row(cursor: sqlite3.Cursor, row: tuple) -> Row:
    return row_maker(column_names(cursor))(row)


class _SqliteSources:
    """The sources of one word search on the FTS5 tables, for `navmcp.store.ranked`. A position is
    the full-text row's rowid: an item's seq (its tags' rows carry it too), an option's rowid, a
    comment's seq; an item is named by its seq. Each read walks its full-text index newest first
    from below a position (CROSS JOIN keeps that order: left to itself the planner may walk every
    item of the studio and run the MATCH once per item, minutes at a million items) and reads each
    match's item by rowid, with whether the query's filters pass."""

    def __init__(self, tx: SqliteTx, studio_ids: Sequence[str], query: Query, at: str, match: str, title: str):
        self.tx, self.studio_ids, self.excluded = tx, list(studio_ids), query.excluded
        where, self.filter_args = search_filters(query, at)
        studios = ", ".join("?" * len(studio_ids))
        item = f"i.updated_at, i.id, {' AND '.join(where)}"
        own = "CROSS JOIN items i ON i.seq = items_fts.rowid"
        fts = {0: ("items_fts", "NULL", own, "i.studio_id", title),
               2: ("items_fts", "NULL", own, "i.studio_id", match),
               3: ("options_fts", "o.id", "CROSS JOIN options o ON o.rowid = options_fts.rowid"
                   " CROSS JOIN items i ON i.id = o.decision_id", "i.studio_id", match),
               4: ("comments_fts", "c.id", "CROSS JOIN comments c ON c.seq = comments_fts.rowid"
                   " CROSS JOIN items i ON i.id = c.item_id", "c.studio_id", match)}
        self.reads: dict[int, tuple[str, str]] = {
            tier: (f"""SELECT {index}.rowid, i.seq, {part}, {item} FROM {index} {join}
                        WHERE {index} MATCH ? AND {studio} IN ({studios}) AND {index}.rowid < ? AND {index}.rowid >= ?
                        ORDER BY {index}.rowid DESC LIMIT ?""", text)
            for tier, (index, part, join, studio, text) in fts.items()}
        if query.tag_word:
            self.reads[1] = (f"""SELECT t.seq, t.seq, NULL, {item} FROM item_tags t CROSS JOIN items i ON i.seq = t.seq
                                  WHERE t.tag = ? AND t.studio_id IN ({studios}) AND t.seq < ? AND t.seq >= ?
                                  ORDER BY t.seq DESC LIMIT ?""", query.tag_word)

    def tiers(self) -> list[int]:
        return sorted(self.reads)

    def scan(self, tier: int, below: int | None, n: int, floor: int | None) -> list[Hit]:
        sql, text = self.reads[tier]
        rows = self.tx.tuples(sql, (*self.filter_args, text, *self.studio_ids, _NO_END if below is None else below,
                                    -_NO_END if floor is None else floor, n))
        hits = [Hit(position, seq, part, updated_at, item_id, bool(passes))
                for position, seq, part, updated_at, item_id, passes in rows]
        if self.excluded:  # an item whose own text has a word left out is left out whole
            kept = [hit.item for hit in hits if hit.passes]
            if kept:
                out = {r[0] for r in self.tx.tuples(
                    "SELECT rowid FROM items_fts WHERE items_fts MATCH ? AND rowid BETWEEN ? AND ?",
                    (fts5_any(self.excluded), min(kept), max(kept)))}
                hits = [hit._replace(passes=False) if hit.item in out else hit for hit in hits]
        return hits

    def oldest_since(self, updated_at: str) -> int | None:
        # The index of (studio_id, updated_at, seq): per studio, the items updated since (few, when
        # a page's worth of matches is among the newest).
        return self.tx.scalar(f"SELECT min(seq) FROM items WHERE studio_id IN ({', '.join('?' * len(self.studio_ids))})"
                              " AND updated_at >= ?", (*self.studio_ids, updated_at))

    def parts(self, tier: int, ids: Sequence[str]) -> list[tuple[int, str, str]]:
        marks = ", ".join("?" * len(ids))
        sql = (f"SELECT rowid, id, decision_id FROM options WHERE decision_id IN ({marks})" if tier == 3
               else f"SELECT seq, id, item_id FROM comments WHERE item_id IN ({marks})")
        return self.tx.tuples(sql, ids)

    def matching(self, tier: int, floor: int, n: int) -> list[int]:
        index = "options_fts" if tier == 3 else "comments_fts"
        return [r[0] for r in self.tx.tuples(f"SELECT rowid FROM {index} WHERE {index} MATCH ? AND rowid >= ?"
                                             " ORDER BY rowid DESC LIMIT ?", (self.reads[tier][1], floor, n))]


_NO_END = (1 << 63) - 1  # a position above (and, negated, below) every rowid
