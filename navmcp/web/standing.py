"""What let an event stream open, and whether it still holds: a stream lasts only as long as the
cookie session, the OAuth grant or the token its opener showed.

A `Standing` names them: the cookie session (as stored, hashed), the OAuth grant an access token
names, the token's expiry, and the user. `ended` asks the database, for many at once, which of
them have ended since (signed out, session expired, app revoked, account deleted), so a process
learns of an ending done by any other process from the database alone, never from memory. It
is one read per call however many streams ask (on PostgreSQL one SECURITY DEFINER function,
`navmcp.live_standing`, since the asker is no one user; migration 20261128000035).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from navmcp.clock import now
from navmcp.store import Store

CHUNK = 500  # ids per IN (...) on SQLite

SIGNED_OUT = "you signed out, or your session ended: sign in again to keep watching"
REVOKED = "access was revoked: authorize this app again to keep watching"
EXPIRED = "your token expired: get a new one to keep watching"
DELETED = "your account was deleted"


@dataclass(frozen=True)
class Standing:
    """What a stream's opener showed. `session`: a cookie session's stored id (`web_sessions.id_hash`);
    `grant`: the OAuth grant an access token names; `expires`: the token's `exp` (Unix time)."""

    user_id: str
    session: str | None = None
    grant: str | None = None
    expires: float | None = None


def ended(store: Store, standings: Iterable[Standing], at: float | None = None) -> dict[Standing, str]:
    """Those of `standings` that no longer hold, each with why, in words for the person."""
    at = time.time() if at is None else at
    gone: dict[Standing, str] = {}
    rest = []
    for s in set(standings):
        if s.expires is not None and s.expires <= at:
            gone[s] = EXPIRED
        else:
            rest.append(s)
    if not rest:
        return gone
    users, sessions, grants = _live(store, {s.user_id for s in rest}, {s.session for s in rest if s.session},
                                    {s.grant for s in rest if s.grant})
    for s in rest:
        if s.user_id not in users:
            gone[s] = DELETED
        elif s.session is not None and s.session not in sessions:
            gone[s] = SIGNED_OUT
        elif s.grant is not None and s.grant not in grants:
            gone[s] = REVOKED
    return gone


def _live(store: Store, users: set[str], sessions: set[str], grants: set[str]) -> tuple[set[str], ...]:
    """(users not deleted, sessions neither ended nor expired, grants not revoked) among those given."""
    with store.read() as tx:
        if store.hosted:
            rows = tx.tuples("SELECT kind, id FROM navmcp.live_standing(?, ?, ?)",
                             (sorted(users), sorted(sessions), sorted(grants)))
            found: dict[str, set[str]] = {"user": set(), "session": set(), "grant": set()}
            for kind, id_ in rows:
                found[kind].add(id_)
            return found["user"], found["session"], found["grant"]
        stamp = now()
        return (_among(tx, "SELECT id FROM users WHERE deleted_at IS NULL AND id IN ({})", users, ()),
                _among(tx, "SELECT id_hash FROM web_sessions WHERE ended_at IS NULL AND expires_at > ?"
                           " AND id_hash IN ({})", sessions, (stamp,)),
                _among(tx, "SELECT id FROM oauth_grants WHERE revoked_at IS NULL AND id IN ({})", grants, ()))


def _among(tx, sql: str, ids: set[str], before: tuple) -> set[str]:
    found: set[str] = set()
    ordered = sorted(ids)
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start:start + CHUNK]
        found.update(row[0] for row in tx.tuples(sql.format(", ".join("?" * len(chunk))), (*before, *chunk)))
    return found
