"""The page inside the chat (navmcp/mcp/views.py, MCP Apps) through the protocol core, in both eras and on
both stores: the extension is negotiated (a modern request's capabilities, a legacy initialize's),
a client without it gets exactly the results it always got, the tool list is the same two tools for
everyone, and the view and the page HTML it shows carry no secret, no script and no outside domain.
The view working in a browser inside a host is tests/web/test_views_browser.py."""

from __future__ import annotations

import re

import pytest

from mcp_rpc import Rpc
from navmcp.mcp import views
from navmcp.state import NavigationState

UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
OTHER_MIME = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html+skybridge"]}}}


@pytest.fixture
def team(any_app, new_user):
    alice, alice_token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Where is the offsite?", "options": ["Lisbon", "Berlin"],
                           "description": 'Pick one. <img src=x onerror="alert(1)"> <script>alert(2)</script> '
                                          "[a link](https://example.com/x)"}).url
    return {"alice": alice_token, "decision": decision}


@pytest.fixture(params=["modern", "legacy"])
def era(request):
    return request.param


def test_negotiation_reads_the_mime_type():
    assert views.renders_views(UI)
    assert views.renders_views({"extensions": {"io.modelcontextprotocol/ui": {}}})  # the spec's MIME type implied
    for caps in ({}, None, [], {"extensions": None}, {"extensions": {"io.modelcontextprotocol/ui": True}},
                 OTHER_MIME, {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": "text/html;profile=mcp-app"}}}):
        assert not views.renders_views(caps), caps


def test_both_eras_declare_the_extension(any_app, team):
    discovered = Rpc(any_app, team["alice"], "modern").call("server/discover")
    assert discovered["capabilities"]["extensions"] == {"io.modelcontextprotocol/ui": {},
                                                        "io.modelcontextprotocol/tasks": {}}  # tasks: modern only
    rpc = Rpc(any_app, team["alice"], "modern")
    rpc.era = "raw"  # send initialize as a legacy client would
    initialized = Rpc(any_app, team["alice"], "legacy")
    reply = initialized.connection.receive({"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": UI, "clientInfo": {"name": "host", "version": "1"}}})
    assert reply["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/ui": {}}


def test_the_tool_list_is_two_tools_the_same_for_every_client(any_app, team, era):
    lists = [Rpc(any_app, team["alice"], era, caps).call("tools/list") for caps in (None, UI, OTHER_MIME)]
    assert lists[0] == lists[1] == lists[2]
    tools = lists[0]["tools"]
    assert [t["name"] for t in tools] == ["navigate", "execute_action"]
    navigate, execute = tools
    assert navigate["_meta"] == {"ui": {"resourceUri": "ui://navmcp/page"}, "ui/resourceUri": "ui://navmcp/page"}
    assert "_meta" not in execute  # no app-only tool, no view after an agent's writes
    if era == "modern":  # "public": one answer serves every client, and it is one answer
        assert (lists[0]["cacheScope"], lists[0]["ttlMs"]) == ("public", 300_000)


def test_without_the_extension_results_are_todays(any_app, team, era):
    url = team["decision"]
    plain = Rpc(any_app, team["alice"], era).call("tools/call", name="navigate", arguments={"url": url})
    other = Rpc(any_app, team["alice"], era, OTHER_MIME).call("tools/call", name="navigate", arguments={"url": url})
    viewing = Rpc(any_app, team["alice"], era, UI).call("tools/call", name="navigate", arguments={"url": url})
    for result in (plain, other):
        assert views.HTML_META not in result.get("_meta", {})
        if era == "legacy":
            assert set(result) == {"content", "structuredContent", "isError"}
        else:
            assert set(result["_meta"]) == {"io.modelcontextprotocol/serverInfo"}
    # the model's channel is the same whoever asks: the markdown and the structured content
    assert plain["content"] == other["content"] == viewing["content"]
    assert plain["structuredContent"] == viewing["structuredContent"]
    assert plain["isError"] is viewing["isError"] is False


def test_with_the_extension_navigate_carries_the_page_for_the_view(any_app, team, era):
    rpc = Rpc(any_app, team["alice"], era, UI)
    result = rpc.call("tools/call", name="navigate", arguments={"url": team["decision"]})
    page = result["_meta"][views.HTML_META]
    assert f'data-url="{team["decision"]}"' in page
    assert "<h1>Where is the offsite?</h1>" in page
    assert 'data-action="vote"' in page and "Lisbon" in page and "Berlin" in page
    # no app shell, no account, no secret: nothing of the web app's session
    assert "csrf" not in page and "logout" not in page.lower() and "For agents" not in page
    # user text stays inert: escaped, no script, no inline handler, no outside resource loaded
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page)
    assert not re.search(r"""\ssrc\s*=\s*["']?https?:""", page)
    # an execute_action result carries no view payload (the view navigates again itself)
    vote = rpc.call("tools/call", name="execute_action", arguments={
        "action": "vote", "url": team["decision"], "params": {"votes": [{"option": "Lisbon", "accept": True}]}})
    assert vote["isError"] is False and views.HTML_META not in vote.get("_meta", {})


def test_the_view_resource_is_one_self_contained_document(any_app, team, era):
    read = Rpc(any_app, team["alice"], era).call("resources/read", uri="ui://navmcp/page")
    (content,) = read["contents"]
    assert content["uri"] == "ui://navmcp/page" and content["mimeType"] == "text/html;profile=mcp-app"
    assert content["_meta"] == {"ui": {"csp": {}, "prefersBorder": True}}
    text = content["text"]
    assert text.startswith("<!doctype html>") and text.rstrip().endswith("</html>")
    assert text.count("<script>") == 1 and "<script src" not in text and "<link" not in text
    # nothing from outside: the default CSP (no connect, no outside script, style or image) holds
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and not re.search(r"url\(\s*['\"]?(https?:)?//", text)
    assert "fetch(" not in text and "XMLHttpRequest" not in text and "WebSocket" not in text
    if era == "modern":
        assert read["cacheScope"] == "private"  # read as the caller, like every resource


def test_a_legacy_http_session_keeps_the_declaration():
    state = NavigationState(views=True)
    assert NavigationState.restore(state.snapshot()).views is True
    assert "views" not in NavigationState().snapshot()  # sessions without it are stored as before
    assert NavigationState.restore(NavigationState().snapshot()).views is False


def test_moving_about_in_the_view_leaves_the_conversations_page(any_app, team):
    """A legacy session's url-less execute_action means the page the model navigated to last, not
    one the person opened in the view (whose calls say so in `_meta`)."""
    rpc = Rpc(any_app, team["alice"], "legacy", UI)
    rpc.call("tools/call", name="navigate", arguments={"url": team["decision"]})
    rpc.call("tools/call", name="navigate", arguments={"url": "/studios/team"},
             _meta={"io.github.navmcp/view": True})
    assert rpc.connection.host.state.current_url == team["decision"]
    rpc.call("tools/call", name="navigate", arguments={"url": "/studios/team"})
    assert rpc.connection.host.state.current_url == "/studios/team"


def test_an_action_for_the_browser_only_is_a_link_to_navmcp(any_app, team):
    """Held actions (approve, reject) are never done in the view, which acts with the agent's token:
    the embed layout makes such an action a link to the page in navmcp (here shown with an action
    of today's decision page standing in for them)."""
    from navmcp.web import html

    page = any_app.workspace.page(any_app.authenticate(team["alice"]), team["decision"], "test")
    assert "close_decision" in {a.name for a in page.actions}
    shown = html.render_page(page, csrf="", alternates={}, layout=html.EMBED_LAYOUT,
                             browser_only=frozenset({"close_decision"}))
    assert f'<a class="button secondary" href="{team["decision"]}" data-browser-only="close_decision">' \
           "Close voting in navmcp</a>" in shown
    assert 'action="' + team["decision"] + '/actions/close_decision"' not in shown
    assert views.BROWSER_ONLY == {"approve", "reject", "attach"}  # a file input can't go through the view


def test_attach_in_the_view_is_a_link_to_navmcp_where_a_file_is_chosen(any_app, team):
    page = any_app.workspace.page(any_app.authenticate(team["alice"]), team["decision"], "test")
    shown = views.fragment(page)
    assert 'data-browser-only="attach">Attach in navmcp</a>' in shown and 'type="file"' not in shown
