"""A file's page (`/studios/{h}/{n|d|c}/{item}/files/{id}`): what it is and where it belongs; a
text file's text, fenced. Its bytes are read as its MCP resource (`navmcp.mcp.resources`) or
downloaded from the web app (`navmcp.web.files`); a markdown page never embeds them."""

from __future__ import annotations

from typing import Any

from navmcp.content import attachments
from navmcp.content.domain import LETTER_KIND
from navmcp.errors import NotFound
from navmcp.pages.items import KIND_LABEL, resolve_kind
from navmcp.pages.request import Request
from navmcp.pages.studio import crumbs


def resolve_file(req: Request) -> None:
    kind = LETTER_KIND.get(req.args["kind"])
    if kind is None:
        raise NotFound(f"no page at {req.path}: start at '/' or see '/help' for the URL map")
    resolve_kind(req, kind)
    assert req.item is not None
    found = attachments.find(req.tx, req.item, req.args["file"])
    if found is None:
        raise NotFound(f"no file {req.args['file']!r} on {req.path.rsplit('/files/', 1)[0]}")
    req.facts["file"] = found


def view_file(req: Request) -> dict[str, Any]:
    item, file = req.item, req.facts["file"]
    assert item is not None
    item_url = req.path.rsplit("/files/", 1)[0]
    kind = attachments.kind_of(file["content_type"])
    text = None
    if kind == "text":
        data = attachments.content(req.tx, item, file["id"]) or b""
        text = data.decode("utf-8")
    shown = text[:attachments.TEXT_SHOWN_CHARS] if text is not None else None
    return {
        "title": file["filename"],
        "breadcrumb": crumbs(req, (f"{KIND_LABEL[item['kind']]}: {item['title']}", item_url), (file["filename"], req.path)),
        "item": item,
        "item_url": item_url,
        "studio": req.studio,
        "file": {**file, "kind": kind, "url": req.path},
        "text": shown,
        "text_cut": text is not None and len(text) > len(shown or ""),
        "resource": "navmcp://" + req.path,
    }
