"""Attachments: files on a note, decision or commitment, or on one of its comments.

A file is kept in the store (the `attachments` table on both stores; on PostgreSQL its rows follow
the studio's row-level security), goes with its item or comment, and is a page of its own,
`/studios/{h}/{n|d|c}/{item}/files/{id}`, which is also its MCP resource. The limits are stated
here once; the actions, the pages and `/help` read them from here.

What is accepted: the types of `TYPES`, and only when the bytes are what the type says (an image
or a PDF by its magic bytes; text as UTF-8 without NUL). A filename is made safe before it is
stored: no path, no control or markup characters, at most `FILENAME_CHARS`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from navmcp.clock import now
from navmcp.content.domain import KIND_LETTER
from navmcp.identity import new_id
from navmcp.store import Row, Tx

MIB = 1024 * 1024
# Over MCP a file travels as base64 inside one JSON-RPC message, which is a third larger: 1 MiB
# of file is ~1.34 MiB of message, under the HTTP body bound (2 MiB, web/request.MAX_BODY) and
# the stdio line bound (4 MiB). 5 MiB, as proposed, would be refused by both transports first.
MCP_MAX_BYTES = 1 * MIB
# From a person's browser a file comes as itself (multipart/form-data, navmcp.web.uploads), in a
# request allowed this much more than others.
WEB_MAX_BYTES = 10 * MIB
STUDIO_QUOTA_BYTES = 500 * MIB
IMAGE_BLOCK_MAX_BYTES = 1 * MIB  # an image file also read as an MCP image block up to this size
TEXT_SHOWN_CHARS = 20_000  # a text file's page shows this much of it; its resource reads it all
FILENAME_CHARS = 120


def _png(data: bytes) -> bool:
    return data.startswith(b"\x89PNG\r\n\x1a\n")


def _jpeg(data: bytes) -> bool:
    return data.startswith(b"\xff\xd8\xff")


def _gif(data: bytes) -> bool:
    return data[:6] in (b"GIF87a", b"GIF89a")


def _webp(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WEBP"


def _pdf(data: bytes) -> bool:
    return data.startswith(b"%PDF-")


def _text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Accepted type → (kind of file, the check its bytes must pass).
TYPES: dict[str, tuple[str, Callable[[bytes], bool]]] = {
    "image/png": ("image", _png),
    "image/jpeg": ("image", _jpeg),
    "image/gif": ("image", _gif),
    "image/webp": ("image", _webp),
    "application/pdf": ("pdf", _pdf),
    "text/plain": ("text", _text),
    "text/markdown": ("text", _text),
    "text/csv": ("text", _text),
}
ACCEPTED = ", ".join(TYPES)
# A filename's extension → the accepted type it names: a browser's upload of a type it does not know
# (application/octet-stream) is read as this (navmcp.web.uploads), then checked as any file is.
EXTENSIONS = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
              "pdf": "application/pdf", "txt": "text/plain", "text": "text/plain", "md": "text/markdown",
              "markdown": "text/markdown", "csv": "text/csv"}
assert set(EXTENSIONS.values()) == set(TYPES), "every accepted type has an extension"


class Refused(ValueError):
    """A file that is not accepted: `field` names the parameter at fault, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def kind_of(content_type: str) -> str:
    return TYPES[content_type][0]


def checked_type(content_type: str, data: bytes) -> str:
    """The declared type, normalised, if accepted and the bytes are of it; else `Refused`."""
    declared = content_type.split(";", 1)[0].strip().lower()
    if declared not in TYPES:
        raise Refused("content_type", f"{content_type[:100]!r} is not accepted: accepted types are {ACCEPTED}")
    if not TYPES[declared][1](data):
        what = "UTF-8 text without NUL" if TYPES[declared][0] == "text" else f"a {declared} file (its first bytes)"
        raise Refused("data", f"the file's content is not {what}: declared as {declared}")
    return declared


_UNSAFE = re.compile(r"[^\w.\- ()+,]")


def safe_filename(name: str) -> str:
    """A filename that cannot name a path or pass for markup: its last path part, NFKC, only
    letters, digits and `._- ()+,`, no leading dots, at most FILENAME_CHARS (its extension kept)."""
    name = unicodedata.normalize("NFKC", name).replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("_", "".join(ch for ch in name if ch.isprintable()))
    name = re.sub(r"_{2,}", "_", name).strip(" ._")
    if len(name) > FILENAME_CHARS:
        stem, dot, ext = name.rpartition(".")
        ext = ext[:16] if dot and stem else ""
        name = name[:FILENAME_CHARS - len(ext) - 1].rstrip(" ._") + ("." + ext if ext else "")
    return name or "file"


def url_of(studio_handle: str, item: Row, file_id: str) -> str:
    return f"/studios/{studio_handle}/{KIND_LETTER[item['kind']]}/{item['id']}/files/{file_id}"


def studio_usage(tx: Tx, studio_id: str) -> int:
    return int(tx.scalar("SELECT coalesce(sum(size), 0) FROM attachments WHERE studio_id = ?", (studio_id,)))


def add(tx: Tx, studio: Row, item: Row, user_id: str, filename: str, content_type: str, data: bytes,
        comment_id: str | None = None, max_bytes: int = MCP_MAX_BYTES) -> str:
    """Store one file on `item` (or its comment `comment_id`); its id. `Refused` when over a limit,
    of a type not accepted, or not what its type says; nothing is written then."""
    if not data:
        raise Refused("data", "the file is empty")
    if len(data) > max_bytes:
        raise Refused("data", f"the file is {len(data):,} bytes: at most {max_bytes:,} bytes here")
    content_type = checked_type(content_type, data)
    used = studio_usage(tx, studio["id"])
    if used + len(data) > STUDIO_QUOTA_BYTES:
        raise Refused("data", f"the studio's files would pass its quota of {STUDIO_QUOTA_BYTES // MIB} MiB "
                              f"({used:,} bytes used): remove files first")
    file_id = new_id()
    tx.execute("INSERT INTO attachments (id, studio_id, item_id, comment_id, filename, content_type, size, sha256,"
               " data, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (file_id, studio["id"], item["id"], comment_id, safe_filename(filename), content_type, len(data),
                hashlib.sha256(data).hexdigest(), data, user_id, now()))
    return file_id


_META = """SELECT a.id, a.comment_id, a.filename, a.content_type, a.size, a.sha256, a.created_by, a.created_at,
                  u.handle AS uploader
             FROM attachments a JOIN users u ON u.id = a.created_by"""


def listing(tx: Tx, studio_handle: str, item: Row) -> list[dict[str, Any]]:
    """An item's files, oldest first, without their bytes: what its pages list."""
    rows = tx.all(f"{_META} WHERE a.item_id = ? ORDER BY a.created_at, a.id", (item["id"],))
    for r in rows:
        r["url"] = url_of(studio_handle, item, r["id"])
        r["kind"] = kind_of(r["content_type"])
    return rows


def find(tx: Tx, item: Row, file_id: str) -> Row | None:
    """One file of `item`, without its bytes."""
    return tx.one(f"{_META} WHERE a.item_id = ? AND a.id = ?", (item["id"], file_id))


def content(tx: Tx, item: Row, file_id: str) -> bytes | None:
    found = tx.one("SELECT data FROM attachments WHERE item_id = ? AND id = ?", (item["id"], file_id))
    return None if found is None else bytes(found["data"])


def remove_of_comment(tx: Tx, comment_id: str) -> None:
    """A comment kept as "[deleted]" keeps no files (one deleted outright takes them by cascade)."""
    tx.execute("DELETE FROM attachments WHERE comment_id = ?", (comment_id,))

