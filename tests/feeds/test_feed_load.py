"""The issue 41 check of the live feed, small: three `navmcp web` processes on one database (SQLite
file or PostgreSQL), a live-page watcher on every process, writers through all of them at once:
every watcher hears of every change exactly once (0 missed, none twice)."""

from __future__ import annotations

import queue
import threading

import httpx
import pytest

from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user, mint_token
from pg_web import PgWebServer

PROCESSES, WRITES_EACH = 3, 20


def _watch(base: str, token: str, url: str, events: queue.Queue, opened: threading.Event) -> None:
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}"}
    try:
        with httpx.stream("GET", base + url, headers=headers, timeout=httpx.Timeout(10, read=300)) as reply:
            assert reply.status_code == 200
            for line in reply.iter_lines():
                if line.startswith(": watching"):
                    opened.set()
                elif line.startswith("event: "):
                    events.put(line[7:])
    except httpx.HTTPError as e:
        events.put(f"closed: {e}")


def test_every_watcher_on_every_process_hears_every_change_once(store_kind, tmp_path, request):
    url = request.getfixturevalue("pg_url") if store_kind == "postgres" else ""
    home = tmp_path / "home"
    setup = App(Config(home=home, database_url=url or None, token=None))
    alice, bob = add_user(setup.store, "alice"), add_user(setup.store, "bob")
    ws = setup.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Lunch?", "options": ["Pizza", "Soup"]}).url
    writer, watcher = mint_token(setup.secret, alice["id"]), mint_token(setup.secret, bob["id"])
    setup.store.close()

    servers = [PgWebServer(home, url) for _ in range(PROCESSES)]
    try:
        streams = []
        for server in servers:
            events: queue.Queue = queue.Queue()
            opened = threading.Event()
            threading.Thread(target=_watch, args=(server.base, watcher, "/studios/team", events, opened),
                             daemon=True).start()
            streams.append((events, opened))
        assert all(opened.wait(30) for _, opened in streams)
        statuses: list[int] = []

        def write(server: PgWebServer, n: int) -> None:
            with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {writer}"},
                              timeout=60) as client:
                for k in range(WRITES_EACH):
                    statuses.append(client.post(decision + "/actions/add_comment",
                                                json={"body": f"{n}/{k}"}).status_code)

        threads = [threading.Thread(target=write, args=(server, n)) for n, server in enumerate(servers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert statuses == [200] * (PROCESSES * WRITES_EACH)
        for events, _ in streams:
            heard = [events.get(timeout=60) for _ in range(PROCESSES * WRITES_EACH)]
            assert heard == ["changed"] * len(heard)
        for events, _ in streams:
            with pytest.raises(queue.Empty):
                print(events.get(timeout=1))  # none twice
    finally:
        for server in servers:
            server.stop()
