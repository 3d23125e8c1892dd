"""Where a `/mcp` call's time goes inside `navmcp web`, in-process (no sockets, no uvicorn).

    .venv/bin/python -m bench.profile_http --size 1000 [--cprofile] [--era modern]

Drives the ASGI app directly with the same requests the bench sends (Bearer token, JSON; legacy:
Mcp-Session-Id, navigating over the benchmarked URLs so the session moves on every call; modern:
the 2026-07-28 `_meta` and the headers that mirror it, no session), and prints the median per
call (with --cprofile, the top functions). `bench.instructions` counts
the same call (`mcp:cycle`) under valgrind. The difference between this and the bench's
per-request time is uvicorn's HTTP parsing and the socket.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

from bench.profile import print_profile, seeded_workspace
from bench.run import MODERN, MODERN_META


class McpClient:
    """One MCP client of the owner over `/mcp`, driven through the ASGI app in-process: the headers
    the bench sends (Bearer token, JSON; legacy: Mcp-Session-Id; modern: MCP-Protocol-Version and
    the Mcp-Method/Mcp-Name of each frame), no sockets, no uvicorn."""

    def __init__(self, app, token: str | None = None, era: str = "legacy"):
        from navmcp.identity import ensure_owner, mint_token
        from navmcp.web import create_app

        self.web = create_app(app)
        token = token or mint_token(app.secret, ensure_owner(app.store)["id"])
        self.headers = {"host": "127.0.0.1:8765", "authorization": f"Bearer {token}",
                        "content-type": "application/json", "accept": "application/json, text/event-stream"}
        self.loop = asyncio.new_event_loop()
        if era == "modern":
            self.headers["mcp-protocol-version"] = MODERN
            return
        status, hdrs, body = self.call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "profile", "version": "1"}}})
        assert status == 200, body
        self.headers["mcp-session-id"] = hdrs["mcp-session-id"]

    def call(self, body: dict | bytes, extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {**self.headers, **extra} if extra else self.headers
        scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "scheme": "http",
                 "client": ("127.0.0.1", 40000),
                 "headers": [(k.encode(), v.encode()) for k, v in headers.items()]}
        sent = False
        out: dict = {}

        async def receive():
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message):
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
                out["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
            else:
                out["body"] = message.get("body", b"")

        self.loop.run_until_complete(self.web(scope, receive, send))
        return out["status"], out["headers"], out["body"]


def navigate_frame(url: str, era: str = "legacy") -> bytes:
    params = {"name": "navigate", "arguments": {"url": url}}
    if era == "modern":
        params["_meta"] = MODERN_META
    return json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()


def navigate_call(client: McpClient, url: str, era: str = "legacy"):
    """A `client.call` of one navigate of `url` in `era`, its frame and headers made once."""
    frame = navigate_frame(url, era)
    extra = {"mcp-method": "tools/call", "mcp-name": "navigate"} if era == "modern" else None
    return lambda: client.call(frame, extra)


def main(argv: list[str] | None = None) -> int:
    era_parser = argparse.ArgumentParser(add_help=False)
    era_parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    known, rest = era_parser.parse_known_args(argv)
    args, fx = seeded_workspace("python -m bench.profile_http", __doc__, rest)

    from navmcp.app import App

    client = McpClient(App(), era=known.era)
    calls = [navigate_call(client, u, known.era) for u in fx.urls]
    for call in calls:
        status, _, body = call()
        assert status == 200 and b'"isError":false' in body, body[:300]
    times = []
    for n in range(args.calls * len(calls)):
        started = time.perf_counter()
        calls[n % len(calls)]()
        times.append(time.perf_counter() - started)
    print(f"{args.size:,} items: /mcp navigate ({known.era}) over the 5 URLs, in-process ASGI, median "
          f"{statistics.median(times) * 1000:.3f} ms, mean {statistics.mean(times) * 1000:.3f} ms "
          "(the mean is what throughput follows)")
    if args.cprofile:
        print_profile(lambda call: call(), calls, args.calls, "cumulative", 40)
    return 0


if __name__ == "__main__":
    sys.exit(main())
