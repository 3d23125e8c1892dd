"""`navmcp web` on httptools answers a `POST /mcp` that arrives whole in one read at once, inside
that read (`at_once.AtOnce`), and every other request uvicorn's way; both ways give the same
answers. Unit tests drive the protocol class with a recording app and transport; the rest talk
to a real `navmcp web` over sockets, sending each request whole and in pieces."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from navmcp.web.at_once import READ
from navmcp.web.server import protocol_class
from test_web_one_write import Recorder


class Transport(Recorder):
    """What the protocol writes (one entry per write), with what uvicorn asks of a socket's transport."""

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8765)}.get(name, default)

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _request(body: bytes, extra: bytes = b"") -> bytes:
    return (b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" + extra
            + b"content-length: %d\r\n\r\n" % len(body) + body)


_TEST_TASK: list = [None]


def _protocol(app, keep_alive: float = 5):
    """navmcp's httptools protocol on a recording transport, serving `app`; the calling task is the
    one a request answered at once runs in (`_recording_app`)."""
    _TEST_TASK[0] = asyncio.current_task()
    config = Config(app, http=protocol_class(), log_level="warning", timeout_keep_alive=keep_alive)
    config.load()
    proto = protocol_class()(config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop())
    transport = Transport()
    proto.connection_made(transport)
    return proto, transport


def _recording_app(calls: list, wait: asyncio.Future | None = None, slow: asyncio.Future | None = None,
                   fail_first: bool = False):
    """An app that records, per request, whether it ran in a task of uvicorn's (not in the read
    that brought it, which here runs in the test's own task) and what the server read for it;
    it waits for `wait` on every request and for `slow` on /slow, and fails its first if told."""
    async def app(scope, receive, send):
        calls.append({"task": asyncio.current_task() is not _TEST_TASK[0], "read": scope.get(READ)})
        if fail_first and len(calls) == 1:
            raise RuntimeError("a fault below the web app")
        if wait is not None:
            await wait
        if slow is not None and scope["path"] == "/slow":
            await slow
        body = json.dumps({"path": scope["path"], "n": len(calls)}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})
    return app


def _answers(writes: list[bytes]) -> list[tuple[int, dict]]:
    out = b"".join(writes)
    found = []
    for head, body in re.findall(rb"HTTP/1.1 (\d+) [^\r]*\r\n(?:[^\r]+\r\n)*\r\n(\{[^}]*\})", out):
        found.append((int(head), json.loads(body)))
    return found


def test_a_whole_post_to_mcp_is_answered_inside_its_read_in_one_write():
    async def run():
        calls: list = []
        proto, transport = _protocol(_recording_app(calls))
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
        proto.data_received(_request(body))
        # answered before data_received returned: no task ran, one write, the body and JSON handed over
        assert len(transport.writes) == 1 and _answers(transport.writes) == [(200, {"path": "/mcp", "n": 1})]
        assert calls[0]["task"] is False and calls[0]["read"] == (body, json.loads(body))
        assert not transport.closed
        proto.connection_lost(None)
    asyncio.run(run())


def test_a_body_still_coming_a_costly_page_and_other_paths_go_uvicorns_way():
    async def run():
        calls: list = []
        proto, transport = _protocol(_recording_app(calls))
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
        whole = _request(body)
        proto.data_received(whole[:-5])  # the head and part of the body
        proto.data_received(whole[-5:])
        search = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"navigate",' \
                 b'"arguments":{"url":"/studios/x/search?q=a"}}}'
        proto.data_received(_request(search))
        for _ in range(20):
            await asyncio.sleep(0)
        proto.data_received(b"POST /elsewhere HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}")
        for _ in range(20):
            await asyncio.sleep(0)
        assert [a[1]["path"] for a in _answers(transport.writes)] == ["/mcp", "/mcp", "/elsewhere"]
        assert all(c["task"] is True and c["read"] is None for c in calls)
        proto.connection_lost(None)
    asyncio.run(run())


def test_an_answer_that_waits_keeps_the_connection_busy_and_pipelined_requests_in_order():
    """On the hosted store the app waits for a worker thread: the rest runs in a task, and a
    request pipelined behind it is answered after it, uvicorn's way."""
    async def run():
        calls: list = []
        wait = asyncio.get_running_loop().create_future()
        proto, transport = _protocol(_recording_app(calls, wait))
        one = _request(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        proto.data_received(one + one)  # two requests in one read
        for _ in range(20):
            await asyncio.sleep(0)
        assert transport.writes == [] and len(calls) == 1 and calls[0]["task"] is False
        wait.set_result(None)
        for _ in range(50):
            await asyncio.sleep(0)
        assert [a[1]["n"] for a in _answers(transport.writes)] == [1, 2]
        assert calls[1]["task"] is True  # the second went uvicorn's way, after the first
        proto.connection_lost(None)
    asyncio.run(run())


def test_connection_close_is_honoured_at_once():
    async def run():
        proto, transport = _protocol(_recording_app([]))
        proto.data_received(_request(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b"connection: close\r\n"))
        assert b"connection: close\r\n" in transport.writes[0] and transport.closed
    asyncio.run(run())


def test_a_request_served_after_one_answered_at_once_is_not_cut_by_the_keep_alive_timer():
    """An answer at once arms the keep-alive timer inside the read; a request behind it in the
    same read, served uvicorn's way for longer than the keep-alive, keeps its connection."""
    async def run():
        slow = asyncio.get_running_loop().create_future()
        proto, transport = _protocol(_recording_app([], slow=slow), keep_alive=0.2)
        proto.data_received(_request(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
                            + b"POST /slow HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}")
        await asyncio.sleep(0.5)
        assert not transport.closed and len(_answers(transport.writes)) == 1
        slow.set_result(None)
        for _ in range(20):
            await asyncio.sleep(0)
        assert [a[1]["path"] for a in _answers(transport.writes)] == ["/mcp", "/slow"] and not transport.closed
        await asyncio.sleep(0.5)  # idle now: the keep-alive closes it
        assert transport.closed
    asyncio.run(run())


def test_nothing_behind_an_answer_that_closed_the_connection_is_run():
    async def run():
        calls: list = []
        proto, transport = _protocol(_recording_app(calls, fail_first=True))
        second = _request(b'{"jsonrpc":"2.0","id":2,"method":"tools/call"}')
        proto.data_received(_request(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') + second)
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(calls) == 1 and transport.closed
        assert transport.writes[0].startswith(b"HTTP/1.1 500 ") and b"connection: close\r\n" in transport.writes[0]
    asyncio.run(run())


def test_a_cancellation_of_the_task_reaches_the_app_as_it_would_in_a_task_of_its_own():
    """The future the app waits on has its result, but the task is cancelled before it resumes:
    the app sees CancelledError, as in a task of uvicorn's."""
    from navmcp.web.at_once import _run_on

    async def run():
        seen = []
        done = asyncio.get_running_loop().create_future()

        async def app():
            try:
                await done
                seen.append("resumed")
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

        started = app()
        task = asyncio.get_running_loop().create_task(_run_on(started, started.send(None)))
        await asyncio.sleep(0)  # the task now waits on `done`
        done.set_result(None)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"]
    asyncio.run(run())


def test_a_content_length_of_thousands_of_leading_zeros_is_read_as_its_number():
    async def run():
        calls: list = []
        proto, transport = _protocol(_recording_app(calls))
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        proto.data_received(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: "
                            + b"0" * 5000 + b"%d\r\n\r\n" % len(body) + body)
        for _ in range(20):
            await asyncio.sleep(0)
        assert _answers(transport.writes) == [(200, {"path": "/mcp", "n": 1})] and calls[0]["task"] is False
    asyncio.run(run())


def test_the_apps_body_limit_reads_any_content_length_as_text_first():
    from navmcp.web.request import BodyTooLarge, Request

    async def body(declared: str, sent: bytes):
        async def receive():
            return {"type": "http.request", "body": sent, "more_body": False}
        return await Request("POST", "/mcp", "", {"content-length": declared}, "http", receive, max_body=10).body()

    assert asyncio.run(body("0" * 5000 + "2", b"{}")) == b"{}"
    assert asyncio.run(body("\u00b2", b"{}")) == b"{}"  # latin-1 "²" is a digit to str.isdigit: not a length
    for declared in ("11", "9" * 5000):
        with pytest.raises(BodyTooLarge):
            asyncio.run(body(declared, b"{}"))


# --- a real `navmcp web`: the same answers whole and in pieces ------------------------------------


def _exchange(port: int, parts: list[bytes], answers: int = 1) -> list[tuple[int, bytes]]:
    """Send `parts` on one connection (a pause between them), read `answers` responses."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        for n, part in enumerate(parts):
            if n:
                time.sleep(0.05)
            s.sendall(part)
        got, out = b"", []
        while len(out) < answers:
            end = got.find(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length: *(\d+)", got[:end]) if end >= 0 else None
            if length and len(got) >= end + 4 + int(length.group(1)):
                stop = end + 4 + int(length.group(1))
                out.append((int(got[9:12]), got[end + 4:stop]))
                got = got[stop:]
                continue
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return out


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.mark.parametrize("case", ["navigate", "bad-version", "no-token", "not-json", "notification", "unknown", "search"])
def test_whole_and_in_pieces_a_request_gets_the_same_answer(httptools_web, case):
    srv, token = httptools_web
    auth = b"authorization: Bearer " + token.encode() + b"\r\n"
    modern = auth + b"mcp-protocol-version: 2026-07-28\r\n"
    frame = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
             "params": {"name": "navigate", "arguments": {"url": "/"}, "_meta": MODERN}}
    headers = modern + b"mcp-method: tools/call\r\nmcp-name: navigate\r\n"
    if case == "bad-version":
        frame["params"]["_meta"] = {**MODERN, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
        headers = auth + b"mcp-protocol-version: 1999-01-01\r\nmcp-method: tools/call\r\nmcp-name: navigate\r\n"
    elif case == "no-token":
        headers = b"mcp-protocol-version: 2026-07-28\r\n"
    elif case == "notification":
        frame = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": MODERN}}
        headers = modern + b"mcp-method: notifications/initialized\r\n"
    elif case == "unknown":
        frame = {"jsonrpc": "2.0", "id": 5, "method": "no/such", "params": {"_meta": MODERN}}
        headers = modern + b"mcp-method: no/such\r\n"
    elif case == "search":  # costly: a worker thread's, uvicorn's way in both
        frame["params"]["arguments"]["url"] = "/search?q=plan"
    body = b'{"jsonrpc": "2.0", "id": 5, "method": ' if case == "not-json" else json.dumps(frame).encode()
    whole = _request(body, headers)
    (at_once,) = _exchange(srv.port, [whole])
    (in_pieces,) = _exchange(srv.port, [whole[:-7], whole[-7:]])
    assert at_once == in_pieces, (at_once, in_pieces)
    status = {"navigate": 200, "bad-version": 400, "no-token": 401, "not-json": 400, "notification": 202,
              "unknown": 404, "search": 200}[case]
    assert at_once[0] == status, at_once


def test_pipelined_posts_in_one_read_are_answered_in_order(httptools_web):
    srv, token = httptools_web
    headers = (b"authorization: Bearer " + token.encode() + b"\r\nmcp-protocol-version: 2026-07-28\r\n"
               b"mcp-method: tools/call\r\nmcp-name: navigate\r\n")
    frames = [_request(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "navigate", "arguments": {"url": url}, "_meta": MODERN}}).encode(), headers)
        for n, url in enumerate(["/", "/search?q=plan", "/whoami", "/help"])]
    answers = _exchange(srv.port, [b"".join(frames)], answers=4)
    assert [json.loads(body)["id"] for _, body in answers] == [0, 1, 2, 3]
    assert all(status == 200 for status, _ in answers)
