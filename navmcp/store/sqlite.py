"""The embedded store: one SQLite file in NAVMCP_HOME, behind the seam (`navmcp.store.seam`).

Every write is one `BEGIN IMMEDIATE` transaction, so concurrent processes on the same file queue up
instead of losing writes; a busy database is retried here for up to `BUSY_SECONDS`, and only a lock
held longer than that (another process's open transaction) is reported, as `Busy`: nothing was
applied, and the call may be sent again. A transport holding several requests at once runs them in
one `group()`, which commits their writes together. Full-text search runs on FTS5 tables (migration
0001), with the query as `navmcp.store.fulltext` writes it.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from navmcp import search
from navmcp.clock import ago, now
from navmcp.config import PRIVATE_FILE, ensure_home
from navmcp.errors import Busy
from navmcp.search import Query
from navmcp.store.fulltext import fts5_any, fts5_match
from navmcp.store.migrations import Migration, run, sqlite_migrations
from navmcp.store.seam import Row, row_maker

log = logging.getLogger("navmcp.store.sqlite")

CHANGES_KEPT = 10_000  # change-feed rows kept (a watcher catches up from these); older ones are pruned
CHANGES_PRUNE_EVERY = 1024  # by every write whose sequence number is a multiple of this
INBOX_CHUNK = 1000  # users per inbox statement (9 variables each; SQLite allows 32,766)
INBOX_PRUNE_MOST = 100  # entries past their days deleted by one inbox write at most


# Kinds as constant text, never bound (`status:open` adds `closed_at IS NULL`): why, at home's `_OPEN`.
_KIND = {kind: f"i.kind = '{kind}'" for kind in search.KINDS}


def search_filters(query: Query, at: str, tag: bool = True) -> tuple[list[str], list[Any]]:
    """A query's filters as conditions on `items i` (in SQLite's SQL), and their arguments. An item
    is open as its page says (domain.is_open): not closed, and no deadline passed at `at`. Without
    `tag`, the tag filter is left to the caller (who walks the tag's rows)."""
    where: list[str] = []
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


def _names(cursor: sqlite3.Cursor) -> tuple[str, ...]:
    return tuple(map(_COLUMN_NAME, cursor.description))


class SqliteTx:
    __slots__ = ("conn", "cursor", "users", "noted", "noting")
    hosted = False  # no row-level security: the app's own SQL writes for anyone

    def __init__(self, conn: sqlite3.Connection, cursor: sqlite3.Cursor, users: dict[str, Row] | None = None,
                 noted: set[tuple] | None = None):
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

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = self.cursor.execute(sql, params)
        rows = cursor.fetchall()
        return list(map(row_maker(_names(cursor)), rows)) if rows else rows

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        cursor = self.cursor.execute(sql, params)
        row = cursor.fetchone()
        return None if row is None else row_maker(_names(cursor))(row)

    def tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.cursor.execute(sql, params).fetchall()

    def record(self, sql: str, params: Sequence[Any] = ()) -> tuple[tuple[str, ...], tuple] | None:
        cursor = self.cursor.execute(sql, params)
        row = cursor.fetchone()
        return None if row is None else (_names(cursor), row)

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

    def note_change(self, at: str, studio_id: str | None, item_id: str | None, user_id: str,
                    action: str | None = None) -> None:
        """Record in the change feed (`navmcp.changes`) what this write changed; prune old rows. In a
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
                   user_ids: Sequence[str], fold: bool, expired: str) -> None:
        # A statement for many of them each way, not one per user; chunks keep a statement's
        # variables under SQLite's limit (32,766) for `@everyone` in a big studio. The pages each
        # write touches are what it costs (migration 0191): ids that grow with time append to the
        # primary key, the fold's index holds one item's recipients together, and the pruning's
        # index of ages takes new rows at its end.
        base = f"{time.time_ns() // 1000:013x}{secrets.token_hex(3)}"
        for start in range(0, len(user_ids), INBOX_CHUNK):
            chunk = user_ids[start:start + INBOX_CHUNK]
            folded: set[str] = set()
            if fold:
                folded = {r[0] for r in self.cursor.execute(
                    "UPDATE inbox SET count = count + 1, updated_at = ?, actor_id = ?, client = ?"
                    f" WHERE item_id = ? AND kind = ? AND user_id IN ({', '.join('?' * len(chunk))}) AND read_at IS NULL"
                    " AND dismissed_at IS NULL RETURNING user_id", (at, actor_id, client, item_id, kind, *chunk)).fetchall()}
            new = [u for u in chunk if u not in folded]
            if new:
                self.cursor.execute(
                    "INSERT INTO inbox (id, user_id, kind, studio_id, item_id, actor_id, client, created_at, updated_at)"
                    " VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(new)),
                    [v for n, u in enumerate(new, start) for v in (f"{base}{n:04x}", u, kind, studio_id, item_id, actor_id,
                                                                   client, at, at)])
        # Everyone's entries past KEEP_DAYS, oldest first, a few per write: the walk stops at the first kept.
        self.cursor.execute("DELETE FROM inbox WHERE rowid IN (SELECT rowid FROM inbox WHERE updated_at < ?"
                            " ORDER BY updated_at LIMIT ?)", (expired, INBOX_PRUNE_MOST))

    def prune_audit(self, days: int, most: int) -> None:
        # Oldest first by id (ids grow with time): the walk stops at the first line to keep.
        self.cursor.execute(
            """DELETE FROM audit WHERE id < min(coalesce((SELECT id FROM audit WHERE at >= ? ORDER BY id LIMIT 1),
                                                         (SELECT max(id) + 1 FROM audit)),
                                                (SELECT min(id) FROM audit) + ?)""",
            (ago(max(1, days) * 86400), max(1, most)))

    def lock(self, table: str, row_id: str) -> None:
        """Queue writers on one row ("items" or "studios") until this transaction ends. Nothing to
        do here: a write transaction (BEGIN IMMEDIATE) already holds the whole file."""

    def hold_membership(self, studio_handle: str) -> None:
        """Keep the acting user's role in a studio from changing until this transaction ends.
        Nothing to do here either, for the same reason."""

    def act_as(self, user_id: str) -> contextlib.AbstractContextManager[None]:
        """No row-level security here: the app's own checks are the whole judgement."""
        return contextlib.nullcontext()

    def search(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
               offset: int) -> tuple[list[Row], int, bool]:
        if not studio_ids:
            return [], 0, False
        match, title = fts5_match(query), fts5_match(query, title_only=True)
        if not match:
            return self._filtered(studio_ids, query, at, limit, offset)
        studios = ", ".join("?" * len(studio_ids))
        window = search.SEARCH_WINDOW  # read per call: a test narrows it
        args: list[Any] = []
        # Each source of hits walks its full-text index newest first and stops at the window (CROSS
        # JOIN keeps that order: left to itself the planner may walk every item of the studio and
        # run the MATCH once per item, minutes at a million items).
        hits = [f"""SELECT i.id AS item_id, 0 AS tier, NULL AS part FROM items_fts CROSS JOIN items i
                      ON i.seq = items_fts.rowid WHERE items_fts MATCH ? AND i.studio_id IN ({studios})
                     ORDER BY items_fts.rowid DESC LIMIT ?""",
                 f"""SELECT i.id, 2, NULL FROM items_fts CROSS JOIN items i
                      ON i.seq = items_fts.rowid WHERE items_fts MATCH ? AND i.studio_id IN ({studios})
                     ORDER BY items_fts.rowid DESC LIMIT ?""",
                 f"""SELECT o.decision_id, 3, o.id FROM options_fts CROSS JOIN options o ON o.rowid = options_fts.rowid
                      CROSS JOIN items i ON i.id = o.decision_id
                     WHERE options_fts MATCH ? AND i.studio_id IN ({studios}) ORDER BY options_fts.rowid DESC LIMIT ?""",
                 f"""SELECT c.item_id, 4, c.id FROM comments_fts CROSS JOIN comments c ON c.seq = comments_fts.rowid
                     WHERE comments_fts MATCH ? AND c.studio_id IN ({studios}) ORDER BY comments_fts.rowid DESC LIMIT ?"""]
        for text in (title, match, match, match):
            args += [text, *studio_ids, window]
        if query.tag_word:
            hits.append(f"""SELECT t.item_id, 1, NULL FROM item_tags t WHERE t.tag = ? AND t.studio_id IN ({studios})
                             ORDER BY t.seq DESC LIMIT ?""")
            args += [query.tag_word, *studio_ids, window]
        hits = [f"SELECT * FROM ({sql})" for sql in hits]
        where, more = search_filters(query, at)
        if query.excluded:  # an item whose own text has a word left out is left out whole
            where.append("i.seq NOT IN (SELECT rowid FROM items_fts WHERE items_fts MATCH ?)")
            more.append(fts5_any(query.excluded))
        found = f"""
            WITH hits AS ({" UNION ALL ".join(hits)}),
            best AS (SELECT item_id, min(tier) AS tier,
                            min(CASE WHEN tier = 3 THEN part END) AS option_id,
                            min(CASE WHEN tier = 4 THEN part END) AS comment_id,
                            sum(CASE WHEN tier = 3 THEN 1 ELSE 0 END) AS options,
                            sum(CASE WHEN tier = 4 THEN 1 ELSE 0 END) AS comments
                       FROM hits GROUP BY item_id)
            SELECT {{}} FROM best b CROSS JOIN items i ON i.id = b.item_id WHERE {" AND ".join(where) or "1"}"""
        widest = "(SELECT max(n) FROM (SELECT count(*) AS n FROM hits GROUP BY tier))"
        rows = self.all(found.format(f"b.*, count(*) OVER () AS total, {widest} AS widest")
                        + " ORDER BY b.tier, i.updated_at DESC, i.id LIMIT ? OFFSET ?", (*args, *more, limit, offset))
        if rows or not offset:
            total, windowed = (rows[0]["total"], rows[0]["widest"] >= window) if rows else (0, False)
            for row in rows:
                del row["total"], row["widest"]
            return rows, total, windowed
        # A page past the end: the number found, for the page to say where the list ends.
        total, widest = self.cursor.execute(found.format(f"count(*) AS total, {widest} AS widest"), (*args, *more)).fetchone()
        return [], total, (widest or 0) >= window

    def _filtered(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
                  offset: int) -> tuple[list[Row], int, bool]:
        """Filters alone: every item they select, newest first, counted exactly (no window: nothing
        is ranked). A tag drives the walk from its index (migration 0008), else the studio's items."""
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
        if query.excluded:  # `tag:x -draft`: leave out what says "draft"
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
        window = (studio_id, since, till)
        return {
            "comments": self.scalar("SELECT count(*) FROM comments WHERE studio_id = ? AND created_at >= ? AND created_at < ?",
                                    window),
            # The window's votes (index of migration 0004) grouped by decision first, then each decision's
            # studio looked up once: at a million items 105 ms, where a lookup per vote took 140.
            "votes": self.scalar("""SELECT coalesce(sum(d.ballots), 0)
                                      FROM (SELECT v.decision_id, count(DISTINCT v.user_id) AS ballots FROM votes v
                                             WHERE v.created_at >= ?2 AND v.created_at < ?3 GROUP BY v.decision_id) d
                                     WHERE (SELECT i.studio_id FROM items i WHERE i.id = d.decision_id) = ?1""", window),
            # CROSS JOIN fixes SQLite's join order: walk the window's joins, not every item.
            "joins": self.scalar("""SELECT count(*) FROM participants p CROSS JOIN items i
                                    WHERE i.id = p.commitment_id AND i.studio_id = ?
                                      AND p.joined_at >= ? AND p.joined_at < ?""", window),
        }


def _dict_row(cursor: sqlite3.Cursor, row: tuple) -> Row:
    return row_maker(_names(cursor))(row)


class SqliteStore:
    """One SQLite file in WAL mode, one connection per thread that uses the store object."""

    hosted = False  # one file, one owner: no row-level security

    # How long a statement waits for another process's write lock in all. SQLite's busy handler
    # does most of the waiting; the retries cover the busy answers it gives without waiting (a WAL
    # snapshot gone stale, a recovery).
    BUSY_SECONDS = 10.0
    MIGRATION_BUSY_SECONDS = 600.0  # another process may be applying a long migration (at 1M items)

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        ensure_home(self.path.parent)
        # Made private before SQLite opens it: SQLite gives the -wal and -shm files the mode of the
        # database file, and would create all three as the umask allows (0644, for every account).
        # Only a new file: closing any descriptor of an open database file drops every POSIX lock
        # this process holds on it, and with them the locks of its open connections (a second
        # store object in one process made a connection read a snapshot long gone).
        try:
            os.close(os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
        except FileExistsError:
            pass
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        # Each thread has its own connection (opened on its first call): the web app runs costly
        # reads in worker threads, which WAL lets read beside the loop's connection and its writes.
        self._local = _Local(self)
        self.migrate()

    def _connect(self) -> tuple[sqlite3.Connection, sqlite3.Cursor]:
        """A connection of this thread's, and the one cursor that runs its statements."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self.BUSY_SECONDS)
        conn.row_factory = _dict_row  # for direct users of the connection (seeding, checks)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {int(self.BUSY_SECONDS * 1000)}")
        self._retrying(lambda: conn.execute("PRAGMA journal_mode = WAL"), patience=self.MIGRATION_BUSY_SECONDS)
        # Durability (docs/reliability-promise.md): a write transaction commits with synchronous=FULL,
        # so the WAL is on disk before the write is acknowledged and a power loss keeps it;
        # bookkeeping (`write_one`: an /mcp session's navigation state, on every call) commits
        # with NORMAL, which a crash of any process keeps and a power loss may take back.
        conn.execute("PRAGMA synchronous = NORMAL")
        # One cursor runs every statement of this connection's transactions, their BEGIN and their
        # end: an execute resets the cursor's previous statement first, so the statement that ends
        # a transaction also releases any read left mid-result (which would otherwise hold its
        # snapshot, and stop WAL checkpoints, until the next call), and no cursor is made per call.
        cursor = conn.cursor()
        cursor.row_factory = None
        with self._connections_lock:
            self._connections.append(conn)
        return conn, cursor

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self._local.conn

    @property
    def cursor(self) -> sqlite3.Cursor:
        return self._local.cursor

    @staticmethod
    def _sync(local: _Local, level: str) -> None:
        """Have this thread's connection commit with `level` from now on. Outside a transaction
        (SQLite refuses the change inside one), and only when it changes: a PRAGMA costs µs."""
        if local.synchronous != level:
            local.cursor.execute(f"PRAGMA synchronous = {level}")
            local.synchronous = level

    def _retrying(self, fn, *args, patience: float | None = None):
        started, attempt = time.monotonic(), 0
        while True:
            try:
                return fn(*args)
            except sqlite3.OperationalError as e:
                if not _is_busy(e):
                    raise
                waited = patience or self.BUSY_SECONDS
                if time.monotonic() - started >= waited:
                    raise Busy(f"the database is busy: another process held its write lock for more than "
                               f"{waited:g}s; nothing of this call was applied, so it is safe to send again") from e
            time.sleep(min(0.005 * 2**attempt, 0.2))
            attempt += 1

    def migrate(self) -> None:
        """Apply pending migrations (`navmcp.store.migrations`), each in its own exclusive transaction
        (safe to race). A plain read first: a database that has them all opens without queueing for
        the write lock (a reader's open waited for another process's write transaction, every time)."""
        try:
            applied = {row["version"] for row in self.conn.execute("SELECT version FROM schema_migrations")}
        except sqlite3.OperationalError:  # no such table yet: a new file
            applied = set()
        run(sqlite_migrations(), applied,
    lambda m: self._retrying(self._apply, m, patience=self.MIGRATION_BUSY_SECONDS))

    def _apply(self, migration: Migration) -> bool:
        """One migration and its record, unless another process applied it first."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)).fetchone():
                conn.execute("COMMIT")
                return False
            log.info("applying migration %s_%s to %s", migration.version, migration.name, self.path)
            # executescript would commit our transaction; run statement by statement instead.
            for statement in _split_sql(migration.sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (migration.version, now()))
            conn.execute("COMMIT")
            return True
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def read(self, user_id: str | None = None) -> contextlib.AbstractContextManager[SqliteTx]:
        local = self._local
        return _Read(self, local) if local.group is None else _GroupedRead(self, local)

    def write(self, user_id: str | None = None) -> contextlib.AbstractContextManager[SqliteTx]:
        local = self._local
        return _Write(self, local) if local.group is None else _GroupedWrite(self, local)

    @staticmethod
    def _rollback(local: _Local) -> None:
        if local.conn.in_transaction:  # else SQLite has rolled it back itself (an I/O error, a full disk)
            local.cursor.execute("ROLLBACK")

    def _commit(self, local: _Local) -> None:
        try:
            self._retrying(local.cursor.execute, "COMMIT")
        finally:
            self._rollback(local)  # a COMMIT that failed leaves its transaction open: nothing of it is kept

    # --- group commit --------------------------------------------------------------------------
    # A transport holding several requests at once (a client that pipelines) runs them in one
    # `group()`: their writes share one transaction, each write in a savepoint of its own (a refused
    # action rolls back alone) and all committed together: one COMMIT, one append of the pages they
    # touched to the WAL, instead of one per request. A read that follows a write of the group
    # commits the writes so far first, so the write lock is never held across reads (a pipelined
    # run of searches would hold every other writer of the file waiting); consecutive reads share
    # one snapshot. The transport sends none of their replies before `group()` has returned, so an
    # acknowledged write is a committed one, as without a group; if a commit fails, the group's
    # calls after it fail too and `group()` raises: the replies of the requests whose writes no
    # commit applied (see `_Group`) are to be sent as not applied.
    # A group is its thread's own.

    @contextlib.contextmanager
    def group(self) -> Iterator[_Group]:
        local = self._local
        if local.group is not None:
            yield local.group  # already inside one: join it
            return
        group = local.group = _Group()
        try:
            yield group
            if group.failed:
                raise sqlite3.OperationalError("a commit of this group of requests failed")
            if group.writing:
                self._commit(local)
                group.commits += 1
        finally:
            local.group = None
            self._rollback(local)  # a read snapshot, or a failure: nothing kept

    @staticmethod
    def _check_group(local: _Local) -> _Group:
        """This thread's open group, if it can go on.
        SQLite rolls a whole transaction back on some errors (disk full, I/O): then the group's
        earlier writes are gone, and nothing more may run as if they were there (the group's
        COMMIT then fails, and the transport answers all of its requests as not applied)."""
        group = local.group
        assert group is not None, "a grouped read or write is made inside a group only"
        if group.failed or (group.open and not local.conn.in_transaction):
            raise sqlite3.OperationalError("the transaction of this group of requests was rolled back")
        return group

    # A lone statement is its own transaction in SQLite (autocommit): as atomic as inside read() or
    # write(), without the BEGIN and COMMIT/ROLLBACK calls. fetchall() steps the query to its end,
    # which releases its snapshot at once.
    def read_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> Row | None:
        local = self._local
        if local.group is not None:
            with self.read() as tx:
                return tx.one(sql, params)
        cursor = self._retrying(local.cursor.execute, sql, params)
        rows = cursor.fetchall()
        return row_maker(_names(cursor))(rows[0]) if rows else None

    def write_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> int:
        local = self._local
        if local.group is not None:
            with self.write() as tx:
                return tx.execute(sql, params)
        self._sync(local, "NORMAL")  # bookkeeping, not an acknowledged write (see _connect)
        return self._retrying(local.cursor.execute, sql, params).rowcount

    def integrity_check(self) -> str:
        return self.conn.execute("PRAGMA integrity_check").fetchone()["integrity_check"]

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()


class _Local(threading.local):
    """A thread's connection to the store's file, its cursor, and its open group (if any). Made
    in each thread on its first use (threading.local calls __init__ again there)."""

    group: _Group | None = None
    synchronous = "NORMAL"  # what the connection commits with (see SqliteStore._sync)

    def __init__(self, store: SqliteStore):
        self.conn, self.cursor = store._connect()


class _Read:
    """`SqliteStore.read()`: a deferred transaction, one consistent snapshot for the whole page.
    (Classes rather than @contextmanager generators: these run on every call.)"""

    __slots__ = ("store", "local")
    begin = "BEGIN"

    def __init__(self, store: SqliteStore, local: _Local):
        self.store, self.local = store, local

    def __enter__(self) -> SqliteTx:
        local = self.local
        self.store._retrying(local.cursor.execute, self.begin)
        return SqliteTx(local.conn, local.cursor)

    def __exit__(self, *exc_info) -> None:
        self.store._rollback(self.local)


class _Write(_Read):
    """`SqliteStore.write()`: BEGIN IMMEDIATE (writers queue up for the file), committed on success."""

    __slots__ = ()
    begin = "BEGIN IMMEDIATE"

    def __enter__(self) -> SqliteTx:
        self.store._sync(self.local, "FULL")  # acknowledged once committed: on disk by then (see _connect)
        return super().__enter__()

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.store._commit(self.local)
        else:
            self.store._rollback(self.local)


class _GroupedRead(_Read):
    """`SqliteStore.read()` inside a group: the group's read snapshot (begun if need be). Writes of
    the group so far are committed first: the write lock is not held across reads."""

    __slots__ = ()

    def __enter__(self) -> SqliteTx:
        store, local = self.store, self.local
        group = store._check_group(local)
        if group.writing:
            group.open = group.writing = False
            try:
                store._commit(local)
            except BaseException:
                group.failed = True
                raise
            group.commits += 1
            group.users.clear()  # read under the lock just released
        if not group.open:
            store._retrying(local.cursor.execute, "BEGIN")
            group.open = True
        return SqliteTx(local.conn, local.cursor, group.users)

    def __exit__(self, *exc_info) -> None:
        pass


class _GroupedWrite(_Read):
    """`SqliteStore.write()` inside a group: a savepoint in the group's write transaction (which a
    group that has only read so far begins now, ending its read snapshot)."""

    __slots__ = ("tx",)

    def __enter__(self) -> SqliteTx:
        store, local = self.store, self.local
        group = store._check_group(local)
        if not group.writing:
            if group.open:  # reads only so far: end their snapshot, the write needs the lock
                group.open = False
                local.cursor.execute("ROLLBACK")
            group.users.clear()  # read in the snapshot just ended
            store._sync(local, "FULL")  # the group's replies wait for its COMMIT: on disk by then
            store._retrying(local.cursor.execute, "BEGIN IMMEDIATE")
            group.open = group.writing = True
            group.noted.clear()  # a new transaction holds no change yet
        local.cursor.execute("SAVEPOINT grouped")
        group.writes += 1
        group.last_write = group.commits
        self.tx = SqliteTx(local.conn, local.cursor, group.users, group.noted)
        return self.tx

    def __exit__(self, exc_type, exc, traceback) -> None:
        cursor = self.local.cursor
        if exc_type is None:
            cursor.execute("RELEASE grouped")
            self.tx.noted.update(self.tx.noting)  # type: ignore[union-attr, arg-type]
        elif self.local.conn.in_transaction:  # else SQLite has rolled it all back already
            cursor.execute("ROLLBACK TO grouped")
            cursor.execute("RELEASE grouped")


class _Group:
    """An open `SqliteStore.group()`: what its transaction is so far."""

    __slots__ = ("open", "writing", "users", "noted", "commits", "writes", "last_write", "failed")

    def __init__(self) -> None:
        self.open = False  # a transaction is open (BEGIN, or BEGIN IMMEDIATE once `writing`)
        self.writing = False
        self.commits = 0  # the group's commits that held
        self.writes = 0  # the group's writes begun
        self.last_write = 0  # `commits` when the latest of them began: the commit that applies it is the next
        self.failed = False  # a commit failed: nothing more runs in this group
        self.users: dict[str, Row] = {}  # see SqliteTx.users
        self.noted: set[tuple] = set()  # see SqliteTx.noted


def _is_busy(e: sqlite3.OperationalError) -> bool:
    msg = str(e)
    return "locked" in msg or "busy" in msg


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies (BEGIN ... END;) whole."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if line.strip().startswith("--") and not current:
            continue
        current.append(line)
        candidate = "\n".join(current).strip()
        if candidate.endswith(";") and sqlite3.complete_statement(candidate):
            statements.append(candidate)
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current))
    return statements

