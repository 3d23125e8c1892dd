"""The peer: the navmcp workspace served by the official MCP Python SDK's high-level server.

This is the server a Python developer would write instead of navmcp's hand-rolled one: `MCPServer`
(formerly FastMCP) from the `mcp` package, the two tools registered with decorators, each calling
the same `Workspace` for the same page or action, on the same database, acting as the same user (the local
owner, or NAVMCP_TOKEN's user, as bin/mcp-server does). Same work behind the tools, a different server stack in
front — that is what the benchmark compares.

The SDK runs sync tools in worker threads and starts each request as its own task, so calls can
overlap; the workspace holds one SQLite connection, so a lock serialises the calls (as it would in
any careful sync-SQLite server). Returning a `CallToolResult` gives the same markdown text and the
same `structuredContent` as navmcp.

    python bench/sdk_server.py                       # stdio
    python bench/sdk_server.py --http --port 8766    # Streamable HTTP at /mcp (JSON responses, sessions)
    python bench/sdk_server.py --http --stateless    # ... without sessions (what MCP 2026-07-28 clients get)

The SDK is dual-era on both transports: a 2026-07-28 request (per-request `_meta`) is served
statelessly, whatever mode it runs in.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp_types import CallToolResult, TextContent, ToolAnnotations  # noqa: E402

from navmcp.app import App  # noqa: E402
from navmcp.errors import NavError  # noqa: E402
from navmcp.mcp.tools import INSTRUCTIONS  # noqa: E402
from navmcp.state import NavigationState  # noqa: E402

app = App()
lock = threading.Lock()
state = NavigationState()  # one per process, like the stdio server (over HTTP: shared; the bench passes url)
server = MCPServer("navmcp-sdk", instructions=INSTRUCTIONS, log_level="WARNING")


def _error(message: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], structured_content=structured, is_error=True)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False))
def navigate(url: str) -> CallToolResult:
    """Open a page of the navmcp workspace by its URL-like path: markdown plus the actions valid there."""
    with lock:
        try:
            user = app.authenticate(app.config.token)
            page = app.workspace.page(user, url, "navmcp-sdk")
        except NavError as e:
            return _error(e.message)
        state.arrive(page.url, [a.name for a in page.actions])
        return CallToolResult(content=[TextContent(text=page.markdown)], structured_content=page.structured())


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def execute_action(action: str, params: dict[str, Any] | None = None, url: str | None = None) -> CallToolResult:
    """Run one action listed on a page (on `url`, or on the page you navigated to last)."""
    with lock:
        try:
            user = app.authenticate(app.config.token)
            result = app.workspace.execute(user, state.target(url), action, params, "navmcp-sdk")
        except NavError as e:
            structured = None
            if e.url is not None:
                structured = {"ok": False, "message": e.message, "url": e.url, "actions": e.available}
            return _error(e.message, structured)
        except Exception as e:  # NoCurrentPage and friends: teach, don't crash
            return _error(f"execute_action: {e}")
        actions = ", ".join(result.actions) or "none"
        text = f"✓ {result.message}\nURL: {result.url}\nAvailable there now: {actions}\n"
        return CallToolResult(content=[TextContent(text=text)], structured_content=result.structured())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--stateless", action="store_true", help="HTTP without sessions (the SDK's stateless mode)")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host=args.host, port=args.port, json_response=True,
                   stateless_http=args.stateless)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
