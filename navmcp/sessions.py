"""Stored MCP sessions (HTTP `Mcp-Session-Id`): who, which client, and the navigation state.

Stored in the database, not in process memory, so several web processes can serve one session
and a restart loses nothing. Session ids are unguessable (256 bits) and bound to their user.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

from navmcp.identity import now
from navmcp.state import NavigationState
from navmcp.store import Row, Store, Tx


@dataclass
class StoredSession:
    id: str
    user_id: str
    client: str
    protocol_version: str
    state: NavigationState


def create(store: Store, user_id: str, client: str, protocol_version: str) -> StoredSession:
    session = StoredSession(secrets.token_urlsafe(32), user_id, client[:100], protocol_version, NavigationState())
    stamp = now()
    with store.write(user_id=user_id) as tx:
        tx.execute(
            "INSERT INTO mcp_sessions (id, user_id, client, protocol_version, state, created_at, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session.id, user_id, session.client, protocol_version, json.dumps(session.state.snapshot()), stamp, stamp))
    return session


def load(store: Store, session_id: str, user_id: str | None = None) -> StoredSession | None:
    """The live session with this id, or None if unknown or ended.

    On the hosted store only `user_id`'s own sessions are visible (row-level security), so pass
    the user the request's token names; the caller still checks the session is bound to them."""
    with store.read(user_id=user_id) as tx:
        return load_in(tx, session_id)


def load_in(tx: Tx, session_id: str) -> StoredSession | None:
    """`load` inside a transaction the caller already holds."""
    row = tx.one("SELECT * FROM mcp_sessions WHERE id = ? AND ended_at IS NULL", (session_id,))
    if row is None:
        return None
    return StoredSession(row["id"], row["user_id"], row["client"], row["protocol_version"],
                         NavigationState.restore(json.loads(row["state"])))


# The user a Bearer token names (as `identity.user_by_id`) and, when it is live, the session the
# request names, in one statement; the caller checks the session is the user's.
_USER_AND_SESSION = """
    SELECT u.*, s.user_id AS session_user, s.client AS session_client, s.protocol_version AS session_version,
           s.state AS session_state
      FROM users u LEFT JOIN mcp_sessions s ON s.id = ? AND s.ended_at IS NULL
     WHERE u.id = ? AND u.deleted_at IS NULL"""


def load_with_user(store: Store, user_id: str, session_id: str) -> tuple[Row | None, StoredSession | None]:
    """(the user `user_id` if it exists, the live session `session_id` or None), read at once."""
    row = store.read_one(_USER_AND_SESSION, (session_id, user_id), user_id=user_id)
    if row is None:
        return None, None
    owner, client, version, state = (row.pop("session_user"), row.pop("session_client"), row.pop("session_version"),
                                     row.pop("session_state"))
    if owner is None:
        return row, None
    return row, StoredSession(session_id, owner, client, version, NavigationState.restore(json.loads(state)))


def save(store: Store, session: StoredSession) -> None:
    """Store the session's navigation state (one statement: the /mcp hot path runs it per call)."""
    store.write_one("UPDATE mcp_sessions SET state = ?, last_seen = ? WHERE id = ? AND ended_at IS NULL",
                    (json.dumps(session.state.snapshot()), now(), session.id), user_id=session.user_id)


def end(store: Store, session_id: str, user_id: str | None = None) -> bool:
    with store.write(user_id=user_id) as tx:
        return tx.execute("UPDATE mcp_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
                          (now(), session_id)) > 0
