"""The floor: the barest JSON-RPC loop over the same workspace — what no server stack can beat.

The issue behind the benchmark says "a bare JSON-RPC loop over the same SQLite and Jinja work"
reaches its targets. This is that loop, so the claim can be checked in the same run instead of
argued: read a line, `json.loads`, call `Workspace.page`/`execute`, `json.dumps`, write. It
answers only what the bench sends (initialize, notifications, tools/call) and checks nothing —
no validation, no per-call authentication, no error mapping beyond a tool error, no size limits.
Not a server to use; a measuring stick. With `--with-bare` the bench runs it beside the other two:
the ratio bare ÷ SDK is the most any server can reach over this workspace work, so a target it
misses is missed because of the work both servers share, not because of navmcp's stack.

    python bench/bare_server.py    # stdio only
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from navmcp.app import App  # noqa: E402
from navmcp.errors import NavError  # noqa: E402


def main() -> int:
    app = App()
    workspace, user, out = None, None, sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bare", "version": "0"}}
        else:  # tools/call
            if workspace is None:
                workspace, user = app.workspace, app.authenticate(app.config.token)
            args = params["arguments"]
            try:
                if params["name"] == "navigate":
                    page = workspace.page(user, args["url"], "bare")
                    result = {"content": [{"type": "text", "text": page.markdown}],
                              "structuredContent": page.structured(), "isError": False}
                else:
                    done = workspace.execute(user, args["url"], args["action"], args.get("params"), "bare")
                    text = (f"✓ {done.message}\nURL: {done.url}\n"
                            f"Available there now: {', '.join(done.actions) or 'none'}\n")
                    result = {"content": [{"type": "text", "text": text}], "structuredContent": done.structured(),
                              "isError": False}
            except NavError as e:
                result = {"content": [{"type": "text", "text": e.message}], "isError": True}
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result},  # ASCII, json's default
                             separators=(",", ":")).encode() + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
