"""`navmcp backup` / `navmcp restore` (navmcp/archive/backup.py): a consistent copy while writers write,
checked before it is put back, and never put back under a running instance."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from deadlines import wait_for
from nav_helpers import add_member
from navmcp.app import App
from navmcp.archive import backup
from navmcp.cli import main
from navmcp.config import Config
from navmcp.errors import Busy
from navmcp.identity import add_user

WRITERS = 4


def _app(home):
    return App(Config(home=home, database_url=None, token=None))


def test_a_backup_taken_while_four_writers_write_holds_every_write_acknowledged_before_it(tmp_path):
    home = tmp_path / "home"
    app = _app(home)
    users = [add_user(app.store, f"writer{n}") for n in range(WRITERS)]
    assert app.secret  # made on first use: the backup carries it
    ws = app.workspace
    ws.execute(users[0], "/", "create_studio", {"handle": "team", "name": "Team"})
    for u in users[1:]:
        add_member(ws, users[0], "/studios/team/members", {"handle": u["handle"]})
    acknowledged: list[list[str]] = [[] for _ in range(WRITERS)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            while not stop.is_set():
                try:
                    url = ws.execute(users[n], "/studios/team", "create_note", {"title": f"w{n}", "body": "x"}).url
                except Busy:  # refused, nothing applied (a loaded machine): not acknowledged, try again
                    continue
                acknowledged[n].append(url.rsplit("/", 1)[1])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    # every writer busy before the backup begins (a writer that failed ends the wait: reported below)
    wait_for(lambda: errors or min(len(a) for a in acknowledged) >= 20, "four writers writing")
    before = {i for a in acknowledged for i in list(a)}  # acknowledged before the backup began
    manifest = backup.backup(home, tmp_path / "copy")
    during = sum(len(a) for a in acknowledged)
    threading.Event().wait(0.05)
    stop.set()
    for t in threads:
        t.join()
    app.store.close()
    assert not errors
    assert sum(len(a) for a in acknowledged) > len(before)  # the writers kept writing around it
    assert manifest["files"].keys() == {"navmcp.db", "secret"} and backup.integrity(tmp_path / "copy" / "navmcp.db") == "ok"
    restored_home = tmp_path / "restored"
    backup.restore(tmp_path / "copy", restored_home)
    conn = sqlite3.connect(restored_home / "navmcp.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    kept = {r[0] for r in conn.execute("SELECT id FROM items")}
    conn.close()
    assert before <= kept, f"{len(before - kept)} acknowledged writes missing"
    assert len(kept) <= during + 1  # nothing in it that no writer was ever told of (one may be mid-answer)
    assert (restored_home / "secret").read_bytes() == (home / "secret").read_bytes()
    again = _app(restored_home)  # the restored store opens and serves, as the same users
    assert again.workspace.page(users[0], "/studios/team").data["studio"]["handle"] == "team"
    again.store.close()


def test_restore_refuses_a_running_instances_store_and_a_damaged_backup(tmp_path):
    home = tmp_path / "home"
    app = _app(home)
    add_user(app.store, "alice")
    backup.backup(home, tmp_path / "copy")
    with pytest.raises(backup.BackupError, match="running instance"):
        backup.restore(tmp_path / "copy", home)  # `app` has the store open
    app.store.close()
    assert backup.in_use(home) is None
    (home / "web.json").write_text(json.dumps({"pid": __import__("os").getpid(), "base_url": "http://x"}))
    with pytest.raises(backup.BackupError, match="navmcp web"):
        backup.restore(tmp_path / "copy", home)
    (home / "web.json").unlink()
    with pytest.raises(backup.BackupError, match="not empty"):
        backup.backup(home, tmp_path / "copy")
    # a changed byte: refused by its checksum; a copy whose manifest agrees but that is damaged: by SQLite
    damaged = tmp_path / "damaged"
    backup.backup(home, damaged)
    db = damaged / "navmcp.db"
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'users'").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    data[start:start + 12] = b"\x0d\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"  # its b-tree page header, garbled
    db.write_bytes(bytes(data))
    with pytest.raises(backup.BackupError, match="SHA-256"):
        backup.restore(damaged, home)
    manifest = json.loads((damaged / "backup.json").read_text())
    manifest["files"]["navmcp.db"] = backup._sha256(db)
    (damaged / "backup.json").write_text(json.dumps(manifest))
    with pytest.raises(backup.BackupError, match="integrity"):
        backup.restore(damaged, home)
    (damaged / "backup.json").write_text(json.dumps({**manifest, "format": "navmcp-backup/99"}))
    with pytest.raises(backup.BackupError, match="format"):
        backup.restore(damaged, home)
    assert (home / "navmcp.db").exists() and not (home / "navmcp.db.before-restore").exists()  # untouched
    backup.restore(tmp_path / "copy", home)
    assert (home / "navmcp.db.before-restore").exists()


def test_the_commands(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    monkeypatch.setenv("NAVMCP_HOME", str(home))
    monkeypatch.delenv("NAVMCP_DATABASE_URL", raising=False)
    app = _app(home)
    add_user(app.store, "alice")
    app.store.close()
    assert main(["backup", str(tmp_path / "b")]) == 0
    assert "integrity ok" in capsys.readouterr().err
    assert main(["backup", str(tmp_path / "b")]) == 1
    assert "not empty" in capsys.readouterr().err
    assert main(["restore", str(tmp_path / "b")]) == 0
    assert "before-restore" in capsys.readouterr().err
    assert main(["restore", str(tmp_path / "nothing")]) == 1
    assert "not a navmcp backup" in capsys.readouterr().err


def test_a_store_of_the_oldest_schema_is_backed_up_then_upgraded_and_reads_as_before(tmp_path):
    """The oldest store a user may have: the first migration's schema alone, with a studio, a
    decision with a vote and a comment written in it. Backed up, then opened by today's navmcp,
    which applies every later migration (forward-only) and reads it as it was."""
    from navmcp.store.migrations import sqlite_migrations
    from navmcp.store.sqlite import _split_sql

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    first = sqlite_migrations()[0]
    assert first.version == 1
    conn = sqlite3.connect(home / "navmcp.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for statement in _split_sql(first.sql):
        conn.execute(statement)
    at = "2026-11-22T10:00:00.000000Z"
    conn.execute("INSERT INTO schema_migrations VALUES (1, ?)", (at,))
    conn.execute("INSERT INTO users VALUES ('u1', 'alice', 'Alice', ?, NULL)", (at,))
    conn.execute("INSERT INTO studios VALUES ('s1', 'team', 'Team', 'old', 'u1', ?)", (at,))
    conn.execute("INSERT INTO memberships VALUES ('s1', 'u1', 'admin', ?)", (at,))
    conn.execute("INSERT INTO items (id, studio_id, kind, title, body, created_by, created_at, updated_at)"
                 " VALUES ('d1', 's1', 'decision', 'Where to meet', 'old body', 'u1', ?, ?)", (at, at))
    conn.execute("INSERT INTO options VALUES ('o1', 'd1', 'Lisbon', 'u1', ?)", (at,))
    conn.execute("INSERT INTO votes VALUES ('d1', 'o1', 'u1', 1, 1, ?)", (at,))
    conn.execute("INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at)"
                 " VALUES ('c1', 'd1', 's1', 'an old comment', 'u1', ?)", (at,))
    conn.close()
    manifest = backup.backup(home, tmp_path / "before-upgrade")
    assert manifest["schema_version"] == 1
    app = _app(home)
    try:
        with app.store.read() as tx:
            alice = tx.one("SELECT * FROM users WHERE id = 'u1'")
            versions = [r["version"] for r in tx.all("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == [m.version for m in sqlite_migrations()]  # every later one applied, in order
        page = app.workspace.page(alice, "/studios/team/d/d1")
        assert "Where to meet" in page.markdown and "an old comment" in page.markdown and "Lisbon" in page.markdown
        app.workspace.execute(alice, "/studios/team/d/d1", "attach",
                              {"filename": "a.csv", "content_type": "text/csv", "data": "YSxi"})  # today's tables work
    finally:
        app.store.close()
    assert backup.integrity(home / "navmcp.db") == "ok"
    backup.restore(tmp_path / "before-upgrade", home)  # going back is restoring the backup taken before
    conn = sqlite3.connect(home / "navmcp.db")
    assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == 1
    conn.close()
