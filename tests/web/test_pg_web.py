"""Several `navmcp web` processes behind one load balancer, all on one PostgreSQL: real processes
on two loopback ports, one throwaway database. An MCP session opened on one process continues on
the other and survives a restart; 20 concurrent MCP clients split across both join a limit-5
commitment and exactly 5 get in; a human's cookie from process A works on process B; a page
watched on process A (a live page, a `subscriptions/listen` over /mcp) hears of a vote cast through
process B. And the row-level security of the web sign-in tables: nothing is reachable without the secret."""

from __future__ import annotations

import html
import json
import queue
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest

from deadlines import HANG, wait_for
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user, mint_token
from navmcp.web import auth
from pg_web import HttpMcp, PgWebServer, text_of
from store_fixtures import waiting_for_locks

CLIENTS = 20
LIMIT = 5


@pytest.fixture
def world(tmp_path, pg_url):
    """A studio `crew` (admin `skipper`) with a note, a limit-5 commitment and a decision, on `pg_url`."""
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=pg_url, token=None))
    ws = app.workspace
    skipper = add_user(app.store, "skipper")
    ws.execute(skipper, "/", "create_studio", {"handle": "crew", "name": "Crew"})
    note = ws.execute(skipper, "/studios/crew", "create_note", {"title": "Logbook", "body": "Day one"}).url
    commitment = ws.execute(skipper, "/studios/crew", "create_commitment",
                            {"title": "Night watch", "critical_mass": 2, "limit": LIMIT}).url
    decision = ws.execute(skipper, "/studios/crew", "create_decision",
                          {"question": "Which harbour?", "options": ["North", "South"]}).url
    yield {"app": app, "home": home, "url": pg_url, "skipper": skipper, "note": note,
           "commitment": commitment, "decision": decision}
    app.store.close()


@pytest.fixture
def two_servers(world):
    servers = [PgWebServer(world["home"], world["url"]) for _ in range(2)]
    yield servers
    for server in servers:
        if server.proc.poll() is None:
            server.stop()


def test_an_mcp_session_moves_between_processes_and_survives_a_restart(world, two_servers, pg_database):
    a, b = two_servers
    token = mint_token(world["app"].secret, world["skipper"]["id"])
    client = HttpMcp(a.base, token, name="roaming-agent")
    try:
        client.initialize()
        page = client.navigate(world["note"])
        assert page["isError"] is False and "Logbook" in text_of(page)
        client.base = b.base  # the load balancer sends the next call to the other process
        done = client.act("add_comment", body="written through process B")  # no url: the page navigated on A
        assert done["isError"] is False, text_of(done)
        assert done["structuredContent"]["url"] == world["note"]

        # A restart of A (a graceful shutdown on SIGTERM, exit 0): B keeps serving,
        # and A comes back knowing the session.
        assert a.stop() == 0
        a.start()
        client.base = a.base
        again = client.act("confirm_read")  # still no url: the state was stored, not kept in A's memory
        assert again["isError"] is False, text_of(again)
        assert again["structuredContent"]["url"] == world["note"]
        assert client.post({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}).status_code == 200

        # The session is the skipper's alone: another user's token can't continue it on either process.
        other = add_user(world["app"].store, "stowaway")
        thief = HttpMcp(b.base, mint_token(world["app"].secret, other["id"]), http=client.http)
        thief.session_id = client.session_id
        assert thief.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 404
        # DELETE on B ends it for A too.
        ended = client.http.delete(b.base + "/mcp", headers={"Authorization": f"Bearer {token}",
                                                              "Mcp-Session-Id": client.session_id})
        assert ended.status_code == 200
        client.base = a.base
        assert client.post({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}).status_code == 404
    finally:
        client.close()
    with psycopg.connect(pg_database.admin_url) as db:
        bodies = [r[0] for r in db.execute("SELECT c.body FROM comments c JOIN items i ON i.id = c.item_id"
                                           " WHERE i.title = 'Logbook'")]
        assert bodies == ["written through process B"]
        assert db.execute("SELECT count(*) FROM reads").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM mcp_sessions").fetchone()[0] == 0  # ended: deleted


@pytest.mark.slow
def test_twenty_clients_across_two_processes_join_a_limit_five_commitment(world, two_servers, pg_database):
    app, ws = world["app"], world["app"].workspace
    users = []
    for n in range(CLIENTS):
        user = add_user(app.store, f"deckhand-{n}")
        add_member(ws, world["skipper"], "/studios/crew/members", {"handle": user["handle"]})
        users.append((user, mint_token(app.secret, user["id"])))
    clients = [HttpMcp(two_servers[n % 2].base, token, name=f"deckhand-{n}") for n, (_, token) in enumerate(users)]
    start = threading.Barrier(CLIENTS)

    def work(n: int):
        client = clients[n]
        client.initialize()
        start.wait(timeout=60)  # every client acts at the same moment
        join = client.act("join_commitment", url=world["commitment"])
        vote = client.act("vote", url=world["decision"], votes=[
            {"option": "North", "accept": True, "prefer": n % 2 == 0}, {"option": "South", "accept": n % 3 == 0}])
        return join, vote

    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(work, range(CLIENTS)))
    finally:
        for client in clients:
            client.close()

    joined = {users[n][0]["id"] for n, (join, _) in enumerate(results) if not join["isError"]}
    refusals = [text_of(join) for join, _ in results if join["isError"]]
    assert len(joined) == LIMIT, [text_of(j) for j, _ in results]
    assert len(refusals) == CLIENTS - LIMIT
    for text in refusals:  # a clear refusal: which action, and why
        assert "join_commitment is not available" in text and ("full" in text or "closed" in text), text
    by_process = [sum(1 for n in range(CLIENTS) if n % 2 == side and not results[n][0]["isError"]) for side in (0, 1)]
    assert sum(by_process) == LIMIT
    acknowledged = {users[n][0]["id"] for n, (_, vote) in enumerate(results) if not vote["isError"]}
    assert len(acknowledged) == CLIENTS, [text_of(v) for _, v in results if v["isError"]]

    with psycopg.connect(pg_database.admin_url) as db:  # the owner's view: what was stored
        participants = {r[0] for r in db.execute(
            "SELECT p.user_id FROM participants p JOIN items i ON i.id = p.commitment_id WHERE i.title = %s",
            ("Night watch",))}
        assert participants == joined
        assert db.execute("SELECT closed_at IS NOT NULL FROM items WHERE title = 'Night watch'").fetchone()[0]
        voters = {r[0] for r in db.execute("SELECT user_id FROM votes GROUP BY user_id HAVING count(*) = 2")}
        assert voters == acknowledged
        assert db.execute("SELECT count(*) FROM mcp_sessions").fetchone()[0] == CLIENTS


def test_a_login_link_from_process_a_gives_a_cookie_that_works_on_process_b(world, two_servers, pg_database):
    a, b = two_servers
    link = a.navmcp("login-link", "skipper", "--base-url", a.base)
    assert link.startswith(a.base + "/login?token=")
    with httpx.Client(timeout=30) as browser:
        # opening the link (HEAD, GET) on A spends nothing; its page's button, posted to B, signs in
        assert browser.head(link).status_code == 200
        page = browser.get(link)
        assert page.status_code == 200 and "<h1>Sign in as @skipper</h1>" in page.text
        assert "set-cookie" not in page.headers
        button = html.unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
        assert browser.post(b.base + button).status_code == 403  # not from the page: no Origin
        signed_in = browser.post(b.base + button, headers={"Origin": b.base})
        assert signed_in.status_code == 303 and "HttpOnly" in signed_in.headers["set-cookie"]
        name = auth.cookie_name(auth.instance_id(world["app"].secret), False)  # one instance: one secret
        cookie = browser.cookies[name]
        assert browser.get(link).status_code == 401  # single use, on either process
        assert "already used" in browser.get(link.replace(a.base, b.base)).text

        page = browser.get(b.base + world["decision"])  # the cookie from A, on B
        assert page.status_code == 200 and "@skipper" in page.text and "Which harbour?" in page.text
        csrf = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text).group(1)
        posted = browser.post(b.base + world["decision"] + "/actions/add_comment",
                              data={"csrf_token": csrf, "body": "Posted from a browser on B"})
        assert posted.status_code == 303 and posted.headers["location"] == world["decision"], posted.text
        shown = browser.get(a.base + world["decision"])  # back on A: the flash B set shows, once
        assert shown.status_code == 200 and '<p class="alert flash"' in shown.text
        assert "Posted from a browser on B" in shown.text
        assert '<p class="alert flash"' not in browser.get(b.base + world["decision"]).text
        assert browser.post(a.base + "/logout", data={"csrf_token": csrf}).status_code == 303
        browser.cookies.set(name, cookie)
        assert browser.get(b.base + world["decision"]).status_code == 303  # signed out everywhere
    with psycopg.connect(pg_database.admin_url) as db:
        assert db.execute("SELECT count(*) FROM web_sessions WHERE ended_at IS NOT NULL").fetchone()[0] == 1
    # A script with a Bearer token gets the other renditions and the action API from either process.
    token = a.navmcp("token", "skipper")
    with httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"}) as script:
        markdown = script.get(a.base + world["decision"] + ".md")
        assert markdown.status_code == 200 and "Posted from a browser on B" in markdown.text
        listed = script.get(b.base + world["commitment"] + "/actions").json()
        assert "join_commitment" in [action["name"] for action in listed["actions"]]
        joined = script.post(b.base + world["commitment"] + "/actions/join_commitment", json={})
        assert joined.status_code == 200 and joined.json()["ok"] is True
        again = script.get(a.base + world["commitment"] + ".json").json()
        assert "leave_commitment" in [action["name"] for action in again["actions"]]


def test_web_sign_in_rows_are_reachable_only_with_their_secret(world, pg_database):
    app, skipper = world["app"], world["skipper"]
    mate = add_user(app.store, "mate")
    links = [auth.create_login_link(app.store, user["id"], "http://x") for user in (skipper, mate)]
    for _ in range(2):  # looking at a link (the rolled-back redemption) names its user and spends nothing
        assert auth.login_link_user(app.store, links[1].split("token=")[1])["handle"] == "mate"
    sessions = {user["handle"]: auth.redeem_login_link(app.store, link.split("token=")[1])
                for user, link in zip((skipper, mate), links)}
    with app.store.read() as tx:  # nobody in particular: nothing
        assert tx.all("SELECT * FROM login_links") == [] and tx.all("SELECT * FROM web_sessions") == []
    with app.store.read(user_id=skipper["id"]) as tx:  # a user: own sessions, no link rows at all
        assert tx.all("SELECT * FROM login_links") == []
        assert {r["user_id"] for r in tx.all("SELECT * FROM web_sessions")} == {skipper["id"]}
    with app.store.write(user_id=skipper["id"]) as tx:  # an unfiltered logout ends only one's own
        assert tx.execute("UPDATE web_sessions SET ended_at = 'x' WHERE false") == 0
        assert tx.execute("UPDATE login_links SET used_at = NULL") == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # a link for someone else
        with app.store.write(user_id=skipper["id"]) as tx:
            tx.execute("INSERT INTO login_links VALUES ('h', ?, 'now', '9999', NULL)", (mate["id"],))
    # The definer functions answer about the one row whose secret was hashed, and nothing for a guess.
    assert auth.load_session(app.store, sessions["mate"]).user["id"] == mate["id"]
    assert auth.load_session(app.store, "guess") is None
    with app.store.read() as tx:
        assert tx.all("SELECT * FROM navmcp.web_session_user(?)", ("%",)) == []
    with app.store.write() as tx:
        assert tx.one("SELECT * FROM navmcp.redeem_login_link(?, ?, ?)", ("%", "h", "9999"))["problem"] == "invalid"
    with pytest.raises(auth.AuthError, match="expired"):
        expired = auth.create_login_link(app.store, mate["id"], "http://x", minutes=-1)
        auth.redeem_login_link(app.store, expired.split("token=")[1])
    auth.end_session(app.store, sessions["mate"], mate["id"])
    assert auth.load_session(app.store, sessions["mate"]) is None
    assert auth.load_session(app.store, sessions["skipper"]).user["id"] == skipper["id"]


@pytest.mark.parametrize("threads", ["", "0"], ids=["worker-threads", "on-the-loop"])
def test_a_call_waiting_on_the_database_does_not_stall_the_process(world, pg_database, threads):
    """On PostgreSQL each request runs in a worker thread: while one call waits for a row lock,
    the same process keeps answering others. NAVMCP_WEB_THREADS=0 (everything on the event loop)
    shows what that prevents: the whole process waits with it."""
    server = PgWebServer(world["home"], world["url"], env={"NAVMCP_WEB_THREADS": threads})
    app = world["app"]
    waiting = HttpMcp(server.base, mint_token(app.secret, world["skipper"]["id"]), name="waiting")
    other = HttpMcp(server.base, mint_token(app.secret, world["skipper"]["id"]), name="other")
    holder = psycopg.connect(pg_database.admin_url)  # another server's long transaction, holding the item
    try:
        waiting.initialize()
        other.initialize()
        holder.execute("SELECT 1 FROM items WHERE title = 'Night watch' FOR UPDATE")
        with ThreadPoolExecutor(1) as pool:
            join = pool.submit(waiting.act, "join_commitment", url=world["commitment"])
            wait_for(lambda: waiting_for_locks(pg_database), "the join waits for the lock")
            assert not join.done()
            if threads == "":  # answered while the join still waits (the lock is still held)
                other.http.timeout = httpx.Timeout(HANG)
                page = other.navigate(world["note"])
                assert page["isError"] is False
                assert not join.done()
            else:  # the whole process waits with the join: no answer for as long as the lock is held
                other.http.timeout = httpx.Timeout(1.5)
                with pytest.raises(httpx.ReadTimeout):
                    other.navigate(world["note"])
            holder.rollback()  # the lock goes; the waiting call completes
            assert join.result(timeout=HANG)["isError"] is False
    finally:
        holder.close()
        waiting.close()
        other.close()
        server.stop()


def test_sqlite_stays_on_the_event_loop(app, owner):
    """On the embedded store a request that is not costly is served on the event loop."""
    import asyncio

    from navmcp.web import create_app

    web = create_app(app)

    async def get() -> int:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url="http://127.0.0.1",
                                     headers={"Authorization": f"Bearer {mint_token(app.secret, owner['id'])}"}) as c:
            return (await c.get("/whoami.md")).status_code

    assert asyncio.run(get()) == 200
    assert web.workers.offload is False and web.workers.executor is None


def test_the_member_picker_suggests_only_people_you_share_a_studio_with(world, pg_database):
    """"Invite a person" suggests the people of your other studios, read as the app's role under
    row-level security: someone you share no studio with is not listed (nor visible at all)."""
    app, skipper = world["app"], world["skipper"]
    for handle in ("cook", "stranger"):
        add_user(app.store, handle)
    app.workspace.execute(skipper, "/", "create_studio", {"handle": "galley", "name": "Galley"})
    add_member(app.workspace, skipper, "/studios/galley/members", {"handle": "cook"})
    server = PgWebServer(world["home"], world["url"])
    try:
        token = mint_token(app.secret, skipper["id"])
        page = httpx.get(server.base + "/studios/crew/members", headers={"Authorization": f"Bearer {token}"})
        assert page.status_code == 200
        people = re.search(r'<datalist id="add_member-handle-people">(.*?)</datalist>', page.text, re.S).group(1)
        assert re.findall(r'<option value="([a-z0-9-]+)">', people) == ["cook"]
    finally:
        server.stop()


def test_a_login_link_is_judged_live_without_spending_it(world):
    """What the bad-token limit reads for a login link from an address over it (navmcp.web.limits):
    live until used or expired, through navmcp.login_link_live under row-level security."""
    app = world["app"]
    link = auth.create_login_link(app.store, world["skipper"]["id"], "http://127.0.0.1")
    token = link.split("token=", 1)[1]
    assert auth.login_link_live(app.store, token) and auth.login_link_live(app.store, token)  # nothing spent
    assert not auth.login_link_live(app.store, "no-such-token")
    auth.redeem_login_link(app.store, token)
    assert not auth.login_link_live(app.store, token)


def _watch(request, events: queue.Queue) -> None:
    """Read an event stream (`request` opens it) on a thread: (event name, data) into `events`."""
    def run() -> None:
        try:
            with request() as reply:
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
        except httpx.HTTPError as e:  # the servers stopped at the end of the test
            events.put(("closed", str(e)))

    threading.Thread(target=run, daemon=True).start()


def test_a_page_watched_on_one_process_hears_of_a_vote_cast_through_the_other(world, two_servers, pg_database):
    a, b = two_servers
    decision = world["decision"]
    token = mint_token(world["app"].secret, world["skipper"]["id"])
    auth_header = {"Authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(10, read=60)
    page: queue.Queue = queue.Queue()
    _watch(lambda: httpx.stream("GET", a.base + decision, timeout=timeout,
                                headers={**auth_header, "Accept": "text/event-stream"}), page)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    uri = "navmcp://" + decision
    listen: queue.Queue = queue.Queue()
    _watch(lambda: httpx.stream("POST", a.base + "/mcp", timeout=timeout, json={
        "jsonrpc": "2.0", "id": "watch-1", "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"resourceSubscriptions": [uri]}}},
        headers={**auth_header, "Accept": "application/json, text/event-stream",
                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}), listen)
    assert page.get(timeout=HANG) == ("status", 200) and page.get(timeout=HANG) == ("watching", None)
    assert listen.get(timeout=HANG) == ("status", 200)
    _, acknowledged = listen.get(timeout=HANG)
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"

    voted = httpx.post(b.base + decision + "/actions/vote", headers=auth_header, timeout=30,
                       json={"votes": [{"option": "South", "accept": True}]})
    assert voted.status_code == 200, voted.text
    assert page.get(timeout=HANG) == ("changed", decision)
    _, updated = listen.get(timeout=HANG)
    assert updated["method"] == "notifications/resources/updated" and updated["params"]["uri"] == uri
    assert updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "watch-1"
    tally = httpx.get(a.base + decision + ".md", headers=auth_header, timeout=30).text
    assert "South" in tally and "1 accept" in tally, tally
