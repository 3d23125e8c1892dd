"""A studio written out as an archive (navmcp.archive says what is in it and what never is)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from navmcp import __version__
from navmcp.archive import FORMAT, ORDER, TABLES, ArchiveError
from navmcp.clock import now
from navmcp.content.domain import KIND_LETTER
from navmcp.workspace import Workspace


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True)


def export_studio(workspace: Workspace, handle: str, out: Path) -> dict[str, Any]:
    """Write the studio `handle` to the new zip file `out`, read in one transaction; its manifest."""
    if out.exists():
        raise ArchiveError(f"{out} exists: name a new file")
    tables: dict[str, list[dict[str, Any]]] = {}
    files: dict[str, bytes] = {}
    with workspace.store.read() as tx:
        studio = tx.one("SELECT * FROM studios WHERE handle = ?", (handle,))
        if studio is None:
            raise ArchiveError(f"no studio @{handle}")
        for table, where, _refs, dropped in TABLES:
            order = ORDER[table]
            rows = tx.all(f"SELECT * FROM {table} WHERE {where} ORDER BY {order}", (studio["id"],))
            for r in rows:
                if table == "attachments":
                    files[r["id"]] = bytes(r["data"])
                for column in dropped:
                    r.pop(column, None)
            tables[table] = rows
        people = tx.all("SELECT u.id, u.handle, u.name FROM users u WHERE u.id IN (" + " UNION ".join(
            f"SELECT {c} FROM {t} WHERE {w}" for t, w, refs, _ in TABLES for c, kind in refs.items()
            if kind == "user") + ") ORDER BY u.handle", (studio["id"],) * sum(
            1 for _, _, refs, _ in TABLES for kind in refs.values() if kind == "user"))
        reader = tx.one("SELECT u.* FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.studio_id = ?"
                        " ORDER BY m.role = 'admin' DESC, m.created_at LIMIT 1", (studio["id"],))
    assert reader is not None, "a studio always has a member"
    pages: dict[str, str] = {}
    for item in tables["items"]:  # as an admin of the studio reads it (any of them: the same page)
        url = f"/studios/{handle}/{KIND_LETTER[item['kind']]}/{item['id']}"
        pages[f"pages/{KIND_LETTER[item['kind']]}-{item['id']}.md"] = workspace.page(reader, url, "navmcp-export").markdown
    entries: dict[str, bytes] = {}
    entries["people.jsonl"] = "".join(_line(p) + "\n" for p in people).encode()
    for table, rows in tables.items():
        entries[f"data/{table}.jsonl"] = "".join(_line(r) + "\n" for r in rows).encode()
    for file_id, data in files.items():
        entries[f"files/{file_id}"] = data
    for name, text in pages.items():
        entries[name] = text.encode()
    manifest = {"format": FORMAT, "navmcp": __version__, "created_at": now(), "studio": handle,
                "counts": {table: len(rows) for table, rows in tables.items()} | {"people": len(people)},
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(entries.items())}}
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        for name, data in sorted(entries.items()):
            z.writestr(name, data)
    partial.replace(out)
    return manifest
