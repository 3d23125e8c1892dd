"""Slow and stalled HTTP clients cannot hold `navmcp web`: while 50 connections trickle their
headers byte by byte (slowloris), stall in the middle of a body, or never read their answers, a
normal client is still answered, and the stalled connections are closed (heads after
NAVMCP_WEB_HEAD_TIMEOUT, bodies with a 408 after NAVMCP_WEB_BODY_TIMEOUT, clients that read nothing
of their answers for a whole period are disconnected). How long a normal request took is reported
(`figures`), not asserted: the machine may be busy; the timers' exact rules are checked on a clock
of the test's own in tests/web/test_web_head_timer.py."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import httpx
import pytest

from adversarial import figures, world
from adversarial.http import HEADERS, Http, WebProcess, open_session
from deadlines import HANG, wait_for

HELD = 50


@pytest.fixture(params=["httptools", "h11"])
def server(tmp_path, request):
    """`navmcp web` parsing HTTP with each parser it can run (httptools by default, h11 without it)."""
    w = world.build(tmp_path / "home")
    srv = WebProcess(w.home, {"NAVMCP_WEB_HEAD_TIMEOUT": "2", "NAVMCP_WEB_BODY_TIMEOUT": "2",
                              "NAVMCP_WEB_HTTP": request.param})
    yield srv, w
    assert srv.stop() == 0
    assert not srv.errors(), srv.stderr_text()[-3000:]


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that never reads fills up soon
    return s


def _sockets(pid: int) -> int:
    """Open sockets of the server process."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def _closed_within(s: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Read until EOF (the server closed) or `seconds` pass; (closed, what was received)."""
    s.settimeout(0.2)
    got, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return True, got
        if not chunk:
            return True, got
        got += chunk
    return False, got


def test_stalled_clients_do_not_hold_the_server(server):
    srv, w = server
    token = w.tokens["author"]
    head = (f"GET /studios/adv.md HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "X-Slow: " + "a" * 200 + "\r\n\r\n").encode()
    baseline = _sockets(srv.proc.pid)
    slow_heads = [_connect(srv.port) for _ in range(20)]
    slow_bodies = [_connect(srv.port) for _ in range(15)]
    non_readers = [_connect(srv.port) for _ in range(HELD - 35)]
    for s in slow_bodies:
        s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":".encode())
    for s in non_readers:  # pipelined page requests, answers never read
        s.sendall(head.replace(b"adv.md", b"adv") * 40)

    # The server has accepted them all (on a loaded machine that takes longer than on an idle one).
    wait_for(lambda: _sockets(srv.proc.pid) >= baseline + HELD - 3,  # the baseline may count a closing /healthz probe
             "the server accepts the stalled connections", every=0.1)
    stop = threading.Event()

    def trickle() -> None:  # one byte per connection every 0.25 s: never a whole head
        at = 0
        while not stop.is_set() and at < len(head) - 4:
            for s in slow_heads:
                try:
                    s.send(head[at:at + 1])
                except OSError:
                    pass
            at += 1
            stop.wait(0.25)

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        # A normal client meanwhile: pages and MCP calls, each answered.
        with httpx.Client(base_url=srv.base, timeout=HANG) as client:
            http = Http(srv.base)
            session = open_session(http, token)
            http.close()
            worst = 0.0
            for n in range(30):
                started = time.monotonic()
                if n % 2:
                    reply = client.get("/studios/adv.md", headers={"authorization": f"Bearer {token}"})
                else:
                    reply = client.post("/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                        headers={**HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": session})
                worst = max(worst, time.monotonic() - started)
                assert reply.status_code == 200, reply.text
                time.sleep(0.05)
            figures.peak("max.http.slow.normal_request_ms", int(worst * 1000))

        # Stalled connections are closed: slow heads by the head timeout (no answer), stalled bodies
        # with a 408, never-read pipelines once their answers are written and the head timer runs out.
        for s in slow_bodies:
            closed, got = _closed_within(s, HANG)
            assert closed and got.startswith(b"HTTP/1.1 408"), got[:200]
        for s in slow_heads:
            closed, got = _closed_within(s, HANG)
            assert closed and got == b"", got[:200]
        # The server lets go of every stalled connection (its own count of open sockets, which is
        # what a stalled client holds; a client-side EOF may wait behind data the kernel still holds).
        wait_for(lambda: _sockets(srv.proc.pid) <= baseline + 2, "the server lets go of every stalled connection",
                 every=0.25)

        figures.add("http.slow.connections_held", HELD)
    finally:
        stop.set()
        trickler.join(timeout=5)
        for s in slow_heads + slow_bodies + non_readers:
            s.close()


def test_an_oversized_request_head_is_refused_and_the_server_goes_on(server):
    """A head past 16 KiB (one huge header, arriving in pieces) is refused and its connection
    closed, by h11's own bound or by the count kept for httptools; others are still served."""
    srv, w = server
    s = _connect(srv.port)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
    sent = 0
    try:
        while sent < 256 * 1024:  # far past the bound, in 8 KiB pieces
            s.sendall(b"a" * 8192)
            sent += 8192
            time.sleep(0.005)
    except OSError:
        pass  # closed on us: that is the refusal
    closed, got = _closed_within(s, HANG)
    s.close()
    assert closed, "the connection with an oversized head is still open"
    assert got == b"" or got.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400")), got[:200]
    assert sent < 256 * 1024 or got, "the server read a quarter MiB of one head"
    assert httpx.get(srv.base + "/healthz", timeout=HANG).status_code == 200


def _ask(s: socket.socket, request: bytes) -> None:
    """One request on a kept-alive connection, its whole answer read (by its Content-Length)."""
    s.sendall(request)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(65536)
        assert chunk, "the server closed a connection that was in use"
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += s.recv(65536)


def _discover(token: str) -> bytes:
    """A stateless MCP 2026-07-28 `server/discover`: on httptools it is answered inside the read that
    brings it (`AtOnce`), where the answer's end moves the head timer on."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.mark.parametrize("asked", ["get", "mcp"])
def test_a_connection_in_use_outlives_the_head_timeout_and_is_closed_once_idle(server, asked):
    """The head timer counts from the last answer: a connection asking again and again (a GET, served
    by uvicorn's request cycle; a stateless /mcp request, answered at once) stays open well past
    NAVMCP_WEB_HEAD_TIMEOUT (2 s here), and once it falls silent it is closed, not before that
    period (how soon after is tests/web/test_web_head_timer.py's, on a clock of its own)."""
    srv, w = server
    request = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" if asked == "get"
               else _discover(w.tokens["author"]))
    s = _connect(srv.port)
    try:
        started = time.monotonic()
        while True:  # two and a half head timeouts of requests, 0.2 s apart
            _ask(s, request)
            last_answer = time.monotonic()
            if last_answer - started > 5:
                break
            time.sleep(0.2)
        closed, got = _closed_within(s, HANG)
        silent_for = time.monotonic() - last_answer
    finally:
        s.close()
    assert closed and got == b"", got[:200]
    # Not before 2 s, less the client's share of the last answer's trip.
    assert silent_for >= 1.95, f"closed {silent_for:.2f} s after its last answer"
