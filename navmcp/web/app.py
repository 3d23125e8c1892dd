"""The ASGI application: one request's way through the web app, and nothing else.

For each HTTP request: its `Request` is made, its target and rendition decided once
(`renditions.target`), the Host/Origin check and the bad-token limit run once (a refusal is
answered in that rendition), the handler is picked from the route table (`routing`) and run on
the loop or in a worker thread (`workers`), and its `Response` is sent. A fault below that is
answered here: 413 and 408 for a body too large or too slow, 500 for a bug (details in the log).
A page's URL asked for as an event stream is opened by `events.open_events` after the same checks.
"""

from __future__ import annotations

import logging
from typing import Any

from navmcp.app import App
from navmcp.errors import Busy
from navmcp.feeds.due import Sweeper
from navmcp.protocol import ParseError
from navmcp.web import exports, live, mcp_http, routing, uploads
from navmcp.web.at_once import READ
from navmcp.web.events import open_events
from navmcp.web.renditions import refused, retry_after, target
from navmcp.web.request import MAX_BODY, BodyDeadlines, BodyTimeout, BodyTooLarge, Request
from navmcp.web.response import SECURITY_HEADERS, Download, Refusal, Response
from navmcp.web.site import Site
from navmcp.web.sse import EventStream
from navmcp.web.workers import Workers

log = logging.getLogger("navmcp.web")

INTERNAL_ERROR = "internal error (details are in the server log)"


class WebApp:
    """The ASGI application. `allowed_hosts` extends the loopback names accepted in Host and Origin."""

    def __init__(self, app: App | None = None, *, allowed_hosts: tuple[str, ...] = (), max_body: int = MAX_BODY,
                 secure_cookies: bool = False):
        self.app = app or App()
        self.site = Site(self.app, secure_cookies=secure_cookies, allowed_hosts=allowed_hosts)
        self.origins = self.site.origins
        self.max_body = max_body
        self.workers = Workers()
        self._deadlines = BodyDeadlines()
        self.due: Sweeper | None = None  # deadline entries (navmcp.feeds.due), swept while this app serves

    async def __call__(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets: not served
            return
        request_headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        req = Request(scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1"), request_headers,
                      scope.get("scheme", "http"), receive,
                      uploads.body_limit(scope["path"], request_headers.get("content-type", ""), self.max_body),
                      client_ip=(scope.get("client") or ("",))[0] or "", deadlines=self._deadlines)
        read = scope.get(READ)  # the body and its JSON, read whole by the server (at_once.AtOnce)
        if read is not None and len(read[0]) <= req.max_body:
            req._body, req._message = read
        handler = routing.fixed(req.path)
        req.target = target(req, handler is not None, req.path in routing.JSON_ONLY)
        if req.path not in routing.ROUTES and live.wants_events(req.method, req.header("accept")):
            return await self._events(req, receive, send)
        try:
            if req.path in (routing.HEALTH, routing.READY) and handler is not None:  # no checks, no queue
                response = await handler(self.site, req)
            else:
                response = await self._handle(req, handler)
        except BodyTooLarge:
            response = self.refuse(req, Refusal(413, f"request body larger than {req.max_body:,} bytes"))
        except BodyTimeout:
            response = self.refuse(req, Refusal(408, f"request body not received within {req.body_timeout:g} "
                                                     "seconds", (("connection", "close"),)))
        except Busy as e:  # the database busy or away where no handler answers it (who is asking, say)
            response = self.refuse(req, Refusal(e.status, e.message, tuple(retry_after(e))))
        except Exception:
            log.exception("internal error on %s %s", req.method, req.path)
            response = self.refuse(req, Refusal(500, INTERNAL_ERROR))
        if isinstance(response, EventStream):  # a body written as events come (subscriptions/listen)
            return await response.run(send, receive, SECURITY_HEADERS)
        try:
            headers = response.header_list()
        except ValueError:  # a fault of ours: still an answer the client can read, never a dropped one
            log.exception("unsendable header in the answer to %s %s", req.method, req.path)
            response = self.refuse(req, Refusal(500, INTERNAL_ERROR))
            headers = response.header_list()
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        if isinstance(response, Download):  # a file sent a part at a time (an export)
            return await response.send_body(send, req.method == "HEAD")
        await send({"type": "http.response.body", "body": b"" if req.method == "HEAD" else response.body})

    def refuse(self, req: Request, refusal: Refusal) -> Response:
        """A refusal before the handler's answer, in the rendition the request is answered in."""
        return refused(req, refusal)

    def _start(self) -> None:
        """Open the store and make what the handlers share, here on the loop, once; then the threads."""
        _ = self.app.store, self.app.secret, self.app.workspace, self.app.supabase, self.site.instance
        self.workers.start(self.app)
        if self.due is None:
            self.due = Sweeper(self.app.store)
        self.due.start()

    async def _handle(self, req: Request, handler: routing.Handler | None) -> Response | EventStream:
        """The checks, once, before the body is read; then the handler, where the request belongs."""
        if self.workers.offload is None:
            self._start()
        refusal = self.origins.check(req) or self.site.limits.before(req)
        if refusal:
            return self.refuse(req, refusal)
        prepare = routing.PREPARE.get(req.path)
        if prepare is not None and (early := await prepare(self.site, req)) is not None:
            return early
        pool = self.workers.pool(self.workers.costly is not None and await self._is_costly(req))
        handler = handler or routing.workspace_page
        if pool is None:
            return await self._answer(req, handler)
        await req.body()
        return await self.workers.run(pool, self.site.who(req), self._answer(req, handler))

    async def _answer(self, req: Request, handler: routing.Handler) -> Response | EventStream:
        response = await handler(self.site, req)
        self.site.limits.after(req, response.status)
        return response

    async def _is_costly(self, req: Request) -> bool:
        if req.target.rendition != "jsonrpc":
            # an export's download reads a whole studio (up to 500 MiB of files): never on the loop
            return req.target.costly or (req.method == "POST" and exports.route(req.path) is not None)
        if req.method != "POST":
            return False
        try:
            value = await req.message()
        except ParseError:
            return False
        return mcp_http.costly(value)

    async def _events(self, req: Request, receive, send) -> None:
        """A page's live stream (`events.open_events`), after the same checks as the page; opened
        in a worker thread on the hosted store, where the page's check is round trips."""
        refusal: Refusal | None = None
        try:
            if self.workers.offload is None:
                self._start()
        except Busy as e:  # the database away since this process started: try again, not a 500
            refusal = Refusal(e.status, e.message, tuple(retry_after(e)))
        refusal = refusal or self.origins.check(req) or self.site.limits.before(req)  # refused tokens count here too
        response: Response | EventStream
        if refusal:
            response = self.refuse(req, refusal)
        elif self.workers.executor is not None:
            response = await self.workers.call(self.workers.executor, self.site.who(req), open_events, self.site, req)
        else:
            response = open_events(self.site, req)
        if isinstance(response, EventStream):
            return await response.run(send, receive, SECURITY_HEADERS)
        self.site.limits.after(req, response.status)
        await send({"type": "http.response.start", "status": response.status, "headers": response.header_list()})
        await send({"type": "http.response.body", "body": response.body})

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.workers.shutdown()
                if self.due is not None:
                    self.due.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(app: App | None = None, **options: Any) -> WebApp:
    return WebApp(app, **options)
