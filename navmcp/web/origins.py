"""DNS-rebinding protection: the Host header and a browser's Origin must name this server (the
loopback names, and those given with `--allow-host`)."""

from __future__ import annotations

from urllib.parse import urlsplit

from navmcp.web.markdown import OwnHosts
from navmcp.web.request import Request
from navmcp.web.response import Refusal

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def host_name(value: str) -> str:
    """The host of a Host header or an Origin ('[::1]:8765' → '::1'), lowercase."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Origins:
    def __init__(self, allowed_hosts: tuple[str, ...] = ()):
        self.allowed_hosts = frozenset(host_name(h) for h in (*LOOPBACK_HOSTS, *allowed_hosts))
        self._hosts_seen: dict[str, bool] = {}  # Host header value → allowed (the answer never changes)

    def check(self, req: Request) -> Refusal | None:
        host = req.header("host")
        if host is not None and not self._host_allowed(host):
            return Refusal(403, f"host {host!r} is not served here (allowed: "
                                f"{', '.join(sorted(self.allowed_hosts))}; add more with --allow-host)")
        origin = req.header("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or host_name(parts.hostname or "") not in self.allowed_hosts:
                return Refusal(403, f"requests from origin {origin!r} are not accepted")
        return None

    def own_hosts(self, host: str | None) -> OwnHosts:
        """This instance's hosts, for full URLs in people's text: the Host the page was asked for
        (checked by `check`) and the names it is served under by --allow-host, any port."""
        return OwnHosts(frozenset({host.strip().lower()} if host else ()), self.allowed_hosts - frozenset(LOOPBACK_HOSTS))

    def _host_allowed(self, host: str) -> bool:
        allowed = self._hosts_seen.get(host)
        if allowed is None:
            allowed = host_name(host) in self.allowed_hosts
            if len(self._hosts_seen) < 64:  # a client can't grow it: only the first few values are kept
                self._hosts_seen[host] = allowed
        return allowed
