"""Bad input at the edges, on both stores, over the MCP tools and the web app (issue 24): a forged
`after=` cursor (item 7) and a NUL anywhere a client can put one (item 8) are clear refusals — a
400 on the web, a teaching tool error over MCP — never an internal error, and the server goes on."""

from __future__ import annotations

import re

import pytest

from navmcp.mcp.tools import Session
from navmcp.web import create_app
from webclient import Client


@pytest.fixture
def world(any_app, new_user):
    """alice, admin of studio `team` with 25 notes tagged `t` (two pages of every list), and her
    MCP session and web client (Bearer)."""
    alice, token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for n in range(25):
        ws.execute(alice, "/studios/team", "create_note", {"title": f"Note {n}", "body": "b", "tags": ["t"]})
    web = Client(create_app(any_app), {"Authorization": f"Bearer {token}"})
    yield Session(any_app, token), web
    web.close()


LISTS = ["/studios/team", "/studios/team/tags/t", "/studios/team/cycles/today", "/studios/team/audit"]
FORGED = ["x~\u00b2", "x~%C2%B2", "1~9223372036854775808", "1~" + "9" * 40, "%00~1", "2026%00x~1", "~1", "1~",
          "\u0663~\u0663", "x" * 41 + "~1", "1~-1", "1~1~1"]


@pytest.mark.parametrize("path", LISTS)
def test_a_forged_cursor_is_a_clear_refusal_on_every_list(world, path, logged_errors):
    mcp, web = world
    first = mcp.call_tool("navigate", {"url": path})
    assert first["isError"] is False
    nxt = re.search(r"Next page: `(/studios/[^`]*after=[^`]*)`", first["content"][0]["text"]).group(1)
    assert mcp.call_tool("navigate", {"url": nxt})["isError"] is False  # the list's own Next link works
    assert web.get(nxt).status_code == 200
    for cursor in FORGED:
        url = f"{path}?page=2&after={cursor}"
        result = mcp.call_tool("navigate", {"url": url})
        text = result["content"][0]["text"]
        assert result["isError"] is True and "Next link" in text, (url, text)
        for suffix in ("", ".md", ".json"):
            target = path + suffix + f"?page=2&after={cursor}"
            reply = web.get(target)
            assert reply.status_code == 400 and "Next link" in reply.text, (target, reply.status_code, reply.text[:300])
    assert mcp.call_tool("navigate", {"url": path + "?page=2"})["isError"] is False  # by number: still fine
    assert logged_errors == []


def test_the_action_api_answers_its_faults_in_json_for_any_accept(any_app, new_user, monkeypatch, logged_errors):
    """Issue 24, item 15: an internal error (or a refusal before routing: 413, 408) on the action
    API was HTML for a client that sent `Accept: */*` (curl, fetch, most HTTP libraries)."""
    alice, token = new_user("alice")
    any_app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    web = create_app(any_app, max_body=10_000)
    client = Client(web, {"Authorization": f"Bearer {token}"})
    try:
        def broken(*args, **kwargs):
            raise RuntimeError("a fault of ours")

        for accept in ("*/*", None, "application/json", "text/html, */*;q=0.8"):
            headers = {"Accept": accept} if accept else {}
            too_big = client.post("/studios/team/actions/create_note", json={"title": "x", "body": "x" * 20_000},
                                  headers=headers)
            assert too_big.status_code == 413 and too_big.json()["status"] == 413, (accept, too_big.text[:200])
            with monkeypatch.context() as patch:
                patch.setattr(any_app.workspace, "execute", broken)
                reply = client.post("/studios/team/actions/create_note", json={"title": "t", "body": "b"},
                                    headers=headers)
            assert reply.status_code == 500 and reply.headers["content-type"] == "application/json", (accept, reply.text[:200])
            assert reply.json()["status"] == 500 and "server log" in reply.json()["message"]
        # a page asked for with */* is still HTML, and so is a browser's form POST that fails
        assert client.get("/studios/team", headers={"Accept": "*/*"}).headers["content-type"].startswith("text/html")
        with monkeypatch.context() as patch:
            patch.setattr(any_app.workspace, "execute", broken)
            form = client.post("/studios/team/actions/create_note", data={"title": "t", "body": "b"},
                               headers={"Accept": "text/html"})
        assert form.status_code == 500 and form.headers["content-type"].startswith("text/html")
    finally:
        client.close()
    assert logged_errors and all("internal error" in e for e in logged_errors)
    logged_errors.clear()


def _audit_clients(any_app, user_id) -> list[str]:
    with any_app.store.read(user_id=user_id) as tx:
        return [r["client"] for r in tx.all("SELECT client FROM audit WHERE user_id = ? ORDER BY id", (user_id,))]


def test_a_nul_is_refused_or_dropped_at_every_edge(any_app, new_user, logged_errors):
    """Issue 24, item 8: on PostgreSQL a NUL (U+0000) in the MCP client's name made every write of
    the session fail, and `?comment=%00` or a NUL in a tool argument was an internal error."""
    alice, token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "T", "body": "b"}).url
    decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Q", "options": ["A", "B"]}).url

    mcp = Session(any_app, token)
    mcp.identify({"name": "evil\x00client\nsecond line"}, "2025-11-25")
    wrote = mcp.call_tool("execute_action", {"url": note, "action": "add_comment", "params": {"body": "hi"}})
    assert wrote["isError"] is False, wrote
    assert _audit_clients(any_app, alice["id"])[-1] == "evilclient second line"
    # query values: a NUL is dropped, as if it had not been sent
    for url in (note + "?comment=%00", "/studios/team/search?q=%00", "/studios/team/search?q=T%00"):
        page = mcp.call_tool("navigate", {"url": url})
        assert page["isError"] is False, (url, page["content"][0]["text"][:300])
    # tool arguments and parameters: refused, naming where
    refused = {
        ("navigate", note + "\x00"): "argument 'url' must not contain NUL",
        ("execute_action", "add_comment\x00"): "argument 'action' must not contain NUL",
    }
    for (tool, value), said in refused.items():
        args = {"url": value} if tool == "navigate" else {"url": note, "action": value, "params": {"body": "x"}}
        result = mcp.call_tool(tool, args)
        assert result["isError"] is True and said in result["content"][0]["text"]
    for url, action, params, where in [
        (note, "add_comment", {"body": "a\x00b"}, "'body'"),
        (note, "add_comment", {"bo\x00dy": "x"}, "a parameter name"),
        (decision, "vote", {"votes": [{"option": "A\x00", "accept": True}]}, "'votes.0.option'"),
        (decision, "add_option", {"title": "C\x00"}, "'title'"),
        ("/studios/team/members", "add_member", {"handle": "bob", "role": "admin\x00"}, "'role'"),
        ("/studios/team", "create_note", {"title": "t", "body": "b", "tags": ["x\x00"]}, "'tags.0'"),
    ]:
        result = mcp.call_tool("execute_action", {"url": url, "action": action, "params": params})
        text = result["content"][0]["text"]
        assert result["isError"] is True and f"{where} must not contain NUL" in text, text

    # the web: query values, the action API, a form, and /mcp's client name and session header
    web = Client(create_app(any_app), {"Authorization": f"Bearer {token}"})
    try:
        assert web.get(note + ".md?comment=%00").status_code == 200
        api = web.post(note + "/actions/add_comment", json={"body": "x\x00"})
        assert api.status_code == 422 and "NUL" in api.json()["message"]
        form = web.post(note + "/actions/add_comment", data={"body": "x\x00y"}, headers={"Accept": "text/html"})
        assert form.status_code == 422 and "NUL" in form.text
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "web\x00agent"}}}
        reply = web.post("/mcp", json=init)
        assert reply.status_code == 200, reply.text
        headers = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        act = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_action", "arguments": {
            "url": note, "action": "add_comment", "params": {"body": "over http"}}}}
        done = web.post("/mcp", json=act, headers=headers)
        assert done.status_code == 200 and done.json()["result"]["isError"] is False, done.text
        assert _audit_clients(any_app, alice["id"])[-1] == "webagent"
        stray = web.post("/mcp", json=act, headers={**headers, "Mcp-Session-Id": "x\x00y"})
        assert stray.status_code == 404
    finally:
        web.close()
    assert logged_errors == []
