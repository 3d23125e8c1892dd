"""Deadlines within a day: an inbox entry (`deadline`) for each person a decision awaits a vote from,
or a commitment awaits, once its deadline is less than SOON away — written once per item per
person, by a sweep, never when a page is read.

Awaited, as home says it: an open decision with something to vote on (options, or a consent
proposal) that the member has neither voted on nor answered; an open commitment short of its
critical mass that the member has not joined. A person's entry for an item is written once
(a unique index on the item and the person), so an entry read or dismissed does not come back and
a deadline extended into the window again tells nobody twice.

`sweep(store)` writes every entry due now, in one transaction, and notes each item it wrote about in
the change feed, so an agent watching `navmcp:///inbox` and a browser's unread badge hear of it. A
process serving people runs it every EVERY seconds (`Sweeper`: `navmcp web`); `navmcp due` runs it
once, for a stdio-only install's cron. On the hosted store the sweep is one SECURITY DEFINER
function (supabase/migrations/20261129000190_due.sql), as nobody may write another's entries.
"""

from __future__ import annotations

import logging
import secrets
import threading
from datetime import timedelta
from typing import TYPE_CHECKING

from navmcp.clock import from_now, now

if TYPE_CHECKING:
    from navmcp.store import Store

SOON = timedelta(hours=24)
EVERY = 300  # seconds between two sweeps of a serving process: an entry comes at most this late
ACTION = "deadline"  # the change feed's name for a sweep's change (no words: nobody acted)

log = logging.getLogger("navmcp.feeds.due")

# Who each open item with a deadline in (at, soon] awaits (what navmcp.note_deadlines does on the
# hosted store): members (accounts not deleted) without an entry of its deadline yet.
_DUE = """SELECT m.user_id, i.studio_id, i.id AS item_id, i.created_by
  FROM items i JOIN memberships m ON m.studio_id = i.studio_id JOIN users u ON u.id = m.user_id
 WHERE i.closed_at IS NULL AND i.deadline > ? AND i.deadline <= ? AND u.deleted_at IS NULL
   AND ((i.kind = 'decision' AND (i.option_count > 0 OR i.decision_kind = 'consent')
         AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = i.id AND v.user_id = m.user_id)
         AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.decision_id = i.id AND r.user_id = m.user_id))
     OR (i.kind = 'commitment' AND i.participant_count < i.critical_mass
         AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.commitment_id = i.id AND p.user_id = m.user_id)))
   AND NOT EXISTS (SELECT 1 FROM inbox e WHERE e.item_id = i.id AND e.user_id = m.user_id AND e.kind = 'deadline')
 ORDER BY i.id, m.user_id"""


def sweep(store: Store) -> int:
    """Write every deadline entry due now; returns how many were written."""
    at, soon = now(), from_now(SOON)
    if store.hosted:
        with store.write() as tx:
            return tx.scalar("SELECT navmcp.note_deadlines(?, ?)", (at, soon)) or 0
    with store.read() as tx:  # the usual sweep finds nothing: no write transaction for it
        if tx.one(_DUE + " LIMIT 1", (at, soon)) is None:
            return 0
    with store.write() as tx:
        due = tx.all(_DUE, (at, soon))
        for row in due:
            tx.execute("INSERT INTO inbox (id, user_id, kind, studio_id, item_id, client, created_at, updated_at)"
                       " VALUES (?, ?, 'deadline', ?, ?, '', ?, ?) ON CONFLICT DO NOTHING",
                       (secrets.token_hex(8), row["user_id"], row["studio_id"], row["item_id"], at, at))
        for item_id, row in {r["item_id"]: r for r in due}.items():
            tx.note_change(at, row["studio_id"], item_id, row["created_by"] or row["user_id"], ACTION)
        return len(due)


class Sweeper:
    """`sweep` every EVERY seconds on a thread of its own, from `start()` until `stop()`; a fault is
    logged and the next sweep tries again. The first sweep comes `first` seconds after the start
    (EVERY by default: an entry is at most that late either way), so a process that serves only
    briefly (the tests' in-process apps, whose store is closed under them) never sweeps at all;
    `stop()` waits for a sweep under way, so the store is not closed beneath it."""

    def __init__(self, store: Store, every: float = EVERY, first: float | None = None):
        self.store, self.every = store, every
        self.first = every if first is None else first
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="navmcp-due", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is None or self._thread is threading.current_thread():
            return
        # Until the sweep under way ends, however long: returning earlier (a join with a timeout, once
        # 10 s, as long as SQLite's wait for a lock) let the store be closed beneath it, a segfault.
        self._thread.join(timeout=10)
        while self._thread.is_alive():
            log.warning("stopping: waiting for the deadline sweep under way to end")
            self._thread.join(timeout=10)

    def _run(self) -> None:
        wait = self.first
        while not self._stop.wait(wait):
            try:
                sweep(self.store)
            except Exception:
                log.warning("the deadline sweep failed; it runs again in %s s", self.every, exc_info=True)
            wait = self.every
