"""How `navmcp web` runs uvicorn so slow or stalled clients cannot hold the server.

uvicorn (h11) serves every connection on one event loop, so a stalled client never blocks the
others by itself; what it can do is hold a connection (and a slot of `limit_concurrency`) forever:
uvicorn arms no timer while a request head arrives, and its keep-alive timer is reset by every
byte, so a client sending its headers one byte at a time (slowloris) stays connected. Here:

- `HeadTimeoutH11`: a request head must arrive whole within HEAD_TIMEOUT seconds of the
  connection opening or of the previous response, otherwise the connection is closed; a client
  that reads nothing of its answer for a whole HEAD_TIMEOUT period is disconnected;
- request bodies must arrive whole within `navmcp.web.app.BODY_TIMEOUT` seconds (else 408);
- idle keep-alive connections close after KEEP_ALIVE seconds; at most MAX_CONNECTIONS
  connections and requests at once (more are answered 503 by uvicorn), a listen backlog, and
  h11's bound on an incomplete request head (16 KiB).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT = 10.0  # seconds for a whole request head
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open
MAX_CONNECTIONS = 1000  # uvicorn's limit_concurrency (connections + running requests)
BACKLOG = 2048
MAX_HEAD = 16 * 1024


class HeadTimeoutH11(H11Protocol):
    """h11 with one more timer, checked every `head_timeout` seconds while the connection lives:
    idle without a whole request head → closed; an answer the client does not read (the write
    buffer did not shrink over a whole period) → aborted, which also frees a handler waiting to
    write; a request being served (its body has its own deadline) → checked again later."""

    head_timeout = HEAD_TIMEOUT

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm(self, pending: float = float("inf")) -> None:
        self._cancel_head_timer()
        self._pending = pending
        if not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        pending = self.transport.get_write_buffer_size()
        if pending and pending >= self._pending:  # nothing of our answer was read in a whole period
            self.transport.abort()
            return
        busy = self.cycle is not None and not self.cycle.response_complete
        if busy or pending:
            self._arm(pending)
            return
        self.transport.close()  # no whole request head in time


def run(asgi_app: Any, host: str, port: int) -> None:
    import os

    import uvicorn

    configured = os.environ.get("NAVMCP_WEB_HEAD_TIMEOUT", "")  # tests shorten it
    HeadTimeoutH11.head_timeout = float(configured) if configured.replace(".", "", 1).isdigit() else HEAD_TIMEOUT

    uvicorn.run(asgi_app, host=host, port=port, log_level="warning", access_log=False, server_header=False,
                http=HeadTimeoutH11, timeout_keep_alive=KEEP_ALIVE, limit_concurrency=MAX_CONNECTIONS,
                backlog=BACKLOG, h11_max_incomplete_event_size=MAX_HEAD)
