"""The change feed: which facts each committed action changed, and who is watching which page.

Writing: `record` runs inside an action's own write transaction (`Workspace.execute`), so a
change is announced if and only if the action committed. A row names ids only (the studio, the
item acted on or created, the actor), never content.

Watching: a `Feed` (one per process and store) hands each new change to the watchers it may
concern. It costs nothing while nobody watches: its thread starts with the first watcher and ends
within QUIET_SECONDS of the last one leaving. On SQLite the thread sleeps until a file beside the
database is written (inotify, on Linux; elsewhere it wakes every `POLL_SECONDS`), then asks the
file's `data_version` (a counter answered from shared memory, which moves when another connection
commits) and reads rows only when it moved; on PostgreSQL it LISTENs (a NOTIFY is delivered only
on commit) and then reads what committed since it last read.

Every committed change is handed on exactly once, in the order of commits as the feed finds them.
On SQLite writers take turns (one write transaction at a time), so numbers commit in order and the
feed's position is the last number it read. On PostgreSQL a change numbered 5 may commit after one
numbered 6: the position is the snapshot the feed last read with, and a read hands on the changes
whose transaction that snapshot did not show and a newer one does (migration 20261128000040). A
position is also a token (`Change.position`, a live page's event id) from which a watcher that
reconnects catches up (`Feed.missed`).

A database fault never ends the feed: the round is read again, with backoff, until the database
answers; watchers stay, and hear of what committed meanwhile. Who a change concerns is asked of the
database before anyone is told, so a fault half-way tells nobody twice.

Time changes pages too: a held action waiting for approval expires when nobody approved it in
time, which no write records (its page reads "expired" from then on). While anyone watches, the
feed asks every EXPIRY_SECONDS which holds expired since it last asked, and hands each on as a
change of its studio (`HOLD_EXPIRED`), so the held page's watchers hear of it when it happens.
A watcher that reconnects after that moment is not told by `missed` (no row records it).

Whether a change concerns a watcher is judged in two steps: `Interest.may_concern` on ids alone
(cheap, on every change), then `Feed.verdict` as the watcher, against the database (still a member?
newly a member?). A watcher that may no longer see its page is ended with a reason, never notified.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from navmcp.clock import now

log = logging.getLogger("navmcp.feeds.changes")

POLL_SECONDS = 0.02
HOT_SECONDS = 1.0  # after a file beside the database was written, poll this long before sleeping again
QUIET_SECONDS = 1.0  # a wait for changes returns empty after this long, so the feed notices nobody watches
BATCH = 500
BACKOFF_SECONDS = (0.05, 1.0)  # after a database fault, the first pause before reading again, and the longest
MISSED_MOST = 2000  # a reconnecting watcher's catch-up reads this many changes at most (more: "changed")
EXPIRY_SECONDS = 1.0  # how often a watched feed asks which held actions expired meanwhile
HOLD_EXPIRED = "hold_expired"  # the action name of a hold's expiry, a change no write records

_STUDIO_PATH = re.compile(r"/studios/([a-z0-9][a-z0-9-]{0,31})(?:/([ndc])/([A-Za-z0-9_-]{1,64}))?(?:[/?]|$)")


@dataclass(frozen=True)
class Change:
    seq: int
    studio_id: str | None
    item_id: str | None
    user_id: str | None  # who acted
    position: str = ""  # the feed's position just after this change, as a token (`Feed.missed`)
    action: str | None = None  # the action's name: what kind of change it is
    summary: str | None = None  # the change in words for its watchers (`Feed.described`)


def record(tx, user_id: str, studio_id: str | None, item_id: str | None, action: str | None = None) -> None:
    """Note, in the action's own transaction, that `action` changed `item_id` (or, with None,
    something studio-wide, like a membership) in `studio_id`."""
    tx.note_change(now(), studio_id, item_id, user_id, action)


# A change in words, as its watchers are told of it ("vote by @bob"): the action's name in words, and
# who acted where the page shows who did it. Pins are not signed on any page but the admins' audit
# log; a ballot on an anonymous decision names nobody, ever.
_WORDS = {
    "vote": "vote", "consent": "consent", "object": "objection", "allocate": "dots", "answer": "answer",
    "add_comment": "comment", "edit_comment": "comment edited", "delete_comment": "comment deleted",
    "add_option": "option added", "add_time": "time added", "amend": "amended",
    "close_decision": "closed", "close_poll": "closed", "close_commitment": "closed",
    "reopen_decision": "reopened", "extend_decision": "deadline extended", "set_outcome": "outcome written",
    "edit_note": "edited", "edit_decision": "edited", "edit_commitment": "edited",
    "create_note": "note created", "create_decision": "decision created", "create_commitment": "commitment created",
    "join_commitment": "joined", "leave_commitment": "left", "confirm_read": "read",
    "pin": "pinned", "unpin": "unpinned", "add_member": "member added", "remove_member": "member removed",
    "leave_studio": "member left", "delete_studio": "studio deleted", "create_studio": "studio created",
    "delete_item": "deleted", "restore_item": "restored",
}
_UNSIGNED = frozenset({"pin", "unpin"})
_BALLOTS = frozenset({"vote", "consent", "object", "allocate", "answer"})
# Closings whose summary says the result, as the decision's page states it ("closed by @alice:
# 'Lisbon'"), so a watcher waiting for the result need not read the page.
_RESULTS = frozenset({"close_decision", "close_poll"})
RESULT_MOST = 200  # characters of a result in a summary (a tie of many long titles is cut)


def summary(action: str | None, handle: str | None, anonymous: bool, result: str | None = None) -> str | None:
    """What a change's watchers are told it was, or None where its kind is not one of the table's.
    `result`: a closed decision's result, for a closing."""
    words = _WORDS.get(action or "")
    if words is None:
        return None
    if not (handle is None or action in _UNSIGNED or (anonymous and action in _BALLOTS)):
        words = f"{words} by @{handle}"
    if result and action in _RESULTS:
        words += ": " + (result if len(result) <= RESULT_MOST else result[:RESULT_MOST - 1] + "…")
    return words


def studio_of(tx, url: str) -> str | None:
    """The id of the studio a URL is in (the studio an action just created, say)."""
    m = _STUDIO_PATH.match(url)
    return tx.scalar("SELECT id FROM studios WHERE handle = ?", (m.group(1),)) if m else None


def item_of(url: str) -> str | None:
    m = _STUDIO_PATH.match(url)
    return m.group(3) if m else None


@dataclass
class Interest:
    """What a page's facts hang on. An item page: its item, and its studio's studio-wide changes
    (membership decides what one may see and do there). Any other studio page: everything in its
    studio. A page of the user's own (home, whoami, workspace search): everything in the studios
    they belong to, studio-wide changes elsewhere (they may have just been added), and their own
    changes outside any studio (becoming findable)."""

    user_id: str
    studio_id: str | None = None
    item_id: str | None = None
    studios: set[str] = field(default_factory=set)  # a user page: the user's studios, kept current

    @property
    def personal(self) -> bool:
        return self.studio_id is None

    def may_concern(self, change: Change) -> bool:
        if self.personal:
            if change.studio_id is None:  # outside studios (make_findable): only the actor's own pages
                return change.user_id == self.user_id
            return change.studio_id in self.studios or change.item_id is None
        if change.studio_id != self.studio_id:
            return False
        return self.item_id is None or change.item_id is None or change.item_id == self.item_id


def interest(tx, user_id: str, url: str) -> Interest | None:
    """The interest of `user_id` watching `url` (already shown to be visible to them), or None for a
    page no change can alter (help)."""
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    if path == "/help" or path.startswith("/help/"):
        return None
    m = _STUDIO_PATH.match(path)
    if m is None:
        studios = {r["studio_id"] for r in tx.all("SELECT studio_id FROM memberships WHERE user_id = ?", (user_id,))}
        return Interest(user_id, studios=studios)
    studio_id = tx.scalar("SELECT id FROM studios WHERE handle = ?", (m.group(1),))
    return Interest(user_id, studio_id=studio_id, item_id=m.group(3))


@dataclass(eq=False)
class Watcher:
    """One watched page. `notify(change)` and `end(reason)` are called on the feed's thread; they must
    only hand the news on (queue it, write one line), never block."""

    interest: Interest
    notify: Callable[[Change], None]
    end: Callable[[str], None]


# How a closed decision's result is told in words, read as the actor when a closing is described:
# `navmcp.kinds` puts its `told_result` here as it loads (the verdict is the kinds' knowledge, above
# this module, and every process that closes a decision has loaded them). Empty: closings go without.
RESULT: list[Callable[[Any, Change], str | None]] = []


class Feed:
    """New changes, handed to the watchers they may concern. Thread-safe; one per store."""

    def __init__(self, source: Source):
        self.source = source
        self._watchers: set[Watcher] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.faults = 0  # database faults the feed has read through (in a row; 0 when it reads well)
        self._expired_until = ""  # holds that expired until this time were handed on (`_expiries`)
        self._expiry_due = 0.0  # when (monotonic) to ask again

    def __len__(self) -> int:
        return len(self._watchers)

    def add(self, watcher: Watcher) -> None:
        with self._lock:
            self._watchers.add(watcher)
            if self._thread is None:
                # Where the watch begins is read here, before `add` returns: a change committed
                # after it is one the thread will see, however late the thread starts.
                try:
                    position = self.source.last()
                except BaseException:
                    self._watchers.discard(watcher)
                    raise
                self._stop.clear()
                self._expired_until = now()  # nobody watched before: earlier expiries concern nobody now
                self._thread = threading.Thread(target=self._run, args=(position,), name="navmcp-feed", daemon=True)
                self._thread.start()

    def remove(self, watcher: Watcher) -> None:
        with self._lock:
            self._watchers.discard(watcher)

    def position(self) -> str:
        """Where the feed stands now, as a token `missed` reads from (a live page's first event id)."""
        return self.source.token(self.source.last())

    def missed(self, token: str, interest: Interest) -> bool:
        """Whether a change after the position `token` may concern `interest` (a watcher that lost
        its stream and came back). True also when that can't be told: the token is unreadable or
        too much happened since; the watcher then reads its page again, which costs one read."""
        position = self.source.parse(token)
        if position is None:
            return True
        found = self.source.since(position, MISSED_MOST)
        return found is None or any(interest.may_concern(change) for change in found)

    def close(self) -> None:
        self._stop.set()
        self.source.interrupt()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self.source.close()

    def _run(self, position: Any) -> None:
        pending: list[Change] = []  # read and not yet handed on
        after = position  # the position once `pending` is handed on
        while not self._stop.is_set():
            with self._lock:
                if not self._watchers:  # nobody watches: the thread ends, and so does all polling
                    self._thread = None
                    return
            try:
                if not pending:
                    pending, after = self.source.wait(position, self._stop)
                while pending:
                    self.dispatch(pending[0])
                    pending.pop(0)
                position = after
                self._expiries(position)
                if self.faults:
                    log.warning("the change feed reads again after %d database faults", self.faults)
                    self.faults = 0
            except Exception:
                # The database went away, or a query failed: nobody was told of the change at hand,
                # so it is handed on once the database answers again.
                self.faults += 1
                if self.faults == 1:
                    log.warning("the change feed lost the database; it keeps trying", exc_info=True)
                self.source.reset()
                first, longest = BACKOFF_SECONDS
                self._stop.wait(min(longest, first * 2 ** (self.faults - 1)))

    def _expiries(self, position: Any) -> None:
        """Hand on, as changes of their studios, the held actions that expired since the last ask."""
        tick = time.monotonic()
        if tick < self._expiry_due:
            return
        self._expiry_due = tick + EXPIRY_SECONDS
        until = now()
        token = self.source.token(position)
        for held_id, studio_id in self.source.expired(self._expired_until, until):
            self.dispatch(Change(0, studio_id, "held-" + held_id, None, token, HOLD_EXPIRED, "held action expired"))
        self._expired_until = until

    def dispatch(self, change: Change) -> None:
        with self._lock:
            concerned = [w for w in self._watchers if w.interest.may_concern(change)]
        if not concerned:
            return
        members = self.members(change, {w.interest.user_id for w in concerned})
        change = self.described(change)
        for watcher in concerned:
            verdict = self.verdict(watcher.interest, change, members)
            if verdict == "notify":
                watcher.notify(change)
            elif verdict is not None:
                self.remove(watcher)
                watcher.end(verdict)

    def described(self, change: Change) -> Change:
        """The change with its summary: who acted, asked of the database as the actor. A change of a
        kind with no words, or one the actor can no longer read (they just left), goes without."""
        if change.action not in _WORDS or change.user_id is None:
            return change
        try:
            handle, anonymous = self.source.actor_facts(change)
            result = None
            told = RESULT[0] if RESULT else None
            if told is not None and change.action in _RESULTS and change.item_id is not None:
                # Every watcher told of it is a member of the studio, whose page shows this result.
                with self.source.reading(change.user_id) as tx:
                    result = told(tx, change)
        except Exception:  # a fault here costs the summary, not the notification
            log.warning("the change feed could not describe a change", exc_info=True)
            return change
        return replace(change, summary=summary(change.action, handle, anonymous, result))

    def members(self, change: Change, users: set[str]) -> dict[str, bool]:
        """Which of `users` are members of the change's studio: asked once for all of them (as the
        actor, who sees the studio's members); whoever that does not show is asked about alone, as
        themselves. All of it before anyone is told anything."""
        if change.studio_id is None:
            return {}
        members = dict.fromkeys(self.source.members_among(change.studio_id, users, change.user_id), True)
        for user_id in users - members.keys():
            members[user_id] = self.source.is_member(change.studio_id, user_id)
        return members

    def verdict(self, interest: Interest, change: Change, members: dict[str, bool] | None = None) -> str | None:
        """"notify", None (not this watcher's business after all), or why the watch ends. `members`
        remembers, for one change, who is a member of its studio."""
        if change.studio_id is None:  # one's own change outside studios (`may_concern` let only that by)
            return "notify" if interest.personal and change.user_id == interest.user_id else None
        member = None if members is None else members.get(interest.user_id)
        if member is None:
            member = self.source.is_member(change.studio_id, interest.user_id)
            if members is not None:
                members[interest.user_id] = member
        if interest.personal:
            if member and change.studio_id is not None:
                interest.studios.add(change.studio_id)
                return "notify"
            if change.studio_id in interest.studios:  # left or was removed: their own page changed
                interest.studios.discard(change.studio_id)
                return "notify"
            return None
        return "notify" if member else "you are no longer a member of this studio, so this page is gone for you"


class Source:
    """Where the feed reads changes: a base class, each store's source says how. A position is the
    source's own (a number, a snapshot); `token` and `parse` carry it as text."""

    def last(self) -> Any:
        """The position of now: what committed before it is not handed on."""
        raise NotImplementedError

    def wait(self, position: Any, stop: threading.Event) -> tuple[list[Change], Any]:
        """The changes committed after `position` (waiting a while for some), and the position
        after them. Raises on a database fault; the feed then calls `reset` and asks again."""
        raise NotImplementedError

    def since(self, position: Any, most: int) -> list[Change] | None:
        """The changes committed after `position` until now, or None if more than `most`."""
        raise NotImplementedError

    def token(self, position: Any) -> str:
        return str(position)

    def parse(self, token: str) -> Any:
        """The position a token names, or None for one this source did not make."""
        raise NotImplementedError

    def reset(self) -> None:
        """Drop the connection after a fault: the next call makes a new one."""
        self.close()

    def is_member(self, studio_id: str | None, user_id: str) -> bool:
        raise NotImplementedError

    def expired(self, after: str, until: str) -> list[tuple[str, str]]:
        """(held action id, studio id) of every hold still pending whose expiry is in (after, until]."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """Cut short a `wait` in progress (the feed is closing)."""

    def members_among(self, studio_id: str | None, user_ids: set[str], as_user: str | None) -> set[str]:
        """Those of `user_ids` whom `as_user` may see as members of `studio_id` (a subset of its
        members: the rest may be members too, which `is_member` tells)."""
        if studio_id is None or as_user is None:
            return set()
        found: set[str] = set()
        ids = sorted(user_ids)
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            found.update(self._members(studio_id, chunk, as_user,
                                       "SELECT user_id FROM memberships WHERE studio_id = ? AND user_id IN ("
                                       + ", ".join("?" * len(chunk)) + ")"))
        return found

    def _members(self, studio_id: str, chunk: list[str], as_user: str, sql: str) -> list[str]:
        raise NotImplementedError

    # The actor's handle, and whether the item is an anonymous decision (its ballots name nobody).
    _ACTOR_FACTS = ("SELECT u.handle AS handle, (SELECT i.anonymous FROM items i WHERE i.id = ?) AS anonymous"
                    " FROM users u WHERE u.id = ?")

    def actor_facts(self, change: Change) -> tuple[str | None, bool]:
        row = self._one(self._ACTOR_FACTS, (change.item_id, change.user_id), change.user_id)
        return (row[0], bool(row[1])) if row else (None, False)

    def _one(self, sql: str, params: tuple, as_user: str | None) -> tuple | None:
        raise NotImplementedError

    def reading(self, as_user: str | None) -> contextlib.AbstractContextManager[Any]:
        """A read transaction (a store's `Tx`) as `as_user`, for what describing a change reads."""
        raise NotImplementedError

    def close(self) -> None: ...


class SqliteSource(Source):
    """Changes in a SQLite file, read on a connection of the feed's own. Write transactions take
    turns, so a change numbered later also committed later: the position is the last number read."""

    def __init__(self, path):
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._inotify: int | None | bool = False  # False: not made yet

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10)
        return self._conn

    # Every query here is read to its end (fetchall): a statement left mid-result would hold its
    # snapshot open on this connection.
    def last(self) -> int:
        # On a connection of its own: the feed's may be in use on its thread, and a store's
        # connection may be inside a group whose writes are not committed yet.
        with contextlib.closing(sqlite3.connect(self.path, timeout=10)) as conn:
            return conn.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchall()[0][0]

    def parse(self, token: str) -> int | None:
        return int(token) if token.isdigit() and len(token) < 19 else None

    def since(self, position: int, most: int) -> list[Change] | None:
        with contextlib.closing(sqlite3.connect(self.path, timeout=10)) as conn:
            rows = self._read_after(position, most + 1, conn)
        return None if len(rows) > most else rows

    def is_member(self, studio_id: str | None, user_id: str) -> bool:
        return bool(self.conn.execute("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?",
                                      (studio_id, user_id)).fetchall())

    def _members(self, studio_id: str, chunk: list[str], as_user: str, sql: str) -> list[str]:
        return [row[0] for row in self.conn.execute(sql, (studio_id, *chunk)).fetchall()]

    def expired(self, after: str, until: str) -> list[tuple[str, str]]:
        return self.conn.execute("SELECT id, studio_id FROM held_actions WHERE status = 'pending' AND expires_at > ?"
                                 " AND expires_at <= ? ORDER BY expires_at, id", (after, until)).fetchall()

    def wait(self, position: int, stop: threading.Event) -> tuple[list[Change], int]:
        rows = self._wait(position, stop)
        return rows, rows[-1].seq if rows else position

    def _wait(self, after: int, stop: threading.Event) -> list[Change]:
        # Made before the first read below, so no commit after that read goes unseen; writes it told
        # of already are left to wake the loop below once more (their commit may not show yet).
        watch = self._watch()
        version = self.conn.execute("PRAGMA data_version").fetchall()[0][0]
        rows = self._after(after)  # what committed before `version` was read
        quiet_until = time.monotonic() + QUIET_SECONDS  # then back to the feed, to see whether anyone still watches
        hot_until, pause = 0.0, POLL_SECONDS
        while not rows and not stop.is_set():
            now = time.monotonic()
            if now >= quiet_until:
                break
            if watch is None:
                if stop.wait(POLL_SECONDS):
                    break
            else:  # asleep until a file beside the database is written
                hot = now < hot_until
                ready = select.select([watch, self._interrupted], [], [],
                                      min(pause, hot_until - now) if hot else quiet_until - now)[0]
                if self._interrupted in ready:
                    _drain(self._interrupted)
                    break
                if watch in ready:
                    # The WAL is written a moment before the commit shows in `data_version` (the
                    # shared-memory index comes after): look now, then again, sooner at first,
                    # for HOT_SECONDS.
                    _drain(watch)
                    hot_until, pause = time.monotonic() + HOT_SECONDS, 0.001
                elif hot:
                    pause = min(pause * 2, POLL_SECONDS)
                else:
                    break
            moved = self.conn.execute("PRAGMA data_version").fetchall()[0][0]
            if moved != version:
                version, rows = moved, self._after(after)
        return rows

    def _watch(self) -> int | None:
        """Linux: an inotify descriptor that is readable once a file in the database's directory was
        written (a commit writes the WAL), so an idle feed sleeps instead of polling. Elsewhere None:
        `data_version` is polled every POLL_SECONDS."""
        if self._inotify is False:
            fd = _inotify(os.path.dirname(os.path.abspath(self.path)))
            if fd is not None:
                self._interrupted, self._interrupt = os.pipe()
                os.set_blocking(self._interrupted, False)
            self._inotify = fd
        return self._inotify

    def interrupt(self) -> None:
        if self._inotify:
            os.write(self._interrupt, b"x")

    def _after(self, after: int) -> list[Change]:
        return self._read_after(after, BATCH)

    def _read_after(self, after: int, most: int, conn: sqlite3.Connection | None = None) -> list[Change]:
        rows = (conn or self.conn).execute("SELECT seq, studio_id, item_id, user_id, action FROM changes WHERE seq > ?"
                                           " ORDER BY seq LIMIT ?", (after, most)).fetchall()
        return [Change(seq, studio, item, user, str(seq), action) for seq, studio, item, user, action in rows]

    def _one(self, sql: str, params: tuple, as_user: str | None) -> tuple | None:
        return self.conn.execute(sql, params).fetchone()

    @contextlib.contextmanager
    def reading(self, as_user: str | None) -> Iterator[Any]:
        from navmcp.store.sqlite_tx import SqliteTx

        conn = self.conn  # the feed's own (the store's connections belong to other threads)
        conn.execute("BEGIN")
        try:
            cursor = conn.cursor()
            yield SqliteTx(conn, cursor)
            cursor.close()
        finally:
            conn.execute("ROLLBACK")  # only read

    def reset(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._inotify:
            for fd in (self._inotify, self._interrupted, self._interrupt):
                os.close(fd)
        self._inotify = False


IN_MODIFY, IN_CREATE = 0x2, 0x100  # <sys/inotify.h>


def _inotify(directory: str) -> int | None:
    """A non-blocking inotify descriptor watching the files of `directory` being written or made, or
    None where inotify is not to be had (not Linux, no libc through ctypes, out of watches)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(directory), IN_MODIFY | IN_CREATE) < 0:
        os.close(fd)
        return None
    return fd


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass


class PostgresSource(Source):
    """Changes announced by NOTIFY on a connection of the feed's own (`url`: a session-level one,
    not a transaction pooler's), read between two snapshots. A position is (since, upto, after):
    the snapshot last read with; the snapshot a round reads up to (None between rounds); and, in
    a round read in parts, the last number handed on."""

    CHANNEL = "navmcp_changes"
    APPLICATION = "navmcp-feed"  # its name in pg_stat_activity
    _BETWEEN = ("SELECT seq, studio_id, item_id, user_id, action FROM navmcp.changes_between_kinds("
                "%s::pg_snapshot, %s::pg_snapshot, %s, %s)")

    def __init__(self, url: str, store):
        self.url = url
        self.store = store  # whether a watcher is a member is asked as that watcher (row-level security)
        self._conn: Any = None
        self._fresh = False  # a new connection: read what may have come while there was none

    @property
    def conn(self):
        if self._conn is None or self._conn.closed:
            import psycopg

            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5, prepare_threshold=None,
                                         application_name=self.APPLICATION)
            self._conn.execute(f"LISTEN {self.CHANNEL}")
            self._fresh = True
        return self._conn

    def last(self) -> tuple[str, None, int]:
        # Through the pool: the feed's own connection may be waiting for notifications meanwhile.
        with self.store.read() as tx:
            return tx.scalar("SELECT navmcp.change_position()"), None, 0

    def token(self, position: tuple[str, str | None, int]) -> str:
        since, upto, after = position
        return f"{since}/{upto or ''}/{after}"

    def parse(self, token: str) -> tuple[str, str | None, int] | None:
        parts = token.split("/")
        if len(parts) != 3 or not all(_SNAPSHOT.fullmatch(p) for p in parts[:2] if p) or not parts[0] \
                or not parts[2].isdigit() or len(token) > 4000:
            return None
        return parts[0], parts[1] or None, int(parts[2])

    def is_member(self, studio_id: str | None, user_id: str) -> bool:
        with self.store.read(user_id=user_id) as tx:
            return tx.scalar("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?",
                             (studio_id, user_id)) is not None

    def _members(self, studio_id: str, chunk: list[str], as_user: str, sql: str) -> list[str]:
        with self.store.read(user_id=as_user) as tx:
            return [row["user_id"] for row in tx.all(sql, (studio_id, *chunk))]

    def expired(self, after: str, until: str) -> list[tuple[str, str]]:
        with self.store.read() as tx:  # ids only, past row-level security (migration 20261129000172)
            return [(r["id"], r["studio_id"]) for r in tx.all("SELECT * FROM navmcp.held_expired(?, ?)", (after, until))]

    def _one(self, sql: str, params: tuple, as_user: str | None) -> tuple | None:
        with self.store.read(user_id=as_user) as tx:  # as the actor: what they may read (row-level security)
            row = tx.one(sql, params)
        return None if row is None else tuple(row.values())

    def reading(self, as_user: str | None) -> contextlib.AbstractContextManager[Any]:
        return self.store.read(user_id=as_user)

    def wait(self, position: tuple[str, str | None, int],
             stop: threading.Event) -> tuple[list[Change], tuple[str, str | None, int]]:
        since, upto, after = position
        conn = self.conn
        if upto is None:  # between rounds: wait for a commit (a notification ends the wait at once)
            heard = self._fresh or any(True for _ in conn.notifies(timeout=QUIET_SECONDS, stop_after=1))
            self._fresh = False
            if not heard:
                return [], position
            upto = conn.execute("SELECT pg_current_snapshot()::text").fetchone()[0]
        rows = self._between(conn, since, upto, after, BATCH)
        changes = [Change(seq, studio, item, user, self.token((since, upto, seq)), action)
                   for seq, studio, item, user, action in rows]
        if len(rows) == BATCH:  # more to read in this round
            return changes, (since, upto, rows[-1][0])
        done = (upto, None, 0)  # the round is read: the next one starts from its snapshot
        if changes:
            changes[-1] = replace(changes[-1], position=self.token(done))
        return changes, done

    def since(self, position: tuple[str, str | None, int], most: int) -> list[Change] | None:
        since, upto, after = position
        import psycopg

        try:
            with self.store.read() as tx:
                conn = tx.conn
                now = conn.execute("SELECT pg_current_snapshot()::text AS s").fetchone()["s"]
                rows = (self._between(conn, since, upto, after, most + 1) if upto else []) \
                    + self._between(conn, upto or since, now, 0, most + 1)
        except psycopg.errors.DataError:  # a snapshot PostgreSQL does not read as one
            return None
        return None if len(rows) > most else [Change(seq, studio, item, user, "", action)
                                              for seq, studio, item, user, action in rows]

    def _between(self, conn, since: str, upto: str, after: int, most: int) -> list[tuple]:
        cursor = conn.cursor(row_factory=_tuples())
        return cursor.execute(self._BETWEEN, (since, upto, after, most)).fetchall()

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None


_SNAPSHOT = re.compile(r"[0-9]{1,20}:[0-9]{1,20}:[0-9,]{0,2000}")


def _tuples():
    from psycopg.rows import tuple_row

    return tuple_row
