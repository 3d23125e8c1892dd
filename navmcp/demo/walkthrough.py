"""A scripted agent: spawns the real stdio server and talks raw JSON-RPC to it, as Claude Code does.

Used by `navmcp demo` to show newcomers what an agent sees, and by the tests.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the checkout (navmcp/demo/ is two folders down), or site-packages


def server_command() -> list[str]:
    shim = ROOT / "bin" / "mcp-server"
    if shim.exists():
        return [str(shim)]
    return [sys.executable, "-P", "-m", "navmcp", "serve"]  # -P: nothing imported from the working directory


MODERN_VERSION = "2026-07-28"


class StdioClient:
    """A minimal MCP client over a subprocess's stdin/stdout (raw JSON-RPC lines), in either era:
    "legacy" (initialize, then plain requests) or "modern" (every request carries its `_meta`)."""

    def __init__(self, env: dict[str, str | None] | None = None, command: list[str] | None = None,
                 client_name: str = "navmcp-walkthrough", era: str = "legacy", **popen: Any):
        # A None value removes a variable from the inherited environment.
        full_env = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
        self.proc = subprocess.Popen(command or server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env, **popen)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr  # all three are pipes
        self.stdin, self.stdout, self.stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        self._ids = itertools.count(1)
        self.client_name = client_name
        self.era = era

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.stdin.write(data + b"\n")
        self.stdin.flush()

    def receive(self) -> Any:
        line = self.stdout.readline()
        if not line:
            raise EOFError("server closed stdout; stderr: " + self.stderr.read().decode(errors="replace"))
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if self.era == "modern":
            params = {**(params or {}), "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": "1"}}}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.receive()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        """The handshake (legacy), or `server/discover` (modern: there is no handshake)."""
        if self.era == "modern":
            return self.request("server/discover")
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
        for stream in (self.stdout, self.stderr):
            stream.close()
        return code

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


STUDIO = "/studios/demo"
# The demo's teammates beside the local owner: the first two of these whose handle is not the owner's.
TEAMMATES = (("ana", "Ana Lima"), ("ben", "Ben Okafor"), ("chen", "Chen Wei"))


class _Team:
    """The demo's other people, who work in-process (as they would through the web app), and the
    look-ups that make the demo repeatable: each piece is made once, whatever runs before."""

    def __init__(self, home: Path):
        from navmcp.app import App
        from navmcp.config import Config
        from navmcp.identity import add_user, ensure_owner, user_by_handle

        self.app = App(Config(home=home, database_url=None, token=None))
        self.owner = ensure_owner(self.app.store)
        self.mates = []
        for handle, name in [t for t in TEAMMATES if t[0] != self.owner["handle"]][:2]:
            with self.app.store.read() as tx:
                user = user_by_handle(tx, handle)
            self.mates.append(user or add_user(self.app.store, handle, name))

    def find(self, kind: str, title: str) -> str | None:
        """The URL of the demo studio's first item of `kind` called `title`, if there is one."""
        from navmcp.content.domain import KIND_LETTER

        row = self.app.store.read_one(
            "SELECT i.id FROM items i JOIN studios s ON s.id = i.studio_id WHERE s.handle = 'demo'"
            " AND i.kind = ? AND i.title = ? AND i.deleted_at IS NULL ORDER BY i.seq LIMIT 1", (kind, title))
        return f"{STUDIO}/{KIND_LETTER[kind]}/{row['id']}" if row else None

    def is_member(self, user) -> bool:
        return self.app.store.read_one(
            "SELECT 1 FROM memberships m JOIN studios s ON s.id = m.studio_id WHERE s.handle = 'demo'"
            " AND m.user_id = ?", (user["id"],)) is not None

    def act(self, user, url: str, action: str, **params: Any) -> str:
        return self.app.workspace.execute(user, url, action, params, client="navmcp-demo").url

    def accept_invitations(self, user) -> int:
        """`user` accepts the demo studio's invitations waiting for them, as in their browser (an
        agent cannot: add_member invites, and nobody is added without agreeing)."""
        from navmcp.identity import invitations

        with self.app.store.read() as tx:
            waiting = [i["id"] for i in invitations.addressed_to(tx, user["id"]) if i["studio"] == "demo"]
        for made in waiting:
            self.app.workspace.execute(user, "/inbox", "accept_invitation", {"invitation": made},
                                       client="navmcp-demo", browser=True)
        return len(waiting)

    def close(self) -> None:
        self.app.store.close()


def run(home: Path, say: Callable[[str], None] = print) -> dict[str, str]:
    """The demo: a studio of three people, then a scripted agent over real MCP. Returns the URLs
    the agent made. Running it again adds nothing: it finds what an earlier run made."""
    team = _Team(home)
    try:
        return _tour(team, home, say)
    finally:
        team.close()


def _tour(team: _Team, home: Path, say: Callable[[str], None]) -> dict[str, str]:
    env: dict[str, str | None] = {"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None,
                                  "NAVMCP_RATE_LIMIT": None}
    created: dict[str, str] = {}
    ana, ben = team.mates

    def show(label: str, result: dict[str, Any], lines: int = 14) -> None:
        text = text_of(result).rstrip().splitlines()
        say(f"\n\033[1m▶ {label}\033[0m" if sys.stdout.isatty() else f"\n▶ {label}")
        for line in text[:lines]:
            say("  " + line)
        if len(text) > lines:
            say(f"  … ({len(text) - lines} more lines)")

    def again(label: str) -> None:
        say(f"\n▶ {label}: already there from an earlier run")

    with StdioClient(env=env, client_name="navmcp-demo") as agent:
        info = agent.initialize()["result"]
        say(f"Connected to {info['serverInfo']['name']} {info['serverInfo']['version']} "
            f"(protocol {info['protocolVersion']}) over stdio, as @{team.owner['handle']}.")
        tools = agent.request("tools/list")["result"]["tools"]
        say("Tools: " + ", ".join(t["name"] for t in tools))
        if not agent.navigate(STUDIO).get("isError"):
            say("The demo studio is there from an earlier run: the agent finds its items again and adds nothing.")
        else:
            show("create_studio", agent.act("create_studio", url="/", handle="demo", name="Demo team",
                                            description="A workspace made by `navmcp demo`."), 4)
        for mate in team.mates:
            if not team.is_member(mate):
                show(f"add_member @{mate['handle']}",
                     agent.act("add_member", url=f"{STUDIO}/members", handle=mate["handle"]), 3)
                if team.accept_invitations(mate):
                    say(f"@{mate['handle']} accepts the invitation in their browser, and is in the studio.")

        if not (team.find("note", "Onboarding checklist") and team.find("decision", "Which day for the weekly demo?")
                and team.find("commitment", "Run the Friday retro")):
            say(f"\nMeanwhile @{ana['handle']} and @{ben['handle']} work in the studio too (as they would in the web app).")
        if not team.find("note", "Onboarding checklist"):
            team.act(ana, STUDIO, "create_note", title="Onboarding checklist",
                     body="1. Laptop and accounts\n2. Read the handbook\n3. Lunch with the team", tags=["hiring"])
        if not team.find("decision", "Which day for the weekly demo?"):
            weekly = team.act(ben, STUDIO, "create_decision", question="Which day for the weekly demo?",
                              options=["Tuesday", "Thursday"], tags=["meetings"])
            team.act(ben, weekly, "vote", votes=[{"option": "Thursday", "accept": True, "prefer": True}])
            team.act(ana, weekly, "vote", votes=[{"option": "Tuesday", "accept": True},
                                                 {"option": "Thursday", "accept": True, "prefer": True}])
            team.act(ana, weekly, "add_comment", body="Thursday suits the release train.")
        if not team.find("commitment", "Run the Friday retro"):
            retro = team.act(ben, STUDIO, "create_commitment", title="Run the Friday retro", critical_mass=3)
            team.act(ben, retro, "join_commitment")
            team.act(ana, retro, "join_commitment")
        show("navigate('/')  — what awaits you", agent.navigate("/"), 16)

        created["note"] = team.find("note", "Kick-off notes") or ""
        if created["note"]:
            again("create_note")
        else:
            note = agent.act("create_note", url=STUDIO, title="Kick-off notes",
                             body="We meet on Mondays.\n\nAgenda: roadmap, hiring, the offsite.", tags=["meetings"])
            created["note"] = note["structuredContent"]["url"]
            show("create_note", note, 4)
            team.act(ben, created["note"], "add_comment", body="Can we add the budget to the agenda?")
        created["decision"] = team.find("decision", "Where do we hold the offsite?") or ""
        if created["decision"]:
            again("create_decision")
        else:
            decision = agent.act("create_decision", url=STUDIO, question="Where do we hold the offsite?",
                                 options=["Lisbon", "Berlin", "Online"], tags=["offsite"])
            created["decision"] = decision["structuredContent"]["url"]
            show("create_decision", decision, 4)
            show("vote", agent.act("vote", url=created["decision"], votes=[
                {"option": "Lisbon", "accept": True, "prefer": True}, {"option": "Online", "accept": True}]), 4)
            team.act(ana, created["decision"], "vote", votes=[{"option": "Lisbon", "accept": True},
                                                               {"option": "Berlin", "accept": True, "prefer": True}])
            team.act(ben, created["decision"], "vote", votes=[{"option": "Lisbon", "accept": True, "prefer": True}])
        created["commitment"] = team.find("commitment", "Book the venue together") or ""
        if created["commitment"]:
            again("create_commitment")
        else:
            commitment = agent.act("create_commitment", url=STUDIO, title="Book the venue together",
                                   critical_mass=3, limit=5)
            created["commitment"] = commitment["structuredContent"]["url"]
            show("join_commitment", agent.act("join_commitment", url=created["commitment"]), 4)
            team.act(ana, created["commitment"], "join_commitment")
        show(f"navigate('{created['decision']}')  — with the team's votes", agent.navigate(created["decision"]), 30)
        show(f"navigate('{created['commitment']}')", agent.navigate(created["commitment"]), 12)
        show(f"navigate('{STUDIO}/search?q=offsite')", agent.navigate(f"{STUDIO}/search?q=offsite"), 12)
        show(f"navigate('{STUDIO}/cycles/today')", agent.navigate(f"{STUDIO}/cycles/today"), 12)
    return created
