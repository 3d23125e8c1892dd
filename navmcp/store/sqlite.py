"""The embedded store: one SQLite file in NAVMCP_HOME, behind the seam (`navmcp.store.seam`).

Every write is one `BEGIN IMMEDIATE` transaction, so concurrent processes on the same file queue up
instead of losing writes; a busy database is retried here for up to `BUSY_SECONDS`, and only a lock
held longer than that (another process's open transaction) is reported, as `Busy`: nothing was
applied, and the call may be sent again. A transport holding several requests at once runs them in
one `group()`, which commits their writes together. What a transaction does (its queries, the
change feed's rows, search) is `navmcp.store.sqlite_tx`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from navmcp.clock import now
from navmcp.config import PRIVATE_FILE, ensure_home
from navmcp.errors import Busy
from navmcp.store.migrations import Migration, run, sqlite_migrations
from navmcp.store.seam import Row, row_maker
from navmcp.store.sqlite_tx import SqliteTx, column_names, dict_row

log = logging.getLogger("navmcp.store.sqlite")


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
        conn.row_factory = dict_row  # for direct users of the connection (seeding, checks)
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

    def write(self, user_id: str | None = None, client: str | None = None) -> contextlib.AbstractContextManager[SqliteTx]:
        local = self._local
        return _Write(self, local) if local.group is None else _GroupedWrite(self, local)

    def owner(self, readonly: bool = False) -> contextlib.AbstractContextManager[SqliteTx]:
        """One file, one owner: a read or a write like any other."""
        return self.read() if readonly else self.write()

    @staticmethod
    def _rollback(local: _Local) -> None:
        if local.conn.in_transaction:  # else SQLite has rolled it back itself (an I/O error, a full disk)
            local.cursor.execute("ROLLBACK")

    def _commit(self, local: _Local) -> None:
        try:
            self._retrying(local.cursor.execute, "COMMIT")
        except BaseException:
            local.inbox_kept_from = ""  # its prune is undone (see _Local)
            raise
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
            if group.writing and local.conn.in_transaction:  # its writes are undone, a prune too (see _Local)
                local.inbox_kept_from = ""
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
        return row_maker(column_names(cursor))(rows[0]) if rows else None

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
    # No inbox entry or pack is older than this, as this connection's last prune left them
    # (SqliteTx._prune_inbox); a write that rolls back clears it, since its prune is undone too.
    inbox_kept_from = ""

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
        return SqliteTx(local.conn, local.cursor, local=local)

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
            self.local.inbox_kept_from = ""  # its prune is undone (see _Local)
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
        return SqliteTx(local.conn, local.cursor, group.users, local=local)

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
        self.tx = SqliteTx(local.conn, local.cursor, group.users, group.noted, local)
        return self.tx

    def __exit__(self, exc_type, exc, traceback) -> None:
        cursor = self.local.cursor
        if exc_type is None:
            cursor.execute("RELEASE grouped")
            self.tx.noted.update(self.tx.noting)  # type: ignore[union-attr, arg-type]
        elif self.local.conn.in_transaction:  # else SQLite has rolled it all back already
            self.local.inbox_kept_from = ""  # its prune is undone (see _Local)
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

