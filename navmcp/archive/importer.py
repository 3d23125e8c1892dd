"""An archive read back as a new studio (navmcp.archive): checked whole before anything is
written, then written in one transaction as the database's owner, announced on no change feed
(nothing here notes a change; the store's triggers keep only their counts and copies)."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from navmcp.archive import FORMAT, MAX_ARCHIVE_BYTES, MAX_ENTRIES, TABLES, TEXT, ArchiveError
from navmcp.archive.people import find_person, knows_emails
from navmcp.clock import now
from navmcp.identity import check_handle, new_id
from navmcp.store import Store

CHUNK = 1024 * 1024  # an entry is read and checked this much at a time


def read_archive(path: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and entries of the archive at `path`, when it is within the limits, of this
    format, and every file is as the manifest says; ArchiveError before anything is written.
    The attachments' bytes (`files/…`) are checked a part at a time and left out: the import reads
    each again when it writes it (memory holds one file, not up to MAX_ARCHIVE_BYTES of them)."""
    size = path.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"{path} is {size:,} bytes: archives of at most {MAX_ARCHIVE_BYTES:,} bytes are read")
    try:
        z = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        raise ArchiveError(f"{path} is not a navmcp archive (not a zip file: {e})") from None
    with z:
        infos = z.infolist()
        if len(infos) > MAX_ENTRIES or sum(i.file_size for i in infos) > MAX_ARCHIVE_BYTES:
            raise ArchiveError(f"{path} unpacks to more than {MAX_ARCHIVE_BYTES:,} bytes or {MAX_ENTRIES:,} files")
        try:
            manifest = json.loads(z.read("manifest.json"))
        except (KeyError, ValueError):
            raise ArchiveError(f"{path} has no readable manifest.json") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ArchiveError(f"{path}: format {str(manifest.get('format') if isinstance(manifest, dict) else None)[:50]!r}"
                               f" is not one this navmcp reads ({FORMAT})")
        listed = manifest.get("files")
        if not isinstance(listed, dict):
            raise ArchiveError(f"{path}: its manifest lists no files")
        names = {i.filename for i in infos} - {"manifest.json"}
        if names != set(listed):
            raise ArchiveError(f"{path}: its files are not those its manifest lists")
        entries = {}
        for name in sorted(names):
            digest, kept = hashlib.sha256(), []
            with z.open(name) as f:
                while part := f.read(CHUNK):
                    digest.update(part)
                    if not name.startswith("files/"):
                        kept.append(part)
            if digest.hexdigest() != listed[name]:
                raise ArchiveError(f"{path}: {name} is not the file exported (its SHA-256 differs)")
            entries[name] = b"".join(kept)
    return manifest, entries


def _rows(entries: dict[str, bytes], name: str) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in entries.get(name, b"").decode().splitlines() if line]
    except ValueError:
        raise ArchiveError(f"{name}: not JSON lines") from None


def import_studio(store: Store, path: Path, handle: str) -> dict[str, Any]:
    """Create the studio `handle` from the archive at `path`; what was made (its URL, counts, the
    people matched and the placeholders made)."""
    handle = check_handle(handle)
    manifest, entries = read_archive(path)
    people = {p["id"]: p for p in _rows(entries, "people.jsonl")}
    data = {table: _rows(entries, f"data/{table}.jsonl") for table, *_ in TABLES}
    if len(data["studios"]) != 1:
        raise ArchiveError("the archive holds no studio, or more than one")
    old_handle = data["studios"][0]["handle"]
    ids: dict[str, dict[Any, Any]] = {kind: {} for kind in ("studio", "item", "option", "comment", "file", "user")}
    # Every row's own id, new; given in the old ids' order, as pages order some rows by id (a
    # decision's options added at the same moment).
    for table, _where, refs, _dropped in TABLES:
        kind = refs.get("id")
        if kind:
            old = sorted({row["id"] for row in data[table]})
            ids[kind] = dict(zip(old, sorted(new_id(10 if kind == "studio" else 8) for _ in old), strict=True))
    item_url = re.compile(r"/studios/" + re.escape(old_handle) + r"(?=[/)\s`'\"?#]|$)"
                          r"(/([ndc])/([a-z0-9]+)(/files/([a-z0-9]+))?)?")

    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            if m.group(1) and m.group(3) in ids["item"]:
                url = f"/studios/{handle}/{m.group(2)}/{ids['item'][m.group(3)]}"
                if m.group(4):  # a file's URL: its new id too
                    url += f"/files/{ids['file'].get(m.group(5), m.group(5))}"
                return url
            return f"/studios/{handle}" + (m.group(1) or "")
        return item_url.sub(one, text)

    matched, placeholders, by_email = [], [], []
    # As the database's owner (navmcp.store.seam.Store.owner): it writes people and every member's
    # rows, which no one user may. What it writes is only the archive's, under new ids: every
    # reference is one of the archive's own rows, renumbered, or a person found by handle.
    with zipfile.ZipFile(path) as z, store.owner() as tx:
        if tx.one("SELECT 1 FROM studios WHERE handle = ?", (handle,)):
            raise ArchiveError(f"a studio @{handle} exists already: an import makes a new studio, never merges")
        emails = knows_emails(tx, store.hosted)
        for old_id, person in people.items():
            found = find_person(tx, emails, person)
            if found:
                ids["user"][old_id] = found[0]
                matched.append(person["handle"])
                by_email += [person["handle"]] if found[1] == "email" else []
                continue
            placeholder = _free_handle(tx, person["handle"])
            ids["user"][old_id] = new_id(10)
            tx.execute("INSERT INTO users (id, handle, name, created_at, findable) VALUES (?, ?, ?, ?, 0)",
                       (ids["user"][old_id], placeholder, f"{person['name']} (imported)"[:100], now()))
            placeholders.append(placeholder)
        for table, _where, refs, _dropped in TABLES:
            batch: list[dict[str, Any]] = []
            for row in data[table]:
                row = dict(row)
                for column, kind in refs.items():
                    if row.get(column) is not None:
                        if row[column] not in ids[kind]:
                            raise ArchiveError(f"data/{table}.jsonl: {column} {str(row[column])[:20]!r} names nothing "
                                               "in the archive")
                        row[column] = ids[kind][row[column]]
                for column in TEXT.get(table, ()):
                    if isinstance(row.get(column), str):
                        row[column] = rewrite(row[column])
                if table == "studios":
                    row["handle"] = handle
                if table == "item_tags":
                    row.update(seq=0, updated_at="")  # the item's, copied by the store's trigger
                if table == "attachments":  # its bytes read now, one file at a time (checked again)
                    name = f"files/{row['id']}"
                    old = next(k for k, v in ids["file"].items() if v == row["id"])
                    row["data"] = z.read(f"files/{old}") if f"files/{old}" in entries else b""
                    if hashlib.sha256(row["data"]).hexdigest() != row["sha256"]:
                        raise ArchiveError(f"{name}: not the file its row describes")
                if batch and list(batch[0]) != list(row):
                    _insert(tx, table, batch)
                    batch = []
                batch.append(row)
                if len(batch) == (1 if table == "attachments" else BATCH):
                    _insert(tx, table, batch)
                    batch = []
            if batch:
                _insert(tx, table, batch)
    return {"url": f"/studios/{handle}", "counts": {t: len(r) for t, r in data.items()},
            "matched": sorted(matched), "by_email": sorted(by_email), "placeholders": sorted(placeholders),
            "from": manifest.get("studio")}


# Rows a table's INSERT carries at once: PostgreSQL's counter triggers run once per statement
# (20261130000270), and one row per statement made an import of N items of one tag cost O(N²).
# An attachment goes alone: its row holds its file.
BATCH = 500


def _insert(tx, table: str, rows: list[dict[str, Any]]) -> None:
    """One INSERT of `rows` (all of the same columns) into `table`, in their order."""
    columns = list(rows[0])
    values = ", ".join(["(" + ", ".join("?" * len(columns)) + ")"] * len(rows))
    tx.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}", [row[c] for row in rows for c in columns])


def _free_handle(tx, wanted: str) -> str:
    """A handle for a placeholder person: theirs if nobody here has it (it was free), else numbered."""
    for n in range(0, 1000):
        candidate = wanted if n == 0 else f"{wanted[:40]}-{n}"
        if not tx.one("SELECT 1 FROM users WHERE handle = ?", (candidate,)):
            return candidate
    raise ArchiveError(f"no free handle for a placeholder of @{wanted}")
