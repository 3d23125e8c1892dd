"""Where a `/mcp` call's time goes inside `navmcp web`, in-process (no sockets, no uvicorn).

    .venv/bin/python -m bench.profile_http --size 1000 [--cprofile]

Drives the ASGI app directly with the same requests the bench sends (Bearer token,
Mcp-Session-Id, JSON), navigating over the benchmarked URLs so the session moves on every call,
and prints the median per call (with --cprofile, the top functions). `bench.instructions` counts
the same call (`mcp:cycle`) under valgrind. The difference between this and the bench's
per-request time is uvicorn's HTTP parsing and the socket.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

from bench.profile import print_profile, seeded_workspace


class McpClient:
    """One MCP session of the owner over `/mcp`, driven through the ASGI app in-process: the headers
    the bench sends (Bearer token, Mcp-Session-Id, JSON), no sockets, no uvicorn."""

    def __init__(self, app, token: str | None = None):
        from navmcp.identity import ensure_owner, mint_token
        from navmcp.web import create_app

        self.web = create_app(app)
        token = token or mint_token(app.secret, ensure_owner(app.store)["id"])
        self.headers = {"host": "127.0.0.1:8765", "authorization": f"Bearer {token}",
                        "content-type": "application/json", "accept": "application/json, text/event-stream"}
        self.loop = asyncio.new_event_loop()
        status, hdrs, body = self.call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "profile", "version": "1"}}})
        assert status == 200, body
        self.headers["mcp-session-id"] = hdrs["mcp-session-id"]

    def call(self, body: dict | bytes) -> tuple[int, dict[str, str], bytes]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "scheme": "http",
                 "client": ("127.0.0.1", 40000),
                 "headers": [(k.encode(), v.encode()) for k, v in self.headers.items()]}
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


def navigate_frame(url: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "navigate", "arguments": {"url": url}}}).encode()


def main(argv: list[str] | None = None) -> int:
    args, fx = seeded_workspace("python -m bench.profile_http", __doc__, argv)

    from navmcp.app import App

    client = McpClient(App())
    frames = [navigate_frame(u) for u in fx.urls]
    for f in frames:
        status, _, body = client.call(f)
        assert status == 200 and b'"isError":false' in body, body[:300]
    times = []
    for n in range(args.calls * len(frames)):
        started = time.perf_counter()
        client.call(frames[n % len(frames)])
        times.append(time.perf_counter() - started)
    print(f"{args.size:,} items: /mcp navigate over the 5 URLs, in-process ASGI, median "
          f"{statistics.median(times) * 1000:.3f} ms, mean {statistics.mean(times) * 1000:.3f} ms "
          "(the mean is what throughput follows)")
    if args.cprofile:
        print_profile(client.call, frames, args.calls, "cumulative", 40)
    return 0


if __name__ == "__main__":
    sys.exit(main())
