"""Crowds: many agents acting at once on the same items, each logging what it was told.

An `Agent` is anything with `call(tool, **arguments) -> tool result`; `StdioProcess` is one (a real
`bin/mcp-server` per agent), and so are `http.HttpAgent` (one `Mcp-Session-Id` per agent against
`/mcp`) and `http.FormAgent` (a browser posting the HTML forms with its cookie and CSRF token).
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

BUSY = re.compile(r"lock|busy|database|sqlite|internal error", re.IGNORECASE)


class Agent(Protocol):
    def call(self, tool: str, **arguments: Any) -> dict[str, Any]: ...


@dataclass
class Entry:
    action: str
    url: str
    params: dict[str, Any]
    ok: bool
    text: str


@dataclass
class Log:
    name: str
    entries: list[Entry] = field(default_factory=list)
    crashed: str | None = None

    def acked(self, action: str) -> list[Entry]:
        return [e for e in self.entries if e.action == action and e.ok]


def act(agent: Agent, log: Log, action: str, url: str, **params: Any) -> Entry:
    result = agent.call("execute_action", action=action, url=url, params=params)
    entry = Entry(action, url, params, not result["isError"], result["content"][0]["text"])
    log.entries.append(entry)
    return entry


def run(agents: dict[str, Agent], script: Callable[[str, Agent, Log, random.Random], None],
        seed: int = 0) -> dict[str, Log]:
    """Run `script` for every agent at once (threads released together); return their logs."""
    logs = {name: Log(name) for name in agents}
    start = threading.Barrier(len(agents))

    def body(name: str) -> None:
        start.wait()
        try:
            script(name, agents[name], logs[name], random.Random(f"{seed}-{name}"))
        except Exception as e:  # noqa: BLE001 — reported by the test through the log
            logs[name].crashed = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=body, args=(name,)) for name in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return logs


def busy_failures(logs: dict[str, Log]) -> list[str]:
    """Refusals that blame the database (locked, busy, internal): there must be none."""
    return [f"{log.name}: {e.action}: {e.text}" for log in logs.values() for e in log.entries
            if not e.ok and BUSY.search(e.text)]
