"""MCP over Streamable HTTP at `/mcp`: HTTP framing around the same protocol core as stdio.

Each POST rebuilds the session's `Connection` + `Session` from its stored record (navmcp.sessions:
user, client, protocol version, NavigationState), feeds the decoded JSON to `Connection.receive`,
and saves the navigation state if the call moved it — so any process can serve any session and a
restart loses nothing. The HTTP rules live here and only here:

- `Authorization: Bearer <token>` on every request: a navmcp or Supabase token, or an OAuth access
  token issued for this /mcp (navmcp/oauth), whose scopes must cover the message (403
  insufficient_scope otherwise); 401 + WWW-Authenticate naming the resource metadata otherwise;
  a session belongs to the user whose token opened it (another user's token: 404, as unknown);
- `initialize` issues `Mcp-Session-Id`; later requests must send it (missing: 400; unknown or
  ended: 404); DELETE ends it; GET (an SSE stream we don't offer) answers 405;
- `MCP-Protocol-Version`, when sent, must be a supported version (400 otherwise);
- replies are `application/json`; a POST of only notifications or responses gets 202 when
  accepted, and an HTTP error status (400, with the JSON-RPC error) when refused;
- a server fault once the body is decoded is a JSON-RPC internal error (-32603) carrying the
  request's id, status 500; the details go to the log only.
Host/Origin checks and the body-size limit (413) are done by the web app before this runs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from navmcp import __version__, pages, sessions
from navmcp.app import INSTRUCTIONS
from navmcp.errors import AuthError
from navmcp.identity import Access
from navmcp.oauth import SCOPES, scopes_needed
from navmcp.oauth import metadata as oauth_metadata
from navmcp.protocol import (SUPPORTED_VERSIONS, Connection, InternalError, ParseError, encode,
                             error_object)
from navmcp.tools import Session
from navmcp.web.app import Response
from navmcp.web.auth import bearer_token

if TYPE_CHECKING:
    from navmcp.web.app import Request, WebApp

log = logging.getLogger("navmcp.web")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


def _json(status: int, value: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, encode(value), "application/json", headers or [])


def fault(status: int, message: str, headers: list[tuple[str, str]] | None = None) -> Response:
    """An HTTP-level refusal, with a JSON-RPC error body as MCP clients expect."""
    code = -32603 if status >= 500 else -32001 if status == 404 else -32600
    return _json(status, {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, headers)


def _unauthorized(issuer: str, message: str, bad_token: bool) -> Response:
    """401 with the challenge that starts an OAuth client's discovery (RFC 9728 §5.1)."""
    challenge = oauth_metadata.challenge(issuer, error="invalid_token" if bad_token else None,
                                         description=message if bad_token else None)
    return fault(401, f"Unauthorized: {message}", [("www-authenticate", challenge)])


def _insufficient_scope(issuer: str, needed: frozenset[str]) -> Response:
    scope = " ".join(s for s in SCOPES if s in needed)
    challenge = oauth_metadata.challenge(issuer, error="insufficient_scope", scope=scope,
                                         description=f"this request needs the scope {scope}")
    return fault(403, f"Forbidden: this request needs the scope {scope!r}: authorize this app again with it",
                 [("www-authenticate", challenge)])


def costly(value: Any) -> bool:
    """Whether a decoded POST may cost more than one page read: a batch (up to MAX_BATCH calls), or
    a call whose URL is a costly page (`navmcp.pages.costly`: a search). Batch elements are looked
    at one level deep only: anything nested deeper is an invalid request, answered at no cost."""
    if isinstance(value, list):
        return len(value) > 1 or any(_costly_call(v) for v in value)
    return _costly_call(value)


def _costly_call(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    params = value.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    url = arguments.get("url") if isinstance(arguments, dict) else None
    return isinstance(url, str) and pages.costly(url)


def _holds_request(value: Any) -> bool:
    """Does the POST carry a request (a message to answer)? Without one, a refusal is an HTTP error
    status, not a 200 (MCP Streamable HTTP, "Sending Messages to the Server")."""
    return any(isinstance(m, dict) and "id" in m and "method" in m
               for m in (value if isinstance(value, list) else (value,)))


async def handle(web: "WebApp", req: "Request") -> Response:
    if req.method == "GET":
        return fault(405, "Method Not Allowed: this server offers no SSE stream; POST JSON-RPC to /mcp",
                      [("allow", "POST, DELETE")])
    if req.method not in ("POST", "DELETE"):
        return fault(405, f"Method Not Allowed: {req.method}", [("allow", "POST, DELETE")])

    issuer = oauth_metadata.issuer(req.scheme, req.header("host"))
    resource = oauth_metadata.resource(issuer)
    token = bearer_token(req.header("authorization"))
    if token is None:
        return _unauthorized(issuer, "send 'Authorization: Bearer <token>': sign in with OAuth (this server's "
                                     "metadata says how), or `navmcp token HANDLE` prints one", False)
    session_id = req.header(SESSION_HEADER)
    if session_id is not None and "\x00" in session_id:  # no session's id has one; PostgreSQL refuses it
        return fault(404, "Session not found: it is unknown or has ended; initialize a new one")
    try:
        if session_id and req.method == "POST":  # the session is read with the user, in one transaction
            user, stored, looked_up, access = web.authenticate_with_session(token, session_id, resource)
        else:
            (user, access), stored, looked_up = web.authenticate_access(token, resource), None, False
    except AuthError as e:
        return _unauthorized(issuer, e.message, True)

    version = req.header(VERSION_HEADER)
    if version is not None and version not in SUPPORTED_VERSIONS:
        return fault(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}; "
                           f"supported: {', '.join(SUPPORTED_VERSIONS)}")

    store = web.app.store
    if req.method == "DELETE":
        if not session_id:
            return fault(400, "Bad Request: DELETE needs the Mcp-Session-Id header")
        stored = sessions.load(store, session_id, user["id"], idle=web.session_idle)
        if stored is None or stored.user_id != user["id"]:
            return fault(404, "Session not found (unknown or already ended)")
        sessions.end(store, session_id, user["id"])
        return _json(200, {"ok": True})

    content_type = req.header("content-type")
    if content_type is not None and content_type != "application/json" \
            and content_type.split(";")[0].strip().lower() != "application/json":
        return fault(415, "Unsupported Media Type: POST a JSON-RPC message as application/json")
    try:  # strict, as on stdio: no NaN/Infinity, no lone surrogates (they broke session writes)
        value = await req.message()
    except ParseError as e:
        return _json(400, error_object(e))

    if access is not None:  # an OAuth token: its scopes must cover what the message asks (RFC 6750 §3.1)
        needed = scopes_needed(value)
        if not needed <= access.scopes:
            return _insufficient_scope(issuer, needed)
    try:
        return _receive(web, token, user, session_id, stored, looked_up, value, access)
    except Exception:  # here, not in the web app: the id is known, so the client can match the error
        log.exception("internal error on POST /mcp")
        id_ = value.get("id") if isinstance(value, dict) else None
        if not isinstance(id_, (str, int)) or isinstance(id_, bool):
            id_ = None
        return _json(500, error_object(InternalError("Internal error (details are in the server log)"), id_))


def _receive(web: "WebApp", token: str, user: dict[str, Any], session_id: str | None, stored: Any,
             looked_up: bool, value: Any, access: Access | None = None) -> Response:
    """A decoded POST: the handshake, or messages of the stored session `session_id`."""
    store = web.app.store
    if isinstance(value, dict) and value.get("method") == "initialize" and "id" in value:  # not a notification
        return _initialize(web, token, user, value, access)

    if not session_id:
        return fault(400, "Bad Request: Mcp-Session-Id header is required (send initialize first)")
    if not looked_up:
        stored = sessions.load(store, session_id, user["id"], idle=web.session_idle)
    if stored is None or stored.user_id != user["id"]:
        return fault(404, "Session not found: it is unknown or has ended; initialize a new one")

    session = Session(_Verified(web.app, user), token, stored.state)
    session.client, session.protocol_version = stored.client, stored.protocol_version
    connection = _connection(session)
    connection.initialized = True
    connection.protocol_version = stored.protocol_version
    connection.client_info = {"name": stored.client}
    response = connection.receive(value)
    try:
        sessions.save(store, stored, idle=web.session_idle)  # if the call moved it (or long ago)
    except Exception:
        # The call's work is committed; a 500 now would have the client send it again. The state is
        # a convenience (every call can name its url), so the reply stands.
        log.exception("could not save the navigation state of MCP session %s", stored.id)
    if response is None:
        return _accepted()
    if not _holds_request(value):  # a refused notification (or an empty batch): nothing to answer with 200
        return _json(400, response, [("mcp-session-id", stored.id)])
    return _json(200, response, [("mcp-session-id", stored.id)])


def _initialize(web: "WebApp", token: str, user: dict[str, Any], value: dict[str, Any],
                access: Access | None = None) -> Response:
    session = Session(_Verified(web.app, user), token)
    connection = _connection(session)
    response = connection.receive(value)
    if not isinstance(response, dict) or "result" not in response:
        return _json(200, response)
    if access is not None:  # the audit names the app the person allowed, not what it calls itself
        session.client = access.client_name[:100]
    stored = sessions.create(web.app.store, user["id"], session.client, connection.protocol_version or "",
                             idle=web.session_idle, keep=web.app.config.mcp_sessions_per_user)
    return _json(200, response, [("mcp-session-id", stored.id)])


class _Verified:
    """The app as one request sees it: its token was verified once, on arrival, so the tool call
    reuses that user instead of verifying the same token again (one JWT check and one user read
    fewer per call)."""

    def __init__(self, app: Any, user: dict[str, Any]):
        self._app, self._user = app, user
        self.store, self.workspace, self.rate_limiter = app.store, app.workspace, app.rate_limiter  # used per call

    def authenticate(self, token: str | None) -> dict[str, Any]:
        return self._user

    principal = authenticate  # the row this request just read; the workspace takes it as is

    def __getattr__(self, name: str) -> Any:
        return getattr(self._app, name)


def _connection(session: Session) -> Connection:
    return Connection(session, name="navmcp", version=__version__, instructions=INSTRUCTIONS)


def _accepted() -> Response:
    return Response(202)
