"""Rate limits per token (per user for the tokenless local owner): a token bucket per key.

NAVMCP_RATE_LIMIT sets the limit as CALLS/WINDOW — "60/60s", "600/10m", "5/s", "1000/1h" — and
"off" or unset means no limit (the default: local use and tests are unaffected). A bucket holds
CALLS and refills at CALLS per WINDOW, so a burst of CALLS is allowed, then a steady rate.

The state lives in the process: a stdio server limits its one client; a web app shares one
limiter between all its requests. A refusal raises `errors.RateLimited` with `retry_after`
(seconds); the tools answer it as an isError result naming the seconds, the web app answers 429
with `Retry-After: ceil(retry_after)`. Every refusal is written to the audit log (outcome
"rate limited: ..."), with the studio when the URL names one the user belongs to.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from navmcp.errors import NavError, RateLimited

if TYPE_CHECKING:
    from navmcp.store import Row, Store

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(ms|s|sec|m|min|h)?\s*$", re.IGNORECASE)
_UNIT = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
MAX_KEYS = 10_000
log = logging.getLogger("navmcp.ratelimit")


class RateLimiter:
    def __init__(self, calls: int, window: float, clock: Callable[[], float] = time.monotonic):
        if calls < 1 or window <= 0:
            raise ValueError("a rate limit needs at least 1 call per a positive window")
        self.calls, self.window, self.clock = calls, window, clock
        self.rate = calls / window  # tokens per second
        self._buckets: dict[str, tuple[float, float]] = {}  # key → (tokens, at)
        self._lock = threading.Lock()

    def describe(self) -> str:
        window = f"{self.window:g}s" if self.window < 60 or self.window % 60 else f"{self.window / 60:g} min"
        return f"{self.calls} calls per {window}"

    def check(self, key: str) -> None:
        """Take one call from `key`'s bucket, or raise `RateLimited` saying when one is back."""
        with self._lock:
            now = self.clock()
            tokens, at = self._buckets.get(key, (float(self.calls), now))
            tokens = min(float(self.calls), tokens + (now - at) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, now)
                if len(self._buckets) > MAX_KEYS:
                    self._forget_full(now)
                return
            self._buckets[key] = (tokens, now)
            retry_after = (1 - tokens) / self.rate
        seconds = max(1, math.ceil(retry_after))
        raise RateLimited(f"rate limit exceeded ({self.describe()} for this token): retry in {seconds} "
                          f"second{'s' if seconds != 1 else ''}", retry_after)

    def blocked(self, key: str) -> float | None:
        """Seconds until `key` has a call again, or None when it has one now (nothing is taken)."""
        with self._lock:
            if key not in self._buckets:
                return None
            tokens, at = self._buckets[key]
            tokens = min(float(self.calls), tokens + (self.clock() - at) * self.rate)
        return None if tokens >= 1 else (1 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        self._buckets = {k: (t, at) for k, (t, at) in self._buckets.items()
                         if t + (now - at) * self.rate < self.calls}


def parse(spec: str | None) -> RateLimiter | None:
    """A limiter from "CALLS/WINDOW", or None for unset/"off"/"0". A bad spec is a `NavError`, so an
    agent is told why its calls fail instead of meeting an internal error."""
    if spec is None or spec.strip().lower() in ("", "off", "none", "0"):
        return None
    m = _SPEC.match(spec)
    if not m or int(m.group(1)) < 1 or float(m.group(2) or 1) <= 0:
        raise NavError(f"server misconfigured: NAVMCP_RATE_LIMIT={spec!r}; expected CALLS/WINDOW such as "
                       "60/60s, 600/10m or off")
    calls, amount, unit = int(m.group(1)), float(m.group(2) or 1), (m.group(3) or "s").lower()
    return RateLimiter(calls, amount * _UNIT[unit])


def key_for(token: str | None, user: Row) -> str:
    if token is None:
        return f"user:{user['id']}"
    import hashlib  # here, not at the top: it loads OpenSSL (~4 MB), which only limited tokens need

    return "token:" + hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:32]


def enforce(limiter: RateLimiter | None, store: Store, token: str | None, user: Row, client: str,
            tool: str, arguments: dict[str, Any]) -> None:
    """Count one tool call; over the limit, audit the refusal and raise `RateLimited`."""
    if limiter is None:
        return
    try:
        limiter.check(key_for(token, user))
    except RateLimited as e:
        try:
            record(store, user, client, tool, arguments, e)
        except Exception:  # the audit must never turn a clear refusal into an internal error
            log.exception("could not audit a rate-limited call")
        raise


_STUDIO_URL = re.compile(r"^(?:https?://[^/]*)?/studios/([a-z0-9][a-z0-9-]{0,31})(?:[/?.]|$)")


def record(store: Store, user: Row, client: str, tool: str, arguments: dict[str, Any], error: RateLimited) -> None:
    from navmcp.workspace import write_audit  # on the refusal path only: the calls that pass never import it here

    url, action = arguments.get("url"), arguments.get("action")
    url = url if isinstance(url, str) else ""
    action = action if tool == "execute_action" and isinstance(action, str) else tool
    m = _STUDIO_URL.match(url)
    with store.write(user_id=user["id"], client=client) as tx:  # as the user: the hosted store's audit policy checks it
        studio_id = m and tx.scalar(
            "SELECT s.id FROM studios s JOIN memberships m ON m.studio_id = s.id AND m.user_id = ? WHERE s.handle = ?",
            (user["id"], m.group(1)))
        write_audit(tx, user["id"], client, studio_id or None, url, action, arguments.get("params"),
                    f"rate limited: {error.message}", None)
