"""`navmcp web`'s head timer (`connections.HeadTimeout`) driven on a clock of the test's own: no
sockets, no waiting. The same rules hold on a real server (tests/test_adv_http_slow.py), where
they take seconds each."""

from __future__ import annotations

import heapq
import itertools

from navmcp.web.connections import HeadTimeout

PERIOD = 10.0  # the head timeout; its grid ticks every second (`sse.on_grid`)


class Clock:
    """An event loop's `time` and `call_at`, advanced by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.armed = 0  # timers ever armed
        self._due: list = []
        self._order = itertools.count()

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback) -> Handle:
        self.armed += 1
        handle = Handle()
        heapq.heappush(self._due, (when, next(self._order), handle, callback))
        return handle

    def live(self) -> int:
        return sum(not handle.cancelled for _, _, handle, _ in self._due)

    def advance(self, to: float) -> None:
        while self._due and self._due[0][0] <= to:
            when, _, handle, callback = heapq.heappop(self._due)
            self.now = when
            if not handle.cancelled:
                callback()
        self.now = to


class Handle:
    cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Transport:
    def __init__(self) -> None:
        self.pending = 0  # bytes written and not yet taken by the client
        self.closing = self.aborted = False

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.pending

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True


class _Protocol:
    """What HeadTimeout is mixed into (uvicorn's protocol), reduced to what it calls."""

    cycle = None

    def connection_made(self, transport: Transport) -> None:
        self.transport = transport

    def on_response_complete(self) -> None:
        pass

    def connection_lost(self, exc) -> None:
        pass


class Connection(HeadTimeout, _Protocol):
    head_timeout = PERIOD

    def __init__(self, clock: Clock):
        self.loop = clock


def _connected() -> tuple[Clock, Transport, Connection]:
    clock, transport = Clock(), Transport()
    conn = Connection(clock)
    conn.connection_made(transport)
    return clock, transport, conn


def test_answers_move_the_deadline_on_without_a_timer_each():
    clock, transport, conn = _connected()
    for n in range(1, 96):  # 95 answers, a tenth of a second apart: still the one timer
        clock.advance(n / 10)
        conn.on_response_complete()
    assert clock.armed == 1
    clock.advance(PERIOD)  # it falls due before the deadline (9.5 + 10) and moves itself on
    assert not transport.closing and clock.armed == 2
    clock.advance(19.9)
    assert not transport.closing
    clock.advance(20.0)  # idle a whole period since the last answer, on the second's grid
    assert transport.closing and not transport.aborted


def test_a_connection_without_a_whole_head_is_closed_after_a_period():
    clock, transport, _ = _connected()
    clock.advance(PERIOD - 0.1)
    assert not transport.closing
    clock.advance(PERIOD)
    assert transport.closing and not transport.aborted


def test_a_request_being_served_is_looked_at_again_later():
    clock, transport, conn = _connected()
    conn.cycle = type("Cycle", (), {"response_complete": False})()
    clock.advance(3 * PERIOD)
    assert not transport.closing
    conn.cycle.response_complete = True
    conn.on_response_complete()
    clock.advance(4 * PERIOD + 1)
    assert transport.closing and not transport.aborted


def test_a_stream_found_with_nothing_unread_is_not_aborted_for_what_it_writes_next():
    """A request being served that writes as it goes (an event stream): all taken at one look, some
    unread at the next, taken later: the client reads, and is not cut off."""
    clock, transport, conn = _connected()
    conn.cycle = type("Cycle", (), {"response_complete": False})()
    clock.advance(PERIOD)  # nothing unread
    transport.pending = 300  # a heartbeat on its way
    clock.advance(2 * PERIOD)
    assert not transport.closing
    transport.pending = 0
    clock.advance(3 * PERIOD)
    assert not transport.closing


def test_a_client_that_reads_nothing_of_its_answers_is_aborted_after_a_period():
    clock, transport, conn = _connected()
    clock.advance(1)
    transport.pending = 50_000
    conn.on_response_complete()
    clock.advance(11)  # due: unread bytes, checked again a period later
    assert not transport.closing
    clock.advance(21)  # not one byte taken in a whole period
    assert transport.aborted


def test_a_connection_closed_behind_unread_answers_is_held_to_a_period():
    """asyncio keeps a closed socket until what was written to it is sent: a client that never
    reads would keep it (and its connection slot) forever."""
    clock, transport, conn = _connected()
    clock.advance(1)
    transport.pending = 50_000
    conn.on_response_complete()
    transport.close()  # `Connection: close`, or an answer that ends the connection
    clock.advance(11)
    assert not transport.aborted
    clock.advance(21)
    assert transport.aborted


def test_a_closed_connection_whose_client_reads_gets_more_periods():
    clock, transport, conn = _connected()
    clock.advance(1)
    transport.pending = 50_000
    conn.on_response_complete()
    transport.close()
    clock.advance(11)  # first look: 50,000 bytes unread
    for n in range(1, 5):  # the client takes some in every period after it
        transport.pending -= 10_000
        clock.advance(11 + n * PERIOD)
        assert not transport.aborted
    assert clock.live() == 1


def test_a_lost_connection_leaves_no_timer_behind():
    clock, transport, conn = _connected()
    conn.on_response_complete()
    transport.closing = True
    conn.connection_lost(None)
    assert clock.live() == 0
    conn.on_response_complete()  # an answer finished after the loss (a waiting /mcp request's)
    assert clock.live() == 0
