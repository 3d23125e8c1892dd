"""Helpers for running real `navmcp web` processes on one PostgreSQL database, and a small raw
MCP-over-HTTP client (httpx, JSON-RPC by hand) to drive them."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from deadlines import HANG
from webproc import free_port, wait_until_healthy

PROTOCOL = "2025-11-25"



class PgWebServer:
    """`navmcp web` on a loopback port, on the database at `database_url`, with `home`'s signing
    secret (every process behind one load balancer must share it)."""

    def __init__(self, home: Path, database_url: str, port: int | None = None, env: dict[str, str] | None = None,
                 command: list[str] | None = None):
        self.home, self.database_url = home, database_url
        self.port = port or free_port()
        # What starts it: `navmcp web` on the port, or a command line of the caller's (a service unit's)
        self.command = command or [sys.executable, "-m", "navmcp", "web", "--port", str(self.port)]
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "NAVMCP_HOME": str(home), "NAVMCP_DATABASE_URL": database_url,
                    "NAVMCP_PG_POOL_SIZE": "4", **(env or {})}
        self.env.pop("NAVMCP_TOKEN", None)
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env,
                                     text=True)
        if not wait_until_healthy(self.base, self.proc, time.monotonic() + HANG):
            if self.proc.poll() is not None:
                raise RuntimeError("navmcp web exited: " + self.proc.stderr.read())
            raise RuntimeError("navmcp web did not answer /healthz")

    def stop(self) -> int:
        """SIGTERM, as a load balancer's orchestrator would; returns the exit code."""
        assert self.proc is not None
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.proc.stderr.close()
        return code

    def navmcp(self, *args: str) -> str:
        """Run a `navmcp` command against the same database and home; its stdout."""
        return subprocess.run([sys.executable, "-m", "navmcp", *args], env=self.env, capture_output=True,
                              text=True, check=True, timeout=60).stdout.strip()


class HttpMcp:
    """One MCP session over Streamable HTTP; `base` can be switched to another process."""

    def __init__(self, base: str, token: str, name: str = "pg-web-test", http: httpx.Client | None = None):
        self.base, self.token, self.name = base, token, name
        self.http = http or httpx.Client(timeout=60)
        self.session_id: str | None = None
        self.ids = itertools.count(1)

    def post(self, message: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json, text/event-stream"}
        if self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": PROTOCOL}
        return self.http.post(self.base + "/mcp", json=message, headers=headers)

    def initialize(self) -> dict[str, Any]:
        reply = self.post({"jsonrpc": "2.0", "id": next(self.ids), "method": "initialize",
                           "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                      "clientInfo": {"name": self.name, "version": "1"}}})
        reply.raise_for_status()
        self.session_id = reply.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        return reply.json()

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        reply = self.post({"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})
        assert reply.status_code == 200, reply.text
        return reply.json()["result"]

    def navigate(self, url: str) -> dict[str, Any]:
        return self.call("navigate", url=url)

    def act(self, action: str, url: str | None = None, **params: Any) -> dict[str, Any]:
        arguments: dict[str, Any] = {"action": action, "params": params}
        if url is not None:
            arguments["url"] = url
        return self.call("execute_action", **arguments)

    def close(self) -> None:
        self.http.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))
