"""Watching pages over MCP (navmcp/mcp/subscriptions.py) through bin/mcp-server: the official SDK
client in the 2026-07-28 era opens `subscriptions/listen` on a decision's URI, another process votes,
and the notification arrives and the resource shows the new tally; a refused action notifies
nothing; a member who is removed has their subscription ended with a reason. A legacy client gets
`resources/subscribe`. Transports that can't send between replies don't offer watching."""

from __future__ import annotations

import json
import queue
import select

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.shared.subscriptions import ResourceUpdated  # noqa: E402

from deadlines import HANG  # noqa: E402
from mcp import Client  # noqa: E402
from nav_helpers import add_member  # noqa: E402
from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.demo.walkthrough import StdioClient, server_command  # noqa: E402
from navmcp.identity import create_user, ensure_owner, mint_token  # noqa: E402
from navmcp.mcp.subscriptions import CHANGE, END_REASON  # noqa: E402
from navmcp.mcp.tools import Session  # noqa: E402
from navmcp.protocol import Connection  # noqa: E402


@pytest.fixture
def world(home):
    """alice (the local owner) and bob in studio `team`, with a decision; tokens for both."""
    app = App(Config(home=home, database_url=None, token=None))
    alice = ensure_owner(app.store)
    with app.store.write() as tx:
        bob = create_user(tx, "bob", findable=True)
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Lunch?", "options": ["Pizza", "Soup"]}).url
    tokens = {"alice": mint_token(app.secret, alice["id"]), "bob": mint_token(app.secret, bob["id"])}
    yield app, decision, tokens
    app.store.close()


def other_process(home, token) -> StdioClient:
    client = StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": token, "NAVMCP_DATABASE_URL": None})
    client.initialize()
    return client


def listen_with_sdk(home, token, uri, script):
    """Run `script(client, subscription)` inside an SDK client's listen on `uri` over stdio. The
    client's "auto" mode asks server/discover, so it negotiates 2026-07-28 and reads the capabilities."""
    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": token, "NAVMCP_LOG_LEVEL": "WARNING"})

    async def main():
        with anyio.fail_after(60):
            async with Client(params, mode="auto") as client:
                assert client.protocol_version == "2026-07-28"
                assert client.server_capabilities.resources.subscribe is True
                async with client.listen(resource_subscriptions=[uri]) as subscription:
                    assert subscription.honored.resource_subscriptions == [uri]
                    return await script(client, subscription)

    return anyio.run(main)


async def next_event(subscription, seconds: float):
    with anyio.fail_after(seconds):
        return await subscription.__anext__()


def test_a_vote_by_another_process_reaches_the_sdk_client(home, world):
    app, decision, tokens = world
    uri = "navmcp://" + decision
    voter = other_process(home, tokens["bob"])

    async def script(client, subscription):
        before = (await client.read_resource(uri)).contents[0].text
        refused = voter.call("execute_action", action="vote", url=decision,
                             params={"votes": [{"option": "Nope", "accept": True}]})
        assert refused["isError"]
        with pytest.raises(TimeoutError):  # a refused action changed nothing, and says nothing
            await next_event(subscription, 0.7)
        voted = voter.call("execute_action", action="vote", url=decision,
                           params={"votes": [{"option": "Soup", "accept": True}]})
        assert not voted["isError"]
        event = await next_event(subscription, HANG)
        assert event == ResourceUpdated(uri=uri)
        after = (await client.read_resource(uri)).contents[0].text
        assert after != before  # the page shows the vote (its tally and voter count)
        return True

    try:
        assert listen_with_sdk(home, tokens["alice"], uri, script)
    finally:
        voter.close()


def test_a_removed_members_subscription_ends_with_a_reason(home, world):
    app, decision, tokens = world
    uri = "navmcp://" + decision
    admin = other_process(home, tokens["alice"])

    async def script(client, subscription):
        removed = admin.call("execute_action", action="remove_member", url="/studios/team/members",
                             params={"handle": "bob"})
        assert not removed["isError"]
        with pytest.raises(StopAsyncIteration):  # the server's graceful close ends the loop
            await next_event(subscription, HANG)
        return True

    try:
        assert listen_with_sdk(home, tokens["bob"], uri, script)
    finally:
        admin.close()


def test_a_page_you_may_not_see_can_not_be_watched(home, world):
    app, decision, tokens = world
    with app.store.write() as tx:
        carol = create_user(tx, "carol", findable=True)
    client = StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": mint_token(app.secret, carol["id"]),
                              "NAVMCP_DATABASE_URL": None})
    try:
        client.initialize()
        reply = client.request("resources/subscribe", {"uri": "navmcp://" + decision})
        assert reply["error"]["code"] == -32602 and reply["error"]["data"]["uri"] == "navmcp://" + decision
    finally:
        client.close()


def test_a_legacy_client_subscribes_and_is_notified(home, world):
    app, decision, tokens = world
    uri = "navmcp://" + decision
    watcher = StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": tokens["alice"], "NAVMCP_DATABASE_URL": None})
    voter = other_process(home, tokens["bob"])
    try:
        init = watcher.initialize()
        assert init["result"]["capabilities"]["resources"] == {"subscribe": True}
        assert watcher.request("resources/subscribe", {"uri": uri})["result"] == {}
        voter.call("execute_action", action="add_comment", url=decision, params={"body": "soup!"})
        ready, _, _ = select.select([watcher.proc.stdout], [], [], 5)
        assert ready, "no notification within 5 s"
        assert json.loads(watcher.proc.stdout.readline()) == {
            "jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {CHANGE: {"kind": "add_comment", "summary": "comment by @bob"}}, "uri": uri}}
        assert watcher.request("resources/unsubscribe", {"uri": uri})["result"] == {}
        voter.call("execute_action", action="add_comment", url=decision, params={"body": "again"})
        assert watcher.request("ping")["result"] == {}  # the next line is the ping's answer: no notification
    finally:
        watcher.close()
        voter.close()


def test_watching_is_offered_only_where_the_transport_can_notify(app, owner):
    # A connection whose transport sends nothing between replies offers no watching.
    connection = Connection(Session(app, None), name="navmcp", version="0", instructions="")
    init = connection.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    assert init["result"]["capabilities"]["resources"] == {}
    refused = connection.receive({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                                  "params": {"uri": "navmcp:///"}})
    assert refused["error"]["code"] == -32601


def test_listen_needs_a_transport_that_can_notify(app, owner):
    connection = Connection(Session(app, None), name="navmcp", version="0", instructions="")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    discover = connection.receive({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}})
    assert discover["result"]["capabilities"]["resources"] == {}
    refused = connection.receive({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                                  "params": {"_meta": meta, "notifications": {}}})
    assert refused["error"]["code"] == -32601


def test_a_connection_watches_a_bounded_number_of_pages(app, owner, monkeypatch):
    from navmcp.mcp import subscriptions

    monkeypatch.setattr(subscriptions, "MAX_WATCHES", 2)
    sent = []
    connection = Connection(Session(app, None), name="navmcp", version="0", instructions="")
    connection.outbound = sent.append
    connection.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    for n, url in enumerate(["/", "/whoami"]):
        assert connection.receive({"jsonrpc": "2.0", "id": 10 + n, "method": "resources/subscribe",
                                   "params": {"uri": "navmcp://" + url}})["result"] == {}
    refused = connection.receive({"jsonrpc": "2.0", "id": 20, "method": "resources/subscribe",
                                  "params": {"uri": "navmcp:///help"}})
    assert refused["error"]["code"] == -32602 and "at most 2" in refused["error"]["message"]
    connection.close()
    assert len(app.feed) == 0
    assert END_REASON.startswith("io.")


@pytest.fixture
def web_on(home):
    """A `navmcp web` process on `home`: its /mcp URL."""
    from webproc import navmcp_web

    with navmcp_web(home) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def test_the_sdk_client_listens_over_streamable_http(home, world, web_on):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    app, decision, tokens = world
    uri = "navmcp://" + decision
    voter = other_process(home, tokens["bob"])
    admin = other_process(home, tokens["alice"])

    async def main():
        with anyio.fail_after(60):
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {tokens['bob']}"}) as http:
                async with Client(streamable_http_client(web_on, http_client=http), mode="auto") as client:
                    assert client.protocol_version == "2026-07-28"
                    assert client.server_capabilities.resources.subscribe is True
                    async with client.listen(resource_subscriptions=[uri]) as subscription:
                        voter.call("execute_action", action="vote", url=decision,
                                   params={"votes": [{"option": "Pizza", "accept": True}]})
                        assert await next_event(subscription, HANG) == ResourceUpdated(uri=uri)
                        admin.call("execute_action", action="remove_member", url="/studios/team/members",
                                   params={"handle": "bob"})
                        with pytest.raises(StopAsyncIteration):  # ended by the server, gracefully
                            await next_event(subscription, HANG)
        return True

    try:
        assert anyio.run(main)
    finally:
        voter.close()
        admin.close()



def test_a_listen_that_names_its_last_position_hears_of_what_changed_meanwhile(app, owner):
    """Every acknowledgement, notification and final result carries the change feed's position; a
    client that listens again (its stream ended or dropped) with the position it last had is told at
    once of each page that changed since, and of no other."""
    from navmcp.mcp.subscriptions import POSITION

    ws = app.workspace
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    decision = ws.execute(owner, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["A", "B"]}).url
    note = ws.execute(owner, "/studios/team", "create_note", {"title": "Quiet", "body": "nothing new"}).url
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    uris = ["navmcp://" + decision, "navmcp://" + note]

    def listen(request_id, after=None):
        sent: list = []
        connection = Connection(Session(app, None), name="navmcp", version="0", instructions="",
                                outbound=sent.append, watchable=True)
        params = {"_meta": {**meta, **({POSITION: after} if after else {})},
                  "notifications": {"resourceSubscriptions": uris}}
        assert connection.receive({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                                   "params": params}) is None
        return connection, sent

    first, sent = listen(1)
    ack = sent[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged" and ack["params"]["_meta"][POSITION]
    position = ack["params"]["_meta"][POSITION]
    first.close()
    ws.execute(owner, decision, "vote", {"votes": [{"option": "A", "accept": True}]})
    again, sent = listen(2, after=position)
    assert [m["method"] for m in sent] == ["notifications/subscriptions/acknowledged", "notifications/resources/updated"]
    assert sent[1]["params"]["uri"] == "navmcp://" + decision
    caught_up = sent[0]["params"]["_meta"][POSITION]
    again.close()
    third, sent = listen(3, after=caught_up)
    assert [m["method"] for m in sent] == ["notifications/subscriptions/acknowledged"]
    third.close()


def test_a_modern_notification_says_what_changed(app, owner):
    """subscriptions/listen: each notification's `_meta` carries the change's kind and its summary
    beside the subscription's id and the feed's position."""
    from navmcp.mcp.subscriptions import POSITION, SUBSCRIPTION_ID

    ws = app.workspace
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    decision = ws.execute(owner, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["A"]}).url
    sent: queue.Queue = queue.Queue()
    connection = Connection(Session(app, None), name="navmcp", version="0", instructions="",
                            outbound=sent.put, watchable=True)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    connection.receive({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "_meta": meta, "notifications": {"resourceSubscriptions": ["navmcp://" + decision]}}})
    try:
        assert sent.get(timeout=HANG)["method"] == "notifications/subscriptions/acknowledged"
        ws.execute(owner, decision, "close_decision", {})
        told = sent.get(timeout=HANG)["params"]
        assert told["uri"] == "navmcp://" + decision
        assert told["_meta"][SUBSCRIPTION_ID] == 7 and told["_meta"][POSITION]
        assert told["_meta"][CHANGE] == {"kind": "close_decision",
                                         "summary": f"closed by @{owner['handle']}: no option was accepted"}
    finally:
        connection.close()


def test_an_agent_watching_its_inbox_hears_of_a_mention(home, world):
    """alice's agent writes a note mentioning @bob; bob's agent, listening on navmcp:///inbox with the
    SDK client, is told, reads the entry, follows it to the note, and mark_read clears it."""
    app, decision, tokens = world
    uri = "navmcp:///inbox"
    writer = other_process(home, tokens["alice"])

    async def script(client, subscription):
        assert "mentioned you" not in (await client.read_resource(uri)).contents[0].text
        made = writer.call("execute_action", action="create_note", url="/studios/team",
                           params={"title": "Agenda", "body": "@bob can you add the budget?"})
        assert not made["isError"]
        event = await next_event(subscription, HANG)
        assert event == ResourceUpdated(uri=uri)
        text = (await client.read_resource(uri)).contents[0].text
        assert "mentioned you in [Agenda](/studios/team/n/" in text  # by the local owner, alice here
        note = text.split("mentioned you in [Agenda](", 1)[1].split(")", 1)[0]
        entry = text.split("mentioned you in", 1)[1].split("entry `", 1)[1].split("`", 1)[0]
        followed = await client.call_tool("navigate", {"url": note})
        assert "can you add the budget" in followed.content[0].text
        done = await client.call_tool("execute_action", {"action": "mark_read", "url": "/inbox",
                                                         "params": {"entry": entry}})
        assert not done.is_error, done.content[0].text
        after = (await client.read_resource(uri)).contents[0].text
        [line] = [ln for ln in after.splitlines() if "mentioned you in" in ln]
        assert "**new**" not in line  # read now, and listed after the unread
        return True

    try:
        assert listen_with_sdk(home, tokens["bob"], uri, script)
    finally:
        writer.close()
