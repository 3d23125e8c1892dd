"""A page of the workspace in the rendition it is asked for, through the renderers table
(`renderers.RENDERERS`): the page's data as JSON, the markdown `navigate` returns, or the HTML page
for people (with the app shell, the flash of the
last action, and a refused form filled again with what was sent)."""

from __future__ import annotations

from typing import Any

from navmcp.errors import NavError
from navmcp.page import Page
from navmcp.web import auth, html
from navmcp.web.renderers import render
from navmcp.web.renditions import RENDITIONS, alternates, error_response, retry_after
from navmcp.web.response import HTML_CSP, Response, text
from navmcp.web.site import Caller, Site


def show(site: Site, caller: Caller, url: str, rendition: str, *, error: NavError | None = None,
         action: str | None = None, form: dict[str, list[str]] | None = None, host: str | None = None) -> Response:
    """The page at `url` as `caller` sees it; with `error`, the HTML page showing the refusal of its
    form `action`, filled again from `form`. `host`: the request's Host (full URLs of this instance
    in people's text link inside the app)."""
    app = site.app
    try:
        page = app.workspace.page(caller.user, url, caller.client, browser=caller.session is not None)
    except NavError as e:
        return error_response(rendition, e.status, e.message, url=e.url, headers=retry_after(e))
    headers = [("vary", "Accept"), ("cache-control", "no-store")]
    if rendition != "html":  # the HTML page alone has surroundings to gather (app shell, forms, flash)
        return text(200, render(rendition, page), RENDITIONS[rendition], headers=headers)
    flash = auth.take_flash(app.store, caller.session) if caller.session and error is None else None
    shown_error = None
    if error is not None:
        shown_error = {"action": action, "status": error.status, "message": error.message,
                       "fields": [f.public() for f in error.fields]}
    try:
        home = page if page.name == "home" else app.workspace.page(caller.user, "/", caller.client)
    except NavError:
        home = None
    body = render("html", page, csrf=site.csrf(caller), alternates=alternates(page.url), flash=flash,
                  error=shown_error, submitted=form if error is not None else None,
                  shell=html.shell_facts(page, home), people=people_to_add(site, caller, page),
                  own_hosts=site.origins.own_hosts(host))
    return text(error.status if error else 200, body, RENDITIONS["html"],
                headers=[*headers, ("content-security-policy", HTML_CSP)])


def people_to_add(site: Site, caller: Caller, page: Page) -> list[dict[str, Any]]:
    """For the members page's "Invite a person": the people you share another studio with who are
    not in this one and may be added (findable, docs/privacy.md), to pick from (anyone else
    findable is still added by typing their handle)."""
    if page.name != "members" or not any(a.name == "add_member" for a in page.actions):
        return []
    handle = page.url.split("/")[2]
    with site.app.store.read(user_id=caller.user["id"]) as tx:
        return tx.all(_PEOPLE_TO_ADD, (caller.user["id"], handle))


_PEOPLE_TO_ADD = """SELECT DISTINCT u.handle, u.name FROM memberships mine
                       JOIN memberships theirs ON theirs.studio_id = mine.studio_id
                       JOIN users u ON u.id = theirs.user_id
                      WHERE mine.user_id = ? AND u.deleted_at IS NULL AND u.findable = 1
                        AND NOT EXISTS (SELECT 1 FROM memberships m JOIN studios s ON s.id = m.studio_id
                                         WHERE s.handle = ? AND m.user_id = u.id)
                      ORDER BY u.handle LIMIT 200"""
