"""What every handler of the web app shares: the application, the names it is served under,
this instance's cookies and sessions, the verified Bearer tokens, the rate limits, sign-in by emailed code, the open live
streams; and who is asking (`Site.caller`). Handlers take the `Site` and a request and return a
response; nothing here knows the routes."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from navmcp.app import App
from navmcp.errors import AuthError
from navmcp.identity.supabase_signin import SupabaseSignIn
from navmcp.web import auth, streams
from navmcp.web.limits import WebLimits
from navmcp.web.origins import Origins
from navmcp.web.request import Request
from navmcp.web.standing import Standing
from navmcp.web.tokens import VerifiedTokens, expiry


@dataclass
class Caller:
    user: dict[str, Any]
    session: auth.WebSession | None  # None for Bearer callers
    client: str


class Site:
    def __init__(self, app: App, *, secure_cookies: bool = False, allowed_hosts: tuple[str, ...] = ()):
        self.app = app
        self.origins = Origins(allowed_hosts)  # the names this instance is served under
        self.secure_cookies = secure_cookies
        self.session_idle = app.config.mcp_session_idle_hours * 3600  # seconds an MCP session may idle
        self.tokens = VerifiedTokens(app, self.session_idle)
        self.limits = WebLimits(app, self.tokens)  # rate limits per token and per IP for refused tokens
        self.streams = streams.Streams(lambda: app.store)  # open event streams, their places and standing
        # Sign-in by an emailed code through Supabase Auth, offered when SUPABASE_URL and
        # SUPABASE_ANON_KEY are set (login links keep working beside it).
        self.signin: SupabaseSignIn | None = SupabaseSignIn.from_env()

    @functools.cached_property
    def instance(self) -> str:
        """This instance's id (`auth.instance_id`): its cookie's name and its sessions are its own."""
        return auth.instance_id(self.app.secret)

    # --- cookies and sessions -------------------------------------------------------------------

    def secure(self, req: Request) -> bool:
        """Cookies are marked Secure behind HTTPS (or when told to, e.g. behind a TLS proxy)."""
        return self.secure_cookies or req.scheme == "https"

    def cookie_name(self, req: Request) -> str:
        return auth.cookie_name(self.instance, self.secure(req))

    def session_cookie(self, req: Request, session_id: str) -> str:
        return auth.session_cookie(self.cookie_name(req), session_id, self.secure(req))

    def web_session(self, req: Request) -> auth.WebSession | None:
        """The session of this browser's cookie, if it is a live one of this instance's."""
        session_id = auth.cookie_value(req.header("cookie"), self.cookie_name(req))
        return auth.load_session(self.app.store, session_id, self.instance) if session_id else None

    def csrf(self, caller: Caller) -> str:
        return auth.csrf_token(self.app.secret, caller.session.id) if caller.session else ""

    # --- who is asking ------------------------------------------------------------------------

    def caller(self, req: Request) -> Caller | None:
        """The Bearer token's user, else the cookie session's; None when neither is presented.
        A bad Bearer token is an `AuthError` (never a fall-back to the cookie or the owner)."""
        header = req.header("authorization")
        if header is not None:
            token = auth.bearer_token(header)
            if token is None:
                raise AuthError("the Authorization header must be 'Bearer <token>'")
            return Caller(self.tokens.authenticate(token), None, "http")
        session = self.web_session(req)
        return Caller(session.user, session, "web") if session is not None else None

    def who(self, req: Request) -> str:
        """Whose turn a request waits for in the worker threads (`workers.FairPool`), judged without
        the database: the user of a Bearer token verified before, else the cookie session, else
        the client's address (an unknown token too: a new token per request gains no turns)."""
        header = req.header("authorization")
        token = auth.bearer_token(header) if header is not None else None
        user_id = self.tokens.user_of(token) if token else None
        if user_id is not None:
            return "user:" + user_id
        session_id = auth.cookie_value(req.header("cookie"), self.cookie_name(req)) if header is None else None
        return "session:" + auth.session_hash(session_id) if session_id else "address:" + req.client_ip

    def standing(self, req: Request, caller: Caller) -> Standing:
        """What `caller` showed (`caller(req)`), on which a stream they open stands."""
        if caller.session is not None:
            return Standing(caller.user["id"], session=caller.session.stored_as)
        token = auth.bearer_token(req.header("authorization"))
        return Standing(caller.user["id"], expires=expiry(token) if token else None)
