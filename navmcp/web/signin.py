"""Signing people in and out of the web app: a login link (GET shows whom it signs in, the button's
POST spends it), an emailed one-time code through Supabase Auth (`/login/email`, `/login/code`,
offered when it is configured), and logging out. Each opens or ends a cookie session
(`navmcp.web.auth`). The third way in, OAuth for MCP clients, is `navmcp.oauth`."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from navmcp.errors import AuthError
from navmcp.web import auth, html
from navmcp.web.renditions import RENDITIONS, error_response, refused
from navmcp.web.request import Request
from navmcp.web.response import HTML_CSP, Response, redirect, text
from navmcp.web.site import Site


async def login(site: Site, req: Request) -> Response:
    """A login link: GET (or HEAD) shows whom it signs in, with a button; only the button's POST
    spends it, so link previews, HEADs and prefetches can't use it up."""
    if req.method not in ("GET", "HEAD", "POST"):
        return error_response("html", 405, "follow the login link, then press its button",
                              headers=[("allow", "GET, HEAD, POST")])
    query = parse_qs(req.query_string)
    token = (query.get("token") or [""])[0]
    nxt = local_path((query.get("next") or [""])[0])
    if not token:
        message = "You are signed out." if "bye" in query else None
        page = login_page(site, req, 200, message, ok=True, next_url=nxt)
        if nxt:  # a login link opened later carries no `next`: it is remembered here
            page.headers.append(("set-cookie", auth.next_cookie(nxt, site.secure(req))))
        return page
    nxt = nxt or local_path(auth.remembered_next(req.header("cookie")))
    if req.unproven_link and not auth.login_link_live(site.app.store, token):
        return refused(req, site.limits.refusal(req))
    current = site.web_session(req)
    try:
        if req.method != "POST":
            return confirm_login_page(site, auth.login_link_user(site.app.store, token), current, token, nxt)
        if not posted_from_this_site(req):
            return error_response("html", 403, "sign in with the button on the login link's page: "
                                  "this request did not come from it (no Origin or Referer of this site)")
        session_id = auth.redeem_login_link(site.app.store, token, site.instance)
    except AuthError as e:
        return login_page(site, req, 401, e.message, ok=False, next_url=nxt)
    if current is not None:  # its cookie is replaced: end it rather than leave it live and unreachable
        auth.end_session(site.app.store, current.id, current.user["id"], site.instance)
    return redirect(nxt or "/", [("set-cookie", site.session_cookie(req, session_id)),
                                 ("set-cookie", auth.next_cookie("", site.secure(req)))])


def confirm_login_page(site: Site, user: dict[str, Any], current: auth.WebSession | None, token: str,
                       next_url: str) -> Response:
    """The "Sign in as @user" page; it says so plainly when this browser is signed in as someone else."""
    action = "/login?" + urlencode({"token": token, **({"next": next_url} if next_url else {})}, safe="/")
    return _sign_in_html(200, "login_confirm.html.j2", {
        "user": user, "current": current.user if current else None, "action": action, "next": next_url})


async def login_email(site: Site, req: Request) -> Response:
    """Step 1 of the Supabase sign-in: email a one-time code, then ask for it."""
    if site.signin is None or req.method != "POST":
        return error_response("html", 404, "no page at /login/email: sign in with a login link")
    form = await req.form()
    email = (form.get("email") or [""])[0].strip()[:254]
    nxt = local_path((form.get("next") or [""])[0])
    if "@" not in email:
        return login_page(site, req, 422, "give the email address you sign in with", ok=False, next_url=nxt)
    try:
        site.signin.send_code(email)
    except AuthError as e:
        return login_page(site, req, 502, e.message, ok=False, next_url=nxt)
    return login_page(site, req, 200, f"A sign-in code was sent to {email}.", ok=True, next_url=nxt, email=email)


async def login_code(site: Site, req: Request) -> Response:
    """Step 2: the code buys a Supabase access token, verified like any token; that user gets a
    cookie session (created as a navmcp user on first sight)."""
    if site.signin is None or req.method != "POST":
        return error_response("html", 404, "no page at /login/code: sign in with a login link")
    form = await req.form()
    email = (form.get("email") or [""])[0].strip()[:254]
    code = (form.get("code") or [""])[0].strip()[:20]
    nxt = local_path((form.get("next") or [""])[0])
    try:
        user = site.app.authenticate(site.signin.verify_code(email, code))
    except AuthError as e:
        return login_page(site, req, 401, e.message, ok=False, next_url=nxt, email=email)
    session_id = auth.open_session(site.app.store, user["id"], site.instance)
    return redirect(nxt or "/", [("set-cookie", site.session_cookie(req, session_id))])


def login_page(site: Site, req: Request, status: int, message: str | None, *, ok: bool, next_url: str = "",
               email: str | None = None, asking: str | None = None) -> Response:
    """The sign-in page; `asking`: the name of the app whose authorization link brought a signed-out
    person here (they come back to its request once signed in, not to a raw /authorize URL)."""
    return _sign_in_html(status, "login.html.j2", {"message": message, "ok": ok, "next": next_url,
                                                        "supabase": site.signin is not None, "email": email,
                                                        "command": link_command(site, req), "asking": asking})


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def link_command(site: Site, req: Request) -> str:
    """The exact command that makes a login link on this instance: the navmcp beside the server's
    Python, on this workspace (`--home` when it is not the default). On the embedded store, to a
    browser on the server's own machine, with the owner's handle (that is who sits there); elsewhere
    nobody's handle is shown to a signed-out visitor."""
    from navmcp.config import navmcp_command
    from navmcp.identity import ensure_owner

    config = site.app.config
    handle = "YOUR-HANDLE"
    if site.app.embedded and req.client_ip in LOOPBACK:
        handle = ensure_owner(site.app.store)["handle"]
    return f"{navmcp_command(config.home, config.database_url)} login-link {handle}"


def _sign_in_html(status: int, template: str, context: dict[str, Any]) -> Response:
    return text(status, html.render(template, context), RENDITIONS["html"],
                headers=[("content-security-policy", HTML_CSP), ("cache-control", "no-store")])


async def logout(site: Site, req: Request) -> Response:
    if req.method != "POST":
        return text(405, "log out with a POST (the button on every page)\n", headers=[("allow", "POST")])
    session_id = auth.cookie_value(req.header("cookie"), site.cookie_name(req))
    if session_id:
        form = await req.form()
        if not auth.csrf_ok(site.app.secret, session_id, (form.get("csrf_token") or [""])[0]):
            return error_response("html", 403, "the form's CSRF token is missing or wrong: reload the page")
        session = auth.load_session(site.app.store, session_id, site.instance)
        if session is not None:
            auth.end_session(site.app.store, session_id, session.user["id"], site.instance)
    return redirect("/login?bye=1", [("set-cookie", auth.clear_cookie(site.cookie_name(req), site.secure(req)))])


def local_path(url: str) -> str:
    """Where to go after signing in: a path of this site only (no open redirect), else "" (home).

    Printable ASCII without spaces, as our own `?next=` sends it (percent-encoded): browsers drop
    tabs and newlines from a Location ("/\\t/evil.example" is "//evil.example"), CR/LF breaks the
    header and a non-Latin-1 character can't be sent; "\\" counts as "/" in a browser."""
    if not url.startswith("/") or url.startswith("//") or "\\" in url or not all("!" <= c <= "~" for c in url):
        return ""
    parts = urlsplit(url)
    return url if not parts.scheme and not parts.netloc else ""


def posted_from_this_site(req: Request) -> bool:
    """Login CSRF: a link's token is its only secret, and an attacker holds the tokens of their own
    links, so a foreign page auto-submitting one would sign a visitor in as the attacker, unseen.
    Browsers name a form POST's page in Origin (else Referer, which our referrer-policy keeps for
    this site): requiring this very host there means the POST came from a page of ours, and the
    confirmation page is the only one with that button."""
    source, host = req.header("origin") or req.header("referer"), req.header("host")
    if not source or not host:
        return False
    return urlsplit(source).netloc.lower() == host.lower()
