"""Bearer tokens over HTTP, verified once and remembered until they expire: navmcp's own, Supabase
Auth's, and OAuth access tokens for /mcp (whose grant and resource are checked on every use).

A token seen before skips the signature check (it can't have changed) but its user is read again
on every request, so a deleted user is refused at once. Only successes are remembered.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from navmcp.errors import AuthError
from navmcp.identity import ALGORITHM, Access, is_access_token, read_user, verify_token
from navmcp.mcp import sessions
from navmcp.web import auth

if TYPE_CHECKING:
    from navmcp.app import App

REMEMBERED = 1024  # verified tokens remembered (the memory is cleared when full)


class VerifiedTokens:
    """The Bearer tokens of one web process that passed their check, with their user and expiry.
    `session_idle`: seconds a stored MCP session may idle (read with the user, `authenticate_with_session`)."""

    def __init__(self, app: App, session_idle: float):
        self._app = app
        self._session_idle = session_idle
        self._known: dict[str, tuple[str, float, Access | None]] = {}  # token → (user id, expiry, access)

    def forget(self) -> None:
        """Forget every verified token: the next use of each is checked in full again."""
        self._known.clear()

    def user_of(self, token: str) -> str | None:
        """The user id of a token verified before and not yet expired; None for any other (no check
        is made here: an answer for choosing whose turn a request waits for, not for access)."""
        known = self._known.get(token)
        return known[0] if known is not None and known[1] > time.time() else None

    def authenticate(self, token: str, resource: str | None = None) -> dict[str, Any]:
        """`App.authenticate` for a Bearer token, remembering a verified token until it expires.
        `resource`: this server's /mcp when the token is presented there, the one place an OAuth
        access token is accepted (`authenticate_access`).

        A token seen before skips the signature check (it can't have changed) but its user is read
        again on every request, so a deleted user is refused at once. Only successes are remembered.
        """
        return self.authenticate_access(token, resource)[0]

    def authenticate_access(self, token: str, resource: str | None = None) -> tuple[dict[str, Any], Access | None]:
        """(user, what the token allows: None for a navmcp or Supabase token, which allow all)."""
        known = self._known.get(token)
        if known is not None and known[1] > time.time():
            access = auth.check_access(self._app.store, known[0], known[2], resource)
            user = read_user(self._app.store, known[0])
            if user is not None:
                return user, access
        if is_access_token(token):
            user, access = auth.verify_access(self._app, token, resource)
        else:
            user, access = self._app.authenticate(token), None
        expires = expiry(token)
        if expires is not None:
            if len(self._known) >= REMEMBERED:
                self._known.clear()
            self._known[token] = (user["id"], expires, access)
        return user, access

    def token_is_genuine(self, token: str) -> bool:
        """Whether a Bearer token is one we issued (a navmcp token, an OAuth access token) or the
        Supabase project did, judged by its signature alone: no database read, no key fetched. A
        token verified before is; a Supabase token signed with a public key (its key may have to be
        fetched) is not, unless it was."""
        known = self._known.get(token)
        if known is not None and known[1] > time.time():
            return True
        supabase = self._app.supabase
        try:
            if is_access_token(token):  # an OAuth access token: its audience is judged where it is used
                import jwt

                try:
                    jwt.decode(token, self._app.secret, algorithms=[ALGORITHM],
                               options={"verify_aud": False, "require": ["exp", "sub"]})
                except jwt.InvalidTokenError:
                    return False
            elif supabase is not None and supabase.claims_token(token):
                if auth.unverified_algorithm(token) != "HS256":
                    return False
                supabase.verify(token)
            else:
                verify_token(self._app.secret, token)
        except AuthError:
            return False
        return True

    def authenticate_with_session(self, token: str, session_id: str, resource: str | None = None
                                  ) -> tuple[dict[str, Any], Any, bool, Access | None]:
        """`authenticate_access(token)` and the stored MCP session `session_id`, read in one
        transaction when the token was verified before (the common case: every call after
        `initialize`). Returns (user, session or None, whether the session was looked up, access)."""
        known = self._known.get(token)
        if known is not None and known[1] > time.time():
            access = auth.check_access(self._app.store, known[0], known[2], resource)
            user, stored = sessions.load_with_user(self._app.store, known[0], session_id, idle=self._session_idle)
            if user is not None:
                return user, stored, True, access
        user, access = self.authenticate_access(token, resource)
        return user, None, False, access


def expiry(token: str) -> float | None:
    """The `exp` of a token already verified by `App.authenticate` (read, not checked, here)."""
    import jwt

    try:
        exp = jwt.decode(token, options={"verify_signature": False}).get("exp")
    except jwt.InvalidTokenError:
        return None
    return float(exp) if isinstance(exp, (int, float)) else None
