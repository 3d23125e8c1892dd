"""Idempotency keys (navmcp/idempotency.py), on both stores: a write sent again with its key is
applied once and answered as the first was, through the workspace, the action API and MCP's
`tools/call` `_meta`; a key names one call; a refused call stores nothing; two calls with one key
at once apply it once."""

from __future__ import annotations

import threading

import pytest

from nav_helpers import add_member
from navmcp.errors import ActionUnavailable, IdempotencyKeyRefused
from navmcp.idempotency import META_KEY
from navmcp.mcp.tools import Session
from navmcp.protocol import Connection


@pytest.fixture
def note(any_app, new_user):
    alice, token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    url = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "first"}).url
    return ws, alice, token, url


def comments(any_app, user, url) -> int:
    with any_app.store.read(user_id=user["id"]) as tx:
        return tx.scalar("SELECT count(*) FROM comments WHERE item_id = ?", (url.rsplit("/", 1)[1],))


def test_a_repeated_write_applies_once_and_answers_as_the_first(any_app, note):
    ws, alice, token, url = note
    first = ws.execute(alice, url, "add_comment", {"body": "once"}, idempotency_key="k-1")
    again = ws.execute(alice, url, "add_comment", {"body": "once"}, idempotency_key="k-1")
    assert again == first and comments(any_app, alice, url) == 1
    ws.execute(alice, url, "add_comment", {"body": "once"}, idempotency_key="k-2")  # a new key: a new call
    assert comments(any_app, alice, url) == 2
    ws.execute(alice, "/studios/team", "create_note", {"title": "Made once", "body": "x"}, idempotency_key="k-3")
    made = ws.execute(alice, "/studios/team", "create_note", {"title": "Made once", "body": "x"},
                      idempotency_key="k-3")
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM items WHERE title = 'Made once'") == 1
    assert made.url.startswith("/studios/team/n/")


def test_a_key_names_one_call_and_is_the_users_own(any_app, note, new_user):
    ws, alice, token, url = note
    ws.execute(alice, url, "add_comment", {"body": "once"}, idempotency_key="k-1")
    with pytest.raises(IdempotencyKeyRefused, match="used for add_comment"):
        ws.execute(alice, "/studios/team", "create_note", {"title": "t", "body": "b"}, idempotency_key="k-1")
    bob, _ = new_user("bob")
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    ws.execute(bob, url, "add_comment", {"body": "bob's own"}, idempotency_key="k-1")  # another user's key
    assert comments(any_app, alice, url) == 2
    for bad in ("", "with space", "x" * 201, "naïve", 7):
        with pytest.raises(IdempotencyKeyRefused, match="visible ASCII"):
            ws.execute(alice, url, "add_comment", {"body": "no"}, idempotency_key=bad)


def test_a_refused_call_stores_nothing(any_app, note):
    ws, alice, token, url = note
    with pytest.raises(ActionUnavailable):
        ws.execute(alice, url, "unpin", None, idempotency_key="k-9")  # not pinned: refused
    ws.execute(alice, url, "pin", None, idempotency_key="k-9")  # the key is still free
    ws.execute(alice, url, "unpin", None, idempotency_key="k-10")


def test_two_calls_with_one_key_at_once_apply_it_once(any_app, note):
    ws, alice, token, url = note
    results, errors = [], []

    def send() -> None:
        try:
            results.append(ws.execute(alice, url, "add_comment", {"body": "at once"}, idempotency_key="same"))
        except Exception as e:  # noqa: BLE001 — collected and shown below
            errors.append(e)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(results) == 4 and all(r == results[0] for r in results)
    assert comments(any_app, alice, url) == 1


def test_mcp_tools_call_takes_the_key_in_meta(any_app, note):
    ws, alice, token, url = note
    connection = Connection(Session(any_app, token), name="navmcp", version="0", instructions="")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            META_KEY: "mcp-1"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"_meta": meta, "name": "execute_action",
                       "arguments": {"action": "add_comment", "url": url, "params": {"body": "via MCP"}}}}
    first = connection.receive(call)["result"]
    again = connection.receive({**call, "id": 2})["result"]
    assert not first["isError"] and again["structuredContent"] == first["structuredContent"]
    assert comments(any_app, alice, url) == 1
    bad = connection.receive({**call, "id": 3, "params": {**call["params"], "_meta": {**meta, META_KEY: "a b"}}})
    assert bad["result"]["isError"] and "visible ASCII" in bad["result"]["content"][0]["text"]


def test_the_action_api_takes_the_idempotency_key_header(any_app, note):
    import asyncio

    import httpx

    from navmcp.web import create_app

    ws, alice, token, url = note
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "api-1"}

    async def run():
        transport = httpx.ASGITransport(app=create_app(any_app))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as client:
            first = await client.post(url + "/actions/add_comment", json={"body": "via the API"})
            again = await client.post(url + "/actions/add_comment", json={"body": "via the API"})
            reused = await client.post("/studios/team/actions/create_note", json={"title": "t", "body": "b"})
            return first, again, reused

    first, again, reused = asyncio.run(run())
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert comments(any_app, alice, url) == 1
    assert reused.status_code == 422 and "a key names one call" in reused.json()["message"]
