"""Who is asking: users, the local signing secret, and JWTs.

Locally navmcp signs HS256 tokens with a secret kept in NAVMCP_HOME (mode 0600). A token is checked
for signature, expiry, not-before and audience, and must name a user that still exists; anything
else is an `AuthError` with a reason — never a silent fall-back to another identity.

Beside it in this package: Supabase Auth's tokens (`supabase_auth`) and sign-in (`supabase_signin`),
and invitation links (`invitations`), the other ways a person comes to be known here.
"""

from __future__ import annotations

import getpass
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from navmcp.clock import now
from navmcp.config import ensure_home
from navmcp.content.text import handle_text, normalized
from navmcp.errors import AuthError, NavError
from navmcp.render import DIRECTION_CONTROLS
from navmcp.store import Row, Store, Tx

AUDIENCE = "navmcp"
ISSUER = "navmcp"
ALGORITHM = "HS256"
DEFAULT_TOKEN_DAYS = 30
HANDLE_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no look-alikes (l, 1, o, 0)


def new_id(length: int = 8) -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def check_handle(handle: str) -> str:
    handle = handle_text(handle)  # as the actions' Handle reads one: "ｂｏｂ" is bob
    if not HANDLE_RE.fullmatch(handle):  # match() would let "bob\n" through ($ matches before a final newline)
        raise NavError(
            f"invalid handle {handle!r}: use 1-32 lowercase letters, digits and '-', starting with a letter or digit"
        )
    return handle


# Something shaped like an e-mail address anywhere in a name (the migrations' LIKE '%_@_%._%').
_EMAIL = re.compile(r"[^@\s]@[^@\s]+\.[^@\s]")


def check_name(name: str) -> str:
    """A person's display name: up to 100 characters on one line, with no control character (tabs
    and DEL included), no text-direction control, and no e-mail address (a name is shown to every
    member of a studio; an address is not theirs to see, docs/privacy.md). The actions' `Name`
    (actions.fields) allows a tab and refuses invisible-only text; this check runs without pydantic.
    Stored as the actions store text (`text.normalized`: invisible characters dropped)."""
    name = normalized(name).strip()
    if not name or len(name) > 100 or any(ord(ch) < 32 or ch == "\x7f" or ch in DIRECTION_CONTROLS for ch in name):
        raise NavError(f"invalid name {name[:100]!r}: use one line of up to 100 characters, "
                       "without control characters")
    if _EMAIL.search(name):
        raise NavError(f"invalid name {name[:100]!r}: a name is shown to everyone in your studios; "
                       "leave out the e-mail address")
    return name


def load_secret(home: Path) -> bytes:
    """The local signing secret, created with 0600 permissions on first use.

    It is written to a temporary file and linked into place, so a crash during the first run can't
    leave an empty or partial secret behind; a short one found anyway is refused, not used.
    """
    path = home / "secret"
    ensure_home(home)  # made, or made private if it was not
    try:
        return _checked_secret(path, path.read_bytes().strip())
    except FileNotFoundError:  # not yet made
        pass
    value = secrets.token_hex(32).encode()
    tmp = home / f".secret-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(value)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # atomic, and fails if another process won the race
    except FileExistsError:
        return _checked_secret(path, path.read_bytes().strip())
    finally:
        tmp.unlink(missing_ok=True)
    return value


def _checked_secret(path: Path, value: bytes) -> bytes:
    if not value:
        raise AuthError(f"the signing secret {path} is empty (an interrupted first run?): delete it and start "
                        "again; no token can have been signed with it")
    if len(value) < 32:
        raise AuthError(f"the signing secret {path} is too short to be safe: replace it (delete it and start "
                        "again); tokens signed with it stop working")
    return value


def mint_token(secret: bytes, user_id: str, days: float = DEFAULT_TOKEN_DAYS) -> str:
    import jwt

    issued = int(time.time())
    claims = {"sub": user_id, "aud": AUDIENCE, "iss": ISSUER, "iat": issued, "nbf": issued,
              "exp": issued + int(days * 86400)}
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


# --- OAuth access tokens ------------------------------------------------------------------------

ACCESS_TOKEN_TYPE = "at+jwt"  # RFC 9068's JWT header type: how an OAuth access token is told from ours


@dataclass(frozen=True)
class Access:
    """What an OAuth access token allows (navmcp/oauth): the grant a person approved, for which
    client, with which scopes, for which resource (this server's /mcp)."""

    grant_id: str
    client_id: str
    client_name: str
    scopes: frozenset[str]
    resource: str


def is_access_token(token: str) -> bool:
    """Whether `token` is an OAuth access token (its header says so; checked, not trusted, later)."""
    import jwt

    try:
        return jwt.get_unverified_header(token).get("typ") == ACCESS_TOKEN_TYPE
    except jwt.InvalidTokenError:
        return False


def mint_access_token(secret: bytes, *, issuer: str, user_id: str, access: Access, seconds: int) -> str:
    import jwt

    issued = int(time.time())
    claims = {"iss": issuer, "sub": user_id, "aud": access.resource, "client_id": access.client_id,
              "client_name": access.client_name, "scope": " ".join(sorted(access.scopes)), "gid": access.grant_id,
              "iat": issued, "nbf": issued, "exp": issued + seconds, "jti": secrets.token_urlsafe(12)}
    return jwt.encode(claims, secret, algorithm=ALGORITHM, headers={"typ": ACCESS_TOKEN_TYPE})


# What a token must carry, and how its faults are told: navmcp's own (`navmcp token`) and an OAuth
# access token (issued by /token for one resource), one verifier for both.
_OWN = (("exp", "sub", "aud"), "token", "mint a new one with `navmcp token HANDLE`")
_ACCESS = (("exp", "sub", "aud", "gid", "client_id", "scope"), "access token", "refresh it, or authorize again")


@overload
def verify_token(secret: bytes, token: str) -> tuple[str, None]: ...
@overload
def verify_token(secret: bytes, token: str, resource: str) -> tuple[str, Access]: ...
def verify_token(secret: bytes, token: str, resource: str | None = None) -> tuple[str, Access | None]:
    """(user id, None) of navmcp's own token (audience AUDIENCE); with `resource`, (user id, Access)
    of an OAuth access token issued for that resource (RFC 8707: a token for another resource is
    refused). An `AuthError` saying why otherwise."""
    import jwt

    required, what, renew = _ACCESS if resource is not None else _OWN
    audience = resource if resource is not None else AUDIENCE
    try:
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], audience=audience,
                            options={"require": list(required)})
    except jwt.ExpiredSignatureError:
        raise AuthError(f"{what} expired: {renew}") from None
    except jwt.ImmatureSignatureError:
        raise AuthError(f"{what} not yet valid (nbf/iat in the future)") from None
    except jwt.InvalidAudienceError:
        raise AuthError(f"access token is for another resource (this is {resource})" if resource is not None else
                        f"token is for another audience (expected {AUDIENCE!r})") from None
    except jwt.MissingRequiredClaimError as e:
        raise AuthError(f"{what} lacks the {e.claim!r} claim") from None
    except jwt.InvalidSignatureError:
        raise AuthError(f"{what} signature is invalid" + (" (signed with another secret?)" if resource is None else "")) from None
    except jwt.InvalidAlgorithmError:
        raise AuthError(f"{what} algorithm not accepted (only {ALGORITHM})") from None
    except jwt.InvalidTokenError as e:
        raise AuthError(f"{what} is not valid: {e}") from None
    if resource is None:
        return str(claims["sub"]), None
    access = Access(str(claims["gid"]), str(claims["client_id"]), str(claims.get("client_name") or claims["client_id"]),
                    frozenset(str(claims["scope"]).split()), resource)
    return str(claims["sub"]), access


# --- users ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Principal:
    """Whom a call acts as once its token is checked, before the user's row is read: the call's
    own transaction reads it (`user`), so a user deleted a moment ago is refused there, without
    a transaction of its own."""

    user_id: str

    def user(self, tx: Tx) -> Row:
        users = tx.users  # the rows a group of calls in one transaction has read already
        user = users.get(self.user_id) if users is not None else None
        if user is None:
            user = user_by_id(tx, self.user_id)
            if user is None:
                raise AuthError("token names a user that does not exist (deleted?)")
            if users is not None:
                users[self.user_id] = user
        return user


_USER_BY_ID = "SELECT * FROM users WHERE id = ? AND deleted_at IS NULL"


def user_by_id(tx: Tx, user_id: str) -> Row | None:
    return tx.one(_USER_BY_ID, (user_id,))


def read_user(store: Store, user_id: str) -> Row | None:
    """`user_by_id` as a statement of its own: on SQLite no BEGIN and ROLLBACK around it (two of
    the three statements a lone read would cost, on every request of a known token)."""
    return store.read_one(_USER_BY_ID, (user_id,), user_id=user_id)


def user_by_handle(tx: Tx, handle: str) -> Row | None:
    # A Tx method: on the hosted store, row-level security hides users you share no studio with.
    return tx.find_user(handle)


def was_deleted(tx: Tx, handle: str) -> bool:
    """Whether `handle` is a deleted account's: it stays with their work, and is not reused."""
    row = tx.find_user(handle, deleted=True)
    return bool(row and row["deleted_at"])


def deleted_message(handle: str) -> str:
    return f"@{handle}'s account was deleted (`navmcp user delete`); handles are not reused"


def create_user(tx: Tx, handle: str, name: str | None = None, user_id: str | None = None, *,
                findable: bool) -> Row:
    """Insert a user. The handle check is the insert itself (ON CONFLICT), which also holds for
    handles row-level security would hide from a SELECT, and for two processes racing.
    `findable`: studio admins may add them by handle (docs/privacy.md); each caller says whose
    choice that is."""
    handle = check_handle(handle)
    user = {"id": user_id or new_id(10), "handle": handle, "name": check_name(name) if name else handle,
            "created_at": now(), "findable": int(findable)}
    if not tx.execute("INSERT INTO users (id, handle, name, created_at, findable) VALUES (?, ?, ?, ?, ?)"
                      " ON CONFLICT DO NOTHING", tuple(user.values())):
        raise NavError(deleted_message(handle) if was_deleted(tx, handle) else f"user {handle!r} already exists")
    return user


def add_user(store: Store, handle: str, name: str | None = None, findable: bool = True) -> Row:
    """Create a user in its own transaction, acting as that user (the hosted store's policies let
    a user insert only themselves). The operator's way (`navmcp user add`): they make the account
    to add it to studios, so it is findable unless they say otherwise."""
    user_id = new_id(10)
    with store.write(user_id=user_id) as tx:
        return create_user(tx, handle, name, user_id=user_id, findable=findable)


# Studios where a user is the last admin whose account is not deleted: remove_member and add_member
# keep one there (actions.studios._keep_an_admin); deleting the account must not quietly undo it.
_LAST_ADMIN_OF = """SELECT s.handle FROM memberships m JOIN studios s ON s.id = m.studio_id
                     WHERE m.user_id = ? AND m.role = 'admin' AND NOT EXISTS (
                           SELECT 1 FROM memberships o JOIN users u ON u.id = o.user_id
                            WHERE o.studio_id = m.studio_id AND o.role = 'admin' AND o.user_id <> m.user_id
                              AND u.deleted_at IS NULL)
                     ORDER BY s.handle"""


def delete_user(tx: Tx, handle: str, force: bool = False) -> Row:
    """Mark a user deleted: their tokens stop working; what they wrote stays. Refused where it would
    leave a studio with no working admin, unless `force`."""
    user = user_by_handle(tx, handle)
    if user is None:
        raise NavError(f"no user {handle!r}")
    if tx.one("SELECT 1 FROM settings WHERE key = 'owner' AND value = ?", (user["id"],)):
        raise NavError(f"@{handle} is the local owner and cannot be deleted")
    lonely = [] if force else [f"/studios/{r['handle']}" for r in tx.all(_LAST_ADMIN_OF, (user["id"],))]
    if lonely:
        raise NavError(f"@{handle} is the last admin of {', '.join(lonely)}: make another member an admin there "
                       "first (add_member with role admin), or delete with --force and leave it without one")
    if not tx.execute("UPDATE users SET deleted_at = ? WHERE id = ?", (now(), user["id"])):
        raise NavError(f"@{handle} could not be marked deleted (row-level security: act as that user)")
    return user


def owner_handle_default() -> str:
    try:
        name = getpass.getuser().lower()
    except Exception:
        name = ""
    name = re.sub(r"[^a-z0-9-]", "-", name).strip("-")[:32]
    return name if HANDLE_RE.fullmatch(name) else "owner"


def ensure_owner(store: Store) -> Row:
    """The local owner: created on first run, remembered in settings."""
    with store.read() as tx:
        row = tx.one("SELECT u.* FROM settings s JOIN users u ON u.id = s.value WHERE s.key = 'owner'")
        if row:
            return row
    with store.write() as tx:
        row = tx.one("SELECT u.* FROM settings s JOIN users u ON u.id = s.value WHERE s.key = 'owner'")
        if row:
            return row
        handle = os.environ.get("NAVMCP_OWNER") or owner_handle_default()
        user = user_by_handle(tx, handle) or create_user(tx, handle, findable=True)
        tx.execute("INSERT INTO settings (key, value) VALUES ('owner', ?)", (user["id"],))
        return user


def _claims_audience(token: str) -> Any:
    import jwt

    try:
        return jwt.decode(token, options={"verify_signature": False}).get("aud")
    except jwt.InvalidTokenError:
        return None


def resolve_user(store: Store, secret: bytes, token: str | None, supabase: Any = None) -> Row:
    """The user a call acts as: the token's subject, or with no token the local owner.

    With Supabase configured (`supabase`: a `navmcp.identity.supabase_auth.SupabaseAuth`), a Supabase Auth
    access token (audience "authenticated") is verified against the project and its user is
    created on first sight; navmcp's own tokens keep working beside it.
    """
    if token is None:
        return ensure_owner(store)
    who = token_principal(store, secret, token, supabase)
    with store.read(user_id=who.user_id) as tx:
        return who.user(tx)


def token_principal(store: Store, secret: bytes, token: str, supabase: Any = None) -> Principal:
    """`resolve_user` for a token, short of reading the user's row (see `Principal`)."""
    if not token.strip():
        raise AuthError("the token is empty (NAVMCP_TOKEN set to nothing?): set it to a token from "
                        "`navmcp token HANDLE`, or unset it to act as the local owner")
    if supabase is not None and supabase.claims_token(token):
        return Principal(supabase.resolve(store, token)["id"])  # created on first sight
    if supabase is None and _claims_audience(token) == "authenticated":
        raise AuthError("this is a Supabase Auth token, but no Supabase project is configured here "
                        f"(set SUPABASE_JWT_SECRET or SUPABASE_URL); navmcp tokens have audience {AUDIENCE!r}")
    return Principal(verify_token(secret, token)[0])
