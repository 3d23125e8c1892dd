"""Stored MCP sessions (HTTP `Mcp-Session-Id`): who, which client, and the navigation state.

Stored in the database, not in process memory, so several web processes can serve one session
and a restart loses nothing. Session ids are unguessable (256 bits) and bound to their user.

Bounded (docs/limits.md): a session unused for `idle` seconds has ended (its `last_seen` is kept
fresh while it is used); a user keeps at most `keep` sessions (opening one more deletes the
oldest, and the user's ended ones); an ended session (DELETE, idle, over the bound) is deleted.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

from navmcp.clock import ago, now
from navmcp.config import MCP_SESSION_IDLE_HOURS, MCP_SESSIONS_PER_USER
from navmcp.mcp.codec import encode
from navmcp.state import NavigationState
from navmcp.store import Row, Store, Tx

PARSED_STATES = 1024  # sessions whose last state JSON this process keeps parsed (cleared when full)
IDLE = MCP_SESSION_IDLE_HOURS * 3600  # seconds (App.config.mcp_session_idle_hours is what the server uses)
# A used session's `last_seen` is written again once it is older than this part of the idle time
# (a call that moves the navigation state writes it anyway).
SEEN_EVERY = 1 / 24


@dataclass
class StoredSession:
    id: str
    user_id: str
    client: str
    protocol_version: str
    state: NavigationState
    stored_state: str = ""  # the state's JSON as last read or written: `save` skips an unchanged state
    last_seen: str = ""


def create(store: Store, user_id: str, client: str, protocol_version: str, *, idle: float = IDLE,
           keep: int = MCP_SESSIONS_PER_USER, views: bool = False) -> StoredSession:
    """A new session of `user_id`'s; their idle and ended sessions, and those past the newest
    `keep` - 1, are deleted in the same transaction, so an `initialize` loop holds `keep` rows."""
    session = StoredSession(secrets.token_urlsafe(32), user_id, client[:100], protocol_version,
                            NavigationState(views=views))
    session.stored_state = _encode(session.state)
    stamp = session.last_seen = now()
    with store.write(user_id=user_id) as tx:
        tx.execute(
            "DELETE FROM mcp_sessions WHERE user_id = ? AND (ended_at IS NOT NULL OR last_seen < ? OR id NOT IN"
            " (SELECT id FROM mcp_sessions WHERE user_id = ? ORDER BY last_seen DESC, id LIMIT ?))",
            (user_id, ago(idle), user_id, max(0, keep - 1)))
        tx.execute(
            "INSERT INTO mcp_sessions (id, user_id, client, protocol_version, state, created_at, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session.id, user_id, session.client, protocol_version, session.stored_state, stamp, stamp))
    return session


def load(store: Store, session_id: str, user_id: str | None = None, *, idle: float = IDLE) -> StoredSession | None:
    """The live session with this id, or None if unknown, ended or idle too long.

    On the hosted store only `user_id`'s own sessions are visible (row-level security), so pass
    the user the request's token names; the caller still checks the session is bound to them."""
    with store.read(user_id=user_id) as tx:
        return load_in(tx, session_id, idle=idle)


def load_in(tx: Tx, session_id: str, *, idle: float = IDLE) -> StoredSession | None:
    """`load` inside a transaction the caller already holds."""
    row = tx.one("SELECT * FROM mcp_sessions WHERE id = ? AND ended_at IS NULL AND last_seen >= ?",
                 (session_id, ago(idle)))
    if row is None:
        return None
    return StoredSession(row["id"], row["user_id"], row["client"], row["protocol_version"],
                         _decode(session_id, row["state"]), row["state"], row["last_seen"])


# The user a Bearer token names (as `identity.user_by_id`) and, when it is live, the session the
# request names, in one statement; the caller checks the session is the user's.
_USER_AND_SESSION = """
    SELECT u.*, s.user_id AS session_user, s.client AS session_client, s.protocol_version AS session_version,
           s.state AS session_state, s.last_seen AS session_seen
      FROM users u LEFT JOIN mcp_sessions s ON s.id = ? AND s.ended_at IS NULL AND s.last_seen >= ?
     WHERE u.id = ? AND u.deleted_at IS NULL"""


def load_with_user(store: Store, user_id: str, session_id: str, *,
                   idle: float = IDLE) -> tuple[Row | None, StoredSession | None]:
    """(the user `user_id` if it exists, the live session `session_id` or None), read at once."""
    row = store.read_one(_USER_AND_SESSION, (session_id, ago(idle), user_id), user_id=user_id)
    if row is None:
        return None, None
    owner, client, version, state, seen = (row.pop("session_user"), row.pop("session_client"),
                                           row.pop("session_version"), row.pop("session_state"),
                                           row.pop("session_seen"))
    if owner is None:
        return row, None
    return row, StoredSession(session_id, owner, client, version, _decode(session_id, state), state, seen)


def save(store: Store, session: StoredSession, *, idle: float = IDLE) -> None:
    """Store the session's navigation state if it changed since it was read, or only its
    `last_seen` once that is old (one statement at most: the /mcp hot path runs this on every call)."""
    encoded = _encode(session.state)
    if encoded != session.stored_state or session.last_seen < ago(idle * SEEN_EVERY):
        session.last_seen = now()
        store.write_one("UPDATE mcp_sessions SET state = ?, last_seen = ? WHERE id = ? AND ended_at IS NULL",
                        (encoded, session.last_seen, session.id), user_id=session.user_id)
        session.stored_state = encoded
    _remember(session.id, encoded, session.state)  # also when unchanged: `_decode` handed it out


def end(store: Store, session_id: str, user_id: str | None = None) -> bool:
    """End a session: its row is deleted (nothing of an ended session is kept)."""
    with store.write(user_id=user_id) as tx:
        return tx.execute("DELETE FROM mcp_sessions WHERE id = ?", (session_id,)) > 0


# A session's next request usually reads back exactly the JSON this process wrote at the end of
# the last one; parsing it again is skipped by keeping that state, handed out once and only when
# the row just read holds that very text (so another process's write is always seen).
_parsed: dict[str, tuple[str, NavigationState]] = {}


def _encode(state: NavigationState) -> str:
    return encode(state.snapshot()).decode("utf-8")  # the protocol's C encoder (json.dumps runs Python)


def _decode(session_id: str, text: str) -> NavigationState:
    known = _parsed.pop(session_id, None)
    if known is not None and known[0] == text:
        return known[1]
    return NavigationState.restore(json.loads(text))


def _remember(session_id: str, text: str, state: NavigationState) -> None:
    if len(_parsed) >= PARSED_STATES:
        _parsed.clear()
    # a copy: the caller's object may still change; this one must stay the parse of `text`
    _parsed[session_id] = (text, state.copy())
