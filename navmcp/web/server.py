"""How `navmcp web` runs uvicorn so slow or stalled clients cannot hold the server.

uvicorn serves every connection on one event loop, so a stalled client never blocks the others by
itself; what it can do is hold a connection (and a slot of `limit_concurrency`) forever: uvicorn
arms no timer while a request head arrives, and its keep-alive timer is reset by every byte, so a
client sending its headers one byte at a time (slowloris) stays connected. Here:

- a request head must arrive whole within HEAD_TIMEOUT seconds (up to a second more: the timers
  of all connections tick together, `sse.on_grid`) of the connection opening or of the previous
  response, otherwise the connection is closed; a client that reads nothing of its
  answer for a whole HEAD_TIMEOUT period is disconnected (`HeadTimeout`);
- a request head may be at most MAX_HEAD bytes (h11 bounds it itself; on httptools, which does
  not, `HeadTimeoutHttpTools` counts and answers 431);
- request bodies must arrive whole within `navmcp.web.request.BODY_TIMEOUT` seconds (else 408);
- idle keep-alive connections close after KEEP_ALIVE seconds; at most MAX_CONNECTIONS
  connections and requests at once (more are answered 503 by uvicorn), and a listen backlog;
- open event streams (live pages, `subscriptions/listen`) are not counted in MAX_CONNECTIONS
  (`StreamsApart`): they are bounded apart, at `streams.MAX_STREAMS` per process and
  `streams.MAX_PER_USER` per user, so a thousand open watchers leave every request slot free.

A `POST /mcp` whose head and body arrive in one read is answered at once, inside that read
(`AtOnce`, on httptools): the app runs to its answer without uvicorn's task, request cycle and
ASGI messages, which cost about as much CPU as navmcp's own web app (docs/benchmarks.md). A body
still coming, a costly page or a batch (worker threads), a subscription's stream and a pipelined
request behind one still served go uvicorn's way as before.

HTTP is parsed by httptools (uvicorn's C parser) when it is installed — a dependency of navmcp, as
it is of `uvicorn[standard]`, with uvloop, which uvicorn picks up by itself: together a third fewer
instructions per `/mcp` request than h11 on asyncio (CHANGELOG.md) — else by h11;
NAVMCP_WEB_HTTP=h11 or =httptools chooses (the tests run the slow-client checks on both).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import resource
import socket
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from navmcp.mcp.codec import decode
from navmcp.mcp.jsonrpc import ParseError
from navmcp.web import mcp_http, sse, streams
from navmcp.web.request import MAX_BODY, declared_length

log = logging.getLogger("navmcp.web")
# The scope key of a request's body and its JSON as read by the server (`AtOnce`): the app reads
# neither again (`WebApp`, within its own body limit).
READ = "navmcp.read"

HEAD_TIMEOUT = 10.0  # seconds for a whole request head
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open
MAX_CONNECTIONS = 1000  # uvicorn's limit_concurrency (connections + running requests)
BACKLOG = 2048
MAX_HEAD = 16 * 1024
FILES_SPARE = 200  # open files beside the sockets: the database, its journal, logs, the listener


class HeadTimeout:
    """One more timer for a uvicorn HTTP protocol, checked every `head_timeout` seconds while the
    connection lives: idle without a whole request head → closed; an answer the client does not
    read (the write buffer did not shrink over a whole period) → aborted, which also frees a
    handler waiting to write; a request being served (its body has its own deadline) → checked
    again later. A connection closed behind answers still unread is held to the same period:
    asyncio keeps its socket until they are written, which a client that never reads would make
    forever. Mixed in before the protocol class (it uses its `transport`, `loop`, `cycle`).

    A response moves the deadline on without touching the timer: one armed for an earlier deadline
    moves itself on when it falls due (once a period, where re-arming it cost a timer per request)."""

    head_timeout = HEAD_TIMEOUT
    transport: Any  # the protocol's, as are these two
    loop: Any
    cycle: Any
    _head_timer: Any = None
    _deadline = 0.0  # loop time by which a whole request head must have come (or a request be served)
    _armed_for = 0.0  # the deadline the timer was armed for
    _pending = float("inf")  # bytes of our answers unread when the timer last fell due

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._deadline, self._pending = self.loop.time() + self.head_timeout, float("inf")
        if self._head_timer is None:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self, pending: float = float("inf")) -> None:
        self._cancel_head_timer()
        self._pending = pending
        self._deadline = self.loop.time() + self.head_timeout
        if not self.transport.is_closing():
            self._arm_at(self._deadline)

    def _arm_at(self, deadline: float) -> None:
        self._armed_for = deadline
        self._head_timer = self.loop.call_at(sse.on_grid(deadline, self.head_timeout), self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        pending = self.transport.get_write_buffer_size()
        if pending and pending >= self._pending:  # nothing of our answers was read in a whole period
            self.transport.abort()
            return
        if self.transport.is_closing():
            if pending:  # closed behind answers still unread: they get a period to be read
                self._pending = pending
                self._arm_at(self.loop.time() + self.head_timeout)
            return
        if self._deadline > self._armed_for:  # a response completed since it was armed: due later
            self._arm_at(self._deadline)
            return
        busy = self.cycle is not None and not self.cycle.response_complete
        if busy or pending:
            self._arm(pending or float("inf"))  # nothing unread now: the next look starts afresh
            return
        self.transport.close()  # no whole request head in time


class StreamsApart:
    """uvicorn's `limit_concurrency` with the open event streams left out of the count. uvicorn
    answers 503 while its connections or its running requests reach the limit, and a watched page
    is one of each for as long as it is open; so the limit it compares with is the configured one
    plus the streams open now (at most `streams.MAX_STREAMS`, which `streams.Streams` enforces).
    Mixed in before the protocol class, whose `__init__` sets the configured limit."""

    _configured_limit: int | None = None

    @property
    def limit_concurrency(self) -> int | None:
        limit = self._configured_limit
        return None if limit is None else limit + min(sse.open_streams(), streams.MAX_STREAMS)

    @limit_concurrency.setter
    def limit_concurrency(self, value: int | None) -> None:
        self._configured_limit = value


class HeadTimeoutH11(StreamsApart, HeadTimeout, H11Protocol):
    pass


class OneWrite:
    """A request cycle's transport that holds the response head back until the body is written,
    then writes both at once. uvicorn writes them separately, which costs a second send() and, with
    TCP_NODELAY, a second segment for the client to read. Anything written before the response
    starts (`100 Continue`) passes at once; `flush` and `close` release a head still held."""

    __slots__ = ("_cycle", "_transport", "_head", "_waiting")
    _head: bytes | None

    def __init__(self, cycle: Any, transport: Any):
        self._cycle, self._transport, self._head, self._waiting = cycle, transport, None, True

    def write(self, data: bytes) -> None:
        if self._head is not None:  # the body (or its first part): one write with the head
            data, self._head = self._head + data, None
        elif self._waiting and self._cycle.response_started:  # the head
            self._head, self._waiting = data, False
            return
        self._transport.write(data)

    def flush(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class AtOnce:
    """A `POST /mcp` answered inside the read that brought it whole: uvicorn would start a task
    for it, with its request cycle, scope and ASGI messages, and check each response header again
    (navmcp's were checked when made). Here the app runs on the spot, and its answer is written in
    one piece; if it waits (on the hosted store every request goes to a worker thread), the rest
    runs in a task and the connection stays busy until the answer is written (`_Busy`).
    Taken when the head and the whole body (Content-Length, at most MAX_BODY) came in one read, no
    request of this connection is still being served, the client reads its answers, the
    concurrency limit is not reached, and the message is neither a batch, nor a subscription's
    stream, nor a costly page (its worker threads are bounded by the app). Anything else, or a body
    still coming when the read ends, goes uvicorn's way unchanged (`start_cycle`). Mixed in
    before httptools' protocol class."""

    _at_once: list[bytes] | None = None  # the body of a request to answer at once, as it arrives
    _reading = False
    _dropping = False  # a request behind an answer that closed the connection: never served
    # uvicorn's protocol provides these
    parser: Any
    url: bytes
    headers: list[tuple[bytes, bytes]]
    expect_100_continue: bool
    flow: Any
    transport: Any
    cycle: Any
    connections: Any
    tasks: Any
    limit_concurrency: int | None
    app: Any
    app_state: dict
    server_state: Any
    server: Any
    client: Any
    scheme: Any
    loop: Any
    status_lines: dict[int, bytes]  # uvicorn's "HTTP/1.1 200 OK\r\n" by status, set where it is mixed in

    def data_received(self, data: bytes) -> None:
        self._reading = True
        try:
            super().data_received(data)  # type: ignore[misc]
        finally:
            self._reading = False
            if self._at_once is not None:
                if self.transport.is_closing():  # nobody to answer
                    self._at_once = None
                else:  # its body is still coming: uvicorn's way, from here
                    self._go_the_usual_way(self._at_once)

    def on_headers_complete(self) -> None:
        # A request answered at once earlier in this read armed the keep-alive timer (uvicorn
        # disarms it only when a read begins): this one is being served, so it is disarmed again.
        self._unset_keepalive_if_required()  # type: ignore[attr-defined]
        if self.transport.is_closing():  # an answer at once closed the connection: serve nothing after it
            self._dropping = True
        elif self._reading and self._may_answer_at_once():
            self._at_once = []
        else:
            self.start_cycle()

    def start_cycle(self) -> None:
        """uvicorn's handling of a complete head: a request cycle, run in a task of its own."""
        super().on_headers_complete()  # type: ignore[misc]

    def on_body(self, body: bytes) -> None:
        if self._dropping:
            return
        if self._at_once is None:
            super().on_body(body)  # type: ignore[misc]
        else:
            self._at_once.append(body)

    def on_message_complete(self) -> None:
        if self._dropping:
            self._dropping = False
            return
        if self._at_once is None:
            super().on_message_complete()  # type: ignore[misc]
            return
        body, self._at_once = b"".join(self._at_once), None
        message: Any
        try:
            message = decode(body)
        except ParseError as e:
            message = e  # the app answers it (400), at once
        if isinstance(message, list) or mcp_http.costly(message) or (
                isinstance(message, dict) and message.get("method") == "subscriptions/listen"):
            self._go_the_usual_way([body], complete=True)
        else:
            self._answer(body, message)

    def _may_answer_at_once(self) -> bool:
        parser = self.parser
        if (parser.get_method() != b"POST" or parser.get_http_version() != "1.1" or parser.should_upgrade()
                or not (self.url == b"/mcp" or self.url.startswith(b"/mcp?"))):
            return False
        if self.expect_100_continue or self.flow.write_paused or self.transport.is_closing():
            return False
        if self.cycle is not None and not self.cycle.response_complete:  # a pipelined request waits its turn
            return False
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            return False  # uvicorn answers 503
        length = None
        for name, value in self.headers:
            if name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                return False
        declared = None if length is None else declared_length(length.decode("latin-1"))
        return declared is not None and declared <= MAX_BODY

    def _go_the_usual_way(self, chunks: list[bytes], complete: bool = False) -> None:
        self._at_once = None
        self.start_cycle()
        for chunk in chunks:
            if chunk:
                super().on_body(chunk)  # type: ignore[misc]
        if complete:
            super().on_message_complete()  # type: ignore[misc]

    def _answer(self, body: bytes, message: Any) -> None:
        path, _, query = self.url.partition(b"?")
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "server": self.server, "client": self.client, "scheme": self.scheme, "root_path": "",
                 "headers": self.headers, "state": self.app_state.copy(), "method": "POST",
                 "path": path.decode("ascii", "replace"), "raw_path": path, "query_string": query,
                 READ: (body, message)}
        keep_alive = self.parser.should_keep_alive()
        received: list[bool] = []
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if received:
                return {"type": "http.disconnect"}
            received.append(True)
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        run = self.app(scope, receive, send)
        context = contextvars.copy_context()
        try:
            waiting = context.run(run.send, None)
        except StopIteration:
            self._write(sent, keep_alive)
            return
        except Exception:  # the app answers its own faults (500); this is one below it
            log.exception("internal error on POST /mcp")
            self._write([], False)
            return
        # It waits (on the hosted store, for a worker thread): the rest runs in a task, and this
        # connection is busy until the answer is written (a pipelined request queues behind it).
        self.cycle = busy = _Busy(keep_alive)
        task = self.loop.create_task(_run_on(run, waiting), context=context)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(lambda done: self._answered(busy, sent, done))

    def _answered(self, busy: _Busy, sent: list[dict[str, Any]], done: asyncio.Task) -> None:
        busy.response_complete = True
        if done.cancelled() or done.exception() is not None:
            if not done.cancelled():
                log.error("internal error on POST /mcp", exc_info=done.exception())
            sent = []
        if not self.transport.is_closing():
            self._write(sent, busy.keep_alive)

    def _write(self, sent: list[dict[str, Any]], keep_alive: bool) -> None:
        """The app's answer (its start and its one body message) in one write, as uvicorn would
        frame it; anything else is a fault of ours, answered 500."""
        if len(sent) != 2 or sent[1].get("more_body"):
            sent = [{"type": "http.response.start", "status": 500,
                     "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"21")]},
                    {"type": "http.response.body", "body": b"Internal Server Error"}]
            keep_alive = False
        head = [self.status_lines[sent[0]["status"]]]
        closes = False
        for name, value in (*self.server_state.default_headers, *sent[0]["headers"]):
            head += (name, b": ", value, b"\r\n")
            if name == b"connection" and b"close" in value.lower():  # the app's own (a 408, say)
                keep_alive, closes = False, True
        if not keep_alive and not closes:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        self.transport.write(b"".join(head) + sent[1].get("body", b""))
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()  # type: ignore[attr-defined]


class _Busy:
    """What stands for uvicorn's request cycle while a request answered at once waits: uvicorn
    queues a pipelined request behind it, the head timer sees the connection busy, and a shutdown
    or a lost connection marks it as it would a cycle."""

    __slots__ = ("response_complete", "keep_alive", "disconnected", "message_event")

    def __init__(self, keep_alive: bool):
        self.response_complete, self.keep_alive, self.disconnected = False, keep_alive, False
        self.message_event = asyncio.Event()


async def _run_on(run: Any, waiting: Any) -> None:
    """Run a coroutine that was started outside any task, and waits on `waiting`, to its end, as
    a task of its own would: what its future ends with, it reads itself; a cancellation of this
    task that its future did not carry is thrown into it."""
    while True:
        failed: BaseException | None = None
        try:
            if waiting is None:
                await asyncio.sleep(0)  # it yielded to the loop
            else:  # the future it waits on, taken over as a task takes a yielded future
                waiting._asyncio_future_blocking = False
                await waiting
        except BaseException as e:
            failed = e
        ours = failed is not None and (waiting is None or not waiting.done() or (
            isinstance(failed, asyncio.CancelledError) and not waiting.cancelled()))
        try:
            waiting = run.throw(failed) if ours else run.send(None)
        except StopIteration:
            return


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
            from navmcp.web import sse

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
