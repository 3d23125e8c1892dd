"""Where a request is handled: on the event loop, or in a worker thread.

Workspace calls are synchronous. On the embedded store they run on the event loop, where its calls
take well under a millisecond. On the hosted store every call is a network round trip, so each
request is handled in a worker thread (as many as the store's connection pool has connections;
`NAVMCP_WEB_THREADS` overrides, 0 keeps them on the loop). Costly requests (a batch, a search) are
handled in COSTLY_THREADS threads of their own on either store, each thread with its own
connection (SQLite in WAL mode lets them read beside the loop's connection), so however many a
client sends, the event loop (hence /healthz and every request on the embedded store) and the
hosted store's other worker threads stay free for everyone else.

The body is read on the loop first; after that no handler awaits anything that can suspend
(`Request.body()` and `form()` answer from the cached bytes), so its coroutine runs to completion
in the thread with a plain send(None).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navmcp.app import App

COSTLY_THREADS = 2  # threads for costly requests (NAVMCP_WEB_COSTLY_THREADS; 0: none, they run as others do)


class Workers:
    def __init__(self) -> None:
        self.executor: ThreadPoolExecutor | None = None  # the hosted store's worker threads
        self.costly: ThreadPoolExecutor | None = None  # threads for costly requests (both stores)
        self.offload: bool | None = None  # whether every request goes to a thread; decided by `start`

    def start(self, app: App) -> None:
        """Start the threads for costly requests and, on a thread-safe hosted store, the worker
        threads. Called once, on the loop, after what the handlers share was made (`app.store`
        included), so that no two threads race to make it."""
        store = app.store
        costly = _threads("NAVMCP_WEB_COSTLY_THREADS", COSTLY_THREADS)
        if costly > 0:
            self.costly = ThreadPoolExecutor(max_workers=costly, thread_name_prefix="navmcp-costly")
        self.offload = False
        if not getattr(store, "hosted", False):
            return
        threads = _threads("NAVMCP_WEB_THREADS", getattr(getattr(store, "pool", None), "max_size", 4))
        if threads <= 0:
            return
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="navmcp-web")
        self.offload = True

    def pool(self, costly: bool) -> ThreadPoolExecutor | None:
        """The threads a request is handled in (None: the event loop)."""
        return self.costly if self.costly is not None and costly else self.executor

    async def run(self, pool: ThreadPoolExecutor, handling: Coroutine[Any, Any, Any]) -> Any:
        """`handling`'s value, computed in a thread of `pool`. The request's body must have been read."""
        return await asyncio.get_running_loop().run_in_executor(pool, _run_to_completion, handling)

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
