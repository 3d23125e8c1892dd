"""Server-sent event streams: an answer whose body is written as events come, until the last one.

An `EventStream` is handed events by any thread (`put`: the change feed's, a worker's) and written
by the event loop (`run`): one small object and a queue per stream, not a thread. A comment every
`heartbeat` seconds keeps proxies from closing a quiet stream; after `lasts` seconds `on_timeout`
is asked for the closing event; when the stream ends, however it ends, `on_close` runs once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

HEARTBEAT_SECONDS = 15.0
STREAM_SECONDS = 30 * 60.0
CLOSING_GRACE = 2.0  # after `on_timeout`, how long the closing event may take to come


_running: set["EventStream"] = set()  # streams being written, on the event loop's thread


def open_streams() -> int:
    """How many streams are being written now (`server.StreamsApart` leaves them out of uvicorn's limit)."""
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
        self._early: list[tuple[str, bool]] = []  # put before `run` started (an acknowledgement)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[str, bool]] | None = None
        self._closed = False

    def put(self, text: str, last: bool = False) -> None:
        """One event's text (its `event:`/`data:` lines and the blank line); `last` ends the stream."""
        with self._lock:
            if self._closed:
                return
            if self._loop is None:
                self._early.append((text, last))
                return
            loop, queue = self._loop, self._queue
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (text, last))
        except RuntimeError:  # the loop has closed: the stream is gone
            pass

    async def run(self, send, receive, headers: list[tuple[bytes, bytes]]) -> None:
        queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
        with self._lock:
            self._loop, self._queue = asyncio.get_running_loop(), queue
            for early in self._early:
                queue.put_nowait(early)
            self._early.clear()
        disconnected = asyncio.ensure_future(_disconnect(receive))
        self._ends = time.monotonic() + self.lasts
        timed_out = False
        _running.add(self)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store"),
                (b"x-accel-buffering", b"no"), *headers]})
            while not disconnected.done():
                left = self._ends - time.monotonic()
                if left <= 0:
                    if timed_out or self.on_timeout is None:
                        break  # no closing event came in its grace time, or none is owed
                    timed_out = True
                    self._ends = time.monotonic() + CLOSING_GRACE
                    self.on_timeout()  # puts the closing event
                    continue
                got = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({got, disconnected}, timeout=min(self.heartbeat, max(left, 0.05)),
                                             return_when=asyncio.FIRST_COMPLETED)
                if got not in done:
                    got.cancel()
                    if not disconnected.done():
                        await _write(send, ": heartbeat\n\n")
                    continue
                text, last = got.result()
                await _write(send, text, more=not last)
                if last:
                    return
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
        self._ends = 0.0
        if self._queue is not None:
            self._queue.put_nowait(("", False))  # wakes the writer, which then ends the stream


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _write(send, text: str, *, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": text.encode(), "more_body": more})
