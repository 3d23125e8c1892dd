"""The stdio transport for real: bin/mcp-server as a subprocess, bytes on its pipes."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from navmcp.demo.walkthrough import StdioClient, server_command
from navmcp.mcp.stdio import MAX_LINE_BYTES, PIPE_BYTES

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture
def server(home):
    client = StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None})
    yield client
    if client.proc.poll() is None:
        client.proc.kill()
    client.close()


def ping(n):
    return {"jsonrpc": "2.0", "id": n, "method": "ping"}


def test_an_oversized_line_gets_an_error_and_the_server_goes_on(server):
    server.send(INIT)
    assert server.receive()["result"]["protocolVersion"] == "2025-06-18"
    big = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + b"x" * (MAX_LINE_BYTES + 1000) + b'"}}'
    server.send(big)
    reply = server.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert "larger than" in reply["error"]["message"]
    server.send(ping(6))
    assert server.receive() == {"jsonrpc": "2.0", "id": 6, "result": {}}


def test_a_line_just_under_the_limit_is_answered(server):
    server.send(INIT)
    server.receive()
    head = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"'
    tail = b'"}}'
    server.send(head + b"y" * (MAX_LINE_BYTES - len(head) - len(tail) - 1) + tail)
    assert server.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_eof_ends_the_server_with_exit_0(server):
    server.send(INIT)
    server.receive()
    server.proc.stdin.close()
    assert server.proc.wait(timeout=10) == 0
    assert server.proc.stdout.read() == b""


def test_sigterm_ends_the_server_with_exit_0(server):
    server.send(INIT)
    server.receive()  # the server is up and idle, blocked reading stdin
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=10) == 0
    assert server.proc.stdout.read() == b""


def test_sigterm_before_any_input_exits_0(home):
    proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"NAVMCP_HOME": str(home), "PATH": "/usr/bin:/bin"})
    wait_for_sigterm_handler(proc.pid)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0 and out == b""


def wait_for_sigterm_handler(pid: int, seconds: float = 30) -> None:
    """Until the process catches SIGTERM (its SigCgt mask in /proc), so a loaded machine's slow
    start can't make the signal arrive before the server has installed its handler."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as status:
            caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.01)
    raise AssertionError("the server never installed its SIGTERM handler")


def test_stdout_carries_only_json_rpc_even_at_debug(home):
    client = StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_LOG_LEVEL": "DEBUG"})
    try:
        client.send(INIT)
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        client.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
        client.send(b"\r\n\n   \n")  # blank lines are skipped
        client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "execute_action", "arguments": {"url": "/", "action": "create_studio",
                                                                      "params": {"handle": "t", "name": "T"}}}})
        client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"navigate","arguments":{"url":"/studios/t"}}}\r')
        client.send(b"{bad json")
        client.send(ping(3))
        client.proc.stdin.close()
        out = client.proc.stdout.read()
        err = client.proc.stderr.read().decode()
        assert client.proc.wait(timeout=10) == 0
    finally:
        client.close()
    lines = out.split(b"\n")
    assert lines[-1] == b""  # every message ends with a newline
    messages = [json.loads(line) for line in lines[:-1]]  # every line is one JSON-RPC message
    assert all(m["jsonrpc"] == "2.0" and ("result" in m) != ("error" in m) for m in messages)
    assert [m["id"] for m in messages] == [0, 1, 2, None, 3]
    assert messages[2]["result"]["structuredContent"]["url"] == "/studios/t"
    assert "DEBUG" in err and "navmcp" in err  # the logs went to stderr


def test_pipelined_requests_are_all_answered_in_order(server):
    batch = [INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    expected = [0]
    for n in range(1, 301):
        if n % 3 == 0:
            batch.append({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": "navigate", "arguments": {"url": "/help" if n % 2 else "/"}}})
        elif n % 3 == 1:
            batch.append(ping(n))
        else:
            batch.append({"jsonrpc": "2.0", "id": f"s{n}", "method": "tools/list"})
        expected.append(n if n % 3 != 2 else f"s{n}")
    server.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in batch))
    server.proc.stdin.close()  # everything is written before a single response is read
    replies = [json.loads(line) for line in server.proc.stdout.read().splitlines()]
    assert [r["id"] for r in replies] == expected
    assert all("result" in r for r in replies)
    assert server.proc.wait(timeout=10) == 0


def test_a_pipe_to_stdout_is_widened_to_hold_a_group_of_replies(server):
    """On Linux the server asks for a 1 MiB stdout pipe (64 KiB by default), so that writing a
    pipelined group's replies doesn't stall until the client has read them."""
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no pipe sizes on this platform")
    with open("/proc/sys/fs/pipe-max-size") as f:
        if int(f.read()) < PIPE_BYTES:
            pytest.skip("this system caps pipes below PIPE_BYTES: the server keeps the default")
    server.send(INIT)
    assert server.receive()["id"] == 0  # the server has started serving: its pipe is set up
    assert fcntl.fcntl(server.proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES


def test_invalid_utf8_line_is_a_parse_error(server):
    server.send(b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xc3\x28"}')
    reply = server.receive()
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    server.send(ping(2))
    assert server.receive()["id"] == 2


def test_lone_surrogates_do_not_kill_the_server(server):
    server.send(INIT)
    server.receive()
    server.send(rb'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"navigate","arguments":{"url":"/\ud800"}}}')
    assert server.receive()["error"]["code"] == -32700
    server.send(ping(2))
    assert server.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_broken_stdout_ends_the_server_quietly(home):
    proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"NAVMCP_HOME": str(home),
                                                                                 "PATH": "/usr/bin:/bin"})
    proc.stdout.close()
    proc.stdin.write(json.dumps(ping(1)).encode() + b"\n" + json.dumps(ping(2)).encode() + b"\n")
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert b"Traceback" not in proc.stderr.read()
    proc.stderr.close()


def test_a_frame_is_one_line_for_a_client_that_splits_on_any_line_boundary(server):
    """Issue 24, item 16: U+2028, U+2029 and U+0085 in a page's text went out raw; Python's
    splitlines() and JavaScript's line terminators break a frame there."""
    separators = "a\u2028b\u2029c\x85d"
    server.initialize()
    made = server.act("create_studio", url="/", handle="team", name="Team")
    assert not made["isError"], made
    made = server.act("create_note", url="/studios/team", title=f"Title {separators}", body=f"Body {separators}")
    assert not made["isError"], made
    note = made["structuredContent"]["url"]
    server.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                 "params": {"name": "navigate", "arguments": {"url": note}}})
    frame = server.proc.stdout.readline()
    assert len(frame.decode("utf-8").splitlines()) == 1 and frame.endswith(b"\n")
    page = json.loads(frame)["result"]
    assert page["isError"] is False and f"Body {separators}" in page["content"][0]["text"]
