"""The data directory is its owner's alone: the home is 0700 and every file navmcp keeps in it
(the SQLite file, its -wal and -shm, the signing secret) is 0600, whatever the umask; a home left
open by an older navmcp is closed on open, with one line on stderr (issue 24, item 1)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from navmcp.app import App
from navmcp.config import Config
from navmcp.demo.walkthrough import StdioClient

NAVMCP_FILES = {"navmcp.db", "navmcp.db-wal", "navmcp.db-shm", "secret"}


def modes(home: Path) -> dict[str, int]:
    return {"home": stat.S_IMODE(home.stat().st_mode),
            **{p.name: stat.S_IMODE(p.stat().st_mode) for p in home.iterdir()}}


def server(home: Path) -> StdioClient:
    """bin/mcp-server on `home`, started as a shell with the common umask (022) would start it."""
    return StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None},
                       preexec_fn=lambda: os.umask(0o022))


def test_a_fresh_home_and_every_file_in_it_are_the_owners_alone(tmp_path):
    home = tmp_path / "home"
    with server(home) as client:
        client.initialize()
        assert not client.act("create_studio", url="/", handle="team", name="Team")["isError"]
        seen = modes(home)  # while the server runs: the WAL and shared-memory files exist
    assert set(seen) == {"home"} | NAVMCP_FILES
    assert seen == {"home": 0o700, **dict.fromkeys(NAVMCP_FILES, 0o600)}


def test_a_home_open_to_other_accounts_is_closed_on_open_with_a_line_on_stderr(tmp_path):
    home = tmp_path / "home"
    with server(home) as client:
        client.initialize()
        client.navigate("/")
    held = sqlite3.connect(home / "navmcp.db")  # keeps -wal and -shm in place, as a live process would
    held.execute("SELECT count(*) FROM users").fetchone()
    try:
        os.chmod(home, 0o755)
        for name in NAVMCP_FILES:
            os.chmod(home / name, 0o644)
        mine = home / "notes.txt"  # a file of the user's own in NAVMCP_HOME is theirs to set
        mine.write_text("mine")
        os.chmod(mine, 0o644)
        with server(home) as client:
            client.initialize()
            assert not client.navigate("/")["isError"]
            seen = modes(home)
            client.proc.stdin.close()
            client.proc.wait(timeout=10)
            stderr = client.proc.stderr.read().decode()
    finally:
        held.close()
    assert seen == {"home": 0o700, **dict.fromkeys(NAVMCP_FILES, 0o600), "notes.txt": 0o644}
    said = [line for line in stderr.splitlines() if "readable by its owner only" in line]
    assert len(said) == 1 and all(name in said[0] for name in NAVMCP_FILES), stderr


def test_opening_a_store_closes_an_open_home_on_both_stores(any_app, store_kind, caplog):
    """The library path (no CLI, no umask of ours): the store and the secret, opened, fix the modes."""
    home = any_app.config.home
    _ = any_app.store, any_app.secret
    expected = {"home": 0o700, "secret": 0o600}
    if store_kind == "sqlite":
        expected.update(dict.fromkeys(("navmcp.db", "navmcp.db-wal", "navmcp.db-shm"), 0o600))
    assert modes(home) == expected  # fresh, from a process whose umask is 022
    os.chmod(home, 0o755)
    for name in expected.keys() - {"home"}:
        os.chmod(home / name, 0o644)
    again = App(Config(home=home, database_url=any_app.config.database_url, token=None))
    try:
        _ = again.store, again.secret
        assert modes(home) == expected
    finally:
        again.store.close()
    assert any("readable by its owner only" in r.getMessage() for r in caplog.records)


def test_a_shared_sticky_folder_is_left_open_and_navmcps_files_in_it_are_closed(tmp_path):
    """A database file in /tmp (or NAVMCP_HOME=/tmp), opened as root: closing the folder would lock
    every other account out of /tmp. A sticky folder is shared by design; only navmcp's files close."""
    from navmcp.store.sqlite import SqliteStore

    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    store = SqliteStore(shared / "navmcp.db")
    try:
        with store.write() as tx:
            tx.execute("INSERT INTO users (id, handle, name, created_at) VALUES ('u', 'u', 'U', 'now')")
        seen = modes(shared)
    finally:
        store.close()
    assert seen.pop("home") == 0o1777 and seen and set(seen.values()) == {0o600}, seen
