"""MCP over Streamable HTTP at /mcp: raw-HTTP rules (sessions, auth, Origin/Host, versions, sizes)
in-process, and the official MCP Python SDK client against a real `navmcp web` process."""

from __future__ import annotations

import asyncio
import json

import pytest

from navmcp.identity import create_user, mint_token
from navmcp.mcp import sessions
from webclient import Client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}}


def call(id_, name, **arguments):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.fixture
def mcp(api):
    """(client, headers with the session id) after a full initialize handshake."""
    reply = api.post("/mcp", json=INIT)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    sid = reply.headers["mcp-session-id"]
    headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    assert api.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=headers).status_code == 202
    return api, headers


def test_initialize_issues_a_stored_session(app, owner, mcp):
    api, headers = mcp
    stored = sessions.load(app.store, headers["Mcp-Session-Id"])
    assert stored.user_id == owner["id"] and stored.client == "raw-test" and stored.protocol_version == "2025-11-25"
    tools = api.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers).json()
    assert [t["name"] for t in tools["result"]["tools"]] == ["navigate", "execute_action"]


def test_navigation_state_survives_between_requests_and_processes(app, web, owner_token, mcp, seeded):
    api, headers = mcp
    page = api.post("/mcp", json=call(3, "navigate", url=seeded["decision"]), headers=headers).json()["result"]
    assert page["structuredContent"]["url"] == seeded["decision"]
    assert sessions.load(app.store, headers["Mcp-Session-Id"]).state.current_url == seeded["decision"]
    # another app object (as another process would) serves the same session: no url needed
    from navmcp.app import App
    from navmcp.web import create_app

    other = App(app.config)
    second = Client(create_app(other), {"Authorization": f"Bearer {owner_token}"})
    try:
        reply = second.post("/mcp", json=call(4, "execute_action", action="add_comment", params={"body": "hi"}),
                            headers=headers).json()["result"]
        assert reply["isError"] is False and reply["structuredContent"]["url"] == seeded["decision"]
    finally:
        second.close()
        other.store.close()
    # the write is audited with the client name given at initialize
    with app.store.read() as tx:
        assert tx.scalar("SELECT client FROM audit WHERE action = 'add_comment' ORDER BY at DESC LIMIT 1") == "raw-test"


def test_a_session_state_is_parsed_again_only_when_its_row_changed(app, mcp, monkeypatch):
    """The state this process wrote or read last is kept parsed; a request that leaves it as it
    was (a ping, the same page again) keeps it too, and a row changed elsewhere is parsed anew."""
    api, headers = mcp
    parsed = []
    restore = sessions.NavigationState.restore
    monkeypatch.setattr(sessions.NavigationState, "restore",
                        classmethod(lambda cls, data: parsed.append(data) or restore(data)))
    api.post("/mcp", json=call(2, "navigate", url="/help"), headers=headers)
    for n in range(3, 6):  # the state stays as it is: no write, and nothing to parse again
        assert api.post("/mcp", json={"jsonrpc": "2.0", "id": n, "method": "ping"}, headers=headers).status_code == 200
    assert parsed == []
    with app.store.write() as tx:  # as another process would
        tx.execute("UPDATE mcp_sessions SET state = ? WHERE id = ?",
                   ('{"current_url": "/whoami", "actions": [], "history": []}', headers["Mcp-Session-Id"]))
    api.post("/mcp", json={"jsonrpc": "2.0", "id": 6, "method": "ping"}, headers=headers)
    assert [data["current_url"] for data in parsed] == ["/whoami"]


def test_session_rules(mcp, app, web):
    api, headers = mcp
    no_session = api.post("/mcp", json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert no_session.status_code == 400
    unknown = api.post("/mcp", json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                       headers={"Mcp-Session-Id": "nope"})
    assert unknown.status_code == 404
    # a session belongs to the user whose token opened it
    with app.store.write() as tx:
        mallory = create_user(tx, "mallory", findable=True)
    other = Client(web, {"Authorization": f"Bearer {mint_token(app.secret, mallory['id'])}"})
    try:
        assert other.post("/mcp", json={"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
                          headers=headers).status_code == 404
        assert other.delete("/mcp", headers=headers).status_code == 404
    finally:
        other.close()
    # DELETE ends it; afterwards it is unknown
    assert api.delete("/mcp", headers=headers).status_code == 200
    assert api.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                    headers=headers).status_code == 404
    assert api.delete("/mcp", headers=headers).status_code == 404
    # GET: no SSE stream offered
    got = api.get("/mcp", headers={"Accept": "text/event-stream"})
    assert got.status_code == 405 and "POST" in got.headers["allow"]


def test_notifications_and_responses_get_202(mcp):
    api, headers = mcp
    response_msg = {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert api.post("/mcp", json=response_msg, headers=headers).status_code == 202
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    reply = api.post("/mcp", json=cancelled, headers=headers)
    assert reply.status_code == 202 and reply.content == b""


def test_bearer_token_is_required(anon, app, owner):
    missing = anon.post("/mcp", json=INIT)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith('Bearer realm="navmcp"')
    bad = anon.post("/mcp", json=INIT, headers={"Authorization": "Bearer not.a.token"})
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
    foreign = mint_token(b"another-secret-that-is-32-bytes-long!", owner["id"])
    assert anon.post("/mcp", json=INIT, headers={"Authorization": f"Bearer {foreign}"}).status_code == 401
    expired = mint_token(app.secret, owner["id"], days=-1)
    assert anon.post("/mcp", json=INIT, headers={"Authorization": f"Bearer {expired}"}).status_code == 401
    # a web cookie is not an MCP credential
    assert "mcp-session-id" not in missing.headers


def test_origin_and_host_allow_list(api):
    assert api.post("/mcp", json=INIT, headers={"Origin": "https://evil.example"}).status_code == 403
    assert api.post("/mcp", json=INIT, headers={"Host": "evil.example"}).status_code == 403
    assert api.post("/mcp", json=INIT, headers={"Origin": "http://localhost:8765"}).status_code == 200
    assert api.post("/mcp", json=INIT, headers={"Host": "[::1]:8765"}).status_code == 200


def test_allow_host_extends_the_list(app, owner_token):
    from navmcp.web import create_app

    client = Client(create_app(app, allowed_hosts=("navmcp.internal",)), {"Authorization": f"Bearer {owner_token}"})
    try:
        assert client.post("/mcp", json=INIT, headers={"Host": "navmcp.internal:8765"}).status_code == 200
        assert client.post("/mcp", json=INIT, headers={"Host": "other.internal"}).status_code == 403
    finally:
        client.close()


def test_protocol_version_header(mcp):
    api, headers = mcp
    for version in ("2025-11-25", "2025-06-18", "2025-03-26"):
        ok = api.post("/mcp", json={"jsonrpc": "2.0", "id": 8, "method": "ping"},
                      headers={**headers, "MCP-Protocol-Version": version})
        assert ok.status_code == 200, version
    bad = api.post("/mcp", json={"jsonrpc": "2.0", "id": 8, "method": "ping"},
                   headers={**headers, "MCP-Protocol-Version": "1999-01-01"})
    assert bad.status_code == 400 and "1999-01-01" in bad.json()["error"]["message"]


def test_body_limit_and_bad_json(mcp):
    api, headers = mcp
    big = json.dumps(call(9, "navigate", url="/" + "x" * (2 * 1024 * 1024)))
    assert api.post("/mcp", content=big, headers={**headers, "Content-Type": "application/json"}).status_code == 413
    parse = api.post("/mcp", content=b"{not json", headers={**headers, "Content-Type": "application/json"})
    assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
    wrong_type = api.post("/mcp", content=b"{}", headers={**headers, "Content-Type": "text/plain"})
    assert wrong_type.status_code == 415


def test_healthz(anon):
    reply = anon.get("/healthz", headers={"Host": "lb.internal"})  # load balancers use their own names
    assert reply.status_code == 200 and reply.json() == {"ok": True}


# --- the official MCP Python SDK over Streamable HTTP, against a real server process -----------------


def test_official_sdk_client_over_streamable_http(server):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from mcp import Client as SDKClient

    token = server.token()

    async def run():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            transport = streamable_http_client(server.base + "/mcp", http_client=http)
            async with SDKClient(transport, mode="legacy") as client:  # tests/test_sdk_eras.py: every mode
                tools = await client.session.list_tools()
                assert [t.name for t in tools.tools] == ["navigate", "execute_action"]
                home = await client.call_tool("navigate", {"url": "/"})
                assert home.is_error is False and "# Home" in home.content[0].text
                created = await client.call_tool("execute_action", {"action": "create_studio", "url": "/",
                                                                    "params": {"handle": "sdk", "name": "SDK team"}})
                assert created.is_error is False
                assert created.structured_content["url"] == "/studios/sdk"
                # navigation state lives in the stored session: execute_action without url acts there
                await client.call_tool("navigate", {"url": "/studios/sdk"})
                note = await client.call_tool("execute_action", {"action": "create_note",
                                                                 "params": {"title": "From the SDK", "body": "hello"}})
                assert note.is_error is False and "/studios/sdk/n/" in note.structured_content["url"]
                refused = await client.call_tool("execute_action", {"action": "vote", "url": "/studios/sdk"})
                assert refused.is_error is True and "not an action" in refused.content[0].text
                return note.structured_content["url"]

    url = asyncio.run(run())
    import httpx

    page = httpx.get(server.base + url + ".md", headers={"Authorization": f"Bearer {token}"})
    assert page.status_code == 200 and "From the SDK" in page.text


# --- MCP 2026-07-28 (stateless) over /mcp: raw HTTP --------------------------------------------------

MODERN_HEADERS = {"MCP-Protocol-Version": "2026-07-28"}


def modern(id_, method, **params):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-modern", "version": "1"}}
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}


def post_modern(api, body, **headers):
    method = body.get("method") if isinstance(body, dict) else None
    name = (body.get("params") or {}).get("name") if isinstance(body, dict) else None
    sent = {**MODERN_HEADERS, **({"Mcp-Method": method} if method else {}), **({"Mcp-Name": name} if name else {})}
    sent.update(headers)
    return api.post("/mcp", json=body, headers={k: v for k, v in sent.items() if v is not None})


def session_rows(app) -> int:
    with app.store.read() as tx:
        return tx.scalar("SELECT count(*) FROM mcp_sessions")


def test_modern_requests_need_no_session_and_store_none(app, api, seeded):
    before = session_rows(app)
    listed = post_modern(api, modern(1, "tools/list"))
    assert listed.status_code == 200 and "mcp-session-id" not in listed.headers
    body = listed.json()
    assert body["id"] == 1 and body["result"]["resultType"] == "complete" and body["result"]["cacheScope"] == "public"
    page = post_modern(api, modern(2, "tools/call", name="navigate", arguments={"url": seeded["decision"]})).json()
    assert page["result"]["structuredContent"]["url"] == seeded["decision"]
    voted = post_modern(api, modern(3, "tools/call", name="execute_action", arguments={
        "action": "add_comment", "url": seeded["decision"], "params": {"body": "modern"}})).json()["result"]
    assert voted["isError"] is False and voted["resultType"] == "complete"
    # no conversation: without url the request is told what to pass
    bare = post_modern(api, modern(4, "tools/call", name="execute_action",
                                   arguments={"action": "add_comment", "params": {"body": "x"}})).json()["result"]
    assert bare["isError"] is True and "pass `url`" in bare["content"][0]["text"]
    assert session_rows(app) == before
    # the audit names the client from the request's _meta
    audit = post_modern(api, modern(5, "tools/call", name="navigate", arguments={"url": "/studios/team/audit"}))
    assert "raw-modern" in audit.json()["result"]["content"][0]["text"]


def test_server_discover_over_http(api):
    reply = post_modern(api, modern("d", "server/discover"))
    assert reply.status_code == 200
    result = reply.json()["result"]
    assert result["supportedVersions"] == ["2026-07-28"] and result["ttlMs"] > 0
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "navmcp"


@pytest.mark.parametrize("body,headers,status,code", [
    (modern(7, "tools/list"), {"MCP-Protocol-Version": "2099-01-01"}, 400, -32020),  # header and body disagree
    ({**modern(7, "tools/list"), "params": {"_meta": {**modern(0, "x")["params"]["_meta"],
                                                      "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
     {"MCP-Protocol-Version": "2099-01-01"}, 400, -32022),
    ({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}, {}, 400, -32602),  # no _meta
    (modern(7, "tools/list"), {"Mcp-Method": "tools/call"}, 400, -32020),
    (modern(7, "tools/list"), {"Mcp-Method": None}, 400, -32020),
    (modern(7, "tools/call", name="navigate", arguments={"url": "/"}), {"Mcp-Name": "execute_action"}, 400, -32020),
    (modern(7, "tools/list"), {"MCP-Protocol-Version": None}, 400, -32020),  # enveloped body, no version header
    (modern(7, "ping"), {}, 404, -32601),
    (modern(7, "logging/setLevel", level="info"), {}, 404, -32601),
    (modern(7, "initialize", protocolVersion="2026-07-28"), {}, 404, -32601),
    (modern(7, "resources/subscribe", uri="navmcp:///"), {}, 404, -32601),
    (modern(7, "subscriptions/listen"), {}, 400, -32602),  # served, but says nothing to listen for
], ids=["header-version-mismatch", "unsupported-version", "no-meta", "method-mismatch", "no-method-header",
        "name-mismatch", "no-version-header", "ping", "logging", "initialize", "resources-subscribe", "listen"])
def test_modern_errors_have_their_codes_statuses_and_the_request_id(api, body, headers, status, code):
    reply = post_modern(api, body, **headers)
    assert reply.status_code == status, reply.text
    error = reply.json()
    assert error["id"] == 7 and error["error"]["code"] == code, error
    if code == -32022:
        assert error["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}


def test_modern_notifications_are_accepted_and_get_and_delete_are_405(api):
    note = api.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                    headers=MODERN_HEADERS)
    assert note.status_code == 202 and note.content == b""
    assert api.get("/mcp", headers=MODERN_HEADERS).status_code == 405
    assert api.delete("/mcp", headers=MODERN_HEADERS).status_code == 405
    batch = api.post("/mcp", json=[modern(1, "tools/list")], headers={**MODERN_HEADERS, "Mcp-Method": "tools/list"})
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600


def test_a_legacy_session_error_carries_the_request_id(api):
    reply = api.post("/mcp", json={"jsonrpc": "2.0", "id": 42, "method": "tools/list"})
    assert reply.status_code == 400 and reply.json()["id"] == 42
    unknown = api.post("/mcp", json={"jsonrpc": "2.0", "id": 43, "method": "tools/list"},
                       headers={"Mcp-Session-Id": "nope"})
    assert unknown.status_code == 404 and unknown.json()["id"] == 43


UI_CAPABILITIES = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


def test_the_mcp_apps_view_is_negotiated_over_http_in_both_eras(app, api, seeded):
    """A stored legacy session keeps what its initialize declared (navmcp/mcp/views.py); a modern request
    says it each time. Only then does navigate carry the page's HTML for the view."""
    html_key = "io.github.navmcp/html"
    navigate = call(2, "navigate", url=seeded["decision"])
    for capabilities in ({}, UI_CAPABILITIES):
        init = {**INIT, "params": {**INIT["params"], "capabilities": capabilities}}
        sid = api.post("/mcp", json=init).headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        result = api.post("/mcp", json=navigate, headers=headers).json()["result"]
        assert (html_key in result.get("_meta", {})) is bool(capabilities)
        body = modern(3, "tools/call", name="navigate", arguments={"url": seeded["decision"]})
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
        result = post_modern(api, body).json()["result"]
        assert (html_key in result["_meta"]) is bool(capabilities)
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "navmcp"
