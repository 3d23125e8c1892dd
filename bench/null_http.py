"""The HTTP ceiling: what uvicorn and the bench's client allow when the server does nothing.

    .venv/bin/python -m bench.null_http [--rounds 3] [--era modern]  # a do-nothing /mcp beside navmcp web and the SDK

`--serve PORT` runs a do-nothing ASGI app that answers every POST /mcp with a canned 3 KB tool
result (202 for notifications), on the same uvicorn and HTTP protocol class as `navmcp web`
(`navmcp.web.server.protocol_class`). Without it, the three servers are driven alternately by the
bench's own `/mcp` measurement (4 sessions, 500 navigates each; `--era modern`: 4 stateless
MCP 2026-07-28 clients, the SDK in its stateless mode) on the 1,000-item database, which also
reads each server's CPU time per request. The do-nothing figure is the most any server could
reach in this harness on this machine; navmcp's distance to it is what navmcp web itself costs.

`--serve-raw PORT` does the same work on no ASGI server at all: an asyncio protocol feeding
httptools' parser and writing each answer whole (keep-alive, nothing else). Measured beside the
others, its distance to the do-nothing app is what uvicorn's ASGI cycle costs per request (the
task, scope and messages, the header checks): the part of every server's figure that neither
navmcp's pages nor its protocol core can remove.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

_RESULT = {"content": [{"type": "text", "text": "x" * 3000}], "isError": False}
_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "null", "version": "0"}}


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if b"notifications/" in body:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"mcp-session-id", b"null")]})
    await send({"type": "http.response.body",
                "body": _answer(body)})


def _answer(body: bytes) -> bytes:
    request = json.loads(body)
    result = _INIT if request.get("method") == "initialize" else _RESULT
    return json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": result}).encode()


class RawProtocol(asyncio.Protocol):
    """The do-nothing app's work with no ASGI server: httptools parses, each answer is one write."""

    def connection_made(self, transport) -> None:
        import httptools

        self.transport, self.parser, self.body = transport, httptools.HttpRequestParser(self), []

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_begin(self) -> None:
        self.body = []

    def on_body(self, chunk: bytes) -> None:
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        body = b"".join(self.body)
        if b"notifications/" in body:
            self.transport.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
            return
        out = _answer(body)
        self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: null\r\n"
                             b"content-length: %d\r\n\r\n" % len(out) + out)


def serve_raw(port: int) -> None:
    import uvloop

    async def forever() -> None:
        server = await asyncio.get_running_loop().create_server(RawProtocol, "127.0.0.1", port)
        await server.serve_forever()

    uvloop.install()
    asyncio.run(forever())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.null_http", description=__doc__.splitlines()[0])
    parser.add_argument("--serve", type=int, metavar="PORT", help="run the do-nothing server on this port")
    parser.add_argument("--serve-raw", type=int, metavar="PORT", help="the same work with no ASGI server")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    args = parser.parse_args(argv)
    if args.serve:
        import uvicorn

        from navmcp.web.server import protocol_class

        # as `navmcp web` runs it (navmcp.web.server.run): no proxy headers, access log or Server header
        uvicorn.run(app, host="127.0.0.1", port=args.serve, log_level="warning", http=protocol_class(),
                    proxy_headers=False, access_log=False, server_header=False)
        return 0
    if args.serve_raw:
        serve_raw(args.serve_raw)
        return 0
    from bench.run import PYTHON, SERVERS, Settings, measure_http, mint_token, prepare

    SERVERS["null"] = {"http": [PYTHON, "-m", "bench.null_http", "--serve", "{port}"]}
    SERVERS["raw"] = {"http": [PYTHON, "-m", "bench.null_http", "--serve-raw", "{port}"]}
    settings = Settings(sizes=[1000])
    fx = prepare(1000, settings)
    token, log = mint_token(fx), settings.workdir / "servers.log"
    prefix = "modern_" if args.era == "modern" else ""
    print(f"round | raw | null | navmcp | sdk | navmcp ÷ sdk | null ÷ sdk  (req/s, 4 {args.era} clients; "
          "the server's CPU ms per request in brackets)")
    names = ("raw", "null", "navmcp", "sdk")
    for r in range(args.rounds):
        order = names if r % 2 == 0 else names[::-1]
        got = {name: measure_http(name, fx, settings, log, None if name == "sdk" else token, args.era) for name in order}
        rps = {name: figures[prefix + ("http_4_clients_rps" if prefix else "http_4_sessions_rps")]
               for name, figures in got.items()}
        cpu = {name: figures[prefix + "http_cpu_ms_per_request"] for name, figures in got.items()}
        print(f"{r + 1} | " + " | ".join(f"{rps[n]:,.0f} ({cpu[n]:.3f})" for n in names)
              + f" | {rps['navmcp'] / rps['sdk']:.2f}x | {rps['null'] / rps['sdk']:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
