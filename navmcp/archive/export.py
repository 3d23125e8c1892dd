"""A studio written out as an archive (navmcp.archive says what is in it and what never is)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from navmcp import __version__
from navmcp.archive import FORMAT, ORDER, STORE_OWN, TABLES, ArchiveError
from navmcp.archive.people import add_emails
from navmcp.clock import now
from navmcp.content.domain import KIND_LETTER
from navmcp.store import Row
from navmcp.workspace import Workspace


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True)


def _sort_key(value: Any) -> tuple[bool, Any]:
    return (value is None, value if value is not None else 0)


def sort_rows(table: str, rows: list[Row]) -> list[Row]:
    """`rows` of `table` in its archive order (ORDER), sorted here: PostgreSQL's collation and
    SQLite's byte order differ."""
    order = ORDER[table].split(", ")
    rows.sort(key=lambda r: tuple(_sort_key(r[c]) for c in order))
    return rows


def export_studio(workspace: Workspace, handle: str, out: Path, by: Row | None = None) -> dict[str, Any]:
    """Write the studio `handle` to the new zip file `out`, read in one transaction; its manifest.

    `by`: the studio admin who asks (the web app's export page), read as them under the store's
    row-level security; None: the operator's command, read as the database's owner, whose archive
    also carries the e-mail addresses of the people Supabase Auth knows (navmcp.archive.people).
    Files go into the archive one at a time as they are read, so memory holds one file, not the
    studio's (up to its 500 MiB quota)."""
    if out.exists():
        raise ArchiveError(f"{out} exists: name a new file")
    tables: dict[str, list[dict[str, Any]]] = {}
    store = workspace.store
    with ArchiveWriter(out) as archive:
        with store.owner(readonly=True) if by is None else store.read(by["id"]) as tx:
            studio = tx.one("SELECT * FROM studios WHERE handle = ?", (handle,))
            if studio is not None and by is not None and tx.scalar(
                    "SELECT role FROM memberships WHERE studio_id = ? AND user_id = ?",
                    (studio["id"], by["id"])) != "admin":
                studio = None  # only its admins export a studio; to anyone else it is not there
            if studio is None:
                raise ArchiveError(f"no studio @{handle}")
            for table, where, _refs, dropped in TABLES:
                if table == "attachments":  # a row at a time, its bytes written and let go
                    ids = [r["id"] for r in tx.all(f"SELECT id FROM {table} WHERE {where}", (studio["id"],))]
                    rows = [file_row(tx, archive, file_id) for file_id in sorted(ids)]
                else:
                    rows = tx.all(f"SELECT * FROM {table} WHERE {where}", (studio["id"],))
                for r in sort_rows(table, rows):
                    for column in (*dropped, *STORE_OWN):
                        r.pop(column, None)
                tables[table] = rows
            refs = [f"SELECT {c} FROM {t} WHERE {w}" for t, w, refs, _ in TABLES
                    for c, kind in refs.items() if kind == "user"]
            people = tx.all("SELECT u.id, u.handle, u.name FROM users u WHERE u.id IN (" + " UNION ".join(refs) + ")",
                            (studio["id"],) * len(refs))
            people.sort(key=lambda p: p["handle"])
            if by is None:
                add_emails(tx, store.hosted, people)
            reader = by or tx.one("SELECT u.* FROM memberships m JOIN users u ON u.id = m.user_id"
                                  " WHERE m.studio_id = ? ORDER BY m.role = 'admin' DESC, m.created_at LIMIT 1",
                                  (studio["id"],))
        assert reader is not None, "a studio always has a member"
        for item in tables["items"]:  # as an admin of the studio reads it: the one who asks, or the first
            letter = KIND_LETTER[item["kind"]]
            url = f"/studios/{handle}/{letter}/{item['id']}"
            archive.add(f"pages/{letter}-{item['id']}.md", workspace.page(reader, url, "navmcp-export").markdown.encode())
        archive.add("people.jsonl", jsonl(people))
        for table, rows in tables.items():
            archive.add(f"data/{table}.jsonl", jsonl(rows))
        return archive.finish({"format": FORMAT, "studio": handle, "counts": {
            table: len(rows) for table, rows in tables.items()} | {"people": len(people)}})


def file_row(tx: Any, archive: ArchiveWriter, file_id: str) -> Row:
    """The attachment `file_id`'s row without its bytes, which go into `archive` as `files/{id}`."""
    row = tx.one("SELECT * FROM attachments WHERE id = ?", (file_id,))
    archive.add(f"files/{file_id}", bytes(row.pop("data")))
    return row


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(_line(r) + "\n" for r in rows).encode()


class ArchiveWriter:
    """A zip written entry by entry beside `out` (`out`.partial) and renamed once whole; each
    entry's SHA-256 is noted as it is added, and `finish` writes them into `manifest.json`, the
    zip's last entry (a zip's directory is at its end: readers find every entry wherever it is).
    Left by an error, the partial file is removed and `out` never appears."""

    def __init__(self, out: Path):
        self.out = out
        self.partial = out.with_name(out.name + ".partial")
        self.zip = zipfile.ZipFile(self.partial, "w", compression=zipfile.ZIP_DEFLATED)
        self.sums: dict[str, str] = {}

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.zip.close()
        if kind is not None or not self.out.exists():
            self.partial.unlink(missing_ok=True)

    def add(self, name: str, data: bytes) -> None:
        assert name not in self.sums and name != "manifest.json", name
        self.sums[name] = hashlib.sha256(data).hexdigest()
        self.zip.writestr(name, data)

    def finish(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Write `manifest` (with navmcp's version, the time and every entry's SHA-256) and put the
        zip in its place; the manifest."""
        manifest = {**manifest, "navmcp": __version__, "created_at": now(), "files": dict(sorted(self.sums.items()))}
        self.zip.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        self.zip.close()
        self.partial.replace(self.out)
        return manifest
