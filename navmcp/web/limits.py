"""Rate limits of the web app (pages, the action API, HTML forms) and of bad-token floods.

- Per token (per user for a cookie session): the same `RateLimiter` and bucket as the MCP tools
  (`App.rate_limiter`, NAVMCP_RATE_LIMIT, off by default), so a token's MCP calls and its page
  reads and actions share one budget. Over it: 429 with `Retry-After`, the message naming the
  seconds, and an audit row (outcome "rate limited: ..."), as for a tool call (`ratelimit.enforce`).
- Bad credentials per client IP, before any authentication: every request presenting a Bearer
  token or a login-link token that is refused (401) takes one call from the IP's bucket
  (NAVMCP_BAD_TOKEN_LIMIT, else the NAVMCP_RATE_LIMIT spec; off when both are off). While the
  bucket is empty, a request from that IP must prove its token before any other work: a Bearer
  token by its signature alone (no database read), a login link by one read of its row. A valid
  token is served, since many people may share an address (a NAT, a proxy) and one of them
  flooding bad tokens must not lock the others out; the rest are answered 429. Cookie requests
  are not affected. The IP is the connection's, or X-Forwarded-For's only from the proxies
  named by `--forwarded-allow-ips` (navmcp.web.server).

Each check returns a verdict (a `Refusal`, or None); the app answers it in the request's rendition.
Limits live in the process: several `navmcp web` processes each keep their own buckets.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from navmcp import ratelimit
from navmcp.errors import RateLimited
from navmcp.web.auth import bearer_token
from navmcp.web.request import Request
from navmcp.web.response import Refusal

if TYPE_CHECKING:
    from navmcp.app import App
    from navmcp.web.tokens import VerifiedTokens


class WebLimits:
    def __init__(self, app: App, tokens: VerifiedTokens):
        self.app = app
        self.tokens = tokens
        self._bad: Any = False  # resolved on first use (the config may be read lazily)

    @property
    def bad_tokens(self) -> ratelimit.RateLimiter | None:
        if self._bad is False:
            spec = os.environ.get("NAVMCP_BAD_TOKEN_LIMIT") or self.app.config.rate_limit
            self._bad = ratelimit.parse(spec)
        return self._bad

    @bad_tokens.setter
    def bad_tokens(self, limiter: ratelimit.RateLimiter | None) -> None:
        self._bad = limiter

    @staticmethod
    def _presents_token(req: Request) -> bool:
        return req.header("authorization") is not None or (req.path == "/login" and "token=" in req.query_string)

    def before(self, req: Request) -> Refusal | None:
        """429 for a request from an IP whose bad-token bucket is empty, unless its Bearer token is
        genuine (a login link is checked where it is handled, `signin.login`, by `refusal`)."""
        limiter = self.bad_tokens
        if limiter is None or not self._presents_token(req):
            return None
        wait = limiter.blocked("ip:" + req.client_ip)
        if wait is None:
            return None
        header = req.header("authorization")
        if header is None:  # a login link: one row to read, where the request is handled
            req.unproven_link = True
            return None
        token = bearer_token(header)
        if token is not None and self.tokens.token_is_genuine(token):
            return None
        return self.refusal(req, wait)

    def refusal(self, req: Request, wait: float | None = None) -> Refusal:
        limiter = self.bad_tokens
        assert limiter is not None
        if wait is None:
            wait = limiter.blocked("ip:" + req.client_ip) or 1.0
        seconds = max(1, math.ceil(wait))
        return Refusal(429, f"too many refused tokens from this address ({limiter.describe()}): "
                            f"retry in {seconds} second{'s' if seconds != 1 else ''}",
                       (("retry-after", str(seconds)),))

    def after(self, req: Request, status: int) -> None:
        """Count a refused token (an answer of 401 to a request that presented one)."""
        limiter = self.bad_tokens
        if limiter is not None and status == 401 and self._presents_token(req):
            try:
                limiter.check("ip:" + req.client_ip)
            except RateLimited:
                pass

    def check_caller(self, req: Request, user: dict[str, Any], client: str, cookie: bool, url: str,
                     action: str | None) -> Refusal | None:
        """Count one page read or action of `user`; over the limit, the 429 (audited)."""
        limiter = self.app.rate_limiter
        if limiter is None:
            return None
        token = None if cookie else bearer_token(req.header("authorization"))
        tool = "execute_action" if action else "navigate"
        arguments = {"url": url, "action": action} if action else {"url": url}
        try:
            ratelimit.enforce(limiter, self.app.store, token, user, client, tool, arguments)
        except RateLimited as e:
            return Refusal(429, e.message, (("retry-after", str(max(1, math.ceil(e.retry_after)))),))
        return None
