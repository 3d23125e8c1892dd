"""Transports the adversarial suite drives, behind one small seam.

A `Driver` takes one frame (raw bytes, as a client would put on the wire) and returns every raw
output the server produced for that frame (zero or more byte strings). The fuzz oracle and the
crowd helpers only speak to this seam, so a transport is one class:

- `SansIODriver` — `navmcp.protocol.Connection.receive_bytes`, in process;
- `StdioDriver` — the real `bin/mcp-server` process; to know which output belongs to which
  frame it sends a `ping` with a sentinel id after each frame and collects the lines before the
  pong (a notification's "nothing" is then observable);
- `http.HttpDriver` (tests/adversarial/http.py): POST /mcp with the frame as the body, the
  response body as the output, 202 meaning "nothing".
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "bin" / "mcp-server"


class Driver(Protocol):
    def send(self, frame: bytes) -> list[bytes]: ...
    def ping_ok(self) -> bool: ...
    def close(self) -> None: ...


class SansIODriver:
    """The protocol core in process: what every transport must agree with."""

    def __init__(self, connection):
        self.connection = connection

    def send(self, frame: bytes) -> list[bytes]:
        reply = self.connection.receive_bytes(frame)
        return [] if reply is None else [reply]

    def ping_ok(self) -> bool:
        reply = json.loads(self.connection.receive_bytes(b'{"jsonrpc":"2.0","id":"alive","method":"ping"}'))
        return reply == {"jsonrpc": "2.0", "id": "alive", "result": {}}

    def close(self) -> None:
        pass


class ServerDied(Exception):
    pass


class StdioProcess:
    """A running `bin/mcp-server` with a reader thread, so a hung server fails a test, not CI."""

    def __init__(self, env: dict[str, str | None] | None = None, timeout: float = 30.0):
        full_env = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
        self.proc = subprocess.Popen([str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env)
        self.timeout = timeout
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        self._threads = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._drain_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()
        self._ids = itertools.count(1)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            if len(self.stderr) < 2000:
                self.stderr.append(line)

    def write(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise ServerDied(self.stderr_text()) from None

    def readline(self, timeout: float | None = None) -> bytes:
        try:
            line = self.lines.get(timeout=timeout or self.timeout)
        except queue.Empty:
            raise TimeoutError("no answer from the server") from None
        if line is None:
            self.lines.put(None)
            raise ServerDied(self.stderr_text())
        return line

    def stderr_text(self, last: int | None = 40) -> str:
        lines = self.stderr if last is None else self.stderr[-last:]
        return b"".join(lines).decode(errors="replace")

    # --- JSON-RPC conveniences ---------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        id_ = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.write(json.dumps(msg).encode() + b"\n")
        while True:
            reply = json.loads(self.readline())
            if reply.get("id") == id_:
                return reply

    def initialize(self, client: str = "adversarial") -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": client, "version": "1"}})
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        return reply

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in reply:
            raise AssertionError(f"protocol error: {reply['error']}")
        return reply["result"]

    def close(self) -> int:
        """EOF on stdin, then the exit code (the server must exit by itself)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._release()
        return code

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """SIGKILL (a crash) or another signal; waits for the exit and returns its code."""
        self.proc.send_signal(sig)
        code = self.proc.wait()
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        self._release()
        return code

    def _release(self) -> None:
        for thread in self._threads:
            thread.join(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()


class StdioDriver:
    """Frames over the real stdio server; each frame is followed by a sentinel ping."""

    def __init__(self, process: StdioProcess):
        self.process = process
        self._sentinels = itertools.count(1)

    def send(self, frame: bytes) -> list[bytes]:
        sentinel = f"sentinel-{next(self._sentinels)}"
        ping = json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode()
        self.process.write(frame + b"\n" + ping + b"\n")
        out = []
        while True:
            line = self.process.readline()
            try:
                value = json.loads(line)
            except ValueError:
                value = None
            if isinstance(value, dict) and value.get("id") == sentinel and "result" in value:
                return out
            out.append(line.rstrip(b"\n"))

    def ping_ok(self) -> bool:
        return self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == []

    def close(self) -> None:
        self.process.close()
