"""The answers that are the same for everyone: `/healthz` (liveness), `/readyz` (readiness: the
database answers), the favicon, and the fingerprinted stylesheet and script under `/static/`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from navmcp.web import assets
from navmcp.web.request import Request
from navmcp.web.response import Response, json_response, text

CACHE = "public, max-age=31536000, immutable"  # a file's URL names its content's hash
READY_SECONDS = 5.0  # a database that has not answered /readyz's question in this long is not ready
log = logging.getLogger("navmcp.web")


async def healthz(site: Any, req: Request) -> Response:
    """Never opens the store, never waits behind other requests (the app answers it on the loop)."""
    return json_response(200, {"ok": True})


async def readyz(site: Any, req: Request) -> Response:
    """200 when the database answers a query now, else 503 (with `Retry-After`): for a load
    balancer, which sends requests only to ready processes. Asked on a thread, within READY_SECONDS;
    never behind other requests' checks or limits."""
    try:
        ready = await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, _reachable, site.app),
                                       READY_SECONDS)
    except TimeoutError:
        ready = False
    headers = [("cache-control", "no-store")]
    if ready:
        return json_response(200, {"ok": True, "database": "ok"}, headers)
    return json_response(503, {"ok": False, "database": "unreachable"}, [*headers, ("retry-after", "2")])


def _reachable(app: Any) -> bool:
    try:
        store = app.store  # opened here if it never was (the database was away at start)
        if hasattr(store, "reachable"):
            return store.reachable()
        with store.read() as tx:
            return tx.scalar("SELECT 1 AS one") == 1
    except Exception as e:  # not ready, whatever the reason; the reason goes to the log
        log.warning("/readyz: the database does not answer: %s", str(e).strip()[:300])
        return False


async def asset(site: Any, req: Request) -> Response:
    """The stylesheet and script, at URLs that name their content's hash: cached for a year."""
    found = assets.asset(req.path)
    if found is None or req.method not in ("GET", "HEAD"):
        return text(404, "no such file\n", headers=[("cache-control", "no-store")])
    return Response(200, found[0], found[1], headers=[("cache-control", CACHE)])


async def favicon(site: Any, req: Request) -> Response:
    # Browsers ask for it on every first visit: no icon, said without a 404 in their console.
    return Response(204, b"", "image/x-icon", headers=[("cache-control", "max-age=86400")])
