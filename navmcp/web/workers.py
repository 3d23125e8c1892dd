"""Where a request is handled: on the event loop, or in a worker thread.

Workspace calls are synchronous. On the embedded store they run on the event loop, where its calls
take well under a millisecond. On the hosted store every call is a network round trip, so each
request is handled in a worker thread (as many as the store's connection pool has connections;
`NAVMCP_WEB_THREADS` overrides, 0 keeps them on the loop). Costly requests (a batch, a search, a cycle page) are
handled in COSTLY_THREADS threads of their own on either store, each thread with its own
connection (SQLite in WAL mode lets them read beside the loop's connection), so however many a
client sends, the event loop (hence /healthz and every request on the embedded store) and the
hosted store's other worker threads stay free for everyone else.

The body is read on the loop first; after that no handler awaits anything that can suspend
(`Request.body()` and `form()` answer from the cached bytes), so its coroutine runs to completion
in the thread with a plain send(None).

The threads are fair (`FairPool`): each request waits in the queue of whoever sent it
(`Site.who`), and the threads take one request from each waiting queue in turn, so one user's
flood delays another user's request by at most the requests already running plus one of each
other waiting user's, never by the length of the flood. And one sender never runs on every thread
of a pool (of two or more): a thread stays free for whoever comes next, who would otherwise wait
for a costly request already running (0.5–1.4 s for a search on a 100k-item studio).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navmcp.app import App

COSTLY_THREADS = 2  # threads for costly requests (NAVMCP_WEB_COSTLY_THREADS; 0: none, they run as others do)


class FairPool:
    """Worker threads serving per-sender queues in turn (round robin): a sender's next job waits
    behind one job of each other sender with work waiting, not behind everything sent before it.
    A sender runs at most `share` jobs at once (all threads but one, or the one): a job already
    running cannot be stopped, so the room another sender finds at once is the room kept for them."""

    def __init__(self, threads: int, name: str):
        self.share = max(1, threads - 1)
        self._queues: dict[str, deque[tuple[Future, Callable[..., Any], tuple]]] = {}
        self._turns: deque[str] = deque()  # senders with jobs waiting, in the order they are served
        self._running: dict[str, int] = {}  # sender -> jobs of theirs running now
        self._ready = threading.Condition()
        self._closing = False
        self._threads = [threading.Thread(target=self._serve, name=f"{name}_{n}", daemon=True) for n in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, sender: str, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        with self._ready:
            if self._closing:
                raise RuntimeError("the worker threads have stopped")
            queue = self._queues.get(sender)
            if queue is None:
                queue = self._queues[sender] = deque()
                self._turns.append(sender)
            queue.append((future, fn, args))
            self._ready.notify()
        return future

    def _next(self) -> tuple[str, tuple[Future, Callable[..., Any], tuple]] | None:
        with self._ready:
            while (sender := self._first_with_room()) is None:
                if self._closing and not self._turns:
                    return None
                self._ready.wait()
            self._turns.remove(sender)
            queue = self._queues[sender]
            job = queue.popleft()
            if queue:
                self._turns.append(sender)  # its next job waits for everyone else's turn
            else:
                del self._queues[sender]
            self._running[sender] = self._running.get(sender, 0) + 1
            return sender, job

    def _first_with_room(self) -> str | None:
        """The first sender in turn who runs fewer than `share` jobs (the lock held)."""
        return next((s for s in self._turns if self._running.get(s, 0) < self.share), None)

    def _done(self, sender: str) -> None:
        with self._ready:
            left = self._running[sender] - 1
            if left:
                self._running[sender] = left
            else:
                del self._running[sender]
            self._ready.notify()  # a job of this sender's may wait for this thread

    def _serve(self) -> None:
        while (taken := self._next()) is not None:
            sender, (future, fn, args) = taken
            try:
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(*args))
                except BaseException as e:  # handed to whoever awaits the future
                    future.set_exception(e)
            finally:
                self._done(sender)

    def shutdown(self, wait: bool = True) -> None:
        """Stop once the jobs waiting are done."""
        with self._ready:
            self._closing = True
            self._ready.notify_all()
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()


class Workers:
    def __init__(self) -> None:
        self.executor: FairPool | None = None  # the hosted store's worker threads
        self.costly: FairPool | None = None  # threads for costly requests (both stores)
        self.offload: bool | None = None  # whether every request goes to a thread; decided by `start`

    def start(self, app: App) -> None:
        """Start the threads for costly requests and, on a thread-safe hosted store, the worker
        threads. Called once, on the loop, after what the handlers share was made (`app.store`
        included), so that no two threads race to make it."""
        store = app.store
        costly = _threads("NAVMCP_WEB_COSTLY_THREADS", COSTLY_THREADS)
        if costly > 0:
            self.costly = FairPool(costly, "navmcp-costly")
        self.offload = False
        if not getattr(store, "hosted", False):
            return
        threads = _threads("NAVMCP_WEB_THREADS", getattr(getattr(store, "pool", None), "max_size", 4))
        if threads <= 0:
            return
        self.executor = FairPool(threads, "navmcp-web")
        self.offload = True

    def pool(self, costly: bool) -> FairPool | None:
        """The threads a request is handled in (None: the event loop)."""
        return self.costly if self.costly is not None and costly else self.executor

    async def run(self, pool: FairPool, sender: str, handling: Coroutine[Any, Any, Any]) -> Any:
        """`handling`'s value, computed in a thread of `pool` in `sender`'s turn. The request's body
        must have been read."""
        return await self.call(pool, sender, _run_to_completion, handling)

    @staticmethod
    async def call(pool: FairPool, sender: str, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)`, computed in a thread of `pool` in `sender`'s turn."""
        return await asyncio.wrap_future(pool.submit(sender, fn, *args))

    def shutdown(self) -> None:
        for pool in (self.executor, self.costly):
            if pool is not None:
                pool.shutdown(wait=True)


def _threads(variable: str, default: int) -> int:
    configured = os.environ.get(variable, "").strip()
    return int(configured) if configured.isascii() and configured.isdigit() else default


def _run_to_completion(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends and return its value."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a request handler waited on the event loop from a worker thread")
