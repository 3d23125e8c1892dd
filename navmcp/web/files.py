"""A file's bytes over HTTP (`…/files/{id}?raw=1`, `?download=1`): checked as its page is, then
sent with headers that keep it inert here. An image is shown inline (the file page's `<img>`);
anything else, and anything with `?download=1`, is a download. The content type is the one the
upload was checked against (navmcp.content.attachments); `nosniff` stops a browser from guessing another,
and a sandboxing CSP keeps a file that still reaches a browsing context (an SVG or HTML uploaded
as text, opened directly) from running as this origin: no script, no same-origin access."""

from __future__ import annotations

from urllib.parse import quote

from navmcp.content.attachments import kind_of
from navmcp.errors import NavError
from navmcp.web.renditions import error_response, retry_after
from navmcp.web.response import Response
from navmcp.web.site import Caller, Site

FILE_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'"


def wants_bytes(query_string: str) -> str | None:
    """'raw' or 'download' when the query asks for a file's bytes, else None (its page)."""
    keys = {part.split("=", 1)[0] for part in query_string.split("&") if part.endswith("=1")}
    return "download" if "download" in keys else "raw" if "raw" in keys else None


def send(site: Site, caller: Caller, url: str, how: str, rendition: str) -> Response:
    try:
        file, data = site.app.workspace.file(caller.user, url, caller.client)
    except NavError as e:
        return error_response(rendition, e.status, e.message, url=e.url, headers=retry_after(e))
    inline = how == "raw" and kind_of(file["content_type"]) == "image"
    name = file["filename"]
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace("?", "_").replace('"', "_")
    disposition = f"{'inline' if inline else 'attachment'}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"
    content_type = file["content_type"] + ("; charset=utf-8" if file["content_type"].startswith("text/") else "")
    return Response(200, data, content_type, [
        ("content-disposition", disposition), ("content-security-policy", FILE_CSP),
        ("cache-control", "private, no-cache"), ("cross-origin-resource-policy", "same-origin")])
