"""Live pages for people over a real `navmcp web` process: a page's URL asked for as
`text/event-stream` says `changed` when another process changes its facts, says nothing for other
pages' changes, and ends with `gone` when the watcher loses the page."""

from __future__ import annotations

import json
import queue
import socket
import threading

import httpx
import pytest

from deadlines import HANG, wait_for
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import create_user, mint_token
from navmcp.web import streams
from navmcp.web.standing import Standing

EVENTS = {"Accept": "text/event-stream"}


def listen(base: str, token: str, url: str) -> tuple[queue.Queue, threading.Event]:
    """Read the event stream of `url` on a thread: (events as (name, data) in a queue, opened)."""
    events: queue.Queue = queue.Queue()
    opened = threading.Event()

    def run() -> None:
        try:
            with httpx.stream("GET", base + url, headers={**EVENTS, "Authorization": f"Bearer {token}"},
                              timeout=httpx.Timeout(5, read=60)) as reply:
                events.put(("status", reply.status_code))
                name = None
                for line in reply.iter_lines():
                    if line.startswith(": watching"):
                        opened.set()
                    elif line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name:
                        events.put((name, json.loads(line[6:])))
                        name = None
        except httpx.HTTPError as e:  # the server stopped at the end of the test
            events.put(("closed", str(e)))

    threading.Thread(target=run, daemon=True).start()
    return events, opened


@pytest.fixture
def world(world_factory, server):
    return world_factory(server)


@pytest.fixture
def world_factory():
    """make(server): the server's workspace seen from this process (another App on the same
    file): alice owns studio `team` with a decision; bob is a member."""
    apps = []

    def make(server):
        app = App(Config(home=server.home, database_url=None, token=None))
        apps.append(app)
        return _world(app)

    yield make
    for app in apps:
        app.store.close()


def _world(app):
    with app.store.write() as tx:
        alice, bob = create_user(tx, "alice", findable=True), create_user(tx, "bob", findable=True)
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    ws.execute(alice, "/", "create_studio", {"handle": "other", "name": "Other"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Lunch?", "options": ["Pizza", "Soup"]}).url
    return app, ws, alice, bob, decision


def test_a_vote_elsewhere_reaches_the_open_page(server, world):
    app, ws, alice, bob, decision = world
    events, opened = listen(server.base, mint_token(app.secret, bob["id"]), decision)
    other, other_opened = listen(server.base, mint_token(app.secret, alice["id"]), "/studios/other")
    assert events.get(timeout=HANG) == ("status", 200) and other.get(timeout=HANG) == ("status", 200)
    assert opened.wait(HANG) and other_opened.wait(HANG)
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
    assert events.get(timeout=HANG) == ("changed", decision)
    with pytest.raises(queue.Empty):
        other.get(timeout=0.5)


def test_a_removed_member_is_told_the_page_is_gone(server, world):
    app, ws, alice, bob, decision = world
    events, opened = listen(server.base, mint_token(app.secret, bob["id"]), decision)
    assert events.get(timeout=HANG) == ("status", 200) and opened.wait(HANG)
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"})
    name, reason = events.get(timeout=HANG)
    assert name == "gone" and "no longer a member" in reason


def test_a_page_you_may_not_see_streams_nothing(server, world):
    app, ws, alice, bob, decision = world
    with app.store.write() as tx:
        carol = create_user(tx, "carol", findable=True)
    token = mint_token(app.secret, carol["id"])
    reply = httpx.get(server.base + decision, headers={**EVENTS, "Authorization": f"Bearer {token}"}, timeout=HANG)
    assert reply.status_code == 404
    assert httpx.get(server.base + decision, headers=EVENTS, timeout=HANG).status_code == 401
    reply = httpx.get(server.base + decision, headers={**EVENTS, "Authorization": "Bearer nope"}, timeout=HANG)
    assert reply.status_code == 401


def test_open_streams_are_bounded_per_user(monkeypatch):
    open_streams = streams.Streams()
    monkeypatch.setattr(streams, "MAX_PER_USER", 2)
    u, v = Standing("u"), Standing("v")
    first = open_streams.admit(u, print)
    assert isinstance(first, streams.Slot) and isinstance(open_streams.admit(u, print), streams.Slot)
    assert "limit" in open_streams.admit(u, print)
    assert isinstance(open_streams.admit(v, print), streams.Slot)
    open_streams.release(first)
    assert isinstance(open_streams.admit(u, print), streams.Slot)


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.mark.skipif(not __import__("pathlib").Path("/usr/bin/chromium").exists(),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_an_open_page_follows_a_vote_and_keeps_what_the_person_is_typing(server, world):
    """A person has the decision open in Chromium and is half-way through a comment; bob votes in
    another process: the tally on the person's page changes without a reload, and the comment they
    are typing is still there."""
    import re
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    app, ws, alice, bob, decision = world
    link = subprocess.run([sys.executable, "-m", "navmcp", "login-link", "alice", "--base-url", server.base],
                          env=server.env, capture_output=True, text=True, check=True).stdout.strip()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(link)
            page.get_by_role("button", name=re.compile("^Sign in as")).click()
            page.wait_for_url(server.base + "/")
            page.goto(server.base + decision)
            soup = page.locator(".ballot li", has_text="Soup").locator(".counts")
            assert soup.inner_text() == "0 accept, 0 prefer"
            comment = page.locator("#action-add_comment textarea")
            comment.fill("I was about to say that soup")
            page.wait_for_timeout(500)  # the page's event stream is open
            ws.execute(bob, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
            page.wait_for_function("() => document.querySelector('#live-mark') !== null", timeout=10_000)
            assert soup.inner_text() == "1 accept, 0 prefer"
            assert comment.input_value() == "I was about to say that soup"
            assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
        finally:
            browser.close()


def test_legacy_mcp_over_http_offers_no_watching(api):
    # Legacy /mcp has no stream to carry notifications (no GET stream): it offers no subscribe.
    init = api.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    assert init.json()["result"]["capabilities"]["resources"] == {}
    refused = api.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                                     "params": {"uri": "navmcp:///"}},
                       headers={"Mcp-Session-Id": init.headers["mcp-session-id"]})
    assert refused.json()["error"]["code"] == -32601


def _open_stream(port: int, token: str, url: str) -> socket.socket:
    """A page's event stream on a raw socket, read until the server says it is watching."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    seen = b""
    while b": watching" not in seen:
        chunk = sock.recv(4096)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    assert seen.startswith(b"HTTP/1.1 200"), seen[:200]
    return sock


def test_open_streams_leave_the_request_limit_free(tmp_path):
    """With more streams open than the server takes requests at once (its limit lowered to 8 here,
    1,000 by default), a page is still served; idle connections still count, so the bound on
    requests holds; and a listen over /mcp counts among its user's streams, as a page does."""
    import socket

    from webclient import WebServer

    server = WebServer(tmp_path / "webhome", env={"NAVMCP_WEB_MAX_CONNECTIONS": "8"})
    app = App(Config(home=server.home, database_url=None, token=None))
    opened: list[socket.socket] = []
    try:
        with app.store.write() as tx:
            people = [create_user(tx, f"watcher{n}", findable=True) for n in range(2)]
        app.workspace.execute(people[0], "/", "create_studio", {"handle": "team", "name": "Team"})
        add_member(app.workspace, people[0], "/studios/team/members", {"handle": "watcher1"})
        tokens = [mint_token(app.secret, person["id"]) for person in people]
        for token in tokens:
            opened += [_open_stream(server.port, token, "/studios/team") for _ in range(streams.MAX_PER_USER)]
        page = httpx.get(server.base + "/studios/team", headers={"Authorization": f"Bearer {tokens[0]}"}, timeout=10)
        assert page.status_code == 200 and "Team" in page.text

        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
        listen = httpx.post(server.base + "/mcp", timeout=10, json={
            "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {"resourceSubscriptions": ["navmcp:///studios/team"]}}},
            headers={"Authorization": f"Bearer {tokens[0]}", "Accept": "application/json, text/event-stream",
                     "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
        assert listen.status_code == 429 and listen.json()["id"] == 7
        assert f"{streams.MAX_PER_USER} live pages and subscriptions" in listen.json()["error"]["message"]

        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
        opened += idle
        wait_for(lambda: httpx.get(server.base + "/healthz", timeout=HANG).status_code == 503,
                 "/healthz says 503 once the server has taken the idle connections in")
        for sock in idle:
            sock.close()
        wait_for(lambda: httpx.get(server.base + "/healthz", timeout=HANG).status_code == 200,
                 "/healthz says 200 again once they are closed")
    finally:
        for sock in opened:
            sock.close()
        app.store.close()
        server.stop()


def _stream(base: str, token: str, url: str, last_event_id: str | None = None, wait: float = 1.0):
    """The status, the events (name, id) and the last id of a stream read for `wait` seconds."""
    headers = {**EVENTS, "Authorization": f"Bearer {token}"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    events, last_id, name, event_id = [], None, None, None
    with httpx.stream("GET", base + url, headers=headers, timeout=httpx.Timeout(5, read=wait)) as reply:
        status = reply.status_code
        try:
            for line in reply.iter_lines():
                if line.startswith("id: "):
                    event_id = last_id = line[4:]
                elif line.startswith("event: "):
                    name = line[7:]
                elif line == "" and name:
                    events.append((name, event_id))
                    name = None
        except httpx.ReadTimeout:
            pass
    return status, events, last_id


def test_a_stream_opened_again_with_its_last_event_id_says_what_it_missed(server, world):
    """EventSource reconnects with the id of the last event it had: if the page changed in
    between, the new stream begins with `changed`; if not, it says nothing."""
    app, ws, alice, bob, decision = world
    token = mint_token(app.secret, bob["id"])
    status, events, first_id = _stream(server.base, token, decision)
    assert status == 200 and first_id and events == []
    status, events, again_id = _stream(server.base, token, decision, last_event_id=first_id)
    assert status == 200 and events == []  # nothing changed meanwhile
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
    ws.execute(alice, "/studios/other", "create_note", {"title": "elsewhere", "body": "not this page"})
    status, events, later_id = _stream(server.base, token, decision, last_event_id=first_id)
    assert status == 200 and [name for name, _ in events] == ["changed"]
    status, events, _ = _stream(server.base, token, decision, last_event_id=later_id)
    assert events == []  # caught up
    status, events, _ = _stream(server.base, token, decision, last_event_id="not a position")
    assert [name for name, _ in events] == ["changed"]  # can't tell: read the page again


@pytest.mark.skipif(not __import__("pathlib").Path("/usr/bin/chromium").exists(),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_an_open_page_catches_up_after_its_server_restarts(tmp_path, world_factory):
    """The server of an open page stops; a vote lands while it is away; a server comes back on the
    same address. The page reconnects by itself and shows the vote, without a reload."""
    import re
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    from webclient import WebServer

    server = WebServer(tmp_path / "webhome")
    try:
        app, ws, alice, bob, decision = world_factory(server)
        link = subprocess.run([sys.executable, "-m", "navmcp", "login-link", "alice", "--base-url", server.base],
                              env=server.env, capture_output=True, text=True, check=True).stdout.strip()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page()
                page.goto(link)
                page.get_by_role("button", name=re.compile("^Sign in as")).click()
                page.wait_for_url(server.base + "/")
                page.goto(server.base + decision)
                soup = page.locator(".ballot li", has_text="Soup").locator(".counts")
                assert soup.inner_text() == "0 accept, 0 prefer"
                page.wait_for_timeout(500)  # the page's event stream is open
                server.stop()
                ws.execute(bob, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
                server = WebServer(server.home, port=server.port)
                page.wait_for_function("() => document.querySelector('#live-mark') !== null", timeout=30_000)
                assert soup.inner_text() == "1 accept, 0 prefer"
                assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
            finally:
                browser.close()
    finally:
        server.stop()


@pytest.mark.skipif(not __import__("pathlib").Path("/usr/bin/chromium").exists(),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_the_unread_badge_follows_the_inbox_without_a_reload(server, world):
    """bob has the studio's decision open in Chromium; alice mentions @bob in a note in the other
    process: the shell's unread badge counts it without a reload, told on the page's own event
    stream (a tab holds one stream, not a second for its badge); reading his inbox clears it."""
    import re
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    app, ws, alice, bob, decision = world
    link = subprocess.run([sys.executable, "-m", "navmcp", "login-link", "bob", "--base-url", server.base],
                          env=server.env, capture_output=True, text=True, check=True).stdout.strip()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(link)
            page.get_by_role("button", name=re.compile("^Sign in as")).click()
            page.wait_for_url(server.base + "/")
            streams = []
            page.on("request", lambda r: streams.append(r.url) if "text/event-stream" in (
                r.headers.get("accept") or "") else None)
            page.goto(server.base + decision)
            badge = page.locator(".inbox-badge")
            assert badge.inner_text() == "0 unread"  # he joined by accepting: nothing unread
            page.wait_for_timeout(500)  # the event streams are open
            ws.execute(alice, "/studios/other", "create_note", {"title": "Elsewhere", "body": "@bob"})  # not his
            ws.execute(alice, "/studios/team", "create_note", {"title": "Agenda", "body": "@bob, have a look"})
            page.wait_for_function("() => document.querySelector('.inbox-badge .n').textContent === '1'",
                                   timeout=10_000)
            assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
            # one stream on this page: its own, with its badge's news (the home page just left may have
            # opened its own stream as it was left: a race seen in two clean-clone runs, not a second stream here)
            assert [url for url in streams if url != server.base + "/"] == [server.base + decision], streams
            page.goto(server.base + "/inbox")
            page.get_by_role("button", name="Mark all read").click()
            page.wait_for_url(server.base + "/inbox")
            assert page.locator(".inbox-badge").is_hidden()
        finally:
            browser.close()


@pytest.mark.skipif(not __import__("pathlib").Path("/usr/bin/chromium").exists(),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_a_flash_made_stale_by_a_live_update_is_replaced(server, world):
    """bob joins a commitment in Chromium ("Joined (1 of 3)"); alice joins in another process: the
    page updates live, and the flash that would now say a wrong count is replaced by "Updated"."""
    import re
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    app, ws, alice, bob, decision = world
    commitment = ws.execute(alice, "/studios/team", "create_commitment", {"title": "Paint the shed", "critical_mass": 3}).url
    link = subprocess.run([sys.executable, "-m", "navmcp", "login-link", "bob", "--base-url", server.base],
                          env=server.env, capture_output=True, text=True, check=True).stdout.strip()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(link)
            page.get_by_role("button", name=re.compile("^Sign in as")).click()
            page.wait_for_url(server.base + "/")
            page.goto(server.base + commitment)
            page.get_by_role("button", name="Join", exact=True).click()
            page.wait_for_url(server.base + commitment)
            flash = page.locator("#main > .alert.flash")
            assert "Joined (1 of critical mass 3)" in flash.inner_text(), flash.inner_text()
            page.wait_for_timeout(500)  # the page's event stream is open
            ws.execute(alice, commitment, "join_commitment", {})
            page.wait_for_function("() => document.querySelector('#live-mark') !== null", timeout=10_000)
            assert flash.count() == 0 and "Updated just now" in page.locator("#live-mark").inner_text()
            assert "2 of 3" in page.locator("#main").inner_text(), page.locator("#main").inner_text()
            assert page.evaluate("performance.getEntriesByType('navigation').length") <= 2  # no reload after the join
        finally:
            browser.close()
