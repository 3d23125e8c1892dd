"""A studio written out as an archive (navmcp.archive says what is in it and what never is)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from navmcp import __version__
from navmcp.archive import FORMAT, ORDER, STORE_OWN, TABLES, ArchiveError
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
    row-level security; None: the operator's command, read as the database's owner."""
    if out.exists():
        raise ArchiveError(f"{out} exists: name a new file")
    tables: dict[str, list[dict[str, Any]]] = {}
    files: dict[str, bytes] = {}
    store = workspace.store
    with store.owner(readonly=True) if by is None else store.read(by["id"]) as tx:
        studio = tx.one("SELECT * FROM studios WHERE handle = ?", (handle,))
        if studio is not None and by is not None and tx.scalar(
                "SELECT role FROM memberships WHERE studio_id = ? AND user_id = ?", (studio["id"], by["id"])) != "admin":
            studio = None  # only its admins export a studio; to anyone else it is not there
        if studio is None:
            raise ArchiveError(f"no studio @{handle}")
        for table, where, _refs, dropped in TABLES:
            rows = tx.all(f"SELECT * FROM {table} WHERE {where}", (studio["id"],))
            for r in sort_rows(table, rows):
                if table == "attachments":
                    files[r["id"]] = bytes(r["data"])
                for column in (*dropped, *STORE_OWN):
                    r.pop(column, None)
            tables[table] = rows
        people = tx.all("SELECT u.id, u.handle, u.name FROM users u WHERE u.id IN (" + " UNION ".join(
            f"SELECT {c} FROM {t} WHERE {w}" for t, w, refs, _ in TABLES for c, kind in refs.items()
            if kind == "user") + ")", (studio["id"],) * sum(
            1 for _, _, refs, _ in TABLES for kind in refs.values() if kind == "user"))
        people.sort(key=lambda p: p["handle"])
        reader = by or tx.one("SELECT u.* FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.studio_id = ?"
                              " ORDER BY m.role = 'admin' DESC, m.created_at LIMIT 1", (studio["id"],))
    assert reader is not None, "a studio always has a member"
    pages: dict[str, str] = {}
    for item in tables["items"]:  # as an admin of the studio reads it: the one who asks, or the first
        url = f"/studios/{handle}/{KIND_LETTER[item['kind']]}/{item['id']}"
        pages[f"pages/{KIND_LETTER[item['kind']]}-{item['id']}.md"] = workspace.page(reader, url, "navmcp-export").markdown
    entries: dict[str, bytes] = {}
    entries["people.jsonl"] = jsonl(people)
    for table, rows in tables.items():
        entries[f"data/{table}.jsonl"] = jsonl(rows)
    for file_id, data in files.items():
        entries[f"files/{file_id}"] = data
    for name, text in pages.items():
        entries[name] = text.encode()
    return write_archive(out, {"format": FORMAT, "studio": handle, "counts": {
        table: len(rows) for table, rows in tables.items()} | {"people": len(people)}}, entries)


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(_line(r) + "\n" for r in rows).encode()


def write_archive(out: Path, manifest: dict[str, Any], entries: dict[str, bytes]) -> dict[str, Any]:
    """The zip `out` of `entries` and their manifest (`manifest`, with navmcp's version, the time,
    and every entry's SHA-256), written beside it and renamed once whole; the manifest."""
    manifest = {**manifest, "navmcp": __version__, "created_at": now(),
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(entries.items())}}
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        for name, data in sorted(entries.items()):
            z.writestr(name, data)
    partial.replace(out)
    return manifest
