"""How `navmcp web` runs uvicorn so slow or stalled clients cannot hold the server.

uvicorn serves every connection on one event loop, so a stalled client never blocks the others by
itself; what it can do is hold a connection (and a slot of `limit_concurrency`) forever: uvicorn
arms no timer while a request head arrives, and its keep-alive timer is reset by every byte, so a
client sending its headers one byte at a time (slowloris) stays connected. Here:

- a request head must arrive whole within HEAD_TIMEOUT seconds (up to a second more: the timers
  of all connections tick together, `sse.on_grid`) of the connection opening or of the previous
  response, otherwise the connection is closed; a client that reads nothing of its
  answer for a whole HEAD_TIMEOUT period is disconnected (`connections.HeadTimeout`);
- a request head may be at most MAX_HEAD bytes (h11 bounds it itself; on httptools, which does
  not, `HeadTimeoutHttpTools` counts and answers 431);
- request bodies must arrive whole within `navmcp.web.request.BODY_TIMEOUT` seconds (else 408);
- idle keep-alive connections close after KEEP_ALIVE seconds; at most MAX_CONNECTIONS
  connections and requests at once (more are answered 503 by uvicorn), and a listen backlog;
- open event streams (live pages, `subscriptions/listen`) are not counted in MAX_CONNECTIONS
  (`connections.StreamsApart`): they are bounded apart, at `streams.MAX_STREAMS` per process and
  `streams.MAX_PER_USER` per user, so a thousand open watchers leave every request slot free.

A `POST /mcp` whose head and body arrive in one read is answered at once, inside that read
(`at_once.AtOnce`, on httptools): the app runs to its answer without uvicorn's task, request cycle and
ASGI messages, which cost about as much CPU as navmcp's own web app (docs/benchmarks.md). A body
still coming, a costly page or a batch (worker threads), a subscription's stream and a pipelined
request behind one still served go uvicorn's way as before.

HTTP is parsed by httptools (uvicorn's C parser) when it is installed — a dependency of navmcp, as
it is of `uvicorn[standard]`, with uvloop, which uvicorn picks up by itself: together a third fewer
instructions per `/mcp` request than h11 on asyncio (CHANGELOG.md) — else by h11;
NAVMCP_WEB_HTTP=h11 or =httptools chooses (the tests run the slow-client checks on both).
"""

from __future__ import annotations

import os
import resource
import socket
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from navmcp.web import sse, streams
from navmcp.web.at_once import AtOnce
from navmcp.web.connections import HEAD_TIMEOUT, HeadTimeout, OneWrite, StreamsApart

KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open
MAX_CONNECTIONS = 1000  # uvicorn's limit_concurrency (connections + running requests)
BACKLOG = 2048
MAX_HEAD = 16 * 1024
FILES_SPARE = 200  # open files beside the sockets: the database, its journal, logs, the listener


class HeadTimeoutH11(StreamsApart, HeadTimeout, H11Protocol):
    pass


def _httptools_protocol() -> type | None:
    try:
        from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
    except ImportError:  # httptools is not installed
        return None

    class HeadTimeoutHttpTools(StreamsApart, HeadTimeout, AtOnce, HttpToolsProtocol):
        """httptools, with a bound on the request head: the bytes that arrive while a head is
        incomplete are counted (from the read in which it began, so at most one read more than
        MAX_HEAD is taken in) and a head past MAX_HEAD is answered 431 and the connection closed."""

        _in_head, _head_bytes = True, 0
        status_lines = STATUS_LINE

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._head_bytes += len(data)
            super().data_received(data)
            if self._in_head and self._head_bytes > MAX_HEAD and not self.transport.is_closing():
                self.send_431_response()

        def on_message_begin(self) -> None:
            self._in_head, self._head_bytes = True, 0
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def start_cycle(self) -> None:
            super().start_cycle()
            cycle = self.cycle
            cycle.transport = transport = OneWrite(cycle, self.transport)
            completed = cycle.on_response

            def on_response() -> None:
                transport.flush()  # a response without a body write (HEAD): its head goes now
                completed()

            cycle.on_response = on_response

        def send_431_response(self) -> None:
            message = b"Request header fields too large."
            self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; "
                                 b"charset=utf-8\r\nconnection: close\r\ncontent-length: "
                                 + str(len(message)).encode() + b"\r\n\r\n" + message)
            self.transport.close()

    return HeadTimeoutHttpTools


def protocol_class() -> type:
    """The HTTP protocol `navmcp web` runs: httptools when installed (or NAVMCP_WEB_HTTP says so), else h11."""
    choice = os.environ.get("NAVMCP_WEB_HTTP", "").strip().lower()
    if choice not in ("", "h11", "httptools"):
        raise SystemExit(f"navmcp: NAVMCP_WEB_HTTP must be h11 or httptools, not {choice!r}")
    if choice == "h11":
        return HeadTimeoutH11
    httptools = _httptools_protocol()
    if httptools is None and choice == "httptools":
        raise SystemExit("navmcp: NAVMCP_WEB_HTTP=httptools, but httptools is not installed")
    return httptools or HeadTimeoutH11


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, which also ends the open event streams when told to stop: its graceful
        shutdown waits for every open request, and a stream stays open until it is ended."""

        def handle_exit(self, sig: int, frame: Any) -> None:

            sse.end_all()
            super().handle_exit(sig, frame)

    return Server


def run(asgi_app: Any, host: str, port: int, sock: socket.socket | None = None, forwarded_allow_ips: str = "") -> None:
    """Serve until stopped; on `sock` when given (bound already: the CLI checks its port before it
    prints a login link), else on a socket uvicorn binds to host:port. X-Forwarded-For and
    X-Forwarded-Proto are believed only from the proxies named in `forwarded_allow_ips`
    (`--forwarded-allow-ips`); by default from nobody, so no client can pass for another address
    (the bad-token limit counts per address) or for HTTPS. uvicorn would believe them from
    127.0.0.1, where every local process connects from."""
    import uvicorn

    configured = os.environ.get("NAVMCP_WEB_HEAD_TIMEOUT", "")  # tests shorten it
    HeadTimeout.head_timeout = float(configured) if configured.replace(".", "", 1).isdigit() else HEAD_TIMEOUT
    configured = os.environ.get("NAVMCP_WEB_MAX_CONNECTIONS", "")  # tests lower it
    max_connections = int(configured) if configured.isdigit() and int(configured) > 0 else MAX_CONNECTIONS
    _enough_files(max_connections + streams.MAX_STREAMS + FILES_SPARE)

    config = uvicorn.Config(asgi_app, host=host, port=port, log_level="warning", access_log=False,
                            server_header=False, http=protocol_class(), timeout_keep_alive=KEEP_ALIVE,
                            limit_concurrency=max_connections, backlog=BACKLOG,
                            h11_max_incomplete_event_size=MAX_HEAD,
                            proxy_headers=bool(forwarded_allow_ips.strip()),
                            forwarded_allow_ips=forwarded_allow_ips.strip() or None)
    served = _server_class()(config)
    try:
        served.run(sockets=[sock] if sock is not None else None)
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown
        pass
    if not served.started:  # as uvicorn.run does: a server that never started is a failure
        raise SystemExit(3)


def _enough_files(wanted: int) -> None:
    """Raise this process's open-file limit to `wanted` if it is lower (a common soft default is
    1,024, below one socket per connection and stream) and the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if target > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
