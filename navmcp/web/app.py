"""The web application: one ASGI app serving every page in three renditions, the action API, sign-in
and MCP over Streamable HTTP.

Hand-written on purpose (no framework): the page table in `navmcp.pages` already is our routing,
and `/mcp` throughput matters. What this module owns:

- the route table below (`ROUTES`: exact paths first; every other path is a page of the workspace);
- which rendition a request gets: `.json` → the page's data (`Page.as_json`), `.md` or
  `Accept: text/markdown` → exactly the markdown `navigate` returns, else HTML; `Vary: Accept`;
- `{page}/actions` (GET, JSON) and `{page}/actions/{name}` (POST: a form from the HTML page, or a
  JSON body from a script) — run through `Workspace.execute`, the same rule and handler as MCP;
- one canonical error body per rendition (`error_response`);
- the Host/Origin allow-list (DNS-rebinding protection) and the request-size limit.

Workspace calls are synchronous. On the embedded store they run on the event loop, where its calls
take well under a millisecond. On the hosted store every call is a network round trip, so each
request is handled in a worker thread (as many as the store's connection pool has connections;
`NAVMCP_WEB_THREADS` overrides, 0 keeps them on the loop). Costly requests (batches, searches) are
handled in threads of their own on both stores (`WebApp._route`). The body is read on the loop
first, so a handler never waits on the ASGI channel from a thread.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from navmcp import actions as action_table
from navmcp import sessions
from navmcp.app import App
from navmcp.changes import interest
from navmcp.errors import AuthError, NavError, NotFound
from navmcp.identity import ALGORITHM, Access, is_access_token, user_by_id, verify_token
from navmcp.page import Page
from navmcp.pages import costly as costly_page
from navmcp.pages import route, split_url
from navmcp.protocol import ParseError, decode
from navmcp.render import inline, plain
from navmcp.web import auth, html, live
from navmcp.web.markdown import OwnHosts
from navmcp.web.renderers import RENDERERS, render
from navmcp.web.sse import EventStream
from navmcp.workspace import action_info

log = logging.getLogger("navmcp.web")

VERIFIED_TOKENS = 1024  # Bearer tokens remembered as verified (the cache is cleared when full)
# Bytes. The biggest valid request: a 100,000-character body of 4-byte characters, form-encoded
# (%F0%9F%99%82) or JSON-escaped (\ud83d\ude42), is 12 bytes a character: 1.2 MB with its title.
MAX_BODY = 2 * 1024 * 1024
COSTLY_THREADS = 2  # threads for costly requests (NAVMCP_WEB_COSTLY_THREADS; 0: none, they run as others do)
BODY_TIMEOUT = float(os.environ.get("NAVMCP_WEB_BODY_TIMEOUT") or 30)  # seconds for a whole request body (408)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
SECURITY_HEADERS = [  # on every response, already encoded for the ASGI message
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" would make browsers send `Origin: null` on our own forms
    (b"x-frame-options", b"DENY"),
]
# Styles and the one script come from our own fingerprinted files; a style attribute carries only a
# bar's width, a number the template computes (never user text). The script connects only here (a
# page's own URL as an event stream, then the page itself).
HTML_CSP = ("default-src 'none'; style-src 'self'; style-src-attr 'unsafe-inline'; script-src 'self'; "
            "connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
STATIC_CACHE = "public, max-age=31536000, immutable"
RENDITIONS = {name: renderer.media_type for name, renderer in RENDERERS.items()}  # rendition → content type
_ACTION_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")


_UNREAD = object()


class BodyTooLarge(Exception):
    pass


class BodyTimeout(Exception):
    pass


class BodyDeadlines:
    """The request-body deadline (408), kept by one timer per event loop rather than one per read:
    a timer per request (asyncio.timeout) cost more than the rest of a /mcp request's HTTP handling.
    While any body is being read, every TICK seconds the reads past their deadline are cancelled
    and answer BodyTimeout; a deadline is thus kept to within TICK."""

    TICK = 0.25

    def __init__(self) -> None:
        self._reading: dict[asyncio.Task, float] = {}  # task awaiting a body message → its deadline
        self._expired: set[asyncio.Task] = set()
        self._timer: asyncio.TimerHandle | None = None  # the sweep, armed while bodies are read
        self._loop: asyncio.AbstractEventLoop | None = None

    async def receive(self, receive: Callable[[], Awaitable[dict[str, Any]]], deadline: float) -> dict[str, Any]:
        task = asyncio.current_task()
        assert task is not None
        self._reading[task] = deadline
        loop = asyncio.get_running_loop()
        if self._timer is None or self._loop is not loop:  # (tests may run the app on several loops)
            self._timer, self._loop = loop.call_later(self.TICK, self._sweep), loop
        try:
            return await receive()
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()  # our cancellation, not the server's: answer 408
            raise BodyTimeout() from None
        finally:
            del self._reading[task]

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for task, deadline in self._reading.items():
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(self.TICK, self._sweep) if self._reading else None


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query_string: str
    headers: dict[str, str]
    scheme: str
    receive: Callable[[], Awaitable[dict[str, Any]]]
    max_body: int = MAX_BODY
    _body: bytes | None = None
    client_ip: str = ""
    body_timeout: float = BODY_TIMEOUT
    deadlines: BodyDeadlines | None = None  # the app's; None: a timer for this request's body alone
    _message: Any = _UNREAD
    unproven_link: bool = False  # a login link from an address over its bad-token limit (WebLimits.before)

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    @property
    def url(self) -> str:
        return self.path + ("?" + self.query_string if self.query_string else "")

    async def body(self) -> bytes:
        """The whole request body, refusing (413) anything over `max_body` before reading it all."""
        if self._body is None:
            declared = self.header("content-length")
            if declared and declared.isdigit() and int(declared) > self.max_body:
                raise BodyTooLarge()
            chunks, size = [], 0
            deadline = asyncio.get_running_loop().time() + self.body_timeout
            deadlines = self.deadlines or BodyDeadlines()
            while True:  # a client sending its body byte by byte (or not at all) can't hold a request
                message = await deadlines.receive(self.receive, deadline)
                if message["type"] == "http.disconnect":
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    raise BodyTooLarge()
                chunks.append(chunk)
                if not message.get("more_body"):
                    break
            self._body = b"".join(chunks)
        return self._body

    async def message(self) -> Any:
        """The body decoded as JSON (strictly, as on stdio), decoded once: ParseError if it is not."""
        if self._message is _UNREAD:
            try:
                self._message = decode(await self.body())
            except ParseError as e:
                self._message = e
        if isinstance(self._message, ParseError):
            raise self._message
        return self._message

    async def form(self) -> dict[str, list[str]]:
        return parse_qs((await self.body()).decode("utf-8", "replace"), keep_blank_values=True)


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)

    def header_list(self) -> list[tuple[bytes, bytes]]:
        """The ASGI header list: ours, the content type and length, and the security headers.
        ValueError for a value that can't be sent: not Latin-1 (UnicodeEncodeError), or holding a
        line break, which the server would refuse only once the answer is on its way."""
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]
        if any(b"\r" in v or b"\n" in v or b"\0" in v for _, v in headers):
            raise ValueError(f"a header value holds a line break or NUL: {self.headers!r:.300}")
        if self.content_type:
            headers.append((b"content-type", self.content_type.encode("latin-1")))
        headers.append((b"content-length", b"%d" % len(self.body)))
        headers += SECURITY_HEADERS
        return headers


def text(status: int, body: str, content_type: str = "text/plain; charset=utf-8", **kw: Any) -> Response:
    return Response(status, body.encode("utf-8"), content_type, **kw)


def json_response(status: int, value: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json",
                    headers or [])


def redirect(location: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(303, b"", None, [("location", location), *(headers or [])])


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# --- the canonical error body, one per rendition --------------------------------------------


def error_response(rendition: str, status: int, message: str, *, url: str | None = None,
                   actions: list[str] | None = None, headers: list[tuple[str, str]] | None = None) -> Response:
    """The one error body of each rendition. JSON: {ok, status, error, message, url, actions} (a
    superset of an action result's shape); markdown: a page with the status as its title; HTML: the
    same as a page. Messages are escaped like any user-influenced text."""
    actions = actions or []
    headers = [*(headers or []), ("vary", "Accept")]
    if rendition == "json":
        return json_response(status, {"ok": False, "status": status, "error": reason(status), "message": message,
                                      "url": url, "actions": actions}, headers)
    if rendition == "markdown":
        body = f"# Error {status}: {reason(status)}\n\n{inline(plain(message))}\n"  # escaped once, as a whole
        if actions:
            body += "\nAvailable here: " + ", ".join(f"`{a}`" for a in actions) + ".\n"
        return text(status, body, RENDITIONS["markdown"], headers=headers)
    page = html.render("error.html.j2", {"status": status, "reason": reason(status), "message": html.people_words(message),
                                         "available": actions})
    return text(status, page, RENDITIONS["html"], headers=[*headers, ("content-security-policy", HTML_CSP)])


# --- the application ------------------------------------------------------------------------


def _host_name(value: str) -> str:
    """The host of a Host header or an Origin ('[::1]:8765' → '::1'), lowercase."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@dataclass
class Caller:
    user: dict[str, Any]
    session: auth.WebSession | None  # None for Bearer callers
    client: str


class WebApp:
    """The ASGI application. `allowed_hosts` extends the loopback names accepted in Host and Origin."""

    def __init__(self, app: App | None = None, *, allowed_hosts: tuple[str, ...] = (), max_body: int = MAX_BODY,
                 secure_cookies: bool = False):
        self.app = app or App()
        self.allowed_hosts = frozenset(_host_name(h) for h in (*LOOPBACK_HOSTS, *allowed_hosts))
        self._hosts_seen: dict[str, bool] = {}
        self._deadlines = BodyDeadlines()  # Host header value → allowed (the answer never changes)
        self.max_body = max_body
        self.secure_cookies = secure_cookies
        self._verified: dict[str, tuple[str, float, Access | None]] = {}  # Bearer token → (user id, expiry, access)
        self.session_idle = self.app.config.mcp_session_idle_hours * 3600  # seconds an MCP session may idle
        self._executor: ThreadPoolExecutor | None = None  # the hosted store's worker threads
        self._costly: ThreadPoolExecutor | None = None  # threads for costly requests (both stores)
        self._offload: bool | None = None  # decided on the first request (it opens the store)
        from navmcp.web.limits import WebLimits

        self.limits = WebLimits(self)  # rate limits per token and per IP for refused tokens
        self.streams = live.Streams()  # open live-page streams
        from navmcp.web import mcp_http

        # Exact paths; every other path is a page of the workspace (the page table routes it).
        self.routes: dict[str, Callable[[Request], Awaitable[Response]]] = {
            "/healthz": self.healthz,
            "/favicon.ico": self.favicon,
            "/mcp": lambda req: mcp_http.handle(self, req),
            "/login": self.login,
            "/login/email": self.login_email,
            "/login/code": self.login_code,
            "/logout": self.logout,
        }
        from navmcp.oauth.metadata import WELL_KNOWN

        # OAuth (navmcp/oauth): /mcp's authorization server, and the people's side of it.
        self.routes |= {path: self._oauth("well_known") for path in WELL_KNOWN}
        self.routes |= {f"/{name.replace('_', '-')}": self._oauth(name)
                        for name in ("authorize", "token", "register", "revoke", "connected_apps")}
        from navmcp.supabase_signin import SupabaseSignIn

        # Sign-in by an emailed code through Supabase Auth, offered when SUPABASE_URL and
        # SUPABASE_ANON_KEY are set (login links keep working beside it).
        self.signin = SupabaseSignIn.from_env()

    def _oauth(self, name: str) -> Callable[[Request], Awaitable[Response]]:
        """A handler of navmcp.oauth.endpoints, imported on first use (Authlib is not light)."""
        async def handler(req: Request) -> Response:
            from navmcp.oauth import endpoints

            return await getattr(endpoints, name)(self, req)
        return handler

    async def __call__(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets: not served
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        req = Request(scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1"), headers,
                      scope.get("scheme", "http"), receive, self.max_body,
                      client_ip=(scope.get("client") or ("",))[0] or "", deadlines=self._deadlines)
        if req.path not in self.routes and live.wants_events(req.method, req.header("accept")):
            return await self.events(req, receive, send)
        try:
            if req.path == "/healthz":  # never opens the store, never waits behind other requests
                response = await self.healthz(req)
            else:
                response = await self._route(req)
        except BodyTooLarge:
            response = self.refuse(req, 413, f"request body larger than {self.max_body} bytes")
        except BodyTimeout:
            response = self.refuse(req, 408, f"request body not received within {req.body_timeout:g} seconds")
            response.headers.append(("connection", "close"))
        except Exception:
            log.exception("internal error on %s %s", req.method, req.path)
            response = self.refuse(req, 500, "internal error (details are in the server log)")  # JSON-RPC on /mcp
        if isinstance(response, EventStream):  # a body written as events come (subscriptions/listen)
            return await response.run(send, receive, SECURITY_HEADERS)
        try:
            headers = response.header_list()
        except ValueError:  # a fault of ours: still an answer the client can read, never a dropped one
            log.exception("unsendable header in the answer to %s %s", req.method, req.path)
            response = self.refuse(req, 500, "internal error (details are in the server log)")
            headers = response.header_list()
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if req.method == "HEAD" else response.body})

    async def events(self, req: Request, receive, send) -> None:
        """A page's URL asked for as a stream of its changes (`live.py`): checked as the page is (in
        a worker thread on the hosted store, where the check is round trips to the database)."""
        if self._offload is None:
            self._offload = self._start_workers()
        response = self.check_origin(req) or self.limits.before(req)  # refused tokens count here too
        if response is None:
            if self._executor is not None:
                response = await asyncio.get_running_loop().run_in_executor(self._executor, self._open_events, req)
            else:
                response = self._open_events(req)
        if isinstance(response, EventStream):
            return await response.run(send, receive, SECURITY_HEADERS)
        self.limits.after(req, response)
        await send({"type": "http.response.start", "status": response.status, "headers": response.header_list()})
        await send({"type": "http.response.body", "body": response.body})

    def _open_events(self, req: Request) -> EventStream | Response:
        url = req.path + ("?" + req.query_string if req.query_string else "")
        try:
            caller = self.caller(req)
            if caller is None:
                return text(401, "sign in first")
            self.app.workspace.page(caller.user, url, caller.client)  # a page you may not see does not exist
            with self.app.store.read(user_id=caller.user["id"]) as tx:
                wanted = interest(tx, caller.user["id"], url)
            if wanted is None:
                return text(204, "")  # a page no change alters (help): nothing to stream
            opened = live.open_stream(self.app, self.streams, caller.user["id"], url, wanted)
            return opened if isinstance(opened, EventStream) else text(429, opened, headers=[("retry-after", "60")])
        except NavError as e:
            return text(e.status, e.message)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for pool in (self._executor, self._costly):
                    if pool is not None:
                        pool.shutdown(wait=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- worker threads ---------------------------------------------------------------------------
    # Costly requests (a batch, a search: `_is_costly`) are handled in COSTLY_THREADS threads of
    # their own on either store, each thread with its own connection (SQLite in WAL mode lets them
    # read beside the loop's connection), so however many a client sends, the event loop (hence
    # /healthz and every request on the embedded store) and the hosted store's other worker
    # threads stay free for everyone else. Other requests: on the loop (embedded store: one call
    # takes well under a millisecond), or in the worker threads (hosted store: a network round
    # trip per call).

    def _start_workers(self) -> bool:
        """Open the store (and what the handlers share) here on the loop, once; start the threads
        for costly requests and, on a thread-safe hosted store, the worker threads. True when
        every request is to be handled in a thread."""
        store = self.app.store
        _ = self.app.secret, self.app.workspace, self.app.supabase, self.instance  # cached: made once, not racing
        costly = _threads("NAVMCP_WEB_COSTLY_THREADS", COSTLY_THREADS)
        if costly > 0:
            self._costly = ThreadPoolExecutor(max_workers=costly, thread_name_prefix="navmcp-costly")
        if not getattr(store, "hosted", False):
            return False
        threads = _threads("NAVMCP_WEB_THREADS", getattr(store.pool, "max_size", 4))
        if threads <= 0:
            return False
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="navmcp-web")
        return True

    async def _route(self, req: Request) -> Response:
        """`dispatch`, in the thread pool the request belongs to (or on the loop). The body is read
        here on the loop first; after that no handler awaits anything that can suspend (body() and
        form() answer from the cached bytes), so the coroutine runs to completion in the thread
        with a plain send(None)."""
        if self._offload is None:
            self._offload = self._start_workers()
        refused = self.check_origin(req) or self.limits.before(req)  # before the body is read
        if refused:
            return refused
        pool = self._costly if self._costly is not None and await self._is_costly(req) else self._executor
        if pool is None:
            return await self._handle(req)
        await req.body()
        return await asyncio.get_running_loop().run_in_executor(pool, _run_to_completion, self._handle(req))

    async def _is_costly(self, req: Request) -> bool:
        if req.path == "/mcp":
            if req.method != "POST":
                return False
            try:
                value = await req.message()
            except ParseError:
                return False
            from navmcp.web import mcp_http

            return mcp_http.costly(value)
        if req.path in self.routes:
            return False
        path = self.rendition(req)[1]
        return costly_page(path + ("?" + req.query_string if req.query_string else ""))

    async def dispatch(self, req: Request) -> Response:
        if req.path == "/healthz":
            return await self.healthz(req)
        refused = self.check_origin(req) or self.limits.before(req)
        if refused:
            return refused
        return await self._handle(req)

    async def _handle(self, req: Request) -> Response:
        """A request that passed the Host/Origin and bad-token checks."""
        handler = self.routes.get(req.path)
        if handler is None and req.path.startswith("/static/"):
            handler = self.static
        if handler is None and req.path.startswith("/.well-known/"):  # JSON, never a login page
            handler = self._oauth("well_known")
        response = await handler(req) if handler is not None else await self.page(req)
        self.limits.after(req, response)
        return response

    # --- DNS-rebinding protection ---------------------------------------------------------------

    def check_origin(self, req: Request) -> Response | None:
        host = req.header("host")
        if host is not None and not self._host_allowed(host):
            return self.refuse(req, 403, f"host {host!r} is not served here (allowed: "
                                         f"{', '.join(sorted(self.allowed_hosts))}; add more with --allow-host)")
        origin = req.header("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or _host_name(parts.hostname or "") not in self.allowed_hosts:
                return self.refuse(req, 403, f"requests from origin {origin!r} are not accepted")
        return None

    def _host_allowed(self, host: str) -> bool:
        allowed = self._hosts_seen.get(host)
        if allowed is None:
            allowed = _host_name(host) in self.allowed_hosts
            if len(self._hosts_seen) < 64:  # a client can't grow it: only the first few values are kept
                self._hosts_seen[host] = allowed
        return allowed

    def refuse(self, req: Request, status: int, message: str) -> Response:
        """A refusal before routing, in the error body of what was asked for (JSON-RPC on /mcp)."""
        if req.path == "/mcp":
            from navmcp.web.mcp_http import fault

            return fault(status, f"{reason(status)}: {message}")
        rendition, path = self.rendition(req)
        if _split_action_path(path)[0] is not None:
            rendition = _action_api_rendition(req, rendition)
        return error_response(rendition, status, message)

    # --- small routes ---------------------------------------------------------------------------

    async def healthz(self, req: Request) -> Response:
        return json_response(200, {"ok": True})

    async def static(self, req: Request) -> Response:
        """The stylesheet and script, at URLs that name their content's hash: cached for a year."""
        found = html.asset(req.path)
        if found is None or req.method not in ("GET", "HEAD"):
            return text(404, "no such file\n", headers=[("cache-control", "no-store")])
        return Response(200, found[0], found[1], headers=[("cache-control", STATIC_CACHE)])

    async def favicon(self, req: Request) -> Response:
        # Browsers ask for it on every first visit: no icon, said without a 404 in their console.
        return Response(204, b"", "image/x-icon", headers=[("cache-control", "max-age=86400")])

    async def login(self, req: Request) -> Response:
        """A login link: GET (or HEAD) shows whom it signs in, with a button; only the button's POST
        spends it, so link previews, HEADs and prefetches can't use it up."""
        if req.method not in ("GET", "HEAD", "POST"):
            return error_response("html", 405, "follow the login link, then press its button",
                                  headers=[("allow", "GET, HEAD, POST")])
        query = parse_qs(req.query_string)
        token = (query.get("token") or [""])[0]
        nxt = _local_path((query.get("next") or [""])[0])
        if not token:
            message = "You are signed out." if "bye" in query else None
            page = self.login_page(200, message, ok=True, next_url=nxt)
            if nxt:  # a login link opened later carries no `next`: it is remembered here
                page.headers.append(("set-cookie", auth.next_cookie(nxt, self.secure(req))))
            return page
        nxt = nxt or _local_path(auth.remembered_next(req.header("cookie")))
        if req.unproven_link and not auth.login_link_live(self.app.store, token):
            return self.limits.refusal(req)
        current = self.web_session(req)
        try:
            if req.method != "POST":
                return self.confirm_login_page(auth.login_link_user(self.app.store, token), current, token, nxt)
            if not _posted_from_this_site(req):
                return error_response("html", 403, "sign in with the button on the login link's page: "
                                      "this request did not come from it (no Origin or Referer of this site)")
            session_id = auth.redeem_login_link(self.app.store, token, self.instance)
        except AuthError as e:
            return self.login_page(401, e.message, ok=False, next_url=nxt)
        if current is not None:  # its cookie is replaced: end it rather than leave it live and unreachable
            auth.end_session(self.app.store, current.id, current.user["id"], self.instance)
        return redirect(nxt or "/", [("set-cookie", self.session_cookie(req, session_id)),
                                     ("set-cookie", auth.next_cookie("", self.secure(req)))])

    @functools.cached_property
    def instance(self) -> str:
        """This instance's id (`auth.instance_id`): its cookie's name and its sessions are its own."""
        return auth.instance_id(self.app.secret)

    def cookie_name(self, req: Request) -> str:
        return auth.cookie_name(self.instance, self.secure(req))

    def session_cookie(self, req: Request, session_id: str) -> str:
        return auth.session_cookie(self.cookie_name(req), session_id, self.secure(req))

    def web_session(self, req: Request) -> auth.WebSession | None:
        """The session of this browser's cookie, if it is a live one of this instance's."""
        session_id = auth.cookie_value(req.header("cookie"), self.cookie_name(req))
        return auth.load_session(self.app.store, session_id, self.instance) if session_id else None

    def confirm_login_page(self, user: dict[str, Any], current: auth.WebSession | None, token: str,
                           next_url: str) -> Response:
        """The "Sign in as @user" page; it says so plainly when this browser is signed in as someone else."""
        action = "/login?" + urlencode({"token": token, **({"next": next_url} if next_url else {})}, safe="/")
        return self.sign_in_html(200, "login_confirm.html.j2", {
            "user": user, "current": current.user if current else None, "action": action, "next": next_url})

    async def login_email(self, req: Request) -> Response:
        """Step 1 of the Supabase sign-in: email a one-time code, then ask for it."""
        if self.signin is None or req.method != "POST":
            return error_response("html", 404, "no page at /login/email: sign in with a login link")
        form = await req.form()
        email = (form.get("email") or [""])[0].strip()[:254]
        nxt = _local_path((form.get("next") or [""])[0])
        if "@" not in email:
            return self.login_page(422, "give the email address you sign in with", ok=False, next_url=nxt)
        try:
            self.signin.send_code(email)
        except AuthError as e:
            return self.login_page(502, e.message, ok=False, next_url=nxt)
        return self.login_page(200, f"A sign-in code was sent to {email}.", ok=True, next_url=nxt, email=email)

    async def login_code(self, req: Request) -> Response:
        """Step 2: the code buys a Supabase access token, verified like any token; that user gets a
        cookie session (created as a navmcp user on first sight)."""
        if self.signin is None or req.method != "POST":
            return error_response("html", 404, "no page at /login/code: sign in with a login link")
        form = await req.form()
        email = (form.get("email") or [""])[0].strip()[:254]
        code = (form.get("code") or [""])[0].strip()[:20]
        nxt = _local_path((form.get("next") or [""])[0])
        try:
            user = self.app.authenticate(self.signin.verify_code(email, code))
        except AuthError as e:
            return self.login_page(401, e.message, ok=False, next_url=nxt, email=email)
        session_id = auth.open_session(self.app.store, user["id"], self.instance)
        return redirect(nxt or "/", [("set-cookie", self.session_cookie(req, session_id))])

    def login_page(self, status: int, message: str | None, *, ok: bool, next_url: str = "",
                   email: str | None = None) -> Response:
        return self.sign_in_html(status, "login.html.j2", {"message": message, "ok": ok, "next": next_url,
                                                            "supabase": self.signin is not None, "email": email})

    def sign_in_html(self, status: int, template: str, context: dict[str, Any]) -> Response:
        return text(status, html.render(template, context), RENDITIONS["html"],
                    headers=[("content-security-policy", HTML_CSP), ("cache-control", "no-store")])

    async def logout(self, req: Request) -> Response:
        if req.method != "POST":
            return text(405, "log out with a POST (the button on every page)\n", headers=[("allow", "POST")])
        session_id = auth.cookie_value(req.header("cookie"), self.cookie_name(req))
        if session_id:
            form = await req.form()
            if not auth.csrf_ok(self.app.secret, session_id, (form.get("csrf_token") or [None])[0]):
                return error_response("html", 403, "the form's CSRF token is missing or wrong: reload the page")
            session = auth.load_session(self.app.store, session_id, self.instance)
            if session is not None:
                auth.end_session(self.app.store, session_id, session.user["id"], self.instance)
        return redirect("/login?bye=1", [("set-cookie", auth.clear_cookie(self.cookie_name(req), self.secure(req)))])

    def secure(self, req: Request) -> bool:
        """Cookies are marked Secure behind HTTPS (or when told to, e.g. behind a TLS proxy)."""
        return self.secure_cookies or req.scheme == "https"

    # --- who is asking ------------------------------------------------------------------------

    def authenticate(self, token: str, resource: str | None = None) -> dict[str, Any]:
        """`App.authenticate` for a Bearer token, remembering a verified token until it expires.
        `resource`: this server's /mcp when the token is presented there, the one place an OAuth
        access token is accepted (`authenticate_access`).

        A token seen before skips the signature check (it can't have changed) but its user is read
        again on every request, so a deleted user is refused at once. Only successes are remembered.
        """
        return self.authenticate_access(token, resource)[0]

    def authenticate_access(self, token: str, resource: str | None = None) -> tuple[dict[str, Any], Access | None]:
        """(user, what the token allows: None for a navmcp or Supabase token, which allow all)."""
        known = self._verified.get(token)
        if known is not None and known[1] > time.time():
            access = auth.check_access(self.app.store, known[0], known[2], resource)
            with self.app.store.read(user_id=known[0]) as tx:
                user = user_by_id(tx, known[0])
            if user is not None:
                return user, access
        if is_access_token(token):
            user, access = auth.verify_access(self.app, token, resource)
        else:
            user, access = self.app.authenticate(token), None
        expires = _expiry(token)
        if expires is not None:
            if len(self._verified) >= VERIFIED_TOKENS:
                self._verified.clear()
            self._verified[token] = (user["id"], expires, access)
        return user, access

    def token_is_genuine(self, token: str) -> bool:
        """Whether a Bearer token is one we issued (a navmcp token, an OAuth access token) or the
        Supabase project did, judged by its signature alone: no database read, no key fetched. A
        token verified before is; a Supabase token signed with a public key (its key may have to be
        fetched) is not, unless it was."""
        known = self._verified.get(token)
        if known is not None and known[1] > time.time():
            return True
        supabase = self.app.supabase
        try:
            if is_access_token(token):  # an OAuth access token: its audience is judged where it is used
                import jwt

                try:
                    jwt.decode(token, self.app.secret, algorithms=[ALGORITHM],
                               options={"verify_aud": False, "require": ["exp", "sub"]})
                except jwt.InvalidTokenError:
                    return False
            elif supabase is not None and supabase.claims_token(token):
                if auth.unverified_algorithm(token) != "HS256":
                    return False
                supabase.verify(token)
            else:
                verify_token(self.app.secret, token)
        except AuthError:
            return False
        return True

    def authenticate_with_session(self, token: str, session_id: str, resource: str | None = None
                                  ) -> tuple[dict[str, Any], Any, bool, Access | None]:
        """`authenticate_access(token)` and the stored MCP session `session_id`, read in one
        transaction when the token was verified before (the common case: every call after
        `initialize`). Returns (user, session or None, whether the session was looked up, access)."""
        known = self._verified.get(token)
        if known is not None and known[1] > time.time():
            access = auth.check_access(self.app.store, known[0], known[2], resource)
            user, stored = sessions.load_with_user(self.app.store, known[0], session_id, idle=self.session_idle)
            if user is not None:
                return user, stored, True, access
        user, access = self.authenticate_access(token, resource)
        return user, None, False, access

    def caller(self, req: Request) -> Caller | None:
        """The Bearer token's user, else the cookie session's; None when neither is presented.
        A bad Bearer token is an `AuthError` (never a fall-back to the cookie or the owner)."""
        header = req.header("authorization")
        if header is not None:
            token = auth.bearer_token(header)
            if token is None:
                raise AuthError("the Authorization header must be 'Bearer <token>'")
            return Caller(self.authenticate(token), None, "http")
        session = self.web_session(req)
        return Caller(session.user, session, "web") if session is not None else None

    # --- pages ----------------------------------------------------------------------------------

    def rendition(self, req: Request) -> tuple[str, str]:
        """(rendition, page path without its suffix)."""
        path = req.path
        if path.endswith(".json"):
            return "json", path[:-5] or "/"
        if path.endswith(".md"):
            return "markdown", path[:-3] or "/"
        return _negotiate(req.header("accept")), path

    async def page(self, req: Request) -> Response:
        rendition, path = self.rendition(req)
        target, action = _split_action_path(path)
        if action and req.method in ("GET", "HEAD") and rendition == "html":
            # A browser on an action's URL (a refused form leaves it there; a reload GETs it): the
            # page the action belongs to, not a 405 in JSON.
            back = _local_path(target + ("?" + req.query_string if req.query_string else "")) or "/"
            return redirect(back)
        if target is not None:
            rendition = _action_api_rendition(req, rendition)
        if target is None:
            target = path
        url = target + ("?" + req.query_string if req.query_string else "")

        try:
            caller = self.caller(req)
        except AuthError as e:
            return error_response("json" if action is not None else rendition, 401, e.message,
                                  headers=[("www-authenticate", 'Bearer realm="navmcp", error="invalid_token"')])
        if caller is None:
            if rendition == "html":
                return redirect("/login?next=" + quote(req.url if req.method == "GET" else target, safe="/"))
            return error_response(rendition, 401, "sign in first: follow a login link (`navmcp login-link "
                                  "HANDLE`) or send 'Authorization: Bearer <token>' (`navmcp token HANDLE`)",
                                  headers=[("www-authenticate", 'Bearer realm="navmcp"')])

        limited = self.limits.check_caller(req, caller, url, action, rendition)
        if limited:
            return limited
        if action is None:
            if req.method not in ("GET", "HEAD"):
                return error_response(rendition, 405, f"pages are read with GET; actions are POSTed to "
                                      f"{target.rstrip('/')}/actions/NAME", headers=[("allow", "GET, HEAD")])
            return self.show(caller, url, rendition, host=req.header("host"))
        if action == "":
            if req.method not in ("GET", "HEAD"):
                return error_response("json", 405, "list actions with GET", headers=[("allow", "GET, HEAD")])
            return self.list_actions(caller, url)
        if req.method != "POST":
            return error_response(rendition, 405, f"run {action} with a POST", headers=[("allow", "POST")])
        return await self.run_action(req, caller, url, action, rendition)

    def show(self, caller: Caller, url: str, rendition: str, *, error: NavError | None = None,
             action: str | None = None, form: dict[str, list[str]] | None = None, host: str | None = None) -> Response:
        try:
            page = self.app.workspace.page(caller.user, url, caller.client)
        except NavError as e:
            return error_response(rendition, e.status, e.message, url=e.url)
        headers = [("vary", "Accept"), ("cache-control", "no-store")]
        if rendition != "html":  # the HTML page alone has surroundings to gather (app shell, forms, flash)
            return text(200, render(rendition, page), RENDITIONS[rendition], headers=headers)
        flash = auth.take_flash(self.app.store, caller.session) if caller.session and error is None else None
        shown_error = None
        if error is not None:
            shown_error = {"action": action, "status": error.status, "message": error.message}
        try:
            home = page if page.name == "home" else self.app.workspace.page(caller.user, "/", caller.client)
        except NavError:
            home = None
        body = render("html", page, csrf=self.csrf(caller), alternates=alternates(page), flash=flash,
                      error=shown_error, submitted=form if error is not None else None,
                      shell=html.shell_facts(page, home), people=self.people_to_add(caller, page),
                      own_hosts=self.own_hosts(host))
        return text(error.status if error else 200, body, RENDITIONS["html"],
                    headers=[*headers, ("content-security-policy", HTML_CSP)])

    def own_hosts(self, host: str | None) -> OwnHosts:
        """This instance's hosts, for full URLs in people's text: the Host the page was asked for
        (checked by `check_origin`) and the names it is served under by --allow-host, any port."""
        return OwnHosts(frozenset({host.strip().lower()} if host else ()), self.allowed_hosts - frozenset(LOOPBACK_HOSTS))

    def people_to_add(self, caller: Caller, page: Page) -> list[dict[str, Any]]:
        """For the members page's "Add a person": the people you share another studio with who are
        not in this one and may be added (findable, docs/privacy.md), to pick from (anyone else
        findable is still added by typing their handle)."""
        if page.name != "members" or not any(a.name == "add_member" for a in page.actions):
            return []
        handle = page.url.split("/")[2]
        with self.app.store.read(user_id=caller.user["id"]) as tx:
            return tx.all(_PEOPLE_TO_ADD, (caller.user["id"], handle))

    def csrf(self, caller: Caller) -> str:
        return auth.csrf_token(self.app.secret, caller.session.id) if caller.session else ""

    def list_actions(self, caller: Caller, url: str) -> Response:
        try:
            page = self.app.workspace.page(caller.user, url, caller.client)
        except NavError as e:
            return error_response("json", e.status, e.message, url=e.url)
        return json_response(200, {"url": page.url, "actions": [a.public() for a in page.actions]},
                             [("cache-control", "no-store")])

    async def run_action(self, req: Request, caller: Caller, url: str, name: str, rendition: str) -> Response:
        is_form = (req.header("content-type") or "").startswith("application/x-www-form-urlencoded")
        answer = rendition
        if caller.session is not None:  # cookie sessions prove the form is ours; Bearer callers need not
            form = await req.form() if is_form else {}
            presented = (form.get("csrf_token") or [None])[0] if is_form else req.header("x-csrf-token")
            if not auth.csrf_ok(self.app.secret, caller.session.id, presented):
                return error_response(answer, 403, "the form's CSRF token is missing or wrong: reload the page and "
                                                   "submit again")
        try:
            known = _action_named(url, name)
        except NotFound as e:
            return error_response(answer, 404, e.message, url=url)
        if known is None:
            return error_response(answer, 404, f"{name} is not an action of {url.split('?', 1)[0]}: "
                                               f"GET {url.split('?', 1)[0].rstrip('/')}/actions lists them", url=url)
        if is_form:
            params = html.params_from_form(action_info(known), await req.form())
        else:
            raw = await req.body()
            try:  # strict, as on /mcp: deep nesting, NaN or a lone surrogate is a 400, not a 500
                params = decode(raw) if raw.strip() else None
            except ParseError:
                return error_response("json", 400, "the body must be a JSON object of the action's params")
            if isinstance(params, dict) and set(params) == {"params"} and isinstance(params["params"], dict):
                params = params["params"]  # {"params": {...}} is accepted too
            if params is not None and not isinstance(params, dict):
                return error_response("json", 422, "the body must be a JSON object of the action's params")
        try:
            if is_form:  # an edit form must not overwrite what changed since it was filled (lost update)
                html.check_fresh(action_info(known), await req.form(),
                                 lambda: self.app.workspace.page(caller.user, url, caller.client))
            result = self.app.workspace.execute(caller.user, url, name, params, caller.client)
        except NavError as e:
            if answer == "json":
                return error_response("json", e.status, e.message, url=e.url or url, actions=e.available)
            return self.show(caller, url, "html", error=e, action=name,
                             form=await req.form() if is_form else None, host=req.header("host"))
        if answer == "json":
            return json_response(200, result.structured())
        if caller.session is not None:
            auth.set_flash(self.app.store, caller.session, result.message)
        return redirect(result.url)


def _action_api_rendition(req: Request, negotiated: str) -> str:
    """What the action API answers in, whatever it answers (a result, a refusal, an internal error):
    JSON, for `*/*` too; a page only for an HTML form's POST from a browser."""
    is_form = (req.header("content-type") or "").startswith("application/x-www-form-urlencoded")
    return "html" if is_form and req.method == "POST" and negotiated == "html" else "json"


_PEOPLE_TO_ADD = """SELECT DISTINCT u.handle, u.name FROM memberships mine
                       JOIN memberships theirs ON theirs.studio_id = mine.studio_id
                       JOIN users u ON u.id = theirs.user_id
                      WHERE mine.user_id = ? AND u.deleted_at IS NULL AND u.findable = 1
                        AND NOT EXISTS (SELECT 1 FROM memberships m JOIN studios s ON s.id = m.studio_id
                                         WHERE s.handle = ? AND m.user_id = u.id)
                      ORDER BY u.handle LIMIT 200"""


def _local_path(url: str) -> str:
    """Where to go after signing in: a path of this site only (no open redirect), else "" (home).

    Printable ASCII without spaces, as our own `?next=` sends it (percent-encoded): browsers drop
    tabs and newlines from a Location ("/\\t/evil.example" is "//evil.example"), CR/LF breaks the
    header and a non-Latin-1 character can't be sent; "\\" counts as "/" in a browser."""
    if not url.startswith("/") or url.startswith("//") or "\\" in url or not all("!" <= c <= "~" for c in url):
        return ""
    parts = urlsplit(url)
    return url if not parts.scheme and not parts.netloc else ""


def _posted_from_this_site(req: Request) -> bool:
    """Login CSRF: a link's token is its only secret, and an attacker holds the tokens of their own
    links, so a foreign page auto-submitting one would sign a visitor in as the attacker, unseen.
    Browsers name a form POST's page in Origin (else Referer, which our referrer-policy keeps for
    this site): requiring this very host there means the POST came from a page of ours, and the
    confirmation page is the only one with that button."""
    source, host = req.header("origin") or req.header("referer"), req.header("host")
    return bool(source and host) and urlsplit(source).netloc.lower() == host.lower()


def _threads(variable: str, default: int) -> int:
    configured = os.environ.get(variable, "").strip()
    return int(configured) if configured.isascii() and configured.isdigit() else default


def _run_to_completion(coroutine) -> Any:
    """Run a coroutine that never suspends (see `WebApp._route`) and return its value."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a request handler waited on the event loop from a worker thread")


def _expiry(token: str) -> float | None:
    """The `exp` of a token already verified by `App.authenticate` (read, not checked, here)."""
    import jwt

    try:
        exp = jwt.decode(token, options={"verify_signature": False}).get("exp")
    except jwt.InvalidTokenError:
        return None
    return float(exp) if isinstance(exp, (int, float)) else None


def _negotiate(accept: str | None) -> str:
    """HTML unless the client prefers markdown (or JSON) by q-value; `*/*` and browsers get HTML."""
    if not accept:
        return "html"
    best, best_q = "html", -1.0
    order = {"text/html": "html", "text/markdown": "markdown", "application/json": "json", "*/*": "html",
             "text/*": "html"}
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        kind = order.get(media.lower())
        if kind and q > best_q:
            best, best_q = kind, q
    return best


def _split_action_path(path: str) -> tuple[str | None, str | None]:
    """('/studios/x/d/1', '') for '/studios/x/d/1/actions', (…, 'vote') for '…/actions/vote', else (None, None).
    A path that is a page itself is a page (a tag named 'actions' reaches its tag page); one shaped
    like an action path whose head is no page is still an action path: the action API answers it,
    404 in JSON, not the page route with a 405."""
    head, sep, tail = path.rpartition("/actions")
    if not sep:
        return None, None
    if tail == "":
        action = ""
    elif tail.startswith("/") and _ACTION_NAME.match(tail[1:]):
        action = tail[1:]
    else:
        return None, None
    if not _is_page(head or "/") and _is_page(path):
        return None, None
    return head.rstrip("/") or "/", action


def _is_page(path: str) -> bool:
    try:
        route(split_url(path)[0])
    except NotFound:
        return False
    return True


def _action_named(url: str, name: str):
    """The action `name` of the page type at `url`, or None (the availability check comes later).
    Raises NotFound when `url` is no page."""
    spec, _ = route(split_url(url)[0])
    return action_table.BY_PAGE.get(spec.name, {}).get(name)


def alternates(page: Page) -> dict[str, str]:
    path, _, query = page.url.partition("?")
    suffix = "?" + query if query else ""
    base = path if path != "/" else "/"
    return {"text/markdown": f"{base}.md{suffix}" if base != "/" else f"/.md{suffix}",
            "application/json": f"{base}.json{suffix}" if base != "/" else f"/.json{suffix}"}


def create_app(app: App | None = None, **options: Any) -> WebApp:
    return WebApp(app, **options)
