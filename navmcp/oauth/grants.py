"""What people approved, in the database: grants, their authorization codes and their rotating
refresh tokens (both stores; migrations 0016_oauth.sql and 20261126000030_oauth.sql).

A grant is one Allow on the consent page: one person, one client, its scopes and resource. It is
also a refresh-token family: refresh tokens rotate (each is spent when used), and one presented
again after it was spent revokes the whole grant, as does a code presented twice. Revoking a grant
also ends its access tokens, which name it (`gid`): the resource side asks `GrantCache` whether a
grant is live, and that answer is kept for a few seconds only.

Steps taken as the person (approving, listing, revoking) run as that user under row-level security;
the steps of the token endpoint, where nobody is known yet, go through SECURITY DEFINER functions on
the hosted store that answer about the one row whose secret is presented (their SQLite twins below).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from navmcp.clock import from_now, now
from navmcp.identity import new_id
from navmcp.oauth import CODE_SECONDS, REFRESH_TOKEN_DAYS
from navmcp.store import Row, Store, Tx

LIVE_SECONDS = 5.0  # how long a grant's "not revoked" is believed without asking the database again
TOUCH_SECONDS = 60.0  # a grant's last use is written at most this often (the Connected apps page shows it)


def digest(secret_value: str) -> str:
    return hashlib.sha256(secret_value.encode()).hexdigest()


def _hosted(store: Store) -> bool:
    return store.hosted


@dataclass(frozen=True)
class Grant:
    id: str
    user_id: str
    client_id: str
    client_name: str
    scope: str
    resource: str


# --- the consent page: a grant and its code ----------------------------------------------------


def new_code() -> str:
    return secrets.token_urlsafe(32)


def approve(store: Store, code: str, user_id: str, client_id: str, client_name: str, scope: str, resource: str,
            redirect_uri: str, code_challenge: str) -> str:
    """Record a person's Allow: a new grant, and its authorization `code` (stored hashed); the grant's id."""
    grant_id = new_id(16)
    with store.write(user_id=user_id) as tx:
        tx.execute("INSERT INTO oauth_grants (id, user_id, client_id, client_name, scope, resource, created_at)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)", (grant_id, user_id, client_id, client_name[:200], scope, resource,
                                                     now()))
        tx.execute("INSERT INTO oauth_codes (code_hash, grant_id, user_id, redirect_uri, code_challenge, expires_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", (digest(code), grant_id, user_id, redirect_uri, code_challenge,
                                                  from_now(timedelta(seconds=CODE_SECONDS))))
    return grant_id


def take_code(store: Store, code: str) -> Row:
    """Spend an authorization code: its grant's fields, redirect_uri and code_challenge, and
    `problem` (None, 'invalid', 'used', 'expired' or 'revoked'). A code spent before revokes its grant."""
    with store.write() as tx:
        if _hosted(store):
            row = tx.one("SELECT * FROM navmcp.oauth_take_code(?)", (digest(code),))
        else:
            row = _take_code_sql(tx, digest(code))
    if row["problem"] == "used":
        GrantCache.forget(row["grant_id"])
    return row


def _take_code_sql(tx: Tx, code_hash: str) -> Row:
    """What navmcp.oauth_take_code does on the hosted store."""
    empty = dict.fromkeys(("grant_id", "user_id", "client_id", "client_name", "scope", "resource", "redirect_uri",
                           "code_challenge"))
    code = tx.one("SELECT * FROM oauth_codes WHERE code_hash = ?", (code_hash,))
    if code is None:
        return {**empty, "problem": "invalid"}
    grant = tx.one("SELECT * FROM oauth_grants WHERE id = ?", (code["grant_id"],))
    owner = {"grant_id": grant["id"], "user_id": grant["user_id"], "client_id": grant["client_id"]}
    stamp = now()
    if code["used_at"] is not None:
        tx.execute("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (stamp, grant["id"]))
        return {**empty, **owner, "problem": "used"}
    tx.execute("UPDATE oauth_codes SET used_at = ? WHERE code_hash = ?", (stamp, code_hash))
    if code["expires_at"] <= stamp:
        return {**empty, **owner, "problem": "expired"}
    if grant["revoked_at"] is not None:
        return {**empty, **owner, "problem": "revoked"}
    tx.execute("UPDATE oauth_grants SET issued_at = ?, last_used_at = ? WHERE id = ?", (stamp, stamp, grant["id"]))
    return {**owner, "client_name": grant["client_name"], "scope": grant["scope"], "resource": grant["resource"],
            "redirect_uri": code["redirect_uri"], "code_challenge": code["code_challenge"], "problem": None}


# --- refresh tokens ---------------------------------------------------------------------------


def issue_refresh_token(store: Store, grant: Grant) -> str:
    token = secrets.token_urlsafe(32)
    with store.write(user_id=grant.user_id) as tx:
        tx.execute("INSERT INTO oauth_refresh_tokens (token_hash, grant_id, user_id, created_at, expires_at)"
                   " VALUES (?, ?, ?, ?, ?)", (digest(token), grant.id, grant.user_id, now(),
                                               from_now(timedelta(days=REFRESH_TOKEN_DAYS))))
    return token


def spend_refresh_token(store: Store, token: str, check: Callable[[Row], None] | None = None) -> Row:
    """Rotate: spend a refresh token. Its grant's fields and `problem` (None, 'invalid', 'reused',
    'expired' or 'revoked'); one spent before revokes its grant (the whole family). `check` judges
    the rest of the request (client, scope, resource) on a live token's row in the same
    transaction: what it raises is raised and the token stays unspent, so a refused refresh never
    turns the client's corrected retry into reuse."""
    with store.write() as tx:
        if _hosted(store):
            row = tx.one("SELECT * FROM navmcp.oauth_spend_refresh(?)", (digest(token),))
        else:
            row = _spend_refresh_sql(tx, digest(token))
        if row["problem"] is None and check is not None:
            check(row)  # raising rolls the spend back
    if row["problem"] == "reused":
        GrantCache.forget(row["grant_id"])
    return row


def _spend_refresh_sql(tx: Tx, token_hash: str) -> Row:
    """What navmcp.oauth_spend_refresh does on the hosted store."""
    empty = dict.fromkeys(("grant_id", "user_id", "client_id", "client_name", "scope", "resource"))
    row = tx.one("SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?", (token_hash,))
    if row is None:
        return {**empty, "problem": "invalid"}
    grant = tx.one("SELECT * FROM oauth_grants WHERE id = ?", (row["grant_id"],))
    owner = {"grant_id": grant["id"], "user_id": grant["user_id"], "client_id": grant["client_id"]}
    stamp = now()
    if row["spent_at"] is not None:
        tx.execute("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (stamp, grant["id"]))
        return {**empty, **owner, "problem": "reused"}
    if grant["revoked_at"] is not None:
        return {**empty, **owner, "problem": "revoked"}
    if row["expires_at"] <= stamp:
        return {**empty, **owner, "problem": "expired"}
    tx.execute("UPDATE oauth_refresh_tokens SET spent_at = ? WHERE token_hash = ?", (stamp, token_hash))
    tx.execute("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (stamp, grant["id"]))
    return {**owner, "client_name": grant["client_name"], "scope": grant["scope"], "resource": grant["resource"],
            "problem": None}


def refresh_token_owner(store: Store, token: str) -> Row | None:
    """{grant_id, user_id, client_id} of a refresh token, for its revocation (RFC 7009)."""
    with store.read() as tx:
        if _hosted(store):
            return tx.one("SELECT * FROM navmcp.oauth_refresh_owner(?)", (digest(token),))
        return tx.one("SELECT g.id AS grant_id, g.user_id, g.client_id FROM oauth_refresh_tokens r"
                      " JOIN oauth_grants g ON g.id = r.grant_id WHERE r.token_hash = ?", (digest(token),))


# --- a person's grants -----------------------------------------------------------------------


def revoke_grant(store: Store, user_id: str, grant_id: str) -> bool:
    with store.write(user_id=user_id) as tx:
        done = tx.execute("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                          (now(), grant_id, user_id)) > 0
    GrantCache.forget(grant_id)
    return done


def revoke_client(store: Store, user_id: str, client_id: str) -> int:
    """Revoke every grant `user_id` gave `client_id` (the Connected apps page's Revoke)."""
    with store.write(user_id=user_id) as tx:
        ids = [r["id"] for r in tx.all("SELECT id FROM oauth_grants WHERE user_id = ? AND client_id = ?"
                                       " AND revoked_at IS NULL", (user_id, client_id))]
        for grant_id in ids:
            tx.execute("UPDATE oauth_grants SET revoked_at = ? WHERE id = ?", (now(), grant_id))
    for grant_id in ids:
        GrantCache.forget(grant_id)
    return len(ids)


def has_approved(store: Store, user_id: str, client_id: str) -> bool:
    """Has `user_id` ever pressed Allow for `client_id` (a grant, live or not)?"""
    with store.read(user_id=user_id) as tx:
        return tx.one("SELECT 1 AS yes FROM oauth_grants WHERE user_id = ? AND client_id = ? LIMIT 1",
                      (user_id, client_id)) is not None


def connected_apps(store: Store, user_id: str) -> list[dict[str, Any]]:
    """The clients holding a live grant of `user_id`'s: name, scopes, when approved and last used."""
    with store.read(user_id=user_id) as tx:
        rows = tx.all("SELECT client_id, client_name, scope, created_at, last_used_at FROM oauth_grants"
                      " WHERE user_id = ? AND revoked_at IS NULL AND issued_at IS NOT NULL"
                      " ORDER BY client_id, created_at", (user_id,))
    apps: dict[str, dict[str, Any]] = {}
    for r in rows:
        app = apps.setdefault(r["client_id"], {"client_id": r["client_id"], "client_name": r["client_name"],
                                               "scopes": set(), "approved_at": r["created_at"], "last_used_at": None})
        app["client_name"] = r["client_name"]  # the latest approval's name
        app["scopes"] |= set(r["scope"].split())
        used = r["last_used_at"]
        if used and (app["last_used_at"] is None or used > app["last_used_at"]):
            app["last_used_at"] = used
    return sorted(apps.values(), key=lambda a: (a["client_name"].lower(), a["client_id"]))


# --- is a grant still live? (the resource side, per request) -----------------------------------


class GrantCache:
    """Whether a grant is live, believed for LIVE_SECONDS: revoking in this process forgets it at
    once; another process's revocation is seen within LIVE_SECONDS. Asking the database also
    records the grant's last use, at most every TOUCH_SECONDS."""

    _lock = threading.Lock()
    _live: dict[str, float] = {}  # grant id → believed live until (monotonic)
    _touched: dict[str, float] = {}  # grant id → last use written at (monotonic)
    LIMIT = 4096

    @classmethod
    def forget(cls, grant_id: str) -> None:
        with cls._lock:
            cls._live.pop(grant_id, None)

    @classmethod
    def live(cls, store: Store, user_id: str, grant_id: str) -> bool:
        moment = time.monotonic()
        if cls._live.get(grant_id, 0.0) > moment:
            return True
        touch = cls._touched.get(grant_id, 0.0) + TOUCH_SECONDS <= moment
        with store.write(user_id=user_id) if touch else store.read(user_id=user_id) as tx:
            row = tx.one("SELECT revoked_at FROM oauth_grants WHERE id = ? AND user_id = ?", (grant_id, user_id))
            live = row is not None and row["revoked_at"] is None
            if live and touch:
                tx.execute("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (now(), grant_id))
        with cls._lock:
            if len(cls._live) >= cls.LIMIT:
                cls._live.clear()
                cls._touched.clear()
            if live:
                cls._live[grant_id] = moment + LIVE_SECONDS
                if touch:
                    cls._touched[grant_id] = moment
            else:
                cls._live.pop(grant_id, None)
        return live
