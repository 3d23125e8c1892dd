"""Live pages for people: a page's URL asked for with `Accept: text/event-stream` (what a browser's
EventSource sends) is a stream of server-sent events that says when the page's facts change.

The stream carries no page content, only `changed` (read the page again), `gone` (you may no
longer see it; the stream ends) and `bye` (the stream's time is up; EventSource reconnects by
itself). Every event's id is the change feed's position (`navmcp.changes`): EventSource sends the
last one back as `Last-Event-ID` when it reconnects, and the new stream begins with `changed` if the
page changed meanwhile. Whether a change concerns the page, and whether the watcher may still see it, is judged
by the change feed (`navmcp.changes`); the stream itself is an `sse.EventStream`.
"""

from __future__ import annotations

import json
import threading

from navmcp.changes import Interest, Watcher
from navmcp.web.sse import EventStream

# Open event streams (live pages and /mcp's subscriptions/listen alike), bounded here rather than by
# uvicorn's connection limit, which leaves them out (`server.StreamsApart`).
MAX_PER_USER = 20  # open streams per user (tabs, devices, agents)
MAX_STREAMS = 2000  # open streams per process
BYE = "event: bye\ndata: \"reconnect to keep watching\"\n\n"  # after sse.STREAM_SECONDS; EventSource reconnects


def wants_events(method: str, accept: str | None) -> bool:
    return method == "GET" and accept is not None and accept.split(",", 1)[0].strip().lower() == "text/event-stream"


class Streams:
    """The open streams of one web process, counted per user to bound them. Thread-safe: /mcp may
    open one on a worker thread."""

    def __init__(self) -> None:
        self.per_user: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return sum(self.per_user.values())

    def admit(self, user_id: str) -> str | None:
        """None when one more stream may open for `user_id` (and it is counted), else why not."""
        with self._lock:
            if self.total >= MAX_STREAMS:
                return f"this server has {MAX_STREAMS} live pages and subscriptions open, its limit; try again later"
            if self.per_user.get(user_id, 0) >= MAX_PER_USER:
                return f"you have {MAX_PER_USER} live pages and subscriptions open, the limit; close some tabs"
            self.per_user[user_id] = self.per_user.get(user_id, 0) + 1
            return None

    def release(self, user_id: str) -> None:
        with self._lock:
            left = self.per_user.get(user_id, 0) - 1
            if left > 0:
                self.per_user[user_id] = left
            else:
                self.per_user.pop(user_id, None)


def open_stream(app, streams: Streams, user_id: str, url: str, wanted: Interest,
                last_event_id: str | None = None) -> EventStream | str:
    """The stream of `url`'s changes as `user_id` sees the page (already shown to be visible), or
    why it can't open (too many open). Every event carries the change feed's position as its id;
    a stream opened again with that id (`Last-Event-ID`, which EventSource sends when it
    reconnects by itself) begins with `changed` if the page changed meanwhile."""
    full = streams.admit(user_id)
    if full:
        return full

    def closed() -> None:
        app.feed.remove(watcher)
        streams.release(user_id)

    stream = EventStream(on_close=closed, on_timeout=lambda: stream.put(BYE, last=True))
    watcher = Watcher(wanted, lambda change: stream.put(f"id: {change.position}\n" + changed),
                      lambda reason: stream.put("event: gone\ndata: " + json.dumps(reason) + "\n\n", last=True))
    changed = "event: changed\ndata: " + json.dumps(url) + "\n\n"
    try:
        app.feed.add(watcher)
        position = app.feed.position()
        missed = bool(last_event_id) and app.feed.missed(last_event_id, wanted)
    except BaseException:
        closed()
        raise
    stream.put(f"retry: 3000\nid: {position}\n: watching " + json.dumps(url) + "\n\n")
    if missed:
        stream.put(f"id: {position}\n" + changed)
    return stream
