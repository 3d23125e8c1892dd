"""navmcp behind a transaction-mode pooler (issue 41): a real PgBouncer (`pool_mode = transaction`)
in front of the test's PostgreSQL. With `NAVMCP_PG_PREPARE=off` and the change feed on its own
session-level URL (`NAVMCP_FEED_DATABASE_URL`), writes from several clients through the pooler
answer without an error and a watcher hears of every one of them exactly once; with prepared
statements left on, the pooler's shuffled sessions break repeated statements."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

import pgbouncer
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user, mint_token
from webproc import free_port, wait_until_healthy

pytestmark = pytest.mark.skipif(not pgbouncer.available(), reason="needs Debian's pgbouncer (.ci/run installs it)")


@pytest.fixture
def bouncer(pg_url):
    own = pgbouncer.PgBouncer(pg_url)
    yield own
    own.close()


def _db(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def test_prepared_statements_break_behind_a_transaction_pooler_unless_turned_off(bouncer, pg_url, monkeypatch):
    """The failure the setting is for: psycopg prepares a statement after 5 runs, on whichever
    server connection the pooler lent, and another transaction then finds it missing."""
    through = bouncer.url("navmcp_app", _db(pg_url))
    errors = 0
    conns = [psycopg.connect(through, autocommit=True) for _ in range(3)]
    try:
        for n in range(30):
            try:
                conns[n % 3].execute("SELECT %s::int", (n,)).fetchall()
            except psycopg.Error:
                errors += 1
    finally:
        for conn in conns:
            conn.close()
    assert errors, "prepared statements worked through the pooler: the setting may no longer be needed"


def test_writes_and_the_live_feed_through_pgbouncer_in_transaction_mode(bouncer, pg_url, tmp_path):
    through = bouncer.url("navmcp_app", _db(pg_url))
    home = tmp_path / "home"
    setup = App(Config(home=home, database_url=pg_url, token=None))
    alice, bob = add_user(setup.store, "alice"), add_user(setup.store, "bob")
    ws = setup.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Lunch?",
                                                                      "options": ["Pizza", "Soup"]}).url
    tokens = [mint_token(setup.secret, user["id"]) for user in (alice, bob)]
    setup.store.close()

    port = free_port()
    env = {**os.environ, "NAVMCP_HOME": str(home), "NAVMCP_DATABASE_URL": through, "NAVMCP_PG_PREPARE": "off",
           "NAVMCP_FEED_DATABASE_URL": pg_url, "NAVMCP_PG_POOL_SIZE": "4"}
    env.pop("NAVMCP_TOKEN", None)
    web = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(port)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    events: queue.Queue = queue.Queue()
    opened = threading.Event()

    def watch() -> None:
        headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {tokens[1]}"}
        try:
            with httpx.stream("GET", base + "/studios/team", headers=headers,
                              timeout=httpx.Timeout(10, read=120)) as reply:
                events.put(("status", reply.status_code))
                for line in reply.iter_lines():
                    if line.startswith(": watching"):
                        opened.set()
                    elif line.startswith("event: "):
                        events.put((line[7:], None))
        except httpx.HTTPError as e:
            events.put(("closed", str(e)))

    try:
        assert wait_until_healthy(base, web, time.monotonic() + 30), web.stderr.read() if web.poll() else ""
        threading.Thread(target=watch, daemon=True).start()
        assert events.get(timeout=30) == ("status", 200) and opened.wait(30)
        statuses: list[int] = []
        writers, each = 4, 12

        def write(n: int) -> None:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {tokens[n % 2]}"},
                              timeout=60) as client:
                for k in range(each):
                    reply = client.post(decision + "/actions/add_comment", json={"body": f"{n}/{k}"})
                    statuses.append(reply.status_code)
                    statuses.append(client.get(decision + ".json").status_code)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert statuses.count(200) == len(statuses) == writers * each * 2, sorted(set(statuses))
        heard = [events.get(timeout=60) for _ in range(writers * each)]
        assert all(name == "changed" for name, _ in heard), heard
        with pytest.raises(queue.Empty):
            print(events.get(timeout=1))  # and none twice
    finally:
        web.terminate()
        web.wait(timeout=10)
        stderr = web.stderr.read()
        web.stderr.close()
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr[-3000:]
