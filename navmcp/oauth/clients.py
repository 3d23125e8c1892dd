"""OAuth clients: registered ones (Dynamic Client Registration, RFC 7591, kept in the database)
and Client ID Metadata Documents (the client id is an HTTPS URL; the document there is fetched,
checked and cached for a while). Both become a `Client`, which Authlib's grants ask the OAuth
questions: which redirect URIs, grant types, scopes and authentication method it may use.

Fetching a metadata document (`navmcp.oauth.documents`) is a request to a URL anyone can name, so
it is fenced here: HTTPS only, to a public address (`connectable_address`: every IPv4 address
embedded in an IPv6 one is judged in its place; the name is resolved once and that address is
the one connected to, so a second answer can't point it elsewhere). Loopback `http://` ids (a
client under development on this machine) are accepted only with
NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS=1.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin, InvalidClientError
from authlib.oauth2.rfc7591 import ClientMetadataClaims
from joserfc.errors import JoseError

from navmcp.content import text
from navmcp.oauth import SCOPES, metadata
from navmcp.render import DIRECTION_CONTROLS
from navmcp.store import Store

LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")
NAME_MAX = 100
REDIRECT_URIS_MAX = 5
UNUSED_CLIENT_HOURS = 24.0  # a registered client no grant names is deleted after this (NAVMCP_OAUTH_UNUSED_CLIENT_HOURS)
PRUNE_MOST = 100  # expired clients deleted per registration (each registration adds one)
_REFUSED_SCHEMES = {"javascript", "data", "file", "vbscript", "about", "blob"}
_NO_DIRECTION = dict.fromkeys(map(ord, DIRECTION_CONTROLS))


def loopback_ids_allowed() -> bool:
    return os.environ.get("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", "") == "1"


class Client(ClientMixin):
    def __init__(self, client_id: str, metadata: dict[str, Any], secret_hash: str | None = None):
        self.client_id, self.metadata, self.secret_hash = client_id, metadata, secret_hash
        self.name = shown_name(str(metadata.get("client_name") or client_id))
        self.auth_method = metadata.get("token_endpoint_auth_method") or "client_secret_basic"

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.metadata.get("redirect_uris") or []
        return uris[0] if len(uris) == 1 else None  # with several, the request must name one

    def get_allowed_scope(self, scope: str | None) -> str | None:
        """The scopes asked for, of ours (when none are named: those the client registered, else
        all of ours); None (invalid_scope) when that leaves none. A registered `scope` is the
        client's own claim, not a ceiling: a client that comes back for more (step-up, after a 403
        `insufficient_scope`) gets what it asks for once the person allows it on the consent page,
        which names every scope asked for."""
        wanted = scope.split() if scope else (self.metadata.get("scope") or " ".join(SCOPES)).split()
        return " ".join(s for s in SCOPES if s in wanted) or None

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri_allowed(self.metadata.get("redirect_uris") or [], redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret_hash is not None and hmac.compare_digest(
            self.secret_hash, hashlib.sha256(client_secret.encode()).hexdigest())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type in (self.metadata.get("response_types") or ["code"])

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in (self.metadata.get("grant_types") or ["authorization_code"])


def redirect_uri_allowed(registered: list[str], presented: str) -> bool:
    """Exact string match, except that a loopback redirect URI may use any port (RFC 8252 §7.3)."""
    if presented in registered:
        return True
    try:
        p = urlsplit(presented)
        if p.scheme != "http" or p.hostname not in LOOPBACK_NAMES or p.port is None:
            return False
        for uri in registered:
            r = urlsplit(uri)
            if (r.scheme, r.hostname, r.path or "/", r.query, r.fragment, r.username) == \
                    ("http", p.hostname, p.path or "/", p.query, p.fragment, p.username):
                return True
    except ValueError:  # a port that is not a number
        return False
    return False


def uri_characters_ok(uri: str) -> bool:
    """Is every character one a URI may hold as it is (RFC 3986: printable ASCII but space, `"`,
    `<`, `>`, `\\`, `^`, `` ` ``, `{`, `|`, `}`; anything else percent-encoded)? A tab, CR/LF, a
    backslash or a raw non-ASCII letter is read differently by different parsers."""
    return all("!" <= c <= "~" and c not in _NOT_IN_URIS for c in uri)


_NOT_IN_URIS = frozenset('"<>\\^`{|}')


def shown(value: str, limit: int = 120) -> str:
    """A value quoted in an OAuth error description, which may hold only printable ASCII but `"`
    and `\\` (RFC 6749 §5.2; Authlib refuses to build an error holding any other)."""
    return "'" + metadata.header_text(value, limit) + "'"


def check_redirect_uri(uri: Any) -> str | None:
    """Why a redirect URI can't be registered, or None: URI characters only, absolute, no fragment,
    and plain `http` only to a loopback address (RFC 8252); private-use schemes (`myapp://cb`)
    are allowed."""
    if not isinstance(uri, str) or not uri or len(uri) > 2000:
        return "a redirect URI must be a string of up to 2000 characters"
    if not uri_characters_ok(uri):
        return (f"{shown(uri)} holds a character a URI can't hold as it is (a space, control character, "
                "backslash or non-ASCII letter): percent-encode it")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return f"{shown(uri)} is not a valid URI"
    if not parts.scheme or parts.scheme.lower() in _REFUSED_SCHEMES:
        return f"{shown(uri)} is not an absolute URI of an allowed scheme"
    if parts.fragment or "#" in uri:
        return f"{shown(uri)} has a fragment"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
        return f"{shown(uri)}: plain http is allowed only to a loopback address (127.0.0.1, [::1], localhost)"
    if parts.scheme in ("http", "https") and not parts.hostname:
        return f"{shown(uri)} names no host"
    return None


class InvalidMetadata(ValueError):
    """Why client metadata can't be used; `redirect_uri` when a redirect URI is the reason
    (RFC 7591 §3.2.2 names two errors)."""

    def __init__(self, problem: str, *, redirect_uri: bool = False):
        super().__init__(problem)
        self.redirect_uri = redirect_uri


# RFC 7591 §2's fields and their types; keys (`jwks`, `jwks_uri`) and software statements are not
# used here (clients authenticate with none or a secret), so they are not registered.
_FIELD_TYPES: dict[str, type] = {
    "redirect_uris": list, "token_endpoint_auth_method": str, "grant_types": list, "response_types": list,
    "client_name": str, "client_uri": str, "logo_uri": str, "scope": str, "contacts": list, "tos_uri": str,
    "policy_uri": str, "software_id": str, "software_version": str}
_IGNORED_FIELDS = frozenset({"jwks", "jwks_uri", "software_statement"})


def validate_metadata(data: dict[str, Any], server_metadata: dict[str, Any]) -> dict[str, Any]:
    """Client metadata checked by RFC 7591's rules (Authlib's claims) and ours; the registered claims.
    InvalidMetadata with the reason."""
    data = {k: v for k, v in data.items() if k not in _IGNORED_FIELDS}
    for field, kind in _FIELD_TYPES.items():  # Authlib's claim checks fail on a value of another type
        value = data.get(field)
        if value is not None and not (isinstance(value, str) if kind is str else
                                      isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise InvalidMetadata(f"{field} must be {'a string' if kind is str else 'a list of strings'}",
                                  redirect_uri=field == "redirect_uris")
    uris = data.get("redirect_uris")
    if isinstance(uris, list):  # ours first: Authlib's claim check says only "Invalid claim"
        for uri in uris[:REDIRECT_URIS_MAX + 1]:
            problem = check_redirect_uri(uri)
            if problem:
                raise InvalidMetadata(problem, redirect_uri=True)
    claims = ClientMetadataClaims(data, {}, ClientMetadataClaims.get_claims_options(server_metadata), server_metadata)
    try:
        claims.validate()
    except JoseError as e:
        raise InvalidMetadata(e.description or str(e), redirect_uri=getattr(e, "claim_name", "") == "redirect_uris") \
            from None
    metadata = dict(claims.get_registered_claims())
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise InvalidMetadata("redirect_uris is required: the authorization code flow redirects to one of them",
                              redirect_uri=True)
    if len(uris) > REDIRECT_URIS_MAX:
        raise InvalidMetadata(f"at most {REDIRECT_URIS_MAX} redirect_uris", redirect_uri=True)
    name = metadata.get("client_name")
    if name is not None:
        metadata["client_name"] = check_client_name(name)
    return metadata


def check_client_name(name: Any) -> str:
    """A client's name as stored, by the rules of titles (`text.normalized`: NFC, characters that
    render as nothing dropped); InvalidMetadata for one that is not one visible line or holds a
    text-direction control (one could reverse how the consent page's sentence reads)."""
    if not isinstance(name, str):
        raise InvalidMetadata("client_name must be a string")
    value = text.normalized(name)
    if any(ord(c) < 32 or c == "\x7f" for c in value):
        raise InvalidMetadata(f"client_name must be one line of up to {NAME_MAX} characters")
    value = " ".join(value.split())
    if not value or len(value) > NAME_MAX:
        raise InvalidMetadata(f"client_name must be one line of up to {NAME_MAX} characters")
    if any(c in DIRECTION_CONTROLS for c in value):
        raise InvalidMetadata("client_name must not contain text-direction controls (U+202A to U+202E, U+2066 "
                              "to U+2069)")
    if not any(c.isprintable() and not c.isspace() for c in value):
        raise InvalidMetadata("client_name must contain a visible character")
    return value


def shown_name(name: str) -> str:
    """A stored client name as pages show it: one line, no direction control nor invisible
    character (names stored before the rule above)."""
    return " ".join(text.normalized(name).translate(_NO_DIRECTION).split())[:NAME_MAX]


def imitates_latin(name: str) -> bool:
    """Does a word of the name mix Latin letters with letters of other alphabets that look like
    Latin ones (`text.look_alike_key`'s table): "Сlaude" with a Cyrillic С? The consent page says
    so. A word wholly of another alphabet ("Ёлка") is not flagged."""
    if name.isascii():
        return False
    return any(any(c.isascii() and c.isalpha() for c in word)
               and any(not c.isascii() and text.look_alike_key(c) != c and text.look_alike_key(c).isascii()
                       for c in word)
               for word in name.split())


# --- registered clients (RFC 7591) -------------------------------------------------------------


def unused_client_hours() -> float:
    """Hours a registered client that never obtained a grant is kept (NAVMCP_OAUTH_UNUSED_CLIENT_HOURS)."""
    configured = os.environ.get("NAVMCP_OAUTH_UNUSED_CLIENT_HOURS", "").strip()
    try:
        return max(float(configured), 0.0) if configured else UNUSED_CLIENT_HOURS
    except ValueError:
        return UNUSED_CLIENT_HOURS


def save_registered(store: Store, client_id: str, secret: str | None, metadata: dict[str, Any]) -> None:
    """Store a newly registered client; in the same transaction, delete up to PRUNE_MOST of the
    clients registered before `unused_client_hours()` that no grant names (they expired)."""
    from navmcp.clock import ago, now

    secret_hash = hashlib.sha256(secret.encode()).hexdigest() if secret else None
    name = shown_name(str(metadata.get("client_name") or client_id))
    body = json.dumps(metadata, ensure_ascii=False)
    before = ago(unused_client_hours() * 3600)
    with store.write() as tx:
        if store.hosted:  # nobody is known yet: the functions prune and insert these rows only
            tx.one("SELECT navmcp.oauth_prune_clients(?, ?) AS gone", (before, PRUNE_MOST))
            tx.one("SELECT navmcp.oauth_register_client(?, ?, ?, ?) AS done", (client_id, secret_hash, name, body))
        else:
            tx.execute("DELETE FROM oauth_clients WHERE client_id IN (SELECT c.client_id FROM oauth_clients c"
                       " WHERE c.created_at < ? AND NOT EXISTS (SELECT 1 FROM oauth_grants g"
                       " WHERE g.client_id = c.client_id) ORDER BY c.created_at LIMIT ?)", (before, PRUNE_MOST))
            tx.execute("INSERT INTO oauth_clients (client_id, secret_hash, name, metadata, created_at)"
                       " VALUES (?, ?, ?, ?, ?)", (client_id, secret_hash, name, body, now()))


def load_registered(store: Store, client_id: str) -> Client | None:
    with store.read() as tx:
        if store.hosted:
            row = tx.one("SELECT * FROM navmcp.oauth_client(?)", (client_id,))
        else:
            row = tx.one("SELECT * FROM oauth_clients WHERE client_id = ?", (client_id,))
    if row is None:
        return None
    return Client(row["client_id"], json.loads(row["metadata"]), row["secret_hash"])


# --- Client ID Metadata Documents ------------------------------------------------------------


def is_document_id(client_id: str) -> bool:
    """Is this client id a metadata document's URL (rather than a registered client's id)?"""
    return client_id.startswith(("https://", "http://"))


def check_document_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an acceptable metadata document URL; InvalidClientError otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise InvalidClientError(description="the client id is not a valid URL") from None
    loopback = parts.scheme == "http" and parts.hostname in LOOPBACK_NAMES
    if parts.scheme != "https" and not (loopback and loopback_ids_allowed()):
        raise InvalidClientError(description="a URL client id must use https")
    if not parts.hostname or parts.username or parts.password or parts.fragment or "#" in url:
        raise InvalidClientError(description="a URL client id must name a host, without credentials or fragment")
    if parts.path in ("", "/") or "/./" in parts.path + "/" or "/../" in parts.path + "/":
        raise InvalidClientError(description="a URL client id must have a path (and no dot segments)")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def connectable_address(addresses: list[str]) -> str | None:
    """The first of a name's addresses that may be connected to: a public one (every IPv4
    address embedded in an IPv6 one unwrapped and judged in its place), or loopback under the
    development setting; None when there is none."""
    for written in addresses:
        ip = ipaddress.ip_address(written.split("%", 1)[0])
        judged = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
        if (judged or ip).is_global and not (judged or ip).is_multicast:
            return str(ip)
        if (judged or ip).is_loopback and loopback_ids_allowed():
            return str(ip)
    return None


_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_MAPPED_OR_TRANSLATED = (ipaddress.IPv6Network("::ffff:0:0/96"), ipaddress.IPv6Network("::ffff:0:0:0/96"))


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries, in any form that reaches it: IPv4-mapped and
    IPv4-translated (`::ffff:a.b.c.d`, `::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), 6to4
    (`2002:AABB:CCDD::/48`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`), Teredo (the client's address)."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in net for net in _MAPPED_OR_TRANSLATED) or any(ip in net for net in _NAT64):
        return low32
    if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d (:: and ::1 are IPv6's own)
        return low32
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None
