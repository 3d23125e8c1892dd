"""`navmcp backup` / `navmcp restore` (navmcp/backup.py): a consistent copy while writers write,
checked before it is put back, and never put back under a running instance."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from navmcp import backup
from navmcp.app import App
from navmcp.cli import main
from navmcp.config import Config
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
        ws.execute(users[0], "/studios/team/members", "add_member", {"handle": u["handle"]})
    acknowledged: list[list[str]] = [[] for _ in range(WRITERS)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            while not stop.is_set():
                url = ws.execute(users[n], "/studios/team", "create_note", {"title": f"w{n}", "body": "x"}).url
                acknowledged[n].append(url.rsplit("/", 1)[1])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    while min(len(a) for a in acknowledged) < 20:  # every writer busy before the backup begins
        threading.Event().wait(0.01)
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
