"""Configuration from the environment: where data lives, which store, which identity."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "navmcp"


def ensure_home(home: Path) -> Path:
    """The data directory, made if missing; a clear refusal when it can't be (a file in its place, no
    right to create it), in the CLI and as a tool error over MCP, instead of an internal error."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from navmcp.errors import NavError

        raise NavError(f"server misconfigured: cannot use {str(home)!r} as the data directory (NAVMCP_HOME):"
                       f" {e.strerror or e}") from None
    return home


@dataclass(frozen=True)
class Config:
    home: Path
    database_url: str | None
    token: str | None
    # Supabase Auth (hosted): the project's JWT secret (HS256) and/or its URL (JWKS for RS/ES keys).
    supabase_jwt_secret: str | None = None
    supabase_url: str | None = None
    rate_limit: str | None = None  # NAVMCP_RATE_LIMIT, e.g. "60/60s"; None or "off" = no limit

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Config":
        env = os.environ if env is None else env
        home = Path(env["NAVMCP_HOME"]).expanduser() if env.get("NAVMCP_HOME") else default_home()
        return cls(
            home=home,
            database_url=env.get("NAVMCP_DATABASE_URL") or None,
            token=env.get("NAVMCP_TOKEN") or None,
            supabase_jwt_secret=env.get("SUPABASE_JWT_SECRET") or None,
            supabase_url=env.get("SUPABASE_URL") or None,
            rate_limit=env.get("NAVMCP_RATE_LIMIT") or None,
        )
