"""The open event streams of one web process (live pages and `/mcp`'s `subscriptions/listen`): the
slots they hold, shared fairly among users, and each one's standing kept checked.

Slots: at most MAX_PER_USER streams per user and MAX_STREAMS per process. When the process is full,
a user holding fewer than their fair share (MAX_STREAMS over the users holding streams, the newcomer
counted) still gets one: the stream that has been idle longest (no event sent) of the user holding
the most is ended to make room, with a reason. A user at or over their share is refused (429).
So however many accounts open streams, each gets about an equal share, and nobody's first stream
is ever refused while another holds more than a share.

Standing: a stream lasts as long as what its opener showed (`standing.Standing`: their cookie
session, OAuth grant, token). A thread of the registry's own, running while streams are open,
asks the database every SWEEP_SECONDS which standings have ended (on any process: signed out,
app revoked) and ends those streams with why. A change is told to a stream only after its standing
was read live *after* the change was handed over (`tell`), so a person who signed out or revoked an
app is told nothing more, whichever process their stream is on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from navmcp.store import Store
from navmcp.web import standing
from navmcp.web.standing import Standing

log = logging.getLogger("navmcp.web")

MAX_PER_USER = 20  # open streams per user (tabs, devices, agents)
MAX_STREAMS = 2000  # open streams per process
SWEEP_SECONDS = 2.0  # how often every open stream's standing is read again
MADE_ROOM = ("this server is full and needed this stream's place for someone with fewer open; "
             "close other tabs or subscriptions and reload to watch again")


@dataclass(eq=False)
class Slot:
    """One open stream's place. `end(reason)` ends the stream (from any thread; it must not block)."""

    standing: Standing
    end: Callable[[str], None]
    active: float = field(default_factory=time.monotonic)  # when it last had an event (or opened)
    ended: str | None = None  # why the registry ended it, once it did

    def finish(self, reason: str) -> None:
        self.ended = reason
        self.end(reason)

    @property
    def user_id(self) -> str:
        return self.standing.user_id


class Streams:
    """The open streams of one process. Thread-safe. `store()`: where standings are read (None: they
    are not checked, and changes are told at once)."""

    def __init__(self, store: Callable[[], Store] | None = None) -> None:
        self.store = store
        self._held: dict[str, list[Slot]] = {}  # user id → their slots, in the order they opened
        self._lock = threading.Lock()
        self._told: list[tuple[Slot, Callable[[], None]]] = []  # changes waiting for a standing check
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._swept = 0.0  # when every standing was last read (monotonic)

    @property
    def total(self) -> int:
        return sum(len(slots) for slots in self._held.values())

    def held(self, user_id: str) -> int:
        return len(self._held.get(user_id, ()))

    def admit(self, held_by: Standing, end: Callable[[str], None]) -> Slot | str:
        """A slot for one more stream of `held_by`'s user, or why not (the process is full and they
        hold their share, or they hold MAX_PER_USER). May end another user's idle stream to make room."""
        user_id = held_by.user_id
        evicted = None
        with self._lock:
            mine = self._held.get(user_id, [])
            if len(mine) >= MAX_PER_USER:
                return f"you have {MAX_PER_USER} live pages and subscriptions open, the limit; close some tabs"
            if self.total >= MAX_STREAMS:
                share = MAX_STREAMS // (len(self._held) + (0 if mine else 1))
                if len(mine) >= share:
                    return (f"this server has {MAX_STREAMS} live pages and subscriptions open, its limit, and you "
                            f"hold {len(mine)} of them, your share; try again later")
                most = max(self._held.values(), key=len)
                evicted = min(most, key=lambda s: s.active)
                self._drop(evicted)
            slot = Slot(held_by, end)
            self._held.setdefault(user_id, []).append(slot)
            if self.store is not None and self._thread is None:
                self._swept = time.monotonic()
                self._thread = threading.Thread(target=self._run, name="navmcp-streams", daemon=True)
                self._thread.start()
        if evicted is not None:
            evicted.finish(MADE_ROOM)
        return slot

    def release(self, slot: Slot) -> None:
        """The stream ended (however it ended): its place is free. Releasing twice is harmless."""
        with self._lock:
            self._drop(slot)

    def _drop(self, slot: Slot) -> None:
        slots = self._held.get(slot.user_id)
        if slots is not None and slot in slots:
            slots.remove(slot)
            if not slots:
                del self._held[slot.user_id]

    def tell(self, slot: Slot, deliver: Callable[[], None]) -> None:
        """Hand a change to `slot`'s stream: `deliver()` runs once its standing was read live after
        now (at once when standings are not checked). Never blocks: the change feed's thread calls it."""
        with self._lock:
            slot.active = time.monotonic()
            if self.store is None:
                pass
            elif slot in self._held.get(slot.user_id, ()):
                self._told.append((slot, deliver))
                self._wake.set()
                return
            else:
                return  # ended already
        deliver()

    def _run(self) -> None:
        while True:
            self._wake.wait(SWEEP_SECONDS)
            self._wake.clear()
            with self._lock:
                told, self._told = self._told, []
                if not self._held and not told:
                    self._thread = None
                    return
                due = time.monotonic() - self._swept >= SWEEP_SECONDS
                if due:
                    self._swept = time.monotonic()
                    checked = [s for slots in self._held.values() for s in slots]
                else:
                    checked = list({id(s): s for s, _ in told}.values())
            try:
                assert self.store is not None
                gone = standing.ended(self.store(), {s.standing for s in checked})
            except Exception:  # the database is away: tell what was told, and look again later
                log.warning("could not read the standing of open streams", exc_info=True)
                gone = {}
            for slot in checked:
                reason = gone.get(slot.standing)
                if reason is not None:
                    self.release(slot)
                    slot.finish(reason)
            for slot, deliver in told:
                if slot.standing not in gone:
                    deliver()
