"""The route table: every path the web app serves, and the handler that answers it. A handler
takes the `Site` and the request and returns a response.

`ROUTES` holds the exact paths, `PREFIXES` the paths under a folder; every other path is a page
of the workspace (the page table, `navmcp.pages`, routes it), or that page's action API.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from navmcp.errors import AuthError
from navmcp.oauth.metadata import WELL_KNOWN
from navmcp.web import compose, exports, files, invite, mcp_http, signin, static
from navmcp.web.actions import list_actions, run_action
from navmcp.web.pages import show
from navmcp.web.renditions import error_response, refused
from navmcp.web.request import Request
from navmcp.web.response import Response, redirect
from navmcp.web.site import Site
from navmcp.web.sse import EventStream

Handler = Callable[[Site, Request], Awaitable[Response | EventStream]]
HEALTH = "/healthz"  # answered without the checks, the store or the worker threads
READY = "/readyz"  # answered without the checks or the worker threads; asks the database


def _oauth(name: str) -> Handler:
    """A handler of navmcp.web.oauth_endpoints, imported on first use (Authlib is not light)."""
    async def handler(site: Site, req: Request) -> Response:
        from navmcp.web import oauth_endpoints as endpoints

        return await getattr(endpoints, name)(site, req)
    return handler


def _oauth_prepare(site: Site, req: Request) -> Awaitable[Response | None]:
    from navmcp.web import oauth_endpoints as endpoints

    return endpoints.prepare(site, req)


async def workspace_page(site: Site, req: Request) -> Response:
    """A page of the workspace in its rendition, or its action API: who asks, their rate limit,
    then the page, its action list, or the action."""
    target = req.target
    rendition, action = target.rendition, target.action
    assert target.page is not None
    if action and req.method in ("GET", "HEAD") and target.negotiated == "html":
        # A browser on an action's URL (a refused form leaves it there; a reload GETs it): the
        # page the action belongs to, not a 405 in JSON.
        return redirect(signin.local_path(target.page) or "/")
    url = target.page
    try:
        caller = site.caller(req)
    except AuthError as e:
        return error_response("json" if action is not None else rendition, 401, e.message,
                              headers=[("www-authenticate", 'Bearer realm="navmcp", error="invalid_token"')])
    if caller is None:
        if rendition == "html":
            return redirect("/login?next=" + quote(req.url if req.method == "GET" else url.split("?", 1)[0], safe="/"))
        return error_response(rendition, 401, "sign in first: follow a login link (`navmcp login-link "
                              "HANDLE`) or send 'Authorization: Bearer <token>' (`navmcp token HANDLE`)",
                              headers=[("www-authenticate", 'Bearer realm="navmcp"')])
    limited = site.limits.check_caller(req, caller.user, caller.client, caller.session is not None, url, action)
    if limited:
        return refused(req, limited, url)
    if action is None:
        if req.method not in ("GET", "HEAD"):
            return error_response(rendition, 405, f"pages are read with GET; actions are POSTed to "
                                  f"{target.path.rstrip('/')}/actions/NAME", headers=[("allow", "GET, HEAD")])
        if target.spec is not None and target.spec.name == "file" and (how := files.wants_bytes(req.query_string)):
            return files.send(site, caller, url, how, rendition)  # the file itself, checked as its page is
        return show(site, caller, url, rendition, host=req.header("host"))
    if action == "":
        if req.method not in ("GET", "HEAD"):
            return error_response("json", 405, "list actions with GET", headers=[("allow", "GET, HEAD")])
        return list_actions(site, caller, url)
    if req.method != "POST":
        return error_response(rendition, 405, f"run {action} with a POST", headers=[("allow", "POST")])
    return await run_action(site, req, caller, target)


# Exact paths; every other path is a page of the workspace.
ROUTES: dict[str, Handler] = {
    HEALTH: static.healthz,
    READY: static.readyz,
    "/favicon.ico": static.favicon,
    "/mcp": mcp_http.handle,
    "/login": signin.login,
    "/login/email": signin.login_email,
    "/login/code": signin.login_code,
    "/logout": signin.logout,
    "/preview": compose.preview,  # a text box's markdown as its page will show it
    "/mentionable": compose.mentionable,  # the handles an @ may complete to, in a studio
    # OAuth (navmcp/oauth): /mcp's authorization server, and the people's side of it.
    **{path: _oauth("well_known") for path in WELL_KNOWN},
    **{f"/{name.replace('_', '-')}": _oauth(name)
       for name in ("authorize", "token", "register", "revoke", "connected_apps")},
}
# A step run on the event loop before the handler, wherever the handler runs: what it waits for
# (a client's metadata document, fetched from anywhere) holds no thread. A response ends the request.
PREPARE: dict[str, Callable[[Site, Request], Awaitable[Response | None]]] = {
    path: _oauth_prepare for path in ("/authorize", "/token", "/revoke")}
# Routes answered in JSON whatever the request asks, their faults (413, 408, 500) included.
JSON_ONLY = frozenset({"/token", "/register", "/revoke"})
PREFIXES: tuple[tuple[str, Handler], ...] = (
    ("/static/", static.asset),
    ("/.well-known/", _oauth("well_known")),  # JSON, never a login page
    ("/invite/", invite.invite),  # an invitation link, for a person in a browser (navmcp.identity.invitations)
)


def fixed(path: str) -> Handler | None:
    """The handler of one of the app's own paths, or None for a page of the workspace."""
    handler = ROUTES.get(path)
    if handler is None:
        for prefix, handler in PREFIXES:
            if path.startswith(prefix):
                return handler
        return exports.route(path)  # a studio's export, or yours: for people in their browser only
    return handler
