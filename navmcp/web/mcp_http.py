"""MCP over Streamable HTTP at `/mcp`: HTTP framing around the same protocol core as stdio, in
both eras of MCP.

Modern (2026-07-28): a POST whose `MCP-Protocol-Version` header is no legacy version, or whose body
carries the `_meta` envelope, is served statelessly: a `Connection` of its own, no session read or
written, the headers checked against the body by the core (-32020). A JSON-RPC error's code picks
the status (`MODERN_STATUS`: 400 for a bad envelope, header or version, 404 for an unknown method);
a notification gets 202; GET and DELETE get 405 (no stream, no session).

Legacy (2025-11-25 and older): each POST rebuilds the session's `Connection` + `Session` from its
stored record (navmcp.mcp.sessions: user, client, protocol version, NavigationState), feeds the decoded
JSON to `Connection.receive`, and saves the navigation state if the call moved it — so any process
can serve any session and a restart loses nothing:
- `initialize` issues `Mcp-Session-Id`; later requests must send it (missing: 400; unknown or
  ended: 404); DELETE ends it; GET (an SSE stream we don't offer) answers 405;
- replies are `application/json`; a POST of only notifications or responses gets 202 when
  accepted, and an HTTP error status (400, with the JSON-RPC error) when refused.

Both eras: `Authorization: Bearer <token>` on every request: a navmcp or Supabase token, or an
OAuth access token issued for this /mcp (navmcp/oauth), whose scopes must cover the message (403
insufficient_scope otherwise); 401 + WWW-Authenticate naming the resource metadata otherwise. A
legacy session belongs to the user whose token opened it (another user's token: 404, as unknown). An error
answers the request's id once the body is read; a server fault then is a
JSON-RPC internal error (-32603) with status 500, its details in the log only. Host/Origin checks
and the body-size limit (413) are done by the web app before this runs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from navmcp import pages
from navmcp.errors import AuthError, Busy
from navmcp.identity import Access
from navmcp.mcp import sessions
from navmcp.mcp.codec import encode
from navmcp.mcp.jsonrpc import InternalError, InvalidRequest, ParseError, UnsupportedProtocolVersion, error_object
from navmcp.mcp.tools import Session, connection
from navmcp.oauth import SCOPES, metadata as oauth_metadata, scopes_needed
from navmcp.protocol import LEGACY, META_VERSION, MODERN, MODERN_VERSIONS, SUPPORTED_VERSIONS, VERSION_HEADER, Connection
from navmcp.state import NavigationState
from navmcp.web.auth import bearer_token
from navmcp.web.renditions import error_response, retry_after
from navmcp.web.request import Request
from navmcp.web.response import Response
from navmcp.web.sse import EventStream
from navmcp.web.standing import Standing
from navmcp.web.tokens import expiry

if TYPE_CHECKING:
    from navmcp.web.site import Site

log = logging.getLogger("navmcp.web")

SESSION_HEADER = "mcp-session-id"
# The HTTP status of a modern request's JSON-RPC error (streamable-http, "Protocol Version Header");
# a result, or an error not named here, is 200, but an internal error is 500.
MODERN_STATUS = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400,
                 -32601: 404, -32603: 500}


def _json(status: int, value: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, encode(value), "application/json", headers or [])


def fault(status: int, message: str, headers: list[tuple[str, str]] | None = None, id_: Any = None) -> Response:
    """An HTTP-level refusal, with a JSON-RPC error body as MCP clients expect (the request's id
    when its body was read)."""
    return error_response("jsonrpc", status, message, headers=headers, id_=id_)


def _request_id(value: Any) -> Any:
    """The id of a decoded single request, when it is a valid one; else None."""
    id_ = value.get("id") if isinstance(value, dict) else None
    return id_ if isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool)) else None


def _unauthorized(issuer: str, message: str, bad_token: bool) -> Response:
    """401 with the challenge that starts an OAuth client's discovery (RFC 9728 §5.1)."""
    challenge = oauth_metadata.challenge(issuer, error="invalid_token" if bad_token else None,
                                         description=message if bad_token else None)
    return fault(401, f"Unauthorized: {message}", [("www-authenticate", challenge)])


def _insufficient_scope(issuer: str, needed: frozenset[str], id_: Any) -> Response:
    scope = " ".join(s for s in SCOPES if s in needed)
    challenge = oauth_metadata.challenge(issuer, error="insufficient_scope", scope=scope,
                                         description=f"this request needs the scope {scope}")
    return fault(403, f"Forbidden: this request needs the scope {scope!r}: ask for it in a new authorization "
                      "request; the person sees it on the consent page and may allow it",
                 [("www-authenticate", challenge)], id_=id_)


def costly(value: Any) -> bool:
    """Whether a decoded POST may cost more than one page read: a batch (up to MAX_BATCH calls), or
    a call or a resource read whose URL is a costly page (`navmcp.pages.costly`: a search). Batch
    elements are looked at one level deep only: anything nested deeper is an invalid request, answered
    at no cost."""
    if isinstance(value, list):
        return len(value) > 1 or any(_costly_call(v) for v in value)
    return _costly_call(value)


def _costly_call(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    params = value.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    url = arguments.get("url") if isinstance(arguments, dict) else None
    uri = params.get("uri") if isinstance(params, dict) else None  # resources/read of a page
    if isinstance(uri, str) and uri.startswith("navmcp:///"):
        url = uri[len("navmcp://"):]
    return isinstance(url, str) and pages.costly(url)


def _holds_request(value: Any) -> bool:
    """Does the POST carry a request (a message to answer)? Without one, a refusal is an HTTP error
    status, not a 200 (MCP Streamable HTTP, "Sending Messages to the Server")."""
    return any(isinstance(m, dict) and "id" in m and "method" in m
               for m in (value if isinstance(value, list) else (value,)))


async def handle(site: Site, req: Request) -> Response | EventStream:
    version = req.header(VERSION_HEADER)
    modern = version is not None and version not in SUPPORTED_VERSIONS  # an unknown version is answered -32022
    if req.method == "GET":
        return fault(405, "Method Not Allowed: this server offers no SSE stream; POST JSON-RPC to /mcp",
                     [("allow", "POST" if modern else "POST, DELETE")])
    if req.method not in ("POST", "DELETE") or (modern and req.method == "DELETE"):
        return fault(405, f"Method Not Allowed: {req.method}" + (" (MCP 2026-07-28 has no sessions to end)"
                                                                  if modern else ""),
                     [("allow", "POST" if modern else "POST, DELETE")])

    issuer = oauth_metadata.issuer(req.scheme, req.header("host"))
    resource = oauth_metadata.resource(issuer)
    token = bearer_token(req.header("authorization"))
    if token is None:
        return _unauthorized(issuer, "send 'Authorization: Bearer <token>': sign in with OAuth (this server's "
                                     "metadata says how), or `navmcp token HANDLE` prints one", False)
    session_id = None if modern else req.header(SESSION_HEADER)  # a modern request ignores a session id
    if session_id is not None and "\x00" in session_id:  # no session's id has one; PostgreSQL refuses it
        return fault(404, "Session not found: it is unknown or has ended; initialize a new one")
    try:
        if session_id and req.method == "POST":  # the session is read with the user, in one transaction
            user, stored, looked_up, access = site.tokens.authenticate_with_session(token, session_id, resource)
        else:
            (user, access), stored, looked_up = site.tokens.authenticate_access(token, resource), None, False
    except AuthError as e:
        return _unauthorized(issuer, e.message, True)

    store = site.app.store
    if req.method == "DELETE":
        if not session_id:
            return fault(400, "Bad Request: DELETE needs the Mcp-Session-Id header")
        stored = sessions.load(store, session_id, user["id"], idle=site.session_idle)
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
            return _insufficient_scope(issuer, needed, _request_id(value))  # the body was read: its id
    try:
        if modern or _modern_request(value):
            return _receive_modern(site, token, user, value, req.headers, access)
        return _receive(site, token, user, session_id, stored, looked_up, value, access)
    except Busy as e:  # the database busy or away outside a tool call (a session read, say): nothing applied
        return fault(e.status, "Service Unavailable: " + e.message, retry_after(e), id_=_request_id(value))
    except Exception:  # here, not in the web app: the id is known, so the client can match the error
        log.exception("internal error on POST /mcp")
        return _json(500, error_object(InternalError("Internal error (details are in the server log)"),
                                       _request_id(value)))


def _modern_request(value: Any) -> bool:
    """A request (not initialize) whose body carries the modern `_meta` envelope, whatever its headers
    say: it is served as modern, so a missing or legacy MCP-Protocol-Version is a header mismatch."""
    if not isinstance(value, dict) or value.get("method") == "initialize" or "id" not in value:
        return False
    params = value.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_VERSION in meta


def _receive_modern(site: Site, token: str, user: dict[str, Any], value: Any, headers: dict[str, str],
                    access: Access | None = None) -> Response | EventStream:
    """One stateless 2026-07-28 message: no session is read or written."""
    if not isinstance(value, dict) or ("method" not in value and ("result" in value or "error" in value)):
        return _json(400, error_object(InvalidRequest("Invalid Request: POST one JSON-RPC request or notification "
                                                      "(MCP 2026-07-28 takes no batches and no responses)")))
    version = headers.get(VERSION_HEADER)
    if version is not None and version not in MODERN_VERSIONS and not _modern_request(value):
        # a version no era of ours speaks, on a body that names none: the header is the request's version
        return _json(400, error_object(UnsupportedProtocolVersion(
            f"Unsupported protocol version {version[:40]!r} (MCP-Protocol-Version): this server speaks "
            f"{', '.join(MODERN_VERSIONS)} per request, and {', '.join(SUPPORTED_VERSIONS)} after initialize",
            version, MODERN_VERSIONS), _request_id(value)))
    # The audit names the app the person allowed (an OAuth grant), not what it calls itself.
    session = Session(site.app, token, NavigationState(remembers=False), user=user,
                      granted_client=access.client_name[:100] if access is not None else None)
    if value.get("method") == "subscriptions/listen" and "id" in value:
        return _listen(site, token, user["id"], session, value, headers, access)
    connection = _connection(session, MODERN, watchable=True)  # a listen is answered with its stream
    if "id" not in value:  # a notification: accepted and dropped, unless it is malformed
        response = connection.receive(value, headers)
        return _accepted() if response is None else _json(400, response)
    response = connection.receive(value, headers)
    error = response.get("error")
    return _json(200 if error is None else MODERN_STATUS.get(error["code"], 200), response)


def _listen(site: Site, token: str, user_id: str, session: Session, value: dict[str, Any],
            headers: dict[str, str], access: Access | None) -> Response | EventStream:
    """subscriptions/listen: its answer is the subscription's stream (acknowledgement, notifications,
    and the final response when the server ends it); the client ends it by closing the stream. It
    counts among the user's open streams, as a live page does, and lasts as long as the token's
    grant and the token itself (`streams.Streams`)."""

    def send(message: dict[str, Any]) -> None:
        text = "data: " + encode(message).decode() + "\n\n"
        if message.get("method") == "notifications/resources/updated":  # told once the token still holds
            site.streams.tell(slot, lambda: stream.put(text))
        else:
            stream.put(text, last="id" in message)

    def closed() -> None:
        connection.close()
        site.streams.release(slot)

    connection = _connection(session, MODERN, outbound=send)
    stream = EventStream(on_close=closed, on_timeout=lambda: connection.end_subscriptions(
        "the stream's time is up; listen again to keep watching"))
    admitted = site.streams.admit(Standing(user_id, grant=access.grant_id if access is not None else None,
                                           expires=expiry(token)), connection.end_subscriptions)
    if isinstance(admitted, str):
        return fault(429, "Too Many Requests: " + admitted, [("retry-after", "60")], id_=_request_id(value))
    slot = admitted
    response = connection.receive(value, headers)
    if response is None:
        if slot.ended is not None:  # ended while the listen was being set up: end it now
            connection.end_subscriptions(slot.ended)
        return stream
    closed()
    return _json(MODERN_STATUS.get(response["error"]["code"], 200), response)


def _receive(site: Site, token: str, user: dict[str, Any], session_id: str | None, stored: Any,
             looked_up: bool, value: Any, access: Access | None = None) -> Response:
    """A decoded POST: the handshake, or messages of the stored session `session_id`."""
    store = site.app.store
    if isinstance(value, dict) and value.get("method") == "initialize" and "id" in value:  # not a notification
        return _initialize(site, token, user, value, access)

    if not session_id:
        return fault(400, "Bad Request: Mcp-Session-Id header is required (send initialize first, or use MCP "
                          "2026-07-28, which needs no session)", id_=_request_id(value))
    if not looked_up:
        stored = sessions.load(store, session_id, user["id"], idle=site.session_idle)
    if stored is None or stored.user_id != user["id"]:
        return fault(404, "Session not found: it is unknown or has ended; initialize a new one",
                     id_=_request_id(value))

    session = Session(site.app, token, stored.state, user=user, client=stored.client,
                      protocol_version=stored.protocol_version)
    connection = _connection(session, LEGACY, resume=(stored.protocol_version, {"name": stored.client}),
                             views=stored.state.views)
    response = connection.receive(value)
    try:
        sessions.save(store, stored, idle=site.session_idle)  # if the call moved it (or long ago)
    except Exception:
        # The call's work is committed; a 500 now would have the client send it again. The state is
        # a convenience (every call can name its url), so the reply stands.
        log.exception("could not save the navigation state of MCP session %s", stored.id)
    if response is None:
        return _accepted()
    if not _holds_request(value):  # a refused notification (or an empty batch): nothing to answer with 200
        return _json(400, response, [("mcp-session-id", stored.id)])
    return _json(200, response, [("mcp-session-id", stored.id)])


def _initialize(site: Site, token: str, user: dict[str, Any], value: dict[str, Any],
                access: Access | None = None) -> Response:
    # The audit names the app the person allowed (an OAuth grant), not what it calls itself.
    session = Session(site.app, token, user=user,
                      granted_client=access.client_name[:100] if access is not None else None)
    connection = _connection(session, LEGACY)
    response = connection.receive(value)
    if not isinstance(response, dict) or "result" not in response:
        return _json(200, response)
    stored = sessions.create(site.app.store, user["id"], session.client, connection.protocol_version or "",
                             idle=site.session_idle, keep=site.app.config.mcp_sessions_per_user,
                             views=connection.views)
    return _json(200, response, [("mcp-session-id", stored.id)])


def _connection(session: Session, era: str, **options: Any) -> Connection:
    return connection(session, era=era, **options)


def _accepted() -> Response:
    return Response(202)
