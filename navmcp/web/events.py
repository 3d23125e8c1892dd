"""A page's URL asked for as a stream of its changes (`Accept: text/event-stream`, what a
browser's EventSource sends): checked as the page is (who asks, whether they may see it), then
answered with its live stream (`navmcp.web.live`)."""

from __future__ import annotations

from navmcp.errors import NavError
from navmcp.feeds.changes import interest
from navmcp.web import live
from navmcp.web.renditions import retry_after
from navmcp.web.request import Request
from navmcp.web.response import Response, text
from navmcp.web.site import Site
from navmcp.web.sse import EventStream


def open_events(site: Site, req: Request) -> EventStream | Response:
    """The stream of the page's changes, or the answer that refuses it. Synchronous: on the hosted
    store, where the check is round trips to the database, it runs in a worker thread."""
    url = req.url
    app = site.app
    try:
        caller = site.caller(req)
        if caller is None:
            return text(401, "sign in first")
        app.workspace.page(caller.user, url, caller.client)  # a page you may not see does not exist
        # A browser's page stream also carries its unread badge's news (`inbox` events): one
        # stream per tab. The inbox page's own stream is the badge's already.
        personal = caller.session is not None and url.split("?", 1)[0] != "/inbox"
        with app.store.read(user_id=caller.user["id"]) as tx:
            wanted = interest(tx, caller.user["id"], url)
            badge = interest(tx, caller.user["id"], "/inbox") if personal else None
        if wanted is None:
            return text(204, "")  # a page no change alters (help): nothing to stream
        opened = live.open_stream(app, site.streams, site.standing(req, caller), url, wanted,
                                  req.header("last-event-id"), badge=badge)
        return opened if isinstance(opened, EventStream) else text(429, opened, headers=[("retry-after", "60")])
    except NavError as e:
        return text(e.status, e.message, headers=retry_after(e))
