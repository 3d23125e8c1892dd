"""PostgreSQL stopped and started under a running app (issue 41), on a cluster this test owns
(`pg_cluster.OwnCluster`: initdb on another port; the shared server is never stopped): while the
database is away calls are answered 503 with Retry-After at once (nothing applied, never a 500 or a
wait for the pool), `/readyz` says so while `/healthz` stays 200, a live page's watcher stays and
hears of what committed after the return, a write retried with its idempotency key after the
outage is applied once, and service is back within moments of the database."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

import httpx
import pytest

import pg_cluster
from deadlines import HANG, wait_for
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.errors import Unavailable
from navmcp.feeds.changes import Watcher, interest
from navmcp.identity import add_user, mint_token
from navmcp.store.postgres import migrate
from webproc import free_port, wait_until_healthy

pytestmark = pytest.mark.skipif(not pg_cluster.available(), reason="needs PostgreSQL's initdb and pg_ctl")


@pytest.fixture
def cluster():
    own = pg_cluster.OwnCluster()
    try:
        migrate(own.url)
        yield own
    finally:
        own.close()


def test_a_database_outage_is_503_then_service_returns(cluster, tmp_path):
    app = App(Config(home=tmp_path / "home", database_url=cluster.app_url, token=None))
    alice = add_user(app.store, "alice")
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "first"}).url
    token = mint_token(app.secret, alice["id"])

    events: queue.Queue = queue.Queue()
    with app.store.read(user_id=alice["id"]) as tx:
        watcher = Watcher(interest(tx, alice["id"], note), lambda c: events.put(("notify", c)),
                          lambda reason: events.put(("end", reason)))
    app.feed.add(watcher)

    port = free_port()
    env = {**os.environ, "NAVMCP_HOME": str(tmp_path / "home"), "NAVMCP_DATABASE_URL": cluster.app_url}
    env.pop("NAVMCP_TOKEN", None)
    web = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(port)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    try:
        assert wait_until_healthy(base, web, time.monotonic() + 30)
        assert httpx.get(base + "/readyz", timeout=10).status_code == 200
        assert httpx.get(base + note + ".json", headers=auth, timeout=10).status_code == 200

        live: queue.Queue = queue.Queue()  # a live page open on the web process across the outage
        opened = threading.Event()

        def watch() -> None:
            try:
                with httpx.stream("GET", base + note, headers={**auth, "Accept": "text/event-stream"},
                                  timeout=httpx.Timeout(10, read=120)) as reply:
                    for line in reply.iter_lines():
                        if line.startswith(": watching"):
                            opened.set()
                        elif line.startswith("event: "):
                            live.put(line[7:])
            except httpx.HTTPError as e:
                live.put(f"closed: {e}")

        threading.Thread(target=watch, daemon=True).start()
        assert opened.wait(HANG)
        cluster.stop()
        # In this process: a read and a write are refused as Unavailable (503), not a driver error.
        with pytest.raises(Unavailable):
            ws.page(alice, note)
        with pytest.raises(Unavailable):
            ws.execute(alice, note, "add_comment", {"body": "while the database is away"})
        # Over HTTP: 503 with Retry-After, answered at once (a hang-only deadline, not a speed claim).
        for _ in range(3):
            reply = httpx.get(base + note + ".json", headers=auth, timeout=20)
            assert reply.status_code == 503 and reply.headers.get("retry-after"), reply.text
        keyed = {**auth, "Idempotency-Key": "retry-me"}
        reply = httpx.post(base + note + "/actions/add_comment", json={"body": "sent while away"}, headers=keyed,
                           timeout=20)
        assert reply.status_code == 503 and reply.headers.get("retry-after") and reply.json()["ok"] is False
        events_reply = httpx.get(base + note, headers={**auth, "Accept": "text/event-stream"}, timeout=20)
        assert events_reply.status_code == 503  # a watch is refused for now, never a 500
        assert httpx.get(base + "/readyz", timeout=20).status_code == 503
        assert httpx.get(base + "/healthz", timeout=5).status_code == 200  # the process itself is alive

        cluster.start()
        back = time.monotonic()
        wait_for(lambda: httpx.get(base + "/readyz", timeout=HANG).status_code == 200, "the web process came back",
                 every=0.05)
        ready_after = time.monotonic() - back
        reply = httpx.post(base + note + "/actions/add_comment", json={"body": "sent while away"}, headers=keyed,
                           timeout=20)
        assert reply.status_code == 200, reply.text
        served_after = time.monotonic() - back
        again = httpx.post(base + note + "/actions/add_comment", json={"body": "sent while away"}, headers=keyed,
                           timeout=20)
        assert again.status_code == 200 and again.json() == reply.json()
        page = httpx.get(base + note + ".md", headers=auth, timeout=20).text
        assert page.count("sent while away") == 1  # the retried write, applied once
        print(f"\nready {ready_after:.2f} s and a write served {served_after:.2f} s after PostgreSQL was back")
        # This process recovers too, and its feed watcher is still there and hears of the write.
        deadline = time.monotonic() + HANG
        while True:
            try:
                ws.page(alice, note)
                break
            except Unavailable:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        kind, _ = events.get(timeout=HANG)
        assert kind == "notify"
        assert live.get(timeout=HANG) == "changed"  # the web process's live page stayed open and heard it
    finally:
        web.terminate()
        web.wait(timeout=10)
        stderr = web.stderr.read()
        web.stderr.close()
        app.feed.close()
        app.store.close()
    assert "internal error" not in stderr, stderr[-3000:]


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium (.ci/run installs it)")
def test_an_open_page_catches_up_across_a_database_outage(cluster, tmp_path):
    """A person has a decision open. PostgreSQL stops, and the page's server is replaced by a new
    process while it is away: the page's stream is refused (503, which ends an EventSource for good).
    The page's script opens it again, with backoff, once the database is back, reads itself again,
    and follows a vote cast after the return — without a reload."""
    import re

    from playwright.sync_api import sync_playwright

    home = tmp_path / "home"
    app = App(Config(home=home, database_url=cluster.app_url, token=None))
    alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Lunch?",
                                                                      "options": ["Pizza", "Soup"]}).url
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "NAVMCP_HOME": str(home), "NAVMCP_DATABASE_URL": cluster.app_url}
    env.pop("NAVMCP_TOKEN", None)
    link = subprocess.run([sys.executable, "-m", "navmcp", "login-link", "alice", "--base-url", base], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()

    def serve() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert wait_until_healthy(base, proc, time.monotonic() + 30)
        return proc

    web = serve()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                         args=["--headless", "--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page()
                page.goto(link)
                page.get_by_role("button", name=re.compile("^Sign in as")).click()
                page.wait_for_url(base + "/")
                page.goto(base + decision)
                soup = page.locator(".ballot li", has_text="Soup").locator(".counts")
                assert soup.inner_text() == "0 accept, 0 prefer"
                page.wait_for_timeout(500)  # the page's event stream is open
                cluster.stop()
                web.terminate()
                web.wait(timeout=10)
                web.stderr.close()
                web = serve()  # a new process while the database is away: the page's stream gets 503
                refused = httpx.get(base + decision, headers={"Accept": "text/event-stream"}, timeout=20)
                assert refused.status_code in (401, 503)  # (no cookie here: whoever asks, never a 500)
                page.wait_for_timeout(5000)  # the page's own reconnect meets the 503 meanwhile
                cluster.start()
                deadline = time.monotonic() + HANG
                while True:
                    try:
                        ws.execute(bob, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
                        break
                    except Unavailable:
                        assert time.monotonic() < deadline
                        time.sleep(0.1)
                page.wait_for_function("() => document.querySelector('#live-mark') !== null", timeout=60_000)
                page.wait_for_function("() => /1 accept/.test(document.querySelector('.ballot').innerText)",
                                       timeout=60_000)
                assert soup.inner_text() == "1 accept, 0 prefer"
                assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
            finally:
                browser.close()
    finally:
        web.terminate()
        web.wait(timeout=10)
        stderr = web.stderr.read()
        web.stderr.close()
        app.store.close()
    assert "internal error" not in stderr, stderr[-3000:]
