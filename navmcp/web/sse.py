"""Server-sent event streams: an answer whose body is written as events come, until the last one.

An `EventStream` is handed events by any thread (`put`: the change feed's, a worker's) and written
by the event loop (`run`): one small object, a future and a timer per stream, not a thread. A comment every
`heartbeat` seconds keeps proxies from closing a quiet stream; after `lasts` seconds `on_timeout`
is asked for the closing event; when the stream ends, however it ends, `on_close` runs once.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable

HEARTBEAT_SECONDS = 15.0
STREAM_SECONDS = 30 * 60.0
CLOSING_GRACE = 2.0  # after `on_timeout`, how long the closing event may take to come


_running: set[EventStream] = set()  # streams being written, on the event loop's thread


def on_grid(when: float, period: float) -> float:
    """`when` moved later to the next tick of a grid of at most a second (a tenth of `period` when
    that is finer): timers of many connections then fall due together and wake the loop once,
    not once each."""
    tick = min(1.0, period / 10)
    return math.ceil(when / tick) * tick


def open_streams() -> int:
    """How many streams are being written now (`connections.StreamsApart` leaves them out of uvicorn's limit)."""
    return len(_running)


def end_all() -> None:
    """End every running stream as its time limit would (the server is stopping). On the loop's thread."""
    for stream in list(_running):
        stream._end_soon()


class EventStream:
    status = 200

    def __init__(self, *, on_close: Callable[[], None] | None = None,
                 on_timeout: Callable[[], None] | None = None,
                 heartbeat: float = HEARTBEAT_SECONDS, lasts: float = STREAM_SECONDS):
        self.on_close, self.on_timeout = on_close, on_timeout
        self.heartbeat, self.lasts = heartbeat, lasts
        self._lock = threading.Lock()
        self._pending: list[tuple[str, bool]] = []  # put and not yet written (some before `run` started)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future | None = None  # the writer sleeps on it, woken by `put` or its timer
        self._woken = False  # a wake-up is on its way to the loop: no other is needed
        self._closed = False
        self._ends = 0.0

    def put(self, text: str, last: bool = False) -> None:
        """One event's text (its `event:`/`data:` lines and the blank line); `last` ends the stream."""
        with self._lock:
            if self._closed:
                return
            self._pending.append((text, last))
            if self._loop is None or self._woken:  # `run` will see it
                return
            self._woken, loop = True, self._loop
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop has closed: the stream is gone
            pass

    def _wake(self, beat: bool = False) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(beat)

    async def run(self, send, receive, headers: list[tuple[bytes, bytes]]) -> None:
        """Write the stream until its last event, its time limit, or the client's leaving. A burst
        of events is written at once, and waiting costs one future and one timer, so that a
        process can hold thousands of quiet streams."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._loop = loop
        disconnected = asyncio.ensure_future(_disconnect(receive))
        disconnected.add_done_callback(lambda _: self._wake())
        self._ends = time.monotonic() + self.lasts
        timed_out = False
        _running.add(self)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store"),
                (b"x-accel-buffering", b"no"), *headers]})
            beat = False
            while not disconnected.done():
                with self._lock:
                    batch, self._pending, self._woken = self._pending, [], False
                if batch:
                    beat = False
                    ends = next((n + 1 for n, (_, last) in enumerate(batch) if last), None)
                    await _write(send, "".join(text for text, _ in batch[:ends]), more=ends is None)
                    if ends is not None:
                        return
                    continue
                left = self._ends - time.monotonic()
                if left <= 0:
                    if timed_out or self.on_timeout is None:
                        break  # no closing event came in its grace time, or none is owed
                    timed_out = True
                    self._ends = time.monotonic() + CLOSING_GRACE
                    self.on_timeout()  # puts the closing event
                    continue
                if beat:  # then look again: events may have come while it was written
                    beat = False
                    await _write(send, ": heartbeat\n\n")
                    continue
                self._waiter = loop.create_future()
                timer = loop.call_at(on_grid(loop.time() + min(self.heartbeat, max(left, 0.05)), self.heartbeat),
                                     self._wake, True)
                try:
                    beat = await self._waiter
                finally:
                    timer.cancel()
                    self._waiter = None
                beat = beat and not disconnected.done() and self._ends - time.monotonic() > 0
            if not disconnected.done():
                await _write(send, "", more=False)
        except OSError:  # the client went away mid-write
            pass
        finally:
            _running.discard(self)
            disconnected.cancel()
            with self._lock:
                self._closed = True  # later events have nowhere to go
            if self.on_close is not None:
                self.on_close()

    def _end_soon(self) -> None:
        """On the loop's thread: end the stream as its time limit would."""
        self._ends = 0.0
        self._wake()


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _write(send, text: str, *, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": text.encode(), "more_body": more})
