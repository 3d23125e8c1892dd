"""Durability (issue 24, item 18; docs/reliability-promise.md): an acknowledged write is on disk
before its answer leaves, on both stores; bookkeeping that is no acknowledged write is not synced.

On SQLite (WAL) a write transaction commits with synchronous=FULL, which fsyncs the WAL at COMMIT;
with NORMAL, as before, a power loss could take back writes already acknowledged. The stdio test
watches the real server's system calls: between the reply before a write and the write's own
reply there must be an fsync of the WAL, and navigating alone must not sync anything."""

from __future__ import annotations

import re
import shutil

import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.demo.walkthrough import StdioClient, server_command


def test_a_write_transaction_commits_with_full_sync_and_bookkeeping_with_normal(app, owner):
    store = app.store
    with store.write() as tx:
        assert tx.scalar("PRAGMA synchronous") == 2  # FULL
    store.write_one("UPDATE settings SET value = value WHERE key = 'owner'")
    assert store.conn.execute("PRAGMA synchronous").fetchone()["synchronous"] == 1  # NORMAL
    with store.group():
        with store.read() as tx:
            tx.scalar("SELECT 1")
        with store.write() as tx:  # a pipelined write: the group's COMMIT is synced
            assert tx.scalar("PRAGMA synchronous") == 2
    with store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM users") >= 1


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (.ci/run installs it)")
def test_a_write_is_fsynced_before_its_reply_leaves_the_stdio_server(home, tmp_path):
    trace = tmp_path / "trace"
    command = ["strace", "-f", "-qq", "-y", "-s", "60", "-e", "trace=fsync,fdatasync,write", "-o", str(trace),
               *server_command()]
    with StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None},
                     command=command) as client:
        client.initialize()  # id 1
        client.navigate("/")  # id 2: opens the store, makes the owner (a write)
        for _ in range(3):
            assert not client.navigate("/help")["isError"]  # ids 3-5: reads only
        made = client.act("create_studio", url="/", handle="team", name="Team")  # id 6
        assert not made["isError"], made
    lines = trace.read_text().splitlines()

    def reply(id_: int) -> int:
        return next(i for i, line in enumerate(lines) if re.search(r'write\(1<[^>]*>, "\{\\"jsonrpc\\":\\"2.0\\",\\"id\\":%d,' % id_, line))

    syncs = [i for i, line in enumerate(lines) if re.search(r"\b(fsync|fdatasync)\(\d+<[^>]*navmcp\.db-wal>", line)]
    assert not [i for i in syncs if reply(2) < i < reply(5)], "navigating synced the database"
    assert [i for i in syncs if reply(5) < i < reply(6)], "the write's reply left before its WAL was synced"


def test_postgres_commits_synchronously_whatever_the_database_default(pg_database, pg_url, tmp_path):
    """An operator's `synchronous_commit = off` would acknowledge writes a server crash can lose:
    navmcp's connections ask for `on`."""
    import psycopg

    with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{pg_database.name}" SET synchronous_commit = off')
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        with app.store.write() as tx:
            assert tx.scalar("SHOW synchronous_commit") == "on"
    finally:
        app.store.close()
        with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{pg_database.name}" RESET synchronous_commit')
