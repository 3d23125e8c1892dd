"""`navmcp web` on httptools writes a response's head and body in one send (`connections.OneWrite`), and
every way a response can end still gets its head out: a body, a HEAD request (no body), an
`Expect: 100-continue` request (the interim answer must go at once, before the body is sent),
pipelined requests on one connection, and a handler error."""

from __future__ import annotations

import re
import socket
from types import SimpleNamespace

from navmcp.web.connections import OneWrite


class Recorder:
    """A transport that keeps what was written, one entry per write call."""

    def __init__(self):
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def test_head_and_body_leave_in_one_write():
    cycle, transport = SimpleNamespace(response_started=False, response_complete=False), Recorder()
    out = OneWrite(cycle, transport)
    out.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # before the response starts: at once
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    cycle.response_started = True
    out.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert len(transport.writes) == 1  # the head waits for its body
    out.write(b"ok")
    assert transport.writes[1:] == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
    out.write(b"more")  # later parts of a streamed body are not held
    assert transport.writes[2:] == [b"more"]
    out.flush()
    assert len(transport.writes) == 3


def test_a_head_without_body_goes_out_on_flush_or_close():
    cycle, transport = SimpleNamespace(response_started=True, response_complete=False), Recorder()
    out = OneWrite(cycle, transport)
    out.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert transport.writes == [] and not out.is_closing()  # other attributes are the transport's
    out.close()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n"] and transport.closed


def _complete(got: bytes, head_only: bool) -> int:
    """How many whole responses `got` holds (a head, then content-length bytes of body unless
    `head_only`)."""
    count = pos = 0
    while (end := got.find(b"\r\n\r\n", pos)) >= 0:
        length = re.search(rb"(?im)^content-length: *(\d+)", got[pos:end])
        pos = end + 4 + (0 if head_only or length is None else int(length.group(1)))
        if pos > len(got):
            break
        count += 1
    return count


def _exchange(port: int, data: bytes, responses: int, head_only: bool = False, seconds: float = 5) -> bytes:
    """Send `data` on a new connection; read until `responses` whole responses have come."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as s:
        s.sendall(data)
        got = b""
        while _complete(got, head_only) < responses:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def test_a_head_request_is_answered_with_its_head(httptools_web):
    srv, _ = httptools_web
    got = _exchange(srv.port, b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1, head_only=True)
    assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"\r\n\r\n"), got


def test_pipelined_requests_on_one_connection_are_all_answered(httptools_web):
    srv, _ = httptools_web
    one = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    got = _exchange(srv.port, one * 3, 3)
    assert got.count(b"HTTP/1.1 200") == 3, got


def test_expect_100_continue_gets_its_interim_answer_before_the_body(httptools_web):
    srv, token = httptools_web
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",' \
           b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                  b"authorization: Bearer %s\r\nexpect: 100-continue\r\ncontent-length: %d\r\n\r\n"
                  % (token.encode(), len(body)))
        interim = s.recv(65536)  # the server must answer this before it has any body
        assert interim.startswith(b"HTTP/1.1 100"), interim
        s.sendall(body)
        answer = b""
        while _complete(answer, head_only=False) < 1:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and b"mcp-session-id" in answer and b'"result"' in answer, answer
