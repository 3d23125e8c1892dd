"""An invitation link opened in a browser (`/invite/SECRET`, navmcp.identity.invitations): GET shows the
studio and role it offers, with a join button for a signed-in person, or a form to create an account
for one who has none (on Supabase, a link to sign in, which makes the account); only the POST joins.
A link that does not work is one page, whatever the reason, and adds nobody."""

from __future__ import annotations

from typing import Any

from navmcp.errors import NavError
from navmcp.identity import create_user, invitations, new_id
from navmcp.web import auth, html
from navmcp.web.renditions import RENDITIONS, error_response
from navmcp.web.request import Request
from navmcp.web.response import HTML_CSP, Response, redirect, text
from navmcp.web.signin import posted_from_this_site
from navmcp.web.site import Site


async def invite(site: Site, req: Request) -> Response:
    if req.method not in ("GET", "HEAD", "POST"):
        return error_response("html", 405, "open the invitation link, then press its button",
                              headers=[("allow", "GET, HEAD, POST")])
    token = req.path[len(invitations.PREFIX):]
    offer = invitations.offered(site.app.store, token)
    if offer is None:
        return _page(404, None)
    session = site.web_session(req)
    context = {"offer": offer, "action": invitations.PREFIX + token, "signin": site.signin is not None,
               "user": session.user if session else None,
               "csrf": auth.csrf_token(site.app.secret, session.id) if session else "",
               "message": None, "handle": None, "name": None}
    if req.method != "POST":
        return _page(200, context)
    if not posted_from_this_site(req):
        return error_response("html", 403, "join with the button on the invitation's page: this request did not "
                              "come from it (no Origin or Referer of this site)")
    form = await req.form()
    cookies: list[tuple[str, str]] = []
    if session is not None:
        if not auth.csrf_ok(site.app.secret, session.id, (form.get("csrf_token") or [""])[0]):
            return error_response("html", 403, "the form's CSRF token is missing or wrong: reload the page")
        user_id = session.user["id"]
    elif site.signin is not None:  # on Supabase, accounts are made by signing in (Supabase Auth)
        return _page(200, context)
    else:
        handle = (form.get("handle") or [""])[0].strip()[:40]
        name = (form.get("name") or [""])[0].strip()[:120] or None
        user_id = new_id(10)
        try:
            with site.app.store.write(user_id=user_id) as tx:  # as the new user (RLS: you make only yourself)
                create_user(tx, handle, name, user_id, findable=False)
        except NavError as e:
            return _page(422, {**context, "message": e.message, "handle": handle, "name": name})
        cookies.append(("set-cookie", site.session_cookie(req, auth.open_session(site.app.store, user_id,
                                                                                  site.instance))))
    studio = invitations.redeem(site.app.store, token, user_id)
    if studio is None:  # used up or revoked a moment ago
        return _page(404, None, cookies)
    return redirect(f"/studios/{studio}", cookies)


def _page(status: int, context: dict[str, Any] | None, headers: list[tuple[str, str]] | None = None) -> Response:
    body = html.render("invite.html.j2", context or {"offer": None, "refused": invitations.REFUSED})
    return text(status, body, RENDITIONS["html"],
                headers=[("content-security-policy", HTML_CSP), ("cache-control", "no-store"),
                         ("referrer-policy", "no-referrer"), *(headers or [])])
