"""Live pages for people: a page's URL asked for with `Accept: text/event-stream` (what a browser's
EventSource sends) is a stream of server-sent events that says when the page's facts change.

The stream carries no page content, only `changed` (read the page again), `inbox` (something
happened in the watcher's studios or to them: the app shell's unread badge reads `/inbox.json`
again; sent on a browser's streams, so a tab holds one stream, not one more for its badge), `gone` (you may no
longer see it, you signed out, or the server needed the stream's place: the stream ends, saying
why; `navmcp.web.streams`) and `bye` (the stream's time is up; EventSource reconnects by
itself). Every event's id is the change feed's position (`navmcp.feeds.changes`): EventSource sends the
last one back as `Last-Event-ID` when it reconnects, and the new stream begins with `changed` if the
page changed meanwhile. Whether a change concerns the page, and whether the watcher may still see it, is judged
by the change feed (`navmcp.feeds.changes`); the stream itself is an `sse.EventStream`.
"""

from __future__ import annotations

import json

from navmcp.feeds.changes import Interest, Watcher
from navmcp.web.sse import EventStream
from navmcp.web.standing import Standing
from navmcp.web.streams import Streams

INBOX = "event: inbox\ndata: \"/inbox.json\"\n\n"  # the unread badge: read /inbox.json again
BYE = "event: bye\ndata: \"reconnect to keep watching\"\n\n"  # after sse.STREAM_SECONDS; EventSource reconnects


def wants_events(method: str, accept: str | None) -> bool:
    return method == "GET" and accept is not None and accept.split(",", 1)[0].strip().lower() == "text/event-stream"


def open_stream(app, streams: Streams, held_by: Standing, url: str, wanted: Interest,
                last_event_id: str | None = None, badge: Interest | None = None) -> EventStream | str:
    """The stream of `url`'s changes as `held_by`'s user sees the page (already shown to be
    visible), lasting as long as `held_by` holds (`streams`); or why it can't open (too many open).
    Every event carries the change feed's position as its id; a stream opened again with that id
    (`Last-Event-ID`, which EventSource sends when it reconnects by itself) begins with `changed`
    if the page changed meanwhile. `badge`: the user's own interest (their studios), told as
    `inbox` events on the same stream; it never ends the stream."""

    def gone(reason: str) -> None:
        remove()
        stream.put("event: gone\ndata: " + json.dumps(reason) + "\n\n", last=True)

    def remove() -> None:
        app.feed.remove(watcher)
        if unread is not None:
            app.feed.remove(unread)

    def closed() -> None:
        remove()
        streams.release(slot)

    stream = EventStream(on_close=closed, on_timeout=lambda: stream.put(BYE, last=True))
    watcher = Watcher(wanted, lambda change: streams.tell(slot, lambda: stream.put(f"id: {change.position}\n" + changed)),
                      gone)
    changed = "event: changed\ndata: " + json.dumps(url) + "\n\n"
    unread = None if badge is None else Watcher(
        badge, lambda change: streams.tell(slot, lambda: stream.put(f"id: {change.position}\n" + INBOX)),
        lambda reason: None)
    admitted = streams.admit(held_by, gone)
    if isinstance(admitted, str):
        return admitted
    slot = admitted
    try:
        app.feed.add(watcher)
        if unread is not None:
            app.feed.add(unread)
        position = app.feed.position()
        missed = bool(last_event_id) and app.feed.missed(last_event_id, wanted)
    except BaseException:
        closed()
        raise
    stream.put(f"retry: 3000\nid: {position}\n: watching " + json.dumps(url) + "\n\n")
    if missed:
        streams.tell(slot, lambda: stream.put(f"id: {position}\n" + changed))
    return stream
