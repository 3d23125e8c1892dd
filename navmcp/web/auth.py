"""Who is asking over HTTP: one-time login links, cookie sessions, CSRF tokens, Bearer tokens
(navmcp's own, Supabase's, and OAuth access tokens for /mcp).

Humans sign in by following a login link (`navmcp web` prints one for the local owner, `navmcp
login-link HANDLE` for anyone): the link's token is single-use and expires. Opening it (GET) only
shows whom it signs in; the button there (POST) spends it and opens a cookie session (HttpOnly,
SameSite=Lax) stored in the database, so link previews and HEAD requests spend nothing. A browser
sends a host's cookies to every port of it (docs/security.md): the cookie's name is this instance's
own (`cookie_name`: `__Host-` and Secure behind HTTPS), and a session is stored under a hash bound
to the instance that opened it (`session_hash`), so no other instance's session passes here. Scripts
and agents send `Authorization: Bearer <navmcp token>` instead. Only SHA-256 hashes of link tokens and session
ids are stored. Forms of a cookie session carry a CSRF token derived from the session id with the
local secret, so another site can't make a signed-in browser act.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from navmcp.clock import from_now, now
from navmcp.errors import AuthError
from navmcp.identity import Access, user_by_id, verify_token
from navmcp.oauth.grants import GrantCache
from navmcp.store import Row, Store

COOKIE = "navmcp_session"  # the start of the cookie's name (see cookie_name)
LINK_MINUTES = 15
SESSION_DAYS = 14


def _hash(secret_value: str) -> str:
    return hashlib.sha256(secret_value.encode()).hexdigest()


def instance_id(secret: bytes) -> str:
    """This instance's id: every process sharing the signing secret (behind one load balancer) is
    one instance; another navmcp, with a home of its own, is another."""
    return hmac.new(secret, b"navmcp instance", hashlib.sha256).hexdigest()[:16]


def session_hash(session_id: str, instance: str = "") -> str:
    """What a session is stored under: the hash of its id bound to the instance that opened it."""
    return _hash(instance + ":" + session_id if instance else session_id)


def cookie_name(instance: str, secure: bool) -> str:
    """The session cookie's name: this instance's own, so that another instance on another port of
    the same host (whose cookies the browser keeps in the same jar) neither replaces nor is sent
    ours under its name; behind HTTPS with the `__Host-` prefix (Secure, Path=/, no Domain: only
    a secure page of this very host can set it)."""
    return ("__Host-" if secure else "") + f"{COOKIE}_{instance[:8]}"


# --- login links ------------------------------------------------------------------------------


def _hosted(store: Store) -> bool:
    """The hosted store (PostgreSQL with row-level security): steps taken before the user is known
    go through SECURITY DEFINER functions that answer about one secret's row only
    (supabase/migrations/*_web_sessions.sql)."""
    return store.hosted


def create_login_link(store: Store, user_id: str, base_url: str, minutes: float = LINK_MINUTES) -> str:
    """A URL that signs `user_id` in once, within `minutes`."""
    token = secrets.token_urlsafe(32)
    with store.write(user_id=user_id) as tx:  # acting as the user it signs in (RLS: links for yourself)
        tx.execute("INSERT INTO login_links (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                   (_hash(token), user_id, now(), from_now(timedelta(minutes=minutes))))
    return f"{base_url.rstrip('/')}/login?token={token}"


_LINK_PROBLEMS = {
    "invalid": "this login link is not valid: ask for a new one with `navmcp login-link HANDLE`",
    "used": "this login link was already used (links work once): ask for a new one",
    "expired": "this login link has expired: ask for a new one with `navmcp login-link HANDLE`",
}


def redeem_login_link(store: Store, token: str, instance: str = "") -> str:
    """Spend a login token (single use) and open a web session of `instance`'s; returns the new
    session id."""
    session_id = secrets.token_urlsafe(32)
    with store.write() as tx:
        outcome = _spend_link(store, tx, token, session_hash(session_id, instance))
    if outcome["problem"] is not None:
        raise AuthError(_LINK_PROBLEMS[outcome["problem"]])
    return session_id


class _Undo(Exception):
    """Rolls back the transaction it is raised in."""


def login_link_live(store: Store, token: str) -> bool:
    """Whether a login token is one that is neither used nor expired: one indexed read, for an
    address over its bad-token limit (navmcp.web.limits)."""
    with store.read() as tx:
        if _hosted(store):  # no user yet: only the holder of the token can name the row
            return bool(tx.scalar("SELECT navmcp.login_link_live(?)", (_hash(token),)))
        return tx.scalar("SELECT 1 FROM login_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
                         (_hash(token), now())) is not None


def login_link_user(store: Store, token: str) -> Row:
    """The user a login token would sign in, without spending it; an `AuthError` as redeeming would
    raise. The redemption itself runs and is rolled back, so the verdict is exactly the one a
    redemption would give (and on the hosted store a link row is reachable only through it)."""
    outcome: Row = {}
    try:
        with store.write() as tx:
            outcome = _spend_link(store, tx, token, _hash(secrets.token_urlsafe(32)))
            raise _Undo
    except _Undo:
        pass
    if outcome["problem"] is not None:
        raise AuthError(_LINK_PROBLEMS[outcome["problem"]])
    with store.read(user_id=outcome["user_id"]) as tx:  # as that user: the token's holder may sign in as them
        user = user_by_id(tx, outcome["user_id"])
    if user is None:  # deleted since the link was made
        raise AuthError(_LINK_PROBLEMS["invalid"])
    return user


def _spend_link(store: Store, tx, token: str, stored_as: str) -> Row:
    """Spend the link and open the session stored as `stored_as` inside `tx`: {"user_id", "problem"},
    problem None on success."""
    args = (_hash(token), stored_as, from_now(timedelta(days=SESSION_DAYS)))
    if _hosted(store):  # no user yet: the function checks and spends the link itself
        return tx.one("SELECT * FROM navmcp.redeem_login_link(?, ?, ?)", args)
    return _redeem_sql(tx, *args)


def open_session(store: Store, user_id: str, instance: str = "") -> str:
    """A new web session of `instance`'s for a user whose identity was just proven (e.g. a verified
    Supabase access token); returns the session id for the cookie."""
    session_id = secrets.token_urlsafe(32)
    with store.write(user_id=user_id) as tx:  # acting as that user (RLS: you open only your own)
        tx.execute("INSERT INTO web_sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                   (session_hash(session_id, instance), user_id, now(), from_now(timedelta(days=SESSION_DAYS))))
    return session_id


def _redeem_sql(tx, link_hash: str, session_hash: str, expires: str) -> Row:
    """What navmcp.redeem_login_link does on the hosted store."""
    link = tx.one("SELECT * FROM login_links WHERE token_hash = ?", (link_hash,))
    problem = ("invalid" if link is None else "used" if link["used_at"] is not None
               else "expired" if link["expires_at"] <= now() else None)
    if problem is not None:
        return {"user_id": None, "problem": problem}
    tx.execute("UPDATE login_links SET used_at = ? WHERE token_hash = ?", (now(), link_hash))
    tx.execute("INSERT INTO web_sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
               (session_hash, link["user_id"], now(), expires))
    return {"user_id": link["user_id"], "problem": None}


# --- cookie sessions --------------------------------------------------------------------------


@dataclass
class WebSession:
    id: str  # the cookie value (never stored)
    user: Row
    flash: str | None
    instance: str = ""

    @property
    def stored_as(self) -> str:
        return session_hash(self.id, self.instance)


def load_session(store: Store, session_id: str, instance: str = "") -> WebSession | None:
    """The live session of `instance`'s behind a cookie value, or None (another instance's is
    unknown here). `flash` is a pending message (see take_flash)."""
    stored_as = session_hash(session_id, instance)
    with store.read() as tx:
        if _hosted(store):  # no user yet: only the holder of the cookie value can name the row
            row = tx.one("SELECT * FROM navmcp.web_session_user(?)", (stored_as,))
        else:
            row = tx.one(
                """SELECT s.flash, u.* FROM web_sessions s JOIN users u ON u.id = s.user_id
                    WHERE s.id_hash = ? AND s.ended_at IS NULL AND s.expires_at > ? AND u.deleted_at IS NULL""",
                (stored_as, now()))
    if row is None:
        return None
    flash = row.pop("flash")
    return WebSession(session_id, row, flash, instance)


def take_flash(store: Store, session: WebSession) -> str | None:
    """The session's pending message, cleared so that it shows once (after a form's redirect)."""
    if session.flash is None:
        return None
    with store.write(user_id=session.user["id"]) as tx:
        tx.execute("UPDATE web_sessions SET flash = NULL WHERE id_hash = ?", (session.stored_as,))
    return session.flash


def set_flash(store: Store, session: WebSession, message: str) -> None:
    with store.write(user_id=session.user["id"]) as tx:
        tx.execute("UPDATE web_sessions SET flash = ? WHERE id_hash = ?", (message[:2000], session.stored_as))


def end_session(store: Store, session_id: str, user_id: str | None = None, instance: str = "") -> None:
    """End a session. On the hosted store `user_id` must be its user (row-level security)."""
    with store.write(user_id=user_id) as tx:
        tx.execute("UPDATE web_sessions SET ended_at = ? WHERE id_hash = ? AND ended_at IS NULL",
                   (now(), session_hash(session_id, instance)))


def session_cookie(name: str, session_id: str, secure: bool) -> str:
    value = f"{name}={session_id}; Path=/; HttpOnly; SameSite=Lax; Max-Age={SESSION_DAYS * 86400}"
    return value + ("; Secure" if secure else "")


def clear_cookie(name: str, secure: bool) -> str:
    return f"{name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0" + ("; Secure" if secure else "")


def cookie_value(header: str | None, name: str) -> str | None:
    """The value of the cookie `name` in a Cookie header. Read pair by pair: the header also carries
    the cookies other programs on this host set (any port's), and one malformed value among them
    made `http.cookies` drop the rest."""
    for pair in (header or "").split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key == name:
            return value.strip() or None
    return None


# Where a sign-in goes on to (e.g. an app's consent page), kept while the person fetches a login
# link, which carries no `next` of its own. The caller checks it is a path of this site.
NEXT_COOKIE = "navmcp_next"


def next_cookie(path: str, secure: bool) -> str:
    """Remember `path` for LINK_MINUTES; an empty `path` forgets it."""
    value = base64.urlsafe_b64encode(path.encode()).decode() if path else ""
    return (f"{NEXT_COOKIE}={value}; Path=/login; HttpOnly; SameSite=Lax; Max-Age={LINK_MINUTES * 60 if path else 0}"
            + ("; Secure" if secure else ""))


def remembered_next(header: str | None) -> str:
    value = cookie_value(header, NEXT_COOKIE)
    try:
        return base64.urlsafe_b64decode(value.encode()).decode() if value else ""
    except (ValueError, UnicodeDecodeError):
        return ""


# --- CSRF -------------------------------------------------------------------------------------


def csrf_token(secret: bytes, session_id: str) -> str:
    return hmac.new(secret, b"csrf:" + session_id.encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, session_id: str, presented: str | None) -> bool:
    # compare_digest takes str only when it is ASCII (else TypeError): a token that isn't is wrong.
    if not presented or not presented.isascii():
        return False
    return hmac.compare_digest(csrf_token(secret, session_id), presented)


def unverified_algorithm(token: str) -> str | None:
    """The `alg` a token's header names (unverified: only to choose how to verify it)."""
    import jwt

    try:
        return jwt.get_unverified_header(token).get("alg")
    except jwt.InvalidTokenError:
        return None


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer ...` header, else None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None


# --- OAuth access tokens (navmcp/oauth) ---------------------------------------------------------


def verify_access(app, token: str, resource: str | None) -> tuple[Row, Access]:
    """The user and `Access` of an OAuth access token presented at `resource` (this server's
    /mcp), its grant still live; an `AuthError` otherwise."""
    if resource is None:
        raise AuthError("an OAuth access token is accepted at /mcp only")
    user_id, access = verify_token(app.secret, token, resource)
    check_access(app.store, user_id, access, resource)
    with app.store.read(user_id=user_id) as tx:
        user = user_by_id(tx, user_id)
    if user is None:
        raise AuthError("token names a user that does not exist (deleted?)")
    return user, access


def check_access(store: Store, user_id: str, access: Access | None, resource: str | None) -> Access | None:
    """A verified token's `access` still holds at `resource`: the same resource, and a grant not
    revoked since (a cached answer, see `GrantCache`). None (a navmcp or Supabase token) holds anywhere."""
    if access is None:
        return None
    if resource is None:
        raise AuthError("an OAuth access token is accepted at /mcp only")
    if access.resource != resource:
        raise AuthError(f"access token is for another resource (this is {resource})")
    if not GrantCache.live(store, user_id, access.grant_id):
        raise AuthError("access was revoked: authorize again")
    return access
