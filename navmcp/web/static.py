"""The answers that are the same for everyone: `/healthz`, the favicon, and the fingerprinted
stylesheet and script under `/static/`."""

from __future__ import annotations

from typing import Any

from navmcp.web import html
from navmcp.web.request import Request
from navmcp.web.response import Response, json_response, text

CACHE = "public, max-age=31536000, immutable"  # a file's URL names its content's hash


async def healthz(site: Any, req: Request) -> Response:
    """Never opens the store, never waits behind other requests (the app answers it on the loop)."""
    return json_response(200, {"ok": True})


async def asset(site: Any, req: Request) -> Response:
    """The stylesheet and script, at URLs that name their content's hash: cached for a year."""
    found = html.asset(req.path)
    if found is None or req.method not in ("GET", "HEAD"):
        return text(404, "no such file\n", headers=[("cache-control", "no-store")])
    return Response(200, found[0], found[1], headers=[("cache-control", CACHE)])


async def favicon(site: Any, req: Request) -> Response:
    # Browsers ask for it on every first visit: no icon, said without a 404 in their console.
    return Response(204, b"", "image/x-icon", headers=[("cache-control", "max-age=86400")])
