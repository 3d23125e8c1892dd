"""A stream lasts as long as what opened it (navmcp.web.streams, navmcp.web.standing): a person who
signs out, or revokes an app, on one process, has their streams on another process ended within
seconds, and is told nothing more; on both stores. The processes share only the database."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable

import httpx
import pytest

from deadlines import HANG
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import Access, add_user, mint_access_token, mint_token
from navmcp.oauth import SCOPES, grants
from navmcp.web import auth, standing
from pg_web import PgWebServer
from webclient import WebServer
from webproc import free_port

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
REASON = "io.github.navmcp/reason"


def _watch(request: Callable[[], object]) -> queue.Queue:
    """Read an event stream (`request` opens it) on a thread: (event name, data) into the queue,
    ("watching", None) once the stream is open, ("end", None) when the server ends it."""
    events: queue.Queue = queue.Queue()

    def run() -> None:
        try:
            with request() as reply:  # type: ignore[attr-defined]
                events.put(("status", reply.status_code))
                name = "message"
                for line in reply.iter_lines():
                    if line.startswith(": watching"):
                        events.put(("watching", None))
                    elif line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        events.put((name, json.loads(line[6:])))
                        name = "message"
                events.put(("end", None))
        except httpx.HTTPError as e:
            events.put(("closed", str(e)))

    threading.Thread(target=run, daemon=True).start()
    return events


def _page(base: str, url: str, headers: dict[str, str]) -> queue.Queue:
    events = _watch(lambda: httpx.stream("GET", base + url, headers={**headers, "Accept": "text/event-stream"},
                                         timeout=httpx.Timeout(10, read=120)))
    assert events.get(timeout=HANG) == ("status", 200) and events.get(timeout=HANG) == ("watching", None)
    return events


def _listen(base: str, token: str, uri: str) -> queue.Queue:
    events = _watch(lambda: httpx.stream("POST", base + "/mcp", timeout=httpx.Timeout(10, read=120), json={
        "jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
        "params": {"_meta": MODERN, "notifications": {"resourceSubscriptions": [uri]}}},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}))
    assert events.get(timeout=HANG) == ("status", 200)
    assert events.get(timeout=HANG)[1]["method"] == "notifications/subscriptions/acknowledged"
    return events


@pytest.fixture
def world(store_kind, tmp_path, request):
    """alice's studio with a decision bob (a member) watches; two `navmcp web` processes on one
    database, A and B, named alike (one public URL, as behind a load balancer)."""
    home = tmp_path / "home"
    url = request.getfixturevalue("pg_url") if store_kind == "postgres" else None
    app = App(Config(home=home, database_url=url, token=None))
    alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Lunch?",
                                                                      "options": ["Pizza", "Soup"]}).url
    public = f"http://127.0.0.1:{free_port()}"
    env = {"NAVMCP_PUBLIC_URL": public}
    servers: list = []
    try:
        for _ in range(2):
            servers.append(PgWebServer(home, url, env=env) if url else WebServer(home, env=env))
        yield {"app": app, "alice": alice, "bob": bob, "decision": decision, "resource": public + "/mcp",
               "servers": servers}
    finally:
        for server in servers:
            server.stop()
        app.store.close()


def test_signing_out_and_revoking_an_app_end_the_streams_on_another_process(world):
    app, alice, bob, decision = world["app"], world["alice"], world["bob"], world["decision"]
    a, b = world["servers"]
    instance = auth.instance_id(app.secret)
    cookie = auth.cookie_name(instance, False)
    browsing, revoking = (auth.open_session(app.store, bob["id"], instance) for _ in range(2))

    # bob's watchers, all on B: a live page in his browser, an app's subscription, and a live page
    # opened with a navmcp token, which nothing here ends
    page = _page(b.base, decision, {"Cookie": f"{cookie}={browsing}"})
    code = grants.new_code()
    grant = grants.approve(app.store, code, bob["id"], "https://agent.example/client.json", "Agent",
                           " ".join(SCOPES), world["resource"], "https://agent.example/back", "x")
    assert grants.take_code(app.store, code)["problem"] is None
    access = Access(grant, "https://agent.example/client.json", "Agent", frozenset(SCOPES), world["resource"])
    app_token = mint_access_token(app.secret, issuer=world["resource"][:-4], user_id=bob["id"], access=access,
                                  seconds=3600)
    listen = _listen(b.base, app_token, "navmcp://" + decision)
    kept = _page(b.base, decision, {"Authorization": f"Bearer {mint_token(app.secret, bob['id'])}"})

    # on A: bob revokes the app (Connected apps) and signs out in his browser
    with httpx.Client(base_url=a.base, timeout=30) as on_a:
        revoked = on_a.post("/connected-apps", headers={"Cookie": f"{cookie}={revoking}", "Origin": a.base},
                            data={"csrf_token": auth.csrf_token(app.secret, revoking),
                                  "client_id": "https://agent.example/client.json"})
        assert revoked.status_code == 303, revoked.text
        out = on_a.post("/logout", headers={"Cookie": f"{cookie}={browsing}", "Origin": a.base},
                        data={"csrf_token": auth.csrf_token(app.secret, browsing)})
        assert out.status_code == 303, out.text
    # and at once (before B has looked at anyone's standing again) alice votes: a change of the page
    app.workspace.execute(alice, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})

    assert kept.get(timeout=HANG) == ("changed", decision)  # the vote is told where access holds
    assert page.get(timeout=HANG) == ("gone", standing.SIGNED_OUT)  # not `changed` first
    assert page.get(timeout=HANG) == ("end", None)
    name, final = listen.get(timeout=HANG)  # no notifications/resources/updated first
    assert final["id"] == "watch" and final["result"]["_meta"][REASON] == standing.REVOKED
    assert listen.get(timeout=HANG) == ("end", None)

    # and a new stream on either process is refused as the page is: the session and the grant ended
    for server in (a, b):
        gone = httpx.get(server.base + decision, headers={"Cookie": f"{cookie}={browsing}",
                                                          "Accept": "text/event-stream"}, timeout=30)
        assert gone.status_code == 401


def test_what_ends_a_standing(any_app):
    """`standing.ended` reads, for many streams in one go, whose session ended, whose app was revoked,
    whose token expired and whose account was deleted; the rest hold."""
    import time

    from navmcp.identity import delete_user

    store = any_app.store
    bob, carol = add_user(store, "bob"), add_user(store, "carol")
    session = auth.open_session(store, bob["id"])
    code = grants.new_code()
    grant = grants.approve(store, code, bob["id"], "https://agent.example/c.json", "Agent", "read",
                           "http://127.0.0.1/mcp", "https://agent.example/back", "x")
    by_session = standing.Standing(bob["id"], session=auth.session_hash(session))
    by_grant = standing.Standing(bob["id"], grant=grant)
    by_token = standing.Standing(bob["id"], expires=time.time() + 600)
    expired = standing.Standing(bob["id"], expires=time.time() - 1)
    by_carol = standing.Standing(carol["id"])
    everyone = [by_session, by_grant, by_token, expired, by_carol]
    assert standing.ended(store, everyone) == {expired: standing.EXPIRED}

    auth.end_session(store, session, bob["id"])
    grants.revoke_grant(store, bob["id"], grant)
    with store.write(user_id=carol["id"]) as tx:
        delete_user(tx, "carol")
    assert standing.ended(store, everyone) == {by_session: standing.SIGNED_OUT, by_grant: standing.REVOKED,
                                               expired: standing.EXPIRED, by_carol: standing.DELETED}
