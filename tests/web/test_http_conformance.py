"""`/mcp` against MCP Streamable HTTP (2025-06-18, "Sending Messages to the Server"), through the
real ASGI app: a POST that holds no request is answered 202 when accepted and with an HTTP error
status when refused; only a request gets a 200 with a JSON-RPC answer. Also: a committed tool call
is never reported as failed because the session's navigation state could not be saved, and a
refused token's header is a 401 whatever its unverified header holds."""

from __future__ import annotations

import base64
import json
import sqlite3

import pytest

from adversarial.http import HEADERS, Http, open_session
from navmcp.app import App
from navmcp.config import Config
from navmcp.mcp import sessions
from navmcp.web import create_app
from test_supabase_auth import jwks_server  # noqa: F401 (a fixture: a loopback JWKS endpoint)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "conf", "version": "1"}}}


@pytest.fixture
def mcp(app, make_user):
    """(Http over the in-process app, headers of an initialized session, the user's token)."""
    _, token = make_user("conf")
    http = Http(create_app(app))
    session = open_session(http, token, "conf")
    yield http, {**HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": session}, token
    http.close()


def post(http: Http, headers: dict[str, str], value) -> object:
    return http.request("POST", "/mcp", content=json.dumps(value), headers=headers)


def session_count(app) -> int:
    with app.store.read() as tx:
        return tx.scalar("SELECT count(*) FROM mcp_sessions")


def test_initialize_without_an_id_is_no_handshake(app, mcp):
    """It was answered 200 with the body `null` (and no session), as if it were a request."""
    http, headers, token = mcp
    before = session_count(app)
    notification = {k: v for k, v in INIT.items() if k != "id"}
    alone = post(http, {**HEADERS, "authorization": f"Bearer {token}"}, notification)
    assert alone.status_code == 400 and "mcp-session-id" not in alone.headers
    assert alone.json()["error"]["code"] == -32600
    in_session = post(http, headers, notification)  # a notification nobody acts on
    assert in_session.status_code == 202 and in_session.content == b""
    assert session_count(app) == before


@pytest.mark.parametrize("value", [
    {"method": "notifications/initialized"},  # no "jsonrpc": "2.0"
    {"jsonrpc": "2.0", "method": 5},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "params": "x"},
    [],
    [{"jsonrpc": "2.0", "method": 5}, {"jsonrpc": "2.0", "id": 3, "result": {}}],
], ids=["no-jsonrpc", "method-not-a-string", "params-a-string", "empty-batch", "batch-without-a-request"])
def test_a_refused_input_without_a_request_is_an_http_error(mcp, value):
    """They were answered 200 with a JSON-RPC error (id null): a status meant for a request's answer."""
    http, headers, _ = mcp
    reply = post(http, headers, value)
    assert reply.status_code == 400, reply.text
    body = reply.json()
    errors = body if isinstance(body, list) else [body]
    assert errors and all(e["id"] is None and e["error"]["code"] == -32600 for e in errors), body


def test_accepted_notifications_and_requests_keep_their_statuses(mcp):
    http, headers, _ = mcp
    assert post(http, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    assert post(http, headers, {"jsonrpc": "2.0", "id": 4, "result": {}}).status_code == 202
    refused = post(http, headers, {"id": 5, "method": "ping"})  # a request: its error is its answer
    assert refused.status_code == 200 and refused.json()["id"] == 5 and refused.json()["error"]["code"] == -32600
    mixed = post(http, headers, [{"jsonrpc": "2.0", "method": 5}, {"jsonrpc": "2.0", "id": 6, "method": "ping"}])
    assert mixed.status_code == 200 and [r["id"] for r in mixed.json()] == [None, 6]


def test_a_committed_action_stands_when_the_state_save_fails(app, mcp, monkeypatch, logged_errors):
    """The save of the session's navigation state after execute_action failed (a locked or
    unreachable store) and the call was answered 500, so the client sent it again: two notes."""
    http, headers, _ = mcp

    def call(id_, action, url, params):
        args = {"action": action, "url": url, "params": params}
        reply = post(http, headers, {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                                     "params": {"name": "execute_action", "arguments": args}})
        assert reply.status_code == 200, reply.text
        return reply.json()

    assert call(2, "create_studio", "/", {"handle": "team", "name": "T"})["result"]["isError"] is False

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(sessions, "save", locked)
    created = call(3, "create_note", "/studios/team", {"title": "Minutes", "body": "b"})
    assert created["id"] == 3 and created["result"]["isError"] is False
    assert "Created note 'Minutes'" in created["result"]["structuredContent"]["message"]
    assert logged_errors and "database is locked" in logged_errors[-1]  # the failure is in the log
    logged_errors.clear()
    monkeypatch.undo()
    with app.store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM items WHERE title = 'Minutes'") == 1
    ping = post(http, headers, {"jsonrpc": "2.0", "id": 4, "method": "ping"})  # the session lives on
    assert ping.status_code == 200 and ping.json()["result"] == {}


# --- a refused Supabase token: its unverified header never reaches a response header raw ----------


def _b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _forged(header: dict) -> str:
    return _b64(header) + "." + _b64({"sub": "x", "aud": "authenticated", "exp": 9999999999}) + ".c2ln"


@pytest.mark.parametrize("header", [
    {"alg": "HS256\u20ac", "typ": "JWT"},
    {"alg": "x" * 5000 + '"\\\u00e9\r\n'},
    {"alg": "RS256", "kid": "\u20ac" * 300 + '"\\\r\n'},
], ids=["alg-not-latin-1", "alg-long-with-quotes", "kid-not-in-jwks"])
def test_a_forged_supabase_token_header_is_a_401(home, jwks_server, header):  # noqa: F811 (the fixture)
    """A non-Latin-1 `alg` went, quoted, into WWW-Authenticate; encoding that header raised outside
    the app's error handling, so /mcp answered 500."""
    app = App(Config(home=home, database_url=None, token=None, supabase_jwt_secret="s" * 40, supabase_url=jwks_server[0]))
    http = Http(create_app(app))
    try:
        reply = http.request("POST", "/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                             headers={**HEADERS, "authorization": f"Bearer {_forged(header)}"})
        assert reply.status_code == 401, reply.text
        challenge = reply.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="navmcp", error="invalid_token", ') and 'error_description="' in challenge
        description = challenge.split('error_description="', 1)[1]
        assert description.endswith('"') and all(" " <= c <= "~" for c in description)
        assert '"' not in description[:-1] and "\\" not in description
        message = reply.json()["error"]["message"]
        assert message.startswith("Unauthorized: token") and len(message) < 300  # unverified values are cut
        page = http.request("GET", "/whoami.json", headers={"authorization": f"Bearer {_forged(header)}"})
        assert page.status_code == 401
    finally:
        http.close()
        app.store.close()
