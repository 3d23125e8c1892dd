"""Navigation state: where one session is, what it may do there, and where it has been.

One object per conversation that has an identity of its own (a stdio process, a legacy
`Mcp-Session-Id` over HTTP). It is a convenience, not a gate: `execute_action` with a `url` needs no
prior navigate, and every action is re-validated against fresh data when it runs. Without a `url`,
the action targets the page navigated to last. A modern (2026-07-28) HTTP request belongs to no
conversation: its state remembers nothing (`remembers=False`), and a missing `url` is an error that
says so.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

HISTORY_LENGTH = 20


class NoCurrentPage(Exception):
    pass


@dataclass
class NavigationState:
    current_url: str | None = None
    actions: list[str] = field(default_factory=list)
    history: deque[str] = field(default_factory=lambda: deque(maxlen=HISTORY_LENGTH))
    remembers: bool = True
    # The client renders MCP Apps views (declared in its legacy initialize; navmcp.mcp.views): kept with
    # the state so a stored HTTP session's later calls know it.
    views: bool = False

    def arrive(self, url: str, actions: list[str]) -> None:
        """Record that the session now looks at `url`, where `actions` are valid."""
        if self.current_url and self.current_url != url:
            self.history.append(self.current_url)
        self.current_url = url
        self.actions = list(actions)

    def target(self, url: str | None) -> str:
        """The page an action runs on: the one named, else the current one."""
        if url:
            return url
        if not self.remembers:
            raise NoCurrentPage(
                "pass `url`, the page the action is on (e.g. url='/studios/team/d/abc123'): over MCP 2026-07-28 "
                "on HTTP every request stands alone, so there is no page you navigated to last to fall back on.")
        if self.current_url is None:
            raise NoCurrentPage(
                "no current page in this session: pass `url` (the page the action is on), "
                "or navigate to the page first. Start at '/'.")
        return self.current_url

    def copy(self) -> NavigationState:
        """A copy that later changes to this state leave as it is."""
        return NavigationState(self.current_url, list(self.actions), self.history.copy(), self.remembers, self.views)

    def snapshot(self) -> dict[str, Any]:
        snapshot: dict[str, Any] = {"current_url": self.current_url, "actions": self.actions, "history": list(self.history)}
        if self.views:
            snapshot["views"] = True
        return snapshot

    @classmethod
    def restore(cls, data: dict[str, Any]) -> NavigationState:
        state = cls(data.get("current_url"), list(data.get("actions", [])), views=data.get("views") is True)
        state.history.extend(data.get("history", []))
        return state
