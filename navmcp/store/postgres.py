"""The hosted store: PostgreSQL (a Supabase project or any Postgres) behind the seam (`navmcp.store.seam`).

Selected by `NAVMCP_DATABASE_URL=postgresql://...`. What differs from SQLite lives here:

- Every transaction works as `navmcp_app`, a role that cannot bypass row-level security, and
  carries the acting user's claims (`request.jwt.claims`, as Supabase sets them), so a query that
  forgets its studio filter still reaches only that user's studios. A read or write without a
  user (`user_id=None`) sees only what the policies grant to nobody in particular: nothing.
- The core's SQL (`?` placeholders, the SQLite/Postgres common subset) is translated once per
  statement to psycopg's `%s`.
- Full-text search runs on `tsvector` columns with GIN indexes, with words read as SQLite's FTS5
  reads them (migration 20261125000021: every word kept, accents dropped), and the query as
  `navmcp.store.fulltext` writes it.
- A write transaction that acts on an item locks the item's row first (`lock`), so
  concurrent joins, votes and comments queue per item: a commitment's limit is never exceeded
  and nothing is lost. Locks are taken in one order (an item, then the acting user's membership;
  a studio, then its memberships), and writes are READ COMMITTED: no deadlock or serialization
  failure is expected, and none is retried. A transaction that finds its connection dead before
  any statement ran starts again on another (`_begin`).
- No call waits forever: a lock held elsewhere for longer than `NAVMCP_PG_LOCK_TIMEOUT` (10s, as
  SQLite's busy timeout) or a statement running longer than `NAVMCP_PG_STATEMENT_TIMEOUT` (30s)
  rolls the call back and answers `Busy` (503), which says it is safe to send again.
- A lost database is told apart from a bug: a connection lost before the commit answers
  `Unavailable` (503, nothing applied); one lost during the commit answers `OutcomeUnknown`. The
  first loss starts a probe that connects every PROBE_SECONDS; while it fails, calls are refused at
  once (no wait for the pool), and when it connects the pool is made anew, so service returns
  within a probe of the database's return (the pool's own reconnection backs off to many seconds).
- Behind a transaction-mode pooler (PgBouncer, Supabase's transaction port) a client's session
  is not its own: `NAVMCP_PG_PREPARE=off` turns prepared statements off and sets the timeouts (and
  the app role, given the owner's URL) in every transaction instead of once per connection. The
  change feed LISTENs, which needs a session: `NAVMCP_FEED_DATABASE_URL` names a direct or
  session-mode URL for it (`navmcp.feeds.changes`).

The schema is `supabase/migrations/*.sql` (`navmcp.store.migrations`), applied by `navmcp migrate`
(see `migrate`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg.rows import RowMaker, dict_row, no_result, tuple_row
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from navmcp.content import search
from navmcp.content.search import Query
from navmcp.errors import Busy, NavError, OutcomeUnknown, Unavailable
from navmcp.store.fulltext import tsquery, tsquery_any
from navmcp.store.migrations import Migration, postgres_migrations, run
from navmcp.store.ranked import Hit, ranked
from navmcp.store.seam import Row, row_maker

log = logging.getLogger("navmcp.store.postgres")

APP_ROLE = "navmcp_app"
PROBE_SECONDS = 0.25  # while the database is away, how often a probe tries to connect
UNAVAILABLE = ("the database can't be reached right now; nothing of this call was applied, so it is safe "
               "to send again in a moment")


def prepare_threshold(environ=os.environ) -> int | None:
    """psycopg's `prepare_threshold`: its default (prepare a statement run 5 times), or None (never)
    with NAVMCP_PG_PREPARE=off, as a transaction-mode pooler needs."""
    raw = (environ.get("NAVMCP_PG_PREPARE") or "on").strip().lower()
    if raw in ("off", "0", "false", "no"):
        return None
    if raw in ("on", "1", "true", "yes"):
        return 5
    raise NavError(f"server misconfigured: NAVMCP_PG_PREPARE={raw[:20]!r} must be on or off")


class SchemaMissing(NavError):
    """The database has not been migrated: said plainly to whoever asked (agent, CLI, browser)."""

    status = 503


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """Core SQL (`?` placeholders) as psycopg SQL (`%s`); a literal `%` becomes `%%`.

    A `?` inside a quoted string literal stays a question mark. (Splitting on `'` leaves the
    literals at odd positions, also with doubled '' quotes inside them.)
    """
    parts = sql.replace("%", "%%").split("'")
    return "'".join(p if i % 2 else p.replace("?", "%s") for i, p in enumerate(parts))


def _dict_rows(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    """psycopg's `dict_row`, with the dicts made by `row_maker` (once per set of column names)."""
    if cursor.description is None:
        return no_result
    return row_maker(tuple([c.name for c in cursor.description]))


# Whether the connection's role is beyond row-level security: a superuser, a BYPASSRLS role, or the
# owner of the tables (their policies are not FORCEd: migrations and the owner's tools rely on it).
_BEYOND_RLS = """SELECT current_user AS name,
                          (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
                          OR (SELECT tableowner = current_user FROM pg_tables
                               WHERE schemaname = 'public' AND tablename = 'items') AS beyond"""

_LOCKABLE = {table: f"SELECT 1 FROM {table} WHERE id = %s FOR NO KEY UPDATE" for table in ("items", "studios")}


class PostgresTx:
    __slots__ = ("conn", "readonly")
    hosted = True  # row-level security: writing for others goes through SECURITY DEFINER functions
    # A row per recipient, written by navmcp.note_inbox inside the server: one round trip whatever
    # their number, and row-level security keeps each person to their own rows.
    inbox_packs = False
    users: dict[str, Row] | None = None  # no group commit here (see `group`), so no rows kept across calls

    def __init__(self, conn: psycopg.Connection[Row], readonly: bool):
        self.conn = conn
        self.readonly = readonly

    def _run(self, sql: str, params: Sequence[Any]) -> psycopg.Cursor[Row]:
        return self.conn.execute(translate(sql), tuple(params))

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._run(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        return self._run(sql, params).fetchone()

    def tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.conn.cursor(row_factory=tuple_row).execute(translate(sql), tuple(params)).fetchall()

    def record(self, sql: str, params: Sequence[Any] = ()) -> tuple[tuple[str, ...], tuple] | None:
        cursor = self.conn.cursor(row_factory=tuple_row).execute(translate(sql), tuple(params))
        row = cursor.fetchone()
        return None if row is None else (tuple([c.name for c in cursor.description or ()]), row)

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self._run(sql, params).fetchone()
        return None if row is None else next(iter(row.values()))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._run(sql, params).rowcount

    def find_user(self, handle: str, deleted: bool = False) -> Row | None:
        # Through a SECURITY DEFINER function: adding a member must find users you share no studio with.
        return self.conn.execute("SELECT * FROM navmcp.find_user(%s)" + ("" if deleted else " WHERE deleted_at IS NULL"),
                                 (handle,)).fetchone()

    def member_ids(self, studio_id: str, handles: Sequence[str]) -> list[str]:
        # As the acting user: row-level security shows the members of their own studios only.
        return [r["id"] for r in self.conn.execute(
            "SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id AND m.studio_id = %s"
            " WHERE u.handle = ANY(%s) AND u.deleted_at IS NULL", (studio_id, list(handles))).fetchall()]

    def lock(self, table: str, row_id: str) -> None:
        # NO KEY UPDATE: writers on one row queue up, while inserts that merely reference it
        # (comments, links, votes) from other transactions are not blocked by it.
        if table not in _LOCKABLE:
            raise ValueError(f"lock: unknown table {table!r}")
        if not self.readonly:
            self.conn.execute(_LOCKABLE[table], (row_id,))

    @contextlib.contextmanager
    def act_as(self, user_id: str, client: str | None = None) -> Iterator[None]:
        row = self.conn.execute("SELECT current_setting('request.jwt.claims', true) AS c").fetchone()
        before = row["c"] if row else ""
        claims = _claims(user_id, client)
        self.conn.execute("SELECT set_config('request.jwt.claims', %s, true)", (claims,))
        try:
            yield
        finally:
            self.conn.execute("SELECT set_config('request.jwt.claims', %s, true)", (before or "",))

    def hold_membership(self, studio_handle: str) -> None:
        # A share lock on the caller's own membership row (migration 20261125000023): a demotion
        # or removal waits for this action, or this action for it, and then reads the new role.
        if not self.readonly:
            self.conn.execute("SELECT navmcp.hold_membership(%s)", (studio_handle,))

    def search(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
               offset: int) -> tuple[list[Row], int, bool]:
        if not studio_ids:
            return [], 0, False
        if query.terms:  # words: read as far as the page needs (navmcp.store.ranked, migration 20261130000310)
            return ranked(_PostgresSources(self, studio_ids, query, at), limit, offset)
        # Filters alone: one call, as the owner (migrations 20261126000040, 20261130000241).
        (found,) = self.conn.execute(
            "SELECT * FROM navmcp.find_items(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (list(studio_ids), None, None, tsquery_any(query.excluded) if query.excluded else None, None,
             query.kind, query.status, query.tag, at, limit, offset, search.SEARCH_WINDOW,
             query.decision_kind)).fetchall()
        rows = [{"item_id": i, "tier": t, "option_id": o, "comment_id": c, "options": no, "comments": nc}
                for i, t, o, c, no, nc in zip(found["item_ids"], found["tiers"], found["option_ids"],
                                              found["comment_ids"], found["option_counts"], found["comment_counts"])]
        return rows, found["total"], found["windowed"]

    def prune_audit(self, days: int, most: int) -> None:
        # As the owner (migration 20261126000011): no policy lets the app role delete audit lines.
        self.conn.execute("SELECT navmcp.prune_audit(%s, %s)", (max(1, days), max(1, most)))

    def purge_deleted(self, before: str, most: int) -> int:
        # As the owner (migration 20261129000160): any member's write may purge an item deleted
        # long enough ago, whoever may restore it; the function judges the age by its own clock too.
        (row,) = self.conn.execute("SELECT navmcp.purge_deleted(%s, %s) AS n", (before, most)).fetchall()
        return row["n"]

    def note_change(self, at: str, studio_id: str | None, item_id: str | None, user_id: str,
                    action: str | None = None) -> None:
        # As the owner (migrations 20261126000080, 20261128000150): the table is not the users' to
        # read or write, and the function records the acting user itself.
        self.conn.execute("SELECT navmcp.note_change(%s, %s, %s, %s)", (at, studio_id, item_id, action))

    def note_inbox(self, at: str, kind: str, studio_id: str, item_id: str | None, actor_id: str, client: str,
                   user_ids: Sequence[str], fold: bool, expired: str, held_id: str | None = None,
                   checked: bool = False, pack: bool = False) -> list[str]:
        # As the owner (migrations 20261128000050, 20261130000250): nobody writes another's entries
        # directly; the function records the acting user itself, writes only for members of the
        # studio (`checked` or not: the caller is not trusted here) and answers whom it wrote for;
        # a row each (`pack` or not: see `inbox_packs`).
        (row,) = self.conn.execute("SELECT navmcp.note_inbox(%s, %s, %s, %s, %s, %s, %s, %s, %s) AS written",
                                   (at, kind, studio_id, item_id, client, list(user_ids), fold, expired,
                                    held_id)).fetchall()
        return sorted(row["written"] or [])

    def cycle_activity(self, studio_id: str, since: str, till: str) -> dict[str, int]:
        # As the owner (migrations 20261124000019, 20261129000200): the day rows are nobody's to
        # read directly, and the function answers only for a studio of the acting user's.
        (counts,) = self.conn.execute("SELECT * FROM navmcp.cycle_activity(%s, %s, %s)", (studio_id, since, till)).fetchall()
        return counts


class _PostgresSources:
    """The sources of one word search, for `navmcp.store.ranked`, read by the owner-run functions of
    migration 20261130000310 (under row-level security the GIN indexes would not be used; each
    answers only for the acting user's studios). A position is a seq (an item's, its tag rows', a
    comment's), an option's (created_at, id); an item is named by its id. A source whose newest
    SAMPLE rows hold at least a DENSE share of matches is walked newest first (its matches come
    soon); a rarer one is read from the GIN index (all its matches, sorted: few). The index cannot
    tell a title's words from a body's, so titles are walked too when any of the sample has one
    and the body's are dense (`launch review` at 1M: 8 title and 221 text matches of 2,000; read
    from the index, 626 ms)."""

    SAMPLE = 2000
    DENSE = 0.002

    def __init__(self, tx: PostgresTx, studio_ids: Sequence[str], query: Query, at: str):
        self.tx, self.studio_ids = tx, list(studio_ids)
        self.words, self.title = tsquery(query), tsquery(query, title_only=True)
        self.filters = (tsquery_any(query.excluded) if query.excluded else None, query.tag_word, query.kind,
                        query.status, query.tag, at, query.decision_kind)
        (row,) = tx.conn.execute("SELECT navmcp.search_sample(%s, %s, %s, %s) AS n",
                                 (self.studio_ids, self.words, self.title, self.SAMPLE)).fetchall()
        self.walk = {tier: n >= self.SAMPLE * self.DENSE for tier, n in zip((0, 2, 3, 4), row["n"])}
        self.walk[0] |= row["n"][0] > 0 and self.walk[2]

    def tiers(self) -> list[int]:
        return [0, 1, 2, 3, 4] if self.filters[1] else [0, 2, 3, 4]

    def scan(self, tier: int, below: Any, n: int, floor: Any) -> list[Hit]:
        seqs = [None if p is None or tier == 3 else p for p in (below, floor)]
        keys = [(None, None) if p is None or tier != 3 else p for p in (below, floor)]
        rows = self.tx.conn.cursor(row_factory=tuple_row).execute(
            "SELECT * FROM navmcp.search_scan(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (self.studio_ids, tier, self.walk.get(tier, False), self.words, self.title, *self.filters,
             seqs[0], *keys[0], seqs[1], *keys[1], n)).fetchall()
        return [Hit((at, key) if tier == 3 else seq, item_id, part, updated_at, item_id, passes)
                for seq, at, key, item_id, part, updated_at, passes in rows]

    def oldest_since(self, updated_at: str) -> int | None:
        (row,) = self.tx.conn.execute("SELECT navmcp.search_oldest_since(%s, %s) AS seq",
                                      (self.studio_ids, updated_at)).fetchall()
        return row["seq"]

    def parts(self, tier: int, ids: Sequence[str]) -> list[tuple[Any, str, str]]:
        # As the acting user: row-level security shows their studios' options and comments.
        if tier == 3:
            return [((at, key), key, item_id) for at, key, item_id in self.tx.tuples(
                "SELECT created_at, id, decision_id FROM options WHERE decision_id = ANY(?)", (list(ids),))]
        return self.tx.tuples("SELECT seq, id, item_id FROM comments WHERE item_id = ANY(?)", (list(ids),))

    def matching(self, tier: int, floor: Any, n: int) -> list[Any]:
        return [hit.position for hit in self.scan(tier, None, n, floor)]


class PostgresStore:
    """A connection pool; each `read()`/`write()` is one transaction as `navmcp_app` for one user."""

    RETRIES = 5
    # Row-level security applies (steps before the user is known use SECURITY DEFINER functions),
    # and the pool may be used from several threads at once (see navmcp.web.app).
    hosted = True

    def __init__(self, url: str, *, min_size: int = 1, max_size: int | None = None):
        self.url = url
        self.timeouts = (os.environ.get("NAVMCP_PG_LOCK_TIMEOUT") or "10s",
                         os.environ.get("NAVMCP_PG_STATEMENT_TIMEOUT") or "30s")
        self.prepare = prepare_threshold()
        self.pooled = self.prepare is None  # behind a transaction pooler: every setting per transaction
        self._local_role = False
        self.down_since: float | None = None  # monotonic time the database was found away, while it is
        self._probing = threading.Lock()
        self._closed = False
        # One direct connection first: an unreachable or refusing server is named at once, where the
        # pool retried for its whole timeout (30 s) and then raised PoolTimeout without the reason;
        # so is a timeout PostgreSQL cannot read (the pool would retry on it just the same).
        try:
            with psycopg.connect(url, connect_timeout=10, autocommit=True, row_factory=_dict_rows,
                                 prepare_threshold=self.prepare) as conn:
                self._configure(conn)
        except psycopg.errors.InvalidParameterValue as e:
            raise NavError(f"NAVMCP_PG_LOCK_TIMEOUT / NAVMCP_PG_STATEMENT_TIMEOUT: {str(e).strip()}") from None
        except psycopg.OperationalError as e:  # unreachable (or refusing): a process started meanwhile says 503
            raise Unavailable(f"cannot connect to PostgreSQL at {_redact(url)}: {str(e).strip()[:300]}") from None
        except psycopg.Error as e:
            raise NavError(f"cannot connect to PostgreSQL at {_redact(url)}: {str(e).strip()[:300]}") from None
        max_size = max_size or int(os.environ.get("NAVMCP_PG_POOL_SIZE", "5"))
        self._sizes = (min_size, max(min_size, max_size))
        self.pool = self._new_pool()
        self.pool.open(wait=True, timeout=30)
        self._check_schema()

    def _new_pool(self) -> ConnectionPool[psycopg.Connection[Row]]:
        return ConnectionPool(
            self.url, min_size=self._sizes[0], max_size=self._sizes[1], open=False,
            kwargs={"autocommit": True, "row_factory": _dict_rows, "prepare_threshold": self.prepare,
                    "connect_timeout": 10},
            configure=self._configure, name="navmcp")

    def reachable(self) -> bool:
        """Whether the database answers now (`/readyz`): a round trip on a pooled connection, or
        False at once while the database is known to be away."""
        if self.down_since is not None:
            return False
        try:
            with self.read() as tx:
                return tx.scalar("SELECT 1 AS one") == 1
        except (Busy, psycopg.Error):
            return False

    def _lost(self) -> None:
        """A connection failed: probe the database on a thread of its own (once at a time). If the
        first try connects it was one dead connection, which the pool replaces; else calls are
        refused at once until a try connects, and then the pool is made anew."""
        if self._closed or not self._probing.acquire(blocking=False):
            return
        threading.Thread(target=self._probe, name="navmcp-pg-probe", daemon=True).start()

    def _probe(self) -> None:
        try:
            while not self._closed:
                try:
                    with psycopg.connect(self.url, connect_timeout=2, autocommit=True) as conn:
                        conn.execute("SELECT 1")
                except psycopg.Error:
                    if self.down_since is None:
                        self.down_since = time.monotonic()
                        log.warning("PostgreSQL can't be reached; calls are answered 503 until it is back")
                    time.sleep(PROBE_SECONDS)
                    continue
                if self.down_since is None:  # one dead connection: the pool drops the others it has
                    self.pool.check()
                    return
                fresh = self._new_pool()
                fresh.open(wait=False)
                old, self.pool = self.pool, fresh
                log.warning("PostgreSQL is back after %.1f s", time.monotonic() - self.down_since)
                self.down_since = None
                old.close(timeout=0)
                return
        finally:
            self._probing.release()

    def _configure(self, conn: psycopg.Connection[Row]) -> None:
        # Connected as some other role (e.g. the database owner)? Work as the app role, so the
        # row-level policies apply. Connecting as navmcp_app itself is the stricter set-up.
        # synchronous_commit on: a COMMIT returns once its WAL is flushed, whatever the database's
        # default, so an acknowledged write survives a crash of the server (docs/reliability-promise.md).
        role = conn.execute("SELECT current_user AS r, set_config('lock_timeout', %s, false),"
                            " set_config('statement_timeout', %s, false),"
                            " set_config('synchronous_commit', 'on', false)", self.timeouts).fetchall()[0]["r"]
        if role != APP_ROLE:
            if self.pooled:  # a session setting would stay with the pooler's server connection: per transaction
                self._local_role = True
            else:
                conn.execute(f'SET ROLE "{APP_ROLE}"')

    def _check_schema(self) -> None:
        with self.pool.connection() as conn:
            if conn.execute("SELECT to_regclass('public.mcp_sessions') AS t").fetchall()[0]["t"] is None:
                raise SchemaMissing(f"the database has no navmcp schema: run `navmcp migrate` "
                                    f"(NAVMCP_DATABASE_URL={_redact(self.url)})")

    @contextlib.contextmanager
    def _transaction(self, user_id: str | None, readonly: bool, client: str | None = None) -> Iterator[PostgresTx]:
        claims = _claims(user_id, client)
        begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if readonly else "BEGIN"
        lease, conn = self._begin(begin, claims)
        try:
            yield PostgresTx(conn, readonly)
        except BaseException as e:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            lease.__exit__(type(e), e, e.__traceback__)
            if isinstance(e, psycopg.errors.LockNotAvailable):
                raise Busy(f"the database is busy: another call held what this one needed for more than "
                           f"{self.timeouts[0]}; nothing of it was applied, so it is safe to send again") from e
            if isinstance(e, psycopg.errors.QueryCanceled):
                raise Busy(f"the database is busy: a statement of this call ran longer than {self.timeouts[1]}; "
                           f"nothing of it was applied, so it is safe to send again") from e
            if isinstance(e, psycopg.OperationalError) and conn.closed:  # the connection was lost: no COMMIT was sent
                self._lost()
                raise Unavailable(UNAVAILABLE) from e
            raise
        else:
            try:
                conn.execute("ROLLBACK" if readonly else "COMMIT")
            except BaseException as e:
                lease.__exit__(type(e), e, e.__traceback__)
                if readonly and isinstance(e, psycopg.Error):  # what was read stands
                    self._lost()
                    return
                if isinstance(e, psycopg.OperationalError):
                    self._lost()
                    raise OutcomeUnknown("the connection to the database was lost while this call committed: it "
                                         "may or may not have been applied. Read the page to see, or send it "
                                         "again with the same idempotency key, which applies it at most once") from e
                raise
            lease.__exit__(None, None, None)

    def _begin(self, begin: str, claims: str):
        """A pooled connection inside a fresh transaction carrying the user's claims. A connection
        that died while idle in the pool (server restart, network, idle timeout) is dropped and
        another one tried: nothing has run yet, so nothing is lost."""
        for attempt in range(self.RETRIES):
            if self.down_since is not None:  # known to be away: said at once, not after the pool's wait
                raise Unavailable(UNAVAILABLE)
            lease = self.pool.connection()
            try:
                conn = lease.__enter__()
            except PoolClosed:  # made anew a moment ago (`_probe`): the next try takes the new one
                continue
            except PoolTimeout as e:
                self._lost()
                raise Unavailable(UNAVAILABLE) from e
            try:
                conn.execute(begin)
                if self.pooled:  # behind a transaction pooler, the session's settings are not this one's
                    if self._local_role:
                        conn.execute(f'SET LOCAL ROLE "{APP_ROLE}"')
                    conn.execute("SELECT set_config('request.jwt.claims', %s, true), set_config('lock_timeout', %s, true),"
                                 " set_config('statement_timeout', %s, true), set_config('synchronous_commit', 'on', true)",
                                 (claims, *self.timeouts))
                else:
                    conn.execute("SELECT set_config('request.jwt.claims', %s, true)", (claims,))
                return lease, conn
            except psycopg.OperationalError as e:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                lease.__exit__(type(e), e, e.__traceback__)  # a broken connection leaves the pool
                self._lost()
                if attempt == self.RETRIES - 1:
                    raise Unavailable(UNAVAILABLE) from e
                log.warning("retrying a transaction start: %s", e)
                # One dead, likely all (a server restart): test the idle ones now, so the retries
                # don't each draw another dead one from a pool larger than RETRIES.
                self.pool.check()
                time.sleep(0.01 * 2**attempt)
        raise Unavailable(UNAVAILABLE)

    def read(self, user_id: str | None = None) -> contextlib.AbstractContextManager[PostgresTx]:
        """One consistent snapshot (REPEATABLE READ, READ ONLY) as `user_id`."""
        return self._transaction(user_id, readonly=True)

    def write(self, user_id: str | None = None, client: str | None = None) -> contextlib.AbstractContextManager[PostgresTx]:
        """One READ COMMITTED write transaction as `user_id` (come through `client`, which its audit
        lines name); items are locked as they are acted on."""
        return self._transaction(user_id, readonly=False, client=client)

    @contextlib.contextmanager
    def owner(self, readonly: bool = False) -> Iterator[PostgresTx]:
        """One transaction on a connection of its own as the URL's role, not `navmcp_app`: the
        database's owner, whom row-level security does not bind. Refused (nothing done) when the
        URL's role is bound by it: an import writes people and rows no user may write."""
        try:
            conn = psycopg.connect(self.url, connect_timeout=10, autocommit=True, row_factory=_dict_rows,
                                   prepare_threshold=None)
        except psycopg.Error as e:
            raise Unavailable(f"cannot connect to PostgreSQL at {_redact(self.url)}: {str(e).strip()[:300]}") from None
        with conn:
            role = conn.execute(_BEYOND_RLS).fetchall()[0]
            if not role["beyond"]:
                raise NavError(f"this needs the database owner (as `navmcp migrate` does): NAVMCP_DATABASE_URL "
                               f"connects as {role['name']}, whom row-level security binds; run it with the "
                               f"owner's URL, e.g. postgresql://postgres@…")
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if readonly else "BEGIN")
            try:
                yield PostgresTx(conn, readonly)
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("ROLLBACK" if readonly else "COMMIT")

    def group(self) -> contextlib.AbstractContextManager[None]:
        """No group commit here: each transaction carries its own user's claims, and commits alone."""
        return contextlib.nullcontext()

    def read_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> Row | None:
        with self.read(user_id) as tx:
            return tx.one(sql, params)

    def write_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> int:
        with self.write(user_id) as tx:
            return tx.execute(sql, params)

    def close(self) -> None:
        self._closed = True
        self.pool.close()


def _redact(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


# --- migrations ---------------------------------------------------------------------------------


def migrate(url: str, say: Callable[[str], object] = lambda line: None) -> list[str]:
    """Apply pending migrations to the database at `url`; return the versions applied.

    Needs a role that may create tables (the database owner; `postgres` on Supabase). Applied
    versions are recorded in `navmcp.schema_migrations`; versions the Supabase CLI recorded
    (`supabase db push`) count as applied too, so the two tools can be mixed. Running it twice,
    or twice at once (an advisory lock serializes them), is harmless.
    """
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("SELECT pg_advisory_lock(hashtext('navmcp migrate'))")
        try:
            conn.execute("CREATE SCHEMA IF NOT EXISTS navmcp")
            conn.execute("""CREATE TABLE IF NOT EXISTS navmcp.schema_migrations (
                                version TEXT PRIMARY KEY, name TEXT NOT NULL,
                                applied_at TIMESTAMPTZ NOT NULL DEFAULT now())""")
            applied = {r["version"] for r in conn.execute("SELECT version FROM navmcp.schema_migrations")}
            if conn.execute("SELECT to_regclass('supabase_migrations.schema_migrations') AS t").fetchall()[0]["t"]:
                applied |= {r["version"] for r in conn.execute(
                    "SELECT version FROM supabase_migrations.schema_migrations")}

            def apply(migration: Migration) -> bool:
                say(f"applying {migration.version}_{migration.name}")
                with conn.transaction():
                    conn.execute(migration.sql)  # no parameters: sent as one simple-protocol script
                    conn.execute("INSERT INTO navmcp.schema_migrations (version, name) VALUES (%s, %s)"
                                 " ON CONFLICT DO NOTHING", (migration.version, migration.name))
                return True  # the advisory lock: no other run applies it meanwhile

            return [str(v) for v in run(postgres_migrations(), applied, apply)]
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('navmcp migrate'))")


def _claims(user_id: str | None, client: str | None = None) -> str:
    """A transaction's `request.jwt.claims`, as Supabase sets them: who acts (row-level security
    judges them) and, for a write, the client they came through (stamped on its audit lines)."""
    if not user_id:
        return json.dumps({"role": "anon"})
    return json.dumps({"sub": user_id, "role": "authenticated", **({"client": client[:100]} if client else {})})
