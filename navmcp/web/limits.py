"""Rate limits of the web app (pages, the action API, HTML forms) and of bad-token floods.

- Per token (per user for a cookie session): the same `RateLimiter` and bucket as the MCP tools
  (`App.rate_limiter`, NAVMCP_RATE_LIMIT, off by default), so a token's MCP calls and its page
  reads and actions share one budget. Over it: 429 with `Retry-After`, the message naming the
  seconds, and an audit row (outcome "rate limited: ..."), as for a tool call.
- Bad credentials per client IP, before any authentication: every request presenting a Bearer
  token or a login-link token that is refused (401) takes one call from the IP's bucket
  (NAVMCP_BAD_TOKEN_LIMIT, else the NAVMCP_RATE_LIMIT spec; off when both are off). While the
  bucket is empty, a request from that IP must prove its token before any other work: a Bearer
  token by its signature alone (no database read), a login link by one read of its row. A valid
  token is served, since many people may share an address (a NAT, a proxy) and one of them
  flooding bad tokens must not lock the others out; the rest are answered 429. Cookie requests
  are not affected. The IP is the connection's, or X-Forwarded-For's only from the proxies
  named by `--forwarded-allow-ips` (navmcp.web.server).

Limits live in the process: several `navmcp web` processes each keep their own buckets.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from navmcp import ratelimit
from navmcp.errors import RateLimited

if TYPE_CHECKING:
    from navmcp.web.app import Caller, Request, Response, WebApp


class WebLimits:
    def __init__(self, web: "WebApp"):
        self.web = web
        self._bad: Any = False  # resolved on first use (the config may be read lazily)

    @property
    def bad_tokens(self) -> ratelimit.RateLimiter | None:
        if self._bad is False:
            spec = os.environ.get("NAVMCP_BAD_TOKEN_LIMIT") or self.web.app.config.rate_limit
            self._bad = ratelimit.parse(spec)
        return self._bad

    @bad_tokens.setter
    def bad_tokens(self, limiter: ratelimit.RateLimiter | None) -> None:
        self._bad = limiter

    @staticmethod
    def _presents_token(req: "Request") -> bool:
        return req.header("authorization") is not None or (req.path == "/login" and "token=" in req.query_string)

    def before(self, req: "Request") -> "Response | None":
        """429 for a request from an IP whose bad-token bucket is empty, unless its Bearer token is
        genuine (a login link is checked by `WebApp.login`, which calls `refusal` if need be)."""
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
        from navmcp.web.auth import bearer_token

        token = bearer_token(header)
        if token is not None and self.web.token_is_genuine(token):
            return None
        return self.refusal(req, wait)

    def refusal(self, req: "Request", wait: float | None = None) -> "Response":
        limiter = self.bad_tokens
        assert limiter is not None
        if wait is None:
            wait = limiter.blocked("ip:" + req.client_ip) or 1.0
        seconds = max(1, math.ceil(wait))
        response = self.web.refuse(req, 429, f"too many refused tokens from this address ({limiter.describe()}): "
                                             f"retry in {seconds} second{'s' if seconds != 1 else ''}")
        response.headers.append(("retry-after", str(seconds)))
        return response

    def after(self, req: "Request", response: "Response") -> None:
        limiter = self.bad_tokens
        if limiter is not None and response.status == 401 and self._presents_token(req):
            try:
                limiter.check("ip:" + req.client_ip)
            except RateLimited:
                pass

    def check_caller(self, req: "Request", caller: "Caller", url: str, action: str | None,
                     rendition: str) -> "Response | None":
        """Count one page read or action of `caller`; over the limit, the 429 answer (audited)."""
        limiter = self.web.app.rate_limiter
        if limiter is None:
            return None
        from navmcp.web.app import error_response
        from navmcp.web.auth import bearer_token

        token = bearer_token(req.header("authorization")) if caller.session is None else None
        try:
            limiter.check(ratelimit.key_for(token, caller.user))
        except RateLimited as e:
            tool = "execute_action" if action else "navigate"
            arguments = {"url": url, "action": action} if action else {"url": url}
            try:
                ratelimit.record(self.web.app.store, caller.user, caller.client, tool, arguments, e)
            except Exception:  # the audit must never turn a clear refusal into an internal error
                ratelimit.log.exception("could not audit a rate-limited request")
            seconds = max(1, math.ceil(e.retry_after))
            return error_response("json" if action is not None and rendition != "html" else rendition, 429,
                                  e.message, url=url, headers=[("retry-after", str(seconds))])
        return None
