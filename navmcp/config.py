"""Configuration from the environment: where data lives, which store, which identity."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "navmcp"


@dataclass(frozen=True)
class Config:
    home: Path
    database_url: str | None
    token: str | None
    rate_limit: str | None = None  # NAVMCP_RATE_LIMIT, e.g. "60/60s"; None or "off" = no limit

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Config":
        env = os.environ if env is None else env
        home = Path(env["NAVMCP_HOME"]).expanduser() if env.get("NAVMCP_HOME") else default_home()
        return cls(
            home=home,
            database_url=env.get("NAVMCP_DATABASE_URL") or None,
            token=env.get("NAVMCP_TOKEN") or None,
            rate_limit=env.get("NAVMCP_RATE_LIMIT") or None,
        )
