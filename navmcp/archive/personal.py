"""Everything one person wrote, as one zip archive they download from `/whoami` (a person's act in
their browser session; navmcp.web.exports).

The archive: `manifest.json` (format `PERSONAL_FORMAT`, the person's handle, counts, the SHA-256 of
every other file), `me.json` (their account: handle, name, time zone, since when), `studios.jsonl`
(the studios their rows are in: id, handle, name, their role), `data/{table}.jsonl` (their rows of
each table of `MINE`, in the studios they are a member of now), `files/{id}` (the files they
uploaded) and `pages/{studio}/{n|d|c}-{id}.md` (the items they wrote, as they read them today).
Read as them, in one transaction: on PostgreSQL row-level security keeps it to what they may see.
Never in it: other people's rows, sessions, tokens, OAuth grants, the audit, the inbox.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from navmcp.archive import STORE_OWN, TABLES, ArchiveError
from navmcp.archive.export import ArchiveWriter, file_row, jsonl, sort_rows
from navmcp.content.domain import KIND_LETTER
from navmcp.store import Row
from navmcp.workspace import Workspace

PERSONAL_FORMAT = "navmcp-personal/1"
# Each table of a studio's archive (navmcp.archive.TABLES) whose rows a person writes, and the
# column that names them: what they wrote, voted, joined, read, answered and uploaded.
MINE = {"items": "created_by", "options": "created_by", "votes": "user_id", "participants": "user_id",
        "comments": "created_by", "reads": "user_id", "revisions": "created_by", "responses": "user_id",
        "proposal_versions": "created_by", "attachments": "created_by"}


def export_person(workspace: Workspace, user: Row, out: Path) -> dict[str, Any]:
    """Write everything `user` wrote in the studios they are in to the new zip `out`; its manifest.
    Their files go in one at a time as they are read (navmcp.archive.export.ArchiveWriter)."""
    if out.exists():
        raise ArchiveError(f"{out} exists: name a new file")
    tables: dict[str, list[Row]] = {table: [] for table in MINE}
    with ArchiveWriter(out) as archive:
        with workspace.store.read(user["id"]) as tx:
            me = tx.one("SELECT handle, name, created_at, time_zone FROM users WHERE id = ?", (user["id"],))
            studios = tx.all("SELECT s.id, s.handle, s.name, m.role FROM memberships m"
                             " JOIN studios s ON s.id = m.studio_id WHERE m.user_id = ?", (user["id"],))
            studios.sort(key=lambda s: s["handle"])
            for studio in studios:
                for table, where, _refs, dropped in TABLES:
                    if table not in MINE:
                        continue
                    mine = f"SELECT {{}} FROM {table} WHERE {where} AND {MINE[table]} = ?"
                    if table == "attachments":  # a row at a time, its bytes written and let go
                        ids = tx.all(mine.format("id"), (studio["id"], user["id"]))
                        rows = [file_row(tx, archive, r["id"]) for r in sorted(ids, key=lambda r: r["id"])]
                    else:
                        rows = tx.all(mine.format("*"), (studio["id"], user["id"]))
                    for r in sort_rows(table, rows):
                        for column in (*dropped, *STORE_OWN):
                            r.pop(column, None)
                    tables[table] += rows
        handles = {s["id"]: s["handle"] for s in studios}
        archive.add("me.json", (json.dumps(me, ensure_ascii=False, indent=2) + "\n").encode())
        archive.add("studios.jsonl", jsonl(studios))
        for table, rows in tables.items():
            archive.add(f"data/{table}.jsonl", jsonl(rows))
        for item in tables["items"]:
            letter = KIND_LETTER[item["kind"]]
            url = f"/studios/{handles[item['studio_id']]}/{letter}/{item['id']}"
            archive.add(f"pages/{handles[item['studio_id']]}/{letter}-{item['id']}.md", workspace.page(
                user, url, "navmcp-export").markdown.encode())
        return archive.finish({"format": PERSONAL_FORMAT, "person": user["handle"],
                               "counts": {t: len(r) for t, r in tables.items()} | {"studios": len(studios)}})
