"""What every HTTP connection of `navmcp web` is held to (`navmcp.web.server` says why): a whole
request head within HEAD_TIMEOUT seconds and answers that get read (`HeadTimeout`), uvicorn's
concurrency limit with the open event streams left out (`StreamsApart`), and a response's head and
body written in one send (`OneWrite`)."""

from __future__ import annotations

from typing import Any

from navmcp.web import sse, streams

HEAD_TIMEOUT = 10.0  # seconds for a whole request head


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
