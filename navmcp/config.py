"""Configuration from the environment: where data lives, which store, which identity."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "navmcp"


def command_path() -> str:
    """How to run this navmcp again: plain `navmcp` when it is on PATH, else its full path."""
    import shutil
    import sys

    beside = Path(sys.executable).parent / "navmcp"
    if shutil.which("navmcp") == str(beside) or not beside.exists():
        return "navmcp"
    return str(beside)


def navmcp_command(home: Path, database_url: str | None = None) -> str:
    """The command that acts on this workspace: `navmcp`, or `navmcp --home DIR` when it is not the
    default one (without it, `user add`, `login-link` and `token` act on the default workspace)."""
    import shlex

    if database_url or home.expanduser().resolve() == default_home().resolve():
        return command_path()
    return f"{command_path()} --home {shlex.quote(str(home))}"


# What navmcp keeps in its home: the SQLite file with its WAL and shared-memory files, and the
# signing secret. Only these are made private on open: NAVMCP_HOME may name a folder that also
# holds files of the user's own.
HOME_FILES = ("navmcp.db", "navmcp.db-wal", "navmcp.db-shm", "navmcp.db-journal", "secret")
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600
log = logging.getLogger("navmcp.config")


def ensure_home(home: Path) -> Path:
    """The data directory, made if missing, readable by its owner only; a clear refusal when it
    can't be made (a file in its place, no right to create it), in the CLI and as a tool error over
    MCP, instead of an internal error. A home made by an older navmcp or under a loose umask has its
    modes tightened here (one line on stderr): every studio is in these files."""
    try:
        home.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    except OSError as e:
        from navmcp.errors import NavError

        raise NavError(f"server misconfigured: cannot use {str(home)!r} as the data directory (NAVMCP_HOME):"
                       f" {e.strerror or e}") from None
    _make_private(home)
    return home


def _make_private(home: Path) -> None:
    fixed = []
    for path in (home, *(home / name for name in HOME_FILES)):
        try:
            st = path.stat()
            # Someone else's folder is theirs to set; and a sticky one (/tmp, given as NAVMCP_HOME or
            # as the folder of a database file) is shared by design: run as root, closing it would
            # lock every other account out of it. navmcp's own files in it are closed all the same.
            shared = path == home and st.st_mode & stat.S_ISVTX
            if st.st_mode & 0o077 and st.st_uid == os.geteuid() and not shared:
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
                fixed.append(path.name if path != home else str(home))
        except FileNotFoundError:
            pass
        except OSError as e:  # a read-only file system, say: the files stay as they are, and we say so
            log.warning("could not make %s readable by its owner only: %s", path, e.strerror or e)
    if fixed:
        log.warning("made the navmcp home readable by its owner only (it was open to other accounts): %s",
                    ", ".join(fixed))


# What storage may hold (docs/limits.md): the defaults of the settings below.
AUDIT_RETENTION_DAYS = 365  # audit lines older than this are deleted; 0 keeps them forever
MCP_SESSION_IDLE_HOURS = 24.0  # an MCP session (HTTP) unused this long has ended
MCP_SESSIONS_PER_USER = 100  # a user's newest MCP sessions kept; opening one more ends the oldest

N = TypeVar("N", int, float)


def _setting(env: Mapping[str, str], name: str, default: N, kind: Callable[[str], N], least: N) -> N:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value != value or value < least:  # (NaN is no number either)
        from navmcp.errors import NavError

        raise NavError(f"server misconfigured: {name}={raw[:40]!r} must be a number of at least {least}")
    return value


@dataclass(frozen=True)
class Config:
    home: Path
    database_url: str | None
    token: str | None
    # The change feed's own connection (LISTEN needs a session): NAVMCP_FEED_DATABASE_URL, where
    # NAVMCP_DATABASE_URL is a transaction-mode pooler's; None: the same URL.
    feed_database_url: str | None = None
    # Supabase Auth (hosted): the project's JWT secret (HS256) and/or its URL (JWKS for RS/ES keys).
    supabase_jwt_secret: str | None = None
    supabase_url: str | None = None
    rate_limit: str | None = None  # NAVMCP_RATE_LIMIT, e.g. "60/60s"; None or "off" = no limit
    audit_retention_days: int = AUDIT_RETENTION_DAYS  # NAVMCP_AUDIT_RETENTION_DAYS
    mcp_session_idle_hours: float = MCP_SESSION_IDLE_HOURS  # NAVMCP_MCP_SESSION_IDLE_HOURS
    mcp_sessions_per_user: int = MCP_SESSIONS_PER_USER  # NAVMCP_MCP_SESSIONS_PER_USER

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        home = Path(env["NAVMCP_HOME"]).expanduser() if env.get("NAVMCP_HOME") else default_home()
        return cls(
            home=home,
            database_url=env.get("NAVMCP_DATABASE_URL") or None,
            feed_database_url=env.get("NAVMCP_FEED_DATABASE_URL") or None,
            # Set but empty is a token, a bad one: only an unset NAVMCP_TOKEN means the local owner.
            token=env.get("NAVMCP_TOKEN"),
            supabase_jwt_secret=env.get("SUPABASE_JWT_SECRET") or None,
            supabase_url=env.get("SUPABASE_URL") or None,
            rate_limit=env.get("NAVMCP_RATE_LIMIT") or None,
            audit_retention_days=_setting(env, "NAVMCP_AUDIT_RETENTION_DAYS", AUDIT_RETENTION_DAYS, int, 0),
            mcp_session_idle_hours=_setting(env, "NAVMCP_MCP_SESSION_IDLE_HOURS", MCP_SESSION_IDLE_HOURS, float, 0.01),
            mcp_sessions_per_user=_setting(env, "NAVMCP_MCP_SESSIONS_PER_USER", MCP_SESSIONS_PER_USER, int, 1),
        )


RUNNING_FILE = "web.json"  # in NAVMCP_HOME while `navmcp web` runs: its address and process id


def running_base_url(home: Path) -> str | None:
    """The address of the `navmcp web` serving this home, while one runs (it records it on start)."""
    try:
        record = json.loads((home / RUNNING_FILE).read_text())
        os.kill(int(record["pid"]), 0)  # a record left by a server that was killed is not an address
    except PermissionError:  # alive, and someone else's
        pass
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record["base_url"] if isinstance(record.get("base_url"), str) else None
