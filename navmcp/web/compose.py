"""What a text box asks of the server while a person writes in it: the preview of its markdown,
rendered by the very renderer the page will use (`navmcp.web.markdown.to_html`: raw HTML off, links
checked, mentions of members linked), and the handles an `@` may complete to. Both answer a
signed-in member of the studio named, and nobody else (the handles of a studio are its members'
business); neither writes anything.

`POST /preview` with a form (or JSON) {text, studio}: the HTML fragment, as the page shows it.
`GET /mentionable?studio=HANDLE`: {"handles": [...]}, the members' handles, then the groups.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from navmcp.content import mentions
from navmcp.errors import AuthError
from navmcp.web.markdown import NO_MENTIONS, to_html
from navmcp.web.renditions import error_response, refused
from navmcp.web.request import Request
from navmcp.web.response import HTML_CSP, Response, json_response, text
from navmcp.web.site import Caller, Site

MOST = 100_000  # the longest text a box takes (a note's body: `actions.fields.Body`)
_STUDIO = "SELECT s.id FROM studios s JOIN memberships m ON m.studio_id = s.id WHERE s.handle = ? AND m.user_id = ?"


def _caller(site: Site, req: Request, url: str) -> Caller | Response:
    try:
        caller = site.caller(req)
    except AuthError as e:
        return error_response("json", 401, e.message)
    if caller is None:
        return error_response("json", 401, "sign in first")
    limited = site.limits.check_caller(req, caller.user, caller.client, caller.session is not None, url, None)
    return refused(req, limited, url) if limited else caller


def _studio_id(site: Site, caller: Caller, handle: str) -> str | None:
    """The studio's id when `caller` is one of its members, else None (no studio, or not theirs:
    one answer, so nobody learns which studios exist)."""
    if not handle:
        return None
    with site.app.store.read(user_id=caller.user["id"]) as tx:
        row = tx.one(_STUDIO, (handle, caller.user["id"]))
    return row["id"] if row else None


async def preview(site: Site, req: Request) -> Response:
    if req.method != "POST":
        return error_response("json", 405, "preview with a POST of {text, studio}", headers=[("allow", "POST")])
    caller = _caller(site, req, "/preview")
    if isinstance(caller, Response):
        return caller
    fields = await _fields(req)
    body, handle = fields.get("text", ""), fields.get("studio", "")
    if len(body) > MOST:
        return error_response("json", 413, f"a text is at most {MOST:,} characters")
    studio_id = _studio_id(site, caller, handle)
    named: tuple[str, frozenset[str]] = NO_MENTIONS
    if studio_id is not None:
        with site.app.store.read(user_id=caller.user["id"]) as tx:
            named = (handle, frozenset(mentions.members_named(tx, studio_id, [body])))
    fragment = to_html(body, site.origins.own_hosts(req.header("host")), named)
    return text(200, str(fragment), "text/html; charset=utf-8",
                headers=[("content-security-policy", HTML_CSP), ("cache-control", "no-store")])


async def mentionable(site: Site, req: Request) -> Response:
    if req.method not in ("GET", "HEAD"):
        return error_response("json", 405, "read with GET", headers=[("allow", "GET, HEAD")])
    caller = _caller(site, req, "/mentionable")
    if isinstance(caller, Response):
        return caller
    handle = (parse_qs(req.query_string).get("studio") or [""])[0]
    studio_id = _studio_id(site, caller, handle)
    if studio_id is None:
        return error_response("json", 404, f"no studio of yours has the handle {handle!r}")
    with site.app.store.read(user_id=caller.user["id"]) as tx:
        handles = mentions.member_handles(tx, studio_id)
    return json_response(200, {"handles": handles}, [("cache-control", "no-store")])


async def _fields(req: Request) -> dict[str, str]:
    if (req.header("content-type") or "").startswith("application/json"):
        try:
            value: Any = json.loads(await req.body() or b"{}")
        except ValueError:
            value = {}
        value = value if isinstance(value, dict) else {}
        return {k: v for k, v in value.items() if isinstance(v, str)}
    form = await req.form()
    return {k: (v or [""])[0] for k, v in form.items()}

