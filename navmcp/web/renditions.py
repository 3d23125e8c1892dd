"""What a request names and the rendition it is answered in, decided once (`target`), and the one
error body of each rendition (`error_response`).

A page of the workspace has three renditions: `.json` → the page's structured content, `.md` or
`Accept: text/markdown` → exactly the markdown `navigate` returns, else HTML (`Vary: Accept`).
Its action API (`{page}/actions`, `{page}/actions/{name}`) answers in JSON, and an HTML form's
POST from a browser with a page. `/mcp` answers in JSON-RPC whatever it is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from navmcp import pages
from navmcp.errors import Busy, FieldError, NavError, NotFound
from navmcp.mcp.codec import encode
from navmcp.mcp.jsonrpc import InternalError, InvalidRequest, SessionNotFound, error_object
from navmcp.render import inline, plain
from navmcp.web import html, words
from navmcp.web.renderers import RENDERERS
from navmcp.web.request import Request
from navmcp.web.response import HTML_CSP, Refusal, Response, json_response, reason, text

RENDITIONS = {name: renderer.media_type for name, renderer in RENDERERS.items()}  # rendition → content type
JSON_RPC_PATH = "/mcp"  # answers in JSON-RPC, refusals included
_ACTION_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")  # an HTML form's (navmcp.web.uploads)


@dataclass(frozen=True, slots=True)
class Target:
    """What one request names, found once. `rendition`: what it is answered in ("html",
    "markdown", "json", or "jsonrpc" on /mcp); `negotiated`: what its suffix or Accept header asked
    for. For a page of the workspace or its action API, `page` is the page's URL (path and
    query), `action` None for the page itself, "" for its action list, else the action's name;
    `spec` its row in the page table, or None with `missing`, the NotFound saying why."""

    rendition: str
    negotiated: str
    path: str  # without a .md/.json suffix
    page: str | None = None
    action: str | None = None
    spec: pages.PageSpec | None = None
    missing: NotFound | None = None
    costly: bool = False  # a page whose read may cost more than one page of data (pages.is_costly)


def target(req: Request, fixed: bool, json_only: bool = False) -> Target:
    """The target of `req`; `fixed`: its path is one of the app's own routes, not a workspace page;
    `json_only`: a route that answers JSON whatever is asked (the OAuth token, registration and
    revocation endpoints), its faults too."""
    if req.path == JSON_RPC_PATH:
        return Target("jsonrpc", "json", req.path)
    if json_only:
        return Target("json", "json", req.path)
    path = req.path
    if path.endswith(".json"):
        negotiated, path = "json", path[:-5] or "/"
    elif path.endswith(".md"):
        negotiated, path = "markdown", path[:-3] or "/"
    else:
        negotiated = negotiate(req.header("accept"))
    if fixed:
        return Target(negotiated, negotiated, path)
    query = "?" + req.query_string if req.query_string else ""
    page_path, action = _split_action_path(path)
    if page_path is None:
        spec, missing, costly = _locate(path + query)
        return Target(negotiated, negotiated, path, path + query, None, spec, missing, costly)
    is_form = (req.header("content-type") or "").startswith(_FORMS)
    # The action API answers in JSON (for `*/*` too); a page only to an HTML form's POST from a browser.
    rendition = "html" if is_form and req.method == "POST" and negotiated == "html" else "json"
    spec, missing, _ = _locate(page_path + query)
    return Target(rendition, negotiated, path, page_path + query, action, spec, missing)


def negotiate(accept: str | None) -> str:
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


def _locate(url: str) -> tuple[pages.PageSpec | None, NotFound | None, bool]:
    try:
        spec, _, query, _ = pages.locate(url)
    except NotFound as e:
        return None, e, False
    return spec, None, pages.is_costly(spec, query)


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
        pages.route(pages.split_url(path)[0])
    except NotFound:
        return False
    return True


# --- the canonical error body, one per rendition --------------------------------------------

# The JSON-RPC error of an HTTP-level refusal on /mcp, by status.
_JSON_RPC_FAULTS = {404: SessionNotFound}


def error_response(rendition: str, status: int, message: str, *, url: str | None = None,
                   actions: list[str] | None = None, headers: list[tuple[str, str]] | None = None,
                   id_: Any = None, fields: tuple[FieldError, ...] = ()) -> Response:
    """The one error body of each rendition. JSON: {ok, status, error, message, url, actions} (a
    superset of an action result's shape); markdown: a page with the status as its title; HTML: the
    same as a page; JSON-RPC (/mcp): an error object, with the request's id `id_` once its body was
    read. The parameters a refusal names (`fields`) are in JSON as `fields` (absent when none).
    Messages are escaped like any user-influenced text."""
    if rendition == "jsonrpc":
        fault = InternalError if status >= 500 else _JSON_RPC_FAULTS.get(status, InvalidRequest)
        return Response(status, encode(error_object(fault(message), id_)), "application/json", headers or [])
    actions = actions or []
    headers = [*(headers or []), ("vary", "Accept")]
    if rendition == "json":
        body = {"ok": False, "status": status, "error": reason(status), "message": message, "url": url,
                "actions": actions}
        if fields:
            body["fields"] = [f.public() for f in fields]
        return json_response(status, body, headers)
    if rendition == "markdown":
        markdown = f"# Error {status}: {reason(status)}\n\n{inline(plain(message))}\n"  # escaped once, as a whole
        if actions:
            markdown += "\nAvailable here: " + ", ".join(f"`{a}`" for a in actions) + ".\n"
        return text(status, markdown, RENDITIONS["markdown"], headers=headers)
    page = html.render("error.html.j2", {"status": status, "reason": reason(status), "message": words.people_words(message),
                                         "available": actions})
    return text(status, page, RENDITIONS["html"], headers=[*headers, ("content-security-policy", HTML_CSP)])


def retry_after(error: NavError) -> list[tuple[str, str]]:
    """The `Retry-After` of a fault that applied nothing and may be sent again (the database busy
    or away), else none."""
    return [("retry-after", str(error.retry_after))] if isinstance(error, Busy) else []


def refused(req: Request, refusal: Refusal, url: str | None = None) -> Response:
    """A check's refusal in the rendition `req` is answered in (on /mcp, as `Reason: message`)."""
    rendition = req.target.rendition
    message = f"{reason(refusal.status)}: {refusal.message}" if rendition == "jsonrpc" else refusal.message
    return error_response(rendition, refusal.status, message, url=url, headers=list(refusal.headers))


def alternates(url: str) -> dict[str, str]:
    """The other renditions of the page at `url`, as its HTML advertises them."""
    path, _, query = url.partition("?")
    suffix = "?" + query if query else ""
    base = path if path != "/" else "/"
    return {"text/markdown": f"{base}.md{suffix}" if base != "/" else f"/.md{suffix}",
            "application/json": f"{base}.json{suffix}" if base != "/" else f"/.json{suffix}"}
