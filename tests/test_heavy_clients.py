"""A heavy client cannot freeze the server for others (issue 24, item 3).

What is checked, without timing anything (the machine running the tests may be busy with other
work): while a heavy request is being served, `/healthz` and another user's navigate are answered,
on SQLite and on PostgreSQL. On SQLite, probes are sent while batches of searches flood the server,
and some must be answered wholly between a batch's sending and its answer; on PostgreSQL, the heavy
requests wait for a row lock held by the test, and the probes are answered before it is released.
What makes it hold:

- costly requests (a batch, a search) are served in threads of their own, with their own SQLite
  connection (navmcp.web.workers): the event loop and the hosted store's worker threads stay
  free, however many such requests arrive;
- a batch has a time budget (`protocol.BATCH_SECONDS`): the requests not begun by then are answered
  -32000 without running;
- search is bounded (`search.SEARCH_WINDOW`, `search.MIN_PREFIX`): its cost does not grow with the
  studio;
- a pipelined group never holds the write lock across reads (tests/mcp/test_group_commit.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest

from deadlines import HANG, wait_for
from navmcp import protocol
from navmcp.app import App
from navmcp.config import Config
from navmcp.content import search
from navmcp.demo import seed
from navmcp.identity import add_user, mint_token
from navmcp.mcp.tools import connect
from navmcp.store.fulltext import fts5_match
from navmcp.web import workers
from pg_web import PROTOCOL, HttpMcp, PgWebServer
from store_fixtures import waiting_for_locks
from webproc import free_port, wait_until_healthy

ITEMS = 20_000  # a studio where one batch of prefix searches took seconds of the event loop
PREFIXES = ("s", "a", "se", "pl", "re", "de", "co", "in")


def search_batch(size: int = 100) -> list[dict]:
    return [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
             "params": {"name": "navigate", "arguments": {"url": f"/studios/bench/search?q={PREFIXES[n % 8]}"}}}
            for n in range(size)]


def post(client: HttpMcp, message) -> httpx.Response:
    return client.http.post(client.base + "/mcp", json=message, headers={
        "Authorization": f"Bearer {client.token}", "Mcp-Session-Id": client.session_id,
        "MCP-Protocol-Version": PROTOCOL})


def test_heavy_clients_cannot_hold_healthz_or_another_users_navigate_on_sqlite(tmp_path):
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=None, token=None))
    seed.seed(app.store, ITEMS)
    heavy_user = app.store.read_one("SELECT id FROM users WHERE handle = 'bench-member-01'")
    probe = add_user(app.store, "probe")
    app.workspace.execute(probe, "/", "create_studio", {"handle": "mine", "name": "Mine"})
    tokens = mint_token(app.secret, heavy_user["id"]), mint_token(app.secret, probe["id"])
    app.store.close()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NAVMCP_")}, "NAVMCP_HOME": str(home),
           "NAVMCP_BATCH_SECONDS": "3"}
    server = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop, answered, failures = threading.Event(), [], []
    batches: list[tuple[float, float]] = []  # (sent, answered), on the monotonic clock
    heavy = [HttpMcp(base, tokens[0], name=f"heavy-{n}") for n in range(3)]
    other = HttpMcp(base, tokens[1], name="other")
    try:
        assert wait_until_healthy(base, server, time.monotonic() + HANG)
        for client in [*heavy, other]:
            client.initialize()
        assert other.navigate("/studios/mine")["isError"] is False  # the page's template is compiled

        def flood(client: HttpMcp) -> None:
            while not stop.is_set():
                try:
                    sent = time.monotonic()
                    reply = post(client, search_batch())
                    batches.append((sent, time.monotonic()))
                    answered.append((reply.status_code, len(reply.json())))
                except Exception as e:  # noqa: BLE001 — reported below
                    failures.append(repr(e))
                    return

        threads = [threading.Thread(target=flood, args=(client,)) for client in heavy]
        for thread in threads:
            thread.start()
        probes: list[tuple[float, float]] = []  # (sent, answered): a /healthz, then a navigate
        with httpx.Client(timeout=HANG) as plain:
            deadline = time.monotonic() + HANG
            while (len(batches) < 6 or len(probes) < 20) and not failures:  # the flood has run a while
                assert time.monotonic() < deadline, f"{len(batches)} batches answered: the server hangs"
                started = time.monotonic()
                assert plain.get(base + "/healthz").status_code == 200
                assert other.navigate("/studios/mine")["isError"] is False
                probes.append((started, time.monotonic()))
                time.sleep(0.05)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        assert failures == []
        assert answered and all(reply == (200, 100) for reply in answered), answered
        # Had a batch held the event loop, no probe sent after it could be answered before it.
        inside = [p for p in probes if any(sent < p[0] and p[1] < done for sent, done in batches)]
        assert len(inside) >= 3, f"{len(inside)} of {len(probes)} probes answered while a batch was served"
    finally:
        stop.set()
        for client in [*heavy, other]:
            client.close()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stderr.close()


@pytest.mark.parametrize("costly_threads", ["", "0"], ids=["costly-threads", "none"])
def test_five_heavy_requests_leave_worker_threads_for_others_on_postgres(tmp_path, pg_url, pg_database,
                                                                           costly_threads):
    """Five batches of one user that each hold a worker thread (here: waiting for a row lock another
    server holds) take the threads for costly requests only, and of a pool never the last thread
    (navmcp.web.workers): another user's navigate is served. With no costly threads
    (NAVMCP_WEB_COSTLY_THREADS=0) they take every worker thread but one, which serves it."""
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=pg_url, token=None))
    heavy_user, probe = add_user(app.store, "heavy"), add_user(app.store, "probe")
    app.workspace.execute(heavy_user, "/", "create_studio", {"handle": "crew", "name": "Crew"})
    app.workspace.execute(probe, "/", "create_studio", {"handle": "mine", "name": "Mine"})
    commitment = app.workspace.execute(heavy_user, "/studios/crew", "create_commitment",
                                       {"title": "Night watch", "critical_mass": 2}).url
    server = PgWebServer(home, pg_url, env={"NAVMCP_WEB_COSTLY_THREADS": costly_threads})  # 4 worker threads
    heavy = [HttpMcp(server.base, mint_token(app.secret, heavy_user["id"]), name=f"heavy-{n}") for n in range(5)]
    other = HttpMcp(server.base, mint_token(app.secret, probe["id"]), name="other")
    holder = psycopg.connect(pg_database.admin_url)
    try:
        for client in [*heavy, other]:
            client.initialize()
        assert other.navigate("/studios/mine")["isError"] is False  # the page's template is compiled
        holder.execute("SELECT 1 FROM items WHERE title = 'Night watch' FOR UPDATE")
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                  "params": {"name": "execute_action", "arguments": {"action": "join_commitment", "url": commitment}}},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "navigate", "arguments": {"url": "/studios/crew/search?q=night"}}}]
        with ThreadPoolExecutor(5) as pool:
            batches = [pool.submit(post, client, batch) for client in heavy]
            # as many as there are threads to take them, but one, wait for the lock (the rest queue)
            held = (workers.COSTLY_THREADS if costly_threads == "" else 4) - 1
            wait_for(lambda: waiting_for_locks(pg_database, held), f"{held} batches wait for the lock")
            assert not any(b.done() for b in batches)
            assert httpx.get(server.base + "/healthz", timeout=HANG).status_code == 200
            other.http.timeout = httpx.Timeout(HANG)  # answered while all five still wait (the lock is held)
            assert other.navigate("/studios/mine")["isError"] is False
            assert not any(b.done() for b in batches)
            holder.rollback()  # the lock goes: every batch is answered
            replies = [json.loads(b.result(timeout=HANG).text) for b in batches]
        assert all(len(r) == 2 and all("result" in m for m in r) for r in replies), replies
    finally:
        holder.close()
        for client in [*heavy, other]:
            client.close()
        server.stop()
        app.store.close()


def test_a_batch_past_its_time_budget_answers_the_rest_without_running_them(app, owner, monkeypatch):
    app.workspace.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    monkeypatch.setattr(protocol, "BATCH_SECONDS", 0.0)
    connection = connect(app, None)
    connection.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t"}}})
    notes = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "execute_action", "arguments": {
        "action": "create_note", "url": "/studios/team", "params": {"title": f"n{n}", "body": "b"}}}} for n in range(1, 4)]
    replies = connection.receive([*notes, {"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[0]["result"]["isError"] is False  # the first runs, as it would alone
    for reply in replies[1:]:
        assert reply["error"]["code"] == -32000 and "time budget" in reply["error"]["message"], reply
    with app.store.read() as tx:
        assert [r["title"] for r in tx.all("SELECT title FROM items")] == ["n1"]


def test_search_ranks_and_counts_a_bounded_window_of_matches(any_app, new_user, monkeypatch):
    """Only the newest SEARCH_WINDOW matches of each kind are ranked and counted (on both stores), and
    the page says there may be more; a one-letter last word is no prefix."""
    alice, _ = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for n in range(12):
        ws.execute(alice, "/studios/team", "create_note", {"title": f"Launch plan {n}", "body": "steps"})
    monkeypatch.setattr(search, "SEARCH_WINDOW", 5)
    page = ws.page(alice, "/studios/team/search?q=launch")
    assert "5 or more items" in page.markdown and "at most the newest 5 matches of each kind" in page.markdown
    assert "Launch plan 11" in page.markdown and "Launch plan 6" not in page.markdown  # the newest five
    monkeypatch.setattr(search, "SEARCH_WINDOW", 1000)
    page = ws.page(alice, "/studios/team/search?q=launch")
    assert "12 items" in page.markdown and "or more" not in page.markdown
    assert fts5_match(search.parse("l")) == '"l"' and fts5_match(search.parse("launch p")) == '"launch"*'


def test_telling_a_costly_request_never_recurses_into_nested_lists():
    """A frame of 100,000 nested one-element lists (the fuzzer's) was a RecursionError, and a 500."""
    from navmcp.web.mcp_http import costly

    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert costly(nested) is False
    assert costly([{"params": {"arguments": {"url": "/studios/x/search?q=plan"}}}]) is True
    assert costly({"params": {"arguments": {"url": "/studios/x"}}}) is False
