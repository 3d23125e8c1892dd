"""Live pages for people: a page's URL asked for with `Accept: text/event-stream` (what a browser's
EventSource sends) is a stream of server-sent events that says when the page's facts change.

The stream carries no page content, only `changed` (read the page again), `gone` (you may no
longer see it; the stream ends) and `bye` (the stream's time is up; EventSource reconnects by
itself). Whether a change concerns the page, and whether the watcher may still see it, is judged
by the change feed (`navmcp.changes`). A stream is one small object and a queue on the event loop,
not a thread; comments every HEARTBEAT_SECONDS keep proxies from closing it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from navmcp.changes import Interest, Watcher

log = logging.getLogger("navmcp.web.live")

HEARTBEAT_SECONDS = 15.0
STREAM_SECONDS = 30 * 60.0  # then `bye`: a browser reconnects, and a forgotten tab costs nothing for long
MAX_PER_USER = 20  # open streams per user (tabs and devices)
MAX_STREAMS = 2000  # open streams per process
COALESCE_SECONDS = 0.05  # changes that come together are one `changed`


def wants_events(method: str, accept: str | None) -> bool:
    return method == "GET" and accept is not None and accept.split(",", 1)[0].strip().lower() == "text/event-stream"


class Streams:
    """The open streams of one web process, counted per user to bound them."""

    def __init__(self) -> None:
        self.per_user: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.per_user.values())

    def admit(self, user_id: str) -> str | None:
        """None when one more stream may open for `user_id` (and it is counted), else why not."""
        if self.total >= MAX_STREAMS:
            return f"this server has {MAX_STREAMS} live pages open, its limit; reload the page later"
        if self.per_user.get(user_id, 0) >= MAX_PER_USER:
            return f"you have {MAX_PER_USER} live pages open, the limit; close some tabs"
        self.per_user[user_id] = self.per_user.get(user_id, 0) + 1
        return None

    def release(self, user_id: str) -> None:
        left = self.per_user.get(user_id, 0) - 1
        if left > 0:
            self.per_user[user_id] = left
        else:
            self.per_user.pop(user_id, None)


async def stream(app, streams: Streams, user_id: str, url: str, wanted: Interest, receive, send,
                 headers: list[tuple[bytes, bytes]]) -> str | None:
    """Stream the changes of `url`'s page as `user_id` sees it (already shown to be visible), until
    the client goes away, the page is gone for them, or STREAM_SECONDS pass. Returns why not, if
    the stream can't be opened (too many open)."""
    full = streams.admit(user_id)
    if full:
        return full
    loop = asyncio.get_running_loop()
    news: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def tell(kind: str, text: str) -> None:  # on the feed's thread
        loop.call_soon_threadsafe(news.put_nowait, (kind, text))

    watcher = Watcher(wanted, lambda change: tell("changed", url), lambda reason: tell("gone", reason))
    app.feed.add(watcher)
    disconnected = asyncio.ensure_future(_disconnect(receive))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"), *headers]})
        await _event(send, "retry: 3000\n: watching " + json.dumps(url) + "\n\n")
        ends = time.monotonic() + STREAM_SECONDS
        while not disconnected.done():
            left = ends - time.monotonic()
            if left <= 0:
                await _event(send, "event: bye\ndata: reconnect to keep watching\n\n", more=False)
                return None
            got = asyncio.ensure_future(news.get())
            done, _ = await asyncio.wait({got, disconnected}, timeout=min(HEARTBEAT_SECONDS, left),
                                         return_when=asyncio.FIRST_COMPLETED)
            if got not in done:
                got.cancel()
                if not disconnected.done():
                    await _event(send, ": heartbeat\n\n")
                continue
            kind, text = got.result()
            if kind == "changed":
                await asyncio.sleep(COALESCE_SECONDS)
                while kind == "changed" and not news.empty():  # what came meanwhile is this one event
                    kind, text = news.get_nowait()
            if kind == "gone":
                await _event(send, "event: gone\ndata: " + json.dumps(text) + "\n\n", more=False)
                return None
            await _event(send, "event: changed\ndata: " + json.dumps(url) + "\n\n")
    except OSError:  # the client went away mid-write
        pass
    finally:
        app.feed.remove(watcher)
        streams.release(user_id)
        disconnected.cancel()
    return None


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _event(send, text: str, *, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": text.encode(), "more_body": more})
