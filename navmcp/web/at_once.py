"""A `POST /mcp` whose head and body arrive in one read, answered inside that read (`AtOnce`, on
httptools): the app runs to its answer without uvicorn's task, request cycle and ASGI messages,
which cost about as much CPU as navmcp's own web app (docs/benchmarks.md). A body still coming, a
costly page or a batch (worker threads), a subscription's stream and a pipelined request behind one
still served go uvicorn's way."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from navmcp.mcp.codec import decode
from navmcp.mcp.jsonrpc import ParseError
from navmcp.web import mcp_http
from navmcp.web.request import MAX_BODY, declared_length

log = logging.getLogger("navmcp.web")
# The scope key of a request's body and its JSON as read by the server (`AtOnce`): the app reads
# neither again (`WebApp`, within its own body limit).
READ = "navmcp.read"


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
