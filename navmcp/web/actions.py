"""The action API of every page: `{page}/actions` (GET: the actions valid there, JSON) and
`{page}/actions/{name}` (POST: a form from the HTML page, or a JSON body from a script), run
through `Workspace.execute`, the same rule and handler as MCP's `execute_action` (with an
`Idempotency-Key` header, applied at most once: `navmcp.idempotency`). A form is
answered with a redirect to the page acted on or created (its flash saying what happened), or
with its page showing the refusal beside the form; anything else with JSON."""

from __future__ import annotations

from typing import Any

from navmcp import actions as action_table, idempotency
from navmcp.errors import Busy, NavError
from navmcp.mcp.codec import decode
from navmcp.mcp.jsonrpc import ParseError
from navmcp.web import auth, forms, uploads
from navmcp.web.pages import show
from navmcp.web.renditions import Target, error_response, retry_after
from navmcp.web.request import Request
from navmcp.web.response import Response, json_response, redirect
from navmcp.web.site import Caller, Site
from navmcp.workspace import action_info

FORM = "application/x-www-form-urlencoded"


def list_actions(site: Site, caller: Caller, url: str) -> Response:
    try:
        page = site.app.workspace.page(caller.user, url, caller.client, browser=caller.session is not None)
    except NavError as e:
        return error_response("json", e.status, e.message, url=e.url, headers=retry_after(e))
    return json_response(200, {"url": page.url, "actions": [a.public() for a in page.actions]},
                         [("cache-control", "no-store")])


async def run_action(site: Site, req: Request, caller: Caller, target: Target) -> Response:
    url, name, answer = target.page, target.action, target.rendition
    assert url is not None and name
    is_form = (req.header("content-type") or "").startswith((FORM, uploads.MULTIPART))
    app = site.app
    if caller.session is not None:  # cookie sessions prove the form is ours; Bearer callers need not
        form = await req.form() if is_form else {}
        presented = (form.get("csrf_token") or [""])[0] if is_form else req.header("x-csrf-token")
        if not auth.csrf_ok(app.secret, caller.session.id, presented):
            return error_response(answer, 403, "the form's CSRF token is missing or wrong: reload the page and "
                                               "submit again")
    if target.spec is None:
        assert target.missing is not None
        return error_response(answer, 404, target.missing.message, url=url)
    known = action_table.BY_PAGE.get(target.spec.name, {}).get(name)  # its availability is judged by execute
    if known is None:
        return error_response(answer, 404, f"{name} is not an action of {url.split('?', 1)[0]}: "
                                           f"GET {url.split('?', 1)[0].rstrip('/')}/actions lists them", url=url)
    params: Any  # the form's fields, or the body's JSON (an object, checked below)
    if is_form:
        params = forms.params_from_form(action_info(known), await req.form())
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
            forms.check_fresh(action_info(known), await req.form(),
                             lambda: app.workspace.page(caller.user, url, caller.client,
                                                        browser=caller.session is not None))
        if is_form:  # a file sent with the form goes where an agent's base64 would
            params = uploads.with_file(name, params, req.files)
        result = app.workspace.execute(caller.user, url, name, params, caller.client,
                                       idempotency_key=req.header(idempotency.HEADER),
                                       browser=caller.session is not None)
    except NavError as e:
        if answer == "json":
            return error_response("json", e.status, e.message, url=e.url or url, actions=e.available, fields=e.fields,
                                  headers=retry_after(e))
        if isinstance(e, Busy):  # nothing to show the refusal beside: the page can't be read either
            return error_response(answer, e.status, e.message, url=url, headers=retry_after(e))
        return show(site, caller, url, "html", error=e, action=name, form=await req.form() if is_form else None,
                    host=req.header("host"))
    if answer == "json":
        return json_response(200, result.structured())
    if caller.session is not None:
        auth.set_flash(app.store, caller.session, result.message)
    return redirect(result.url)
