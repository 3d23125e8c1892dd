"""Calling the protocol core as a client of either era would, in-process (no transport)."""

from __future__ import annotations

from typing import Any

from navmcp.mcp.tools import connect

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "rpc-test", "version": "1"}}


class Rpc:
    """One connection of `app` acting with `token`, in `era` ("modern" or "legacy")."""

    def __init__(self, app, token: str | None, era: str = "modern", capabilities: dict[str, Any] | None = None):
        """`capabilities`: the client's (each modern request's, the legacy initialize's); none by default."""
        self.connection = connect(app, token)
        self.era = era
        self.ids = 0
        self.meta = MODERN_META if capabilities is None else {
            **MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
        if era == "legacy":
            self.call("initialize", protocolVersion="2025-11-25", capabilities=capabilities or {},
                      clientInfo={"name": "rpc-test", "version": "1"})

    def reply(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        if self.era == "modern" and method != "initialize":
            params = {**params, "_meta": self.meta}
        return self.connection.receive({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        reply = self.reply(method, **params)
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, **params: Any) -> dict[str, Any]:
        reply = self.reply(method, **params)
        assert "error" in reply, reply
        return reply["error"]
