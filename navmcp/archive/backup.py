"""Backup and restore of the embedded store (`navmcp backup PATH`, `navmcp restore PATH`).

A backup is a folder: `navmcp.db`, a consistent copy made with SQLite's online backup API while
the store serves (one step, so one read snapshot: every write committed before it began is in
it, none half-made), the signing `secret` (tokens and login links stay valid), and
`backup.json` (when, the schema version, the files' SHA-256). Copying a live database file with
its WAL is how SQLite stores are lost; this is the supported way.

A restore checks the folder first (its checksums, then `PRAGMA integrity_check` on the copy) and
refuses to replace the store of an instance that is running: no process may hold the store open
(an exclusive lock is tried) and no `navmcp web` may be recorded as serving the home. The store it
replaces is kept beside it (`navmcp.db.before-restore`). The PostgreSQL store is backed up with
`pg_dump`/`pg_restore` (docs/hosting.md), not here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

from navmcp.clock import now

DB = "navmcp.db"
SECRET = "secret"
MANIFEST = "backup.json"
FORMAT = "navmcp-backup/1"


class BackupError(Exception):
    """What is wrong with a backup or a restore, in words for the operator."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def integrity(db: Path) -> str:
    """`PRAGMA integrity_check`'s verdict on `db`, read-only: 'ok', or what it found."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()[:10])
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        conn.close()


def _schema_version(db: Path) -> int | None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()


def backup(home: Path, dest: Path) -> dict:
    """Copy the store of `home` and its secret into the new folder `dest`; its manifest."""
    source = home / DB
    if not source.is_file():
        raise BackupError(f"no store to back up at {source}")
    if dest.exists() and any(dest.iterdir()):
        raise BackupError(f"{dest} exists and is not empty: name a new folder")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    out = sqlite3.connect(dest / DB)
    try:
        src.backup(out)  # pages=-1: the whole database in one step, from one read snapshot
    finally:
        out.close()
        src.close()
    verdict = integrity(dest / DB)
    if verdict != "ok":
        raise BackupError(f"the copy failed SQLite's integrity check: {verdict}")
    files = [DB]
    if (home / SECRET).is_file():
        shutil.copyfile(home / SECRET, dest / SECRET)
        files.append(SECRET)
    manifest = {"format": FORMAT, "created_at": now(), "schema_version": _schema_version(dest / DB),
                "files": {name: _sha256(dest / name) for name in files}}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def check(folder: Path) -> dict:
    """The manifest of a backup folder, when its files are as it says and its copy is sound."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise BackupError(f"{folder} is not a navmcp backup (no readable {MANIFEST}): {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise BackupError(f"{folder}/{MANIFEST}: not a backup of a format this navmcp reads ({FORMAT})")
    if DB not in manifest["files"]:
        raise BackupError(f"{folder}/{MANIFEST} names no {DB}")
    for name, digest in manifest["files"].items():
        if name not in (DB, SECRET):
            raise BackupError(f"{folder}/{MANIFEST} names an unexpected file {name!r}")
        path = folder / name
        if not path.is_file() or _sha256(path) != digest:
            raise BackupError(f"{path} is missing or not the file backed up (its SHA-256 differs)")
    verdict = integrity(folder / DB)
    if verdict != "ok":
        raise BackupError(f"{folder / DB} fails SQLite's integrity check: {verdict}")
    return manifest


def in_use(home: Path) -> str | None:
    """Why the store of `home` is in use by a running instance, or None when nothing holds it."""
    from navmcp.config import RUNNING_FILE

    record = home / RUNNING_FILE
    if record.is_file():
        try:
            pid = int(json.loads(record.read_text())["pid"])
            os.kill(pid, 0)
            return f"`navmcp web` (process {pid}) is serving {home}"
        except PermissionError:
            return f"`navmcp web` is serving {home} (its record names a live process)"
        except (OSError, ValueError, KeyError, TypeError):
            pass
    db = home / DB
    if not db.exists():
        return None
    conn = sqlite3.connect(db, isolation_level=None, timeout=0.2)
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")  # refused while any process has the store open (WAL's shared lock)
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        return f"a process has {db} open (a navmcp server, or another program): stop it first"
    finally:
        conn.close()
    return None


def restore(folder: Path, home: Path) -> dict:
    """Put the backup in `folder` in place as the store of `home` (and its secret); its manifest."""
    manifest = check(folder)
    busy = in_use(home)
    if busy:
        raise BackupError(f"refusing to restore over a running instance's store: {busy}")
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = home / DB
    staged = home / (DB + ".restoring")
    shutil.copyfile(folder / DB, staged)
    for suffix in ("", "-wal", "-shm", "-journal"):  # the old store, kept whole under the name beside it
        if (home / (DB + suffix)).exists():
            os.replace(home / (DB + suffix), home / (DB + ".before-restore" + suffix))
    os.replace(staged, target)
    if SECRET in manifest["files"]:
        shutil.copyfile(folder / SECRET, home / SECRET)
        os.chmod(home / SECRET, 0o600)
    return manifest
