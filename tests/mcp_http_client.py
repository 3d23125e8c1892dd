"""A minimal raw MCP client over Streamable HTTP with the interface of `navmcp.demo.walkthrough.StdioClient`
(send/receive/request/notify/initialize/call/navigate/act/close), so one walkthrough body runs over
both transports. Legacy: `initialize` takes an Mcp-Session-Id that later posts send. Modern: every
post carries `_meta` and the headers that mirror it (MCP-Protocol-Version, Mcp-Method, Mcp-Name)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from navmcp.demo.walkthrough import MODERN_VERSION, StdioClient
from navmcp.protocol import NAME_PARAM


class HttpClient(StdioClient):
    def __init__(self, base: str, token: str, proc, client_name: str, era: str = "legacy"):
        self.http = httpx.Client(base_url=base, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        if era == "modern":
            self.headers["MCP-Protocol-Version"] = MODERN_VERSION
        self.proc = proc  # the shared `navmcp web` process: `proc.poll()` says it is alive
        self._ids = itertools.count(1)
        self.client_name = client_name
        self.era = era
        self._replies: list[Any] = []

    def send(self, message: Any) -> None:
        headers = dict(self.headers)
        if isinstance(message, dict) and isinstance(message.get("method"), str) and self.era == "modern":
            headers["Mcp-Method"] = message["method"]
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            name = params.get(NAME_PARAM.get(message["method"], ""))
            if isinstance(name, str):
                headers["Mcp-Name"] = name
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        reply = self.http.post("/mcp", content=data, headers=headers)
        if "mcp-session-id" in reply.headers:
            self.headers["Mcp-Session-Id"] = reply.headers["mcp-session-id"]
        if reply.content:
            self._replies.append(reply.json())

    def receive(self) -> Any:
        return self._replies.pop(0)

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        reply = super().initialize(version)
        if self.era == "legacy":
            self.headers["MCP-Protocol-Version"] = reply["result"]["protocolVersion"]
        return reply

    def close(self) -> int:
        self.http.close()
        return 0
