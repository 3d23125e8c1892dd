"""A scripted agent: spawns the real stdio server and talks raw JSON-RPC to it, as Claude Code does.

Used by `navmcp demo` to show newcomers what an agent sees, and by the tests.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent


def server_command() -> list[str]:
    shim = ROOT / "bin" / "mcp-server"
    if shim.exists():
        return [str(shim)]
    return [sys.executable, "-m", "navmcp", "serve"]


class StdioClient:
    """A minimal MCP client over a subprocess's stdin/stdout (raw JSON-RPC lines)."""

    def __init__(self, env: dict[str, str | None] | None = None, command: list[str] | None = None,
                 client_name: str = "navmcp-walkthrough"):
        # A None value removes a variable from the inherited environment.
        full_env = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
        self.proc = subprocess.Popen(command or server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env)
        self._ids = itertools.count(1)
        self.client_name = client_name

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> Any:
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("server closed stdout; stderr: " + self.proc.stderr.read().decode(errors="replace"))
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.receive()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": self.client_name, "version": "1"}})
        self.notify("notifications/initialized")
        return reply

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in reply:
            raise RuntimeError(f"protocol error: {reply['error']}")
        return reply["result"]

    def navigate(self, url: str) -> dict[str, Any]:
        return self.call("navigate", url=url)

    def act(self, action: str, url: str | None = None, **params: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"action": action, "params": params}
        if url is not None:
            args["url"] = url
        return self.call("execute_action", **args)

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        return code

    def __enter__(self) -> "StdioClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


def run(home: Path, say: Callable[[str], None] = print) -> dict[str, str]:
    """The demo walkthrough. Returns the URLs it created."""
    env: dict[str, str | None] = {"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None,
                              "NAVMCP_RATE_LIMIT": None}
    created: dict[str, str] = {}

    def show(label: str, result: dict[str, Any], lines: int = 14) -> None:
        text = text_of(result).rstrip().splitlines()
        say(f"\n\033[1m▶ {label}\033[0m" if sys.stdout.isatty() else f"\n▶ {label}")
        for line in text[:lines]:
            say("  " + line)
        if len(text) > lines:
            say(f"  … ({len(text) - lines} more lines)")

    with StdioClient(env=env, client_name="navmcp-demo") as agent:
        info = agent.initialize()["result"]
        say(f"Connected to {info['serverInfo']['name']} {info['serverInfo']['version']} "
            f"(protocol {info['protocolVersion']}) over stdio.")
        tools = agent.request("tools/list")["result"]["tools"]
        say("Tools: " + ", ".join(t["name"] for t in tools))
        home_page = agent.navigate("/")
        show("navigate('/')", home_page, 8)
        studio = "/studios/demo"
        if agent.navigate(studio).get("isError"):
            show("create_studio", agent.act("create_studio", url="/", handle="demo", name="Demo team",
                                            description="A workspace made by `navmcp demo`."))
        note = agent.act("create_note", url=studio, title="Kick-off notes",
                         body="We meet on Mondays.\n\nAgenda: roadmap, hiring, the offsite.", tags=["meetings"])
        created["note"] = note["structuredContent"]["url"]
        show("create_note", note, 4)
        decision = agent.act("create_decision", url=studio, question="Where do we hold the offsite?",
                             options=["Lisbon", "Berlin", "Online"], tags=["offsite"])
        created["decision"] = decision["structuredContent"]["url"]
        show("create_decision", decision, 4)
        show("vote", agent.act("vote", url=created["decision"], votes=[
            {"option": "Lisbon", "accept": True, "prefer": True}, {"option": "Online", "accept": True}]), 4)
        commitment = agent.act("create_commitment", url=studio, title="Book the venue together",
                               critical_mass=2, limit=5)
        created["commitment"] = commitment["structuredContent"]["url"]
        show("join_commitment", agent.act("join_commitment", url=created["commitment"]), 4)
        show(f"navigate('{created['decision']}')", agent.navigate(created["decision"]), 30)
        show("navigate('/studios/demo/search?q=offsite')", agent.navigate(f"{studio}/search?q=offsite"), 12)
        show("navigate('/studios/demo/cycles/today')", agent.navigate(f"{studio}/cycles/today"), 12)
    return created
