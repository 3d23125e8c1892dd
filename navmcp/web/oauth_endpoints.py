"""The OAuth HTTP endpoints the web app routes to: the well-known documents, /authorize (with the
consent page, on the person's web sign-in), /token, /register, /revoke, and /connected-apps
(where a person sees and revokes the clients they allowed)."""

from __future__ import annotations

import json
import math
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import InvalidClientError, OAuth2Error
from authlib.oauth2.rfc6749.util import extract_basic_authorization

from navmcp import ratelimit
from navmcp.errors import RateLimited
from navmcp.oauth import SCOPES, clients, grants, metadata
from navmcp.oauth.documents import Busy, Documents, FetchFailed
from navmcp.oauth.server import Answer, FormRequest, OAuthServer, RegistrationRequest
from navmcp.web import auth, html, signin
from navmcp.web.renditions import RENDITIONS, error_response
from navmcp.web.response import HTML_CSP, Response, json_response, redirect, text

if TYPE_CHECKING:
    from navmcp.web.request import Request
    from navmcp.web.site import Site

REGISTRATION_MAX_BYTES = 4 * 1024  # a client's metadata, as JSON
# Registrations per client address and in all, per process (`ratelimit` specs; "off" for none).
REGISTRATIONS_PER_ADDRESS = "20/1h"  # NAVMCP_OAUTH_REGISTRATIONS_PER_ADDRESS
REGISTRATIONS_IN_ALL = "500/1h"  # NAVMCP_OAUTH_REGISTRATIONS
# What the OAuth endpoints keep per web app (the process has one; tests make several): the
# metadata documents (public: one cache) and the registration limits.
_per_site: weakref.WeakKeyDictionary[Site, _PerSite] = weakref.WeakKeyDictionary()


def issuer_of(req: Request) -> str:
    return metadata.issuer(req.scheme, req.header("host"))


def _server(site: Site, req: Request) -> OAuthServer:
    return OAuthServer(site.app, issuer_of(req), req.prepared or {})


@dataclass
class _PerSite:
    documents: Documents
    per_address: ratelimit.RateLimiter | None
    in_all: ratelimit.RateLimiter | None


def _of(site: Site) -> _PerSite:
    found = _per_site.get(site)
    if found is None:
        env = os.environ.get
        found = _per_site[site] = _PerSite(
            Documents(), ratelimit.parse(env("NAVMCP_OAUTH_REGISTRATIONS_PER_ADDRESS") or REGISTRATIONS_PER_ADDRESS),
            ratelimit.parse(env("NAVMCP_OAUTH_REGISTRATIONS") or REGISTRATIONS_IN_ALL))
    return found


def documents_of(site: Site) -> Documents:
    return _of(site).documents


# --- before the handler: the client's metadata document, fetched on the loop ------------------------


async def prepare(site: Site, req: Request) -> Response | None:
    """Fetch the metadata documents a request names as its client (`navmcp.oauth.documents`), on
    the event loop before the request is handled: waiting holds no thread, and the handler only
    reads what was fetched. A refusal when fetches are at their bound; else None."""
    urls = await _document_ids(req)
    if not urls:
        return None
    documents, server_metadata = documents_of(site), metadata.authorization_server(issuer_of(req))
    prepared: dict[str, clients.Client | FetchFailed] = {}
    for url in urls:
        try:
            clients.check_document_url(url)
        except InvalidClientError as e:  # judged on every request: not worth remembering
            prepared[url] = FetchFailed(e.description or "the client id is not an acceptable URL")
            continue
        outcome = await documents.prepare(url, req.client_ip, server_metadata)
        if isinstance(outcome, Busy):
            headers = [("retry-after", str(outcome.retry_after)), ("cache-control", "no-store")]
            message = f"{outcome.reason}: retry in {outcome.retry_after} seconds"
            if req.path == "/authorize":
                return error_response("html", 429, message, headers=headers)
            return json_response(429, {"error": "temporarily_unavailable", "error_description": message}, headers)
        prepared[url] = outcome
    req.prepared = prepared
    return None


async def _document_ids(req: Request) -> list[str]:
    """The client ids of a request that are metadata documents' URLs: the query's on /authorize;
    the form's and HTTP Basic's at /token and /revoke."""
    if req.path == "/authorize":
        named = parse_qs(req.query_string, keep_blank_values=True).get("client_id", [])
    elif req.method == "POST":
        form = await _form(req)
        named = (form or {}).get("client_id", [])[:1]
        try:
            basic, _ = extract_basic_authorization({"Authorization": req.header("authorization") or ""})
        except ValueError:  # not UTF-8
            basic = None
        named = [*named, *([basic] if basic else [])]
    else:
        return []
    return list(dict.fromkeys(n for n in named[:2] if clients.is_document_id(n)))


def _json_answer(answer: Answer) -> Response:
    body = answer.body if isinstance(answer.body, dict) else {}
    headers = [(k, v) for k, v in answer.headers if k.lower() != "content-type"]
    if not any(k.lower() == "cache-control" for k, _ in headers):
        headers.append(("cache-control", "no-store"))
    return json_response(answer.status, body, headers)


def _oauth_error(status: int, error: str, description: str) -> Response:
    return json_response(status, {"error": error, "error_description": description}, [("cache-control", "no-store")])


def _method(req: Request, *allowed: str) -> Response | None:
    if req.method in allowed:
        return None
    return _oauth_error(405, "invalid_request", f"use {' or '.join(allowed)}") if "GET" not in allowed else \
        json_response(405, {"error": "invalid_request", "error_description": f"use {' or '.join(allowed)}"},
                      [("allow", ", ".join(allowed))])


# --- discovery ---------------------------------------------------------------------------------


async def well_known(site: Site, req: Request) -> Response:
    """RFC 9728 and RFC 8414 documents; any other well-known path is a JSON 404, never a page."""
    if req.method not in ("GET", "HEAD"):
        return json_response(405, {"error": "method_not_allowed"}, [("allow", "GET, HEAD")])
    issuer = issuer_of(req)
    if req.path.startswith(metadata.PRM_PATH) and req.path in metadata.WELL_KNOWN:
        document = metadata.protected_resource(issuer)
    elif req.path.startswith(metadata.ASM_PATH) and req.path in metadata.WELL_KNOWN:
        document = metadata.authorization_server(issuer)
    else:
        return json_response(404, {"error": "not_found", "error_description": f"nothing at {req.path}"})
    return json_response(200, document, [("cache-control", "public, max-age=300"),
                                         ("access-control-allow-origin", "*")])


# --- the authorization endpoint and the consent page ------------------------------------------------


def _authorization_request(req: Request, issuer: str, method: str) -> FormRequest:
    """The authorization request is the query, on the GET that shows the consent page and on
    the POST of its buttons alike (the form carries only the decision and the CSRF token)."""
    return FormRequest(method, issuer + req.url, req.headers, parse_qs(req.query_string, keep_blank_values=True))


def _grammar_problem(query: dict[str, list[str]]) -> str | None:
    """What in an OAuth request breaks RFC 6749's grammar (Appendix A: every value is printable
    ASCII; `redirect_uri` a URI, `response_type` names), or None. Such a request is refused before
    Authlib or the database reads it (at /authorize with a page: it can't name a redirect URI of
    its client)."""
    for name, values in query.items():
        for value in values:
            if not all(" " <= c <= "~" for c in value):
                return f"{clients.shown(name)} holds a character outside printable ASCII: percent-encode it"
    if not all(clients.uri_characters_ok(uri) for uri in query.get("redirect_uri", [])):
        return "redirect_uri holds a character a URI can't hold as it is (a space or a backslash)"
    if not all(c.isalnum() or c in "_ " for t in query.get("response_type", []) for c in t):
        return "response_type names no response type"
    return None


def _refused(site: Site, req: Request, issuer: str, client_id: str | None, error: OAuth2Error) -> Response:
    """An authorization request refused. Back to the client's redirect URI, with `iss` (RFC 9207),
    only when that URI is known to be the client's (RFC 6749 §4.1.2.1) and the person signed in
    here has approved that client before: anyone can register a client whose redirect URI is any
    site, and an error sent there without a sign-in in between is an open redirect (RFC 9700
    §4.11.2). Else a page for the person. (`error.redirect_uri` is set only once Authlib has
    found the client and its redirect URI, so `client_id` is that client's.)"""
    if error.redirect_uri and client_id:
        session = site.web_session(req)
        if session is not None and grants.has_approved(site.app.store, session.user["id"], client_id):
            return redirect(add_params_to_uri(error.redirect_uri, [*error.get_body(), ("iss", issuer)]))
    return error_response("html", 400, f"This app's sign-in request is not valid ({error.error}): "
                                       f"{error.get_error_description()}")


async def authorize(site: Site, req: Request) -> Response:
    if req.method not in ("GET", "HEAD", "POST"):
        return error_response("html", 405, "open the authorization link with GET", headers=[("allow", "GET, POST")])
    server = _server(site, req)
    request = _authorization_request(req, server.issuer, "POST" if req.method == "POST" else "GET")
    problem = _grammar_problem(request.payload.datalist)
    if problem:
        return error_response("html", 400, f"This app's sign-in request is not valid (invalid_request): {problem}")
    try:
        grant = server.get_consent_grant(request, end_user=None)
    except OAuth2Error as e:
        return _refused(site, req, server.issuer, request.payload.data.get("client_id"), e)
    session = site.web_session(req)
    if session is None:  # sign in first, then come back here: the sign-in page says which app asks
        if req.method == "POST":
            return error_response("html", 401, "your sign-in ended: open the app's link again")
        page = signin.login_page(site, req, 200, None, ok=True, next_url=req.url, asking=grant.request.client.name)
        page.headers.append(("set-cookie", auth.next_cookie(req.url, site.secure(req))))
        return page
    if req.method != "POST":
        return _consent_page(site, req, server, grant, session)
    form = await req.form()
    if not auth.csrf_ok(site.app.secret, session.id, (form.get("csrf_token") or [""])[0]):
        return error_response("html", 403, "the form's CSRF token is missing or wrong: open the app's link again")
    allowed = (form.get("decision") or [""])[0] == "allow"
    answer = server.create_authorization_response(request, grant_user=session.user if allowed else None,
                                                  grant=grant)
    if answer.location is None:
        return error_response("html", 400, "the authorization could not be completed")
    return redirect(answer.location)


def _consent_page(site: Site, req: Request, server: OAuthServer, grant: Any,
                  session: auth.WebSession) -> Response:
    client: clients.Client = grant.request.client
    scopes = [(s, SCOPES[s]) for s in grant.request.scope.split() if s in SCOPES]
    redirect_uri = grant.redirect_uri
    target = urlsplit(redirect_uri)
    origin = f"{target.scheme}://{target.netloc}" if target.scheme in ("http", "https") else f"{target.scheme}:"
    page = html.render("oauth_consent.html.j2", {
        "client": client, "document": clients.is_document_id(client.client_id), "scopes": scopes,
        "lookalike": clients.imitates_latin(client.name),
        "user": session.user, "redirect": f"{target.scheme}://{target.netloc}" if target.netloc else target.scheme + ":",
        "action": req.url, "csrf": auth.csrf_token(site.app.secret, session.id)})
    # The buttons' answer redirects to the client: a form's redirect is held to form-action too.
    csp = HTML_CSP.replace("form-action 'self'", f"form-action 'self' {_csp_source(origin)}")
    return text(200, page, RENDITIONS["html"], headers=[("content-security-policy", csp), ("cache-control", "no-store")])


def _csp_source(origin: str) -> str:
    return "".join(c for c in origin if c.isalnum() or c in ":/.-[]+") or "'none'"


# --- the token, registration and revocation endpoints --------------------------------------------


async def _form(req: Request) -> dict[str, list[str]] | None:
    if (req.header("content-type") or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        return None
    return await req.form()


def _unreadable_credentials(req: Request) -> Response | None:
    """A 401 for an `Authorization: Basic` header that isn't base64 of UTF-8 `id:secret` (Authlib
    would fail on it), else None."""
    header = req.header("authorization")
    if header is None:
        return None
    try:
        credentials = extract_basic_authorization({"Authorization": header})
        if any(part and not all(" " <= c <= "~" for c in part) for part in credentials):
            raise ValueError("not printable ASCII")
    except ValueError:
        return json_response(401, {"error": "invalid_client", "error_description": "the Authorization header is "
                                   "not HTTP Basic credentials of printable ASCII"},
                             [("cache-control", "no-store"), ("www-authenticate", 'Basic realm="navmcp"')])
    return None


async def token(site: Site, req: Request) -> Response:
    refused = _method(req, "POST") or _unreadable_credentials(req)
    if refused:
        return refused
    form = await _form(req)
    if form is None:
        return _oauth_error(400, "invalid_request", "POST the token request as application/x-www-form-urlencoded")
    problem = _grammar_problem(form)
    if problem:
        return _oauth_error(400, "invalid_request", problem)
    server = _server(site, req)
    return _json_answer(server.create_token_response(FormRequest("POST", server.issuer + "/token", req.headers, form)))


async def revoke(site: Site, req: Request) -> Response:
    refused = _method(req, "POST") or _unreadable_credentials(req)
    if refused:
        return refused
    form = await _form(req)
    if form is None:
        return _oauth_error(400, "invalid_request", "POST the revocation request as application/x-www-form-urlencoded")
    problem = _grammar_problem(form)
    if problem:
        return _oauth_error(400, "invalid_request", problem)
    server = _server(site, req)
    return _json_answer(server.create_endpoint_response(
        "revocation", FormRequest("POST", server.issuer + "/revoke", req.headers, form)))


async def register(site: Site, req: Request) -> Response:
    refused = _method(req, "POST")
    if refused:
        return refused
    limits = _of(site)
    for limiter, key, whose in ((limits.per_address, "ip:" + req.client_ip, "this address"),
                                (limits.in_all, "all", "this server")):
        if limiter is None:
            continue
        try:
            limiter.check(key)
        except RateLimited as e:
            seconds = max(1, math.ceil(e.retry_after))
            return json_response(429, {"error": "temporarily_unavailable", "error_description":
                                       f"too many client registrations from {whose} ({limiter.describe()}): "
                                       f"retry in {seconds} seconds, or reuse the client you registered"},
                                 [("retry-after", str(seconds)), ("cache-control", "no-store")])
    body = await req.body()
    if len(body) > REGISTRATION_MAX_BYTES:
        return _oauth_error(400, "invalid_client_metadata", f"client metadata larger than {REGISTRATION_MAX_BYTES} bytes")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        return _oauth_error(400, "invalid_client_metadata", "the body must be a JSON object of client metadata")
    if not isinstance(data, dict):
        return _oauth_error(400, "invalid_client_metadata", "the body must be a JSON object of client metadata")
    server = _server(site, req)
    answer = server.create_endpoint_response("client_registration",
                                             RegistrationRequest(server.issuer + "/register", req.headers, data))
    return _json_answer(answer)


# --- Connected apps --------------------------------------------------------------------------


async def connected_apps(site: Site, req: Request) -> Response:
    """The clients a person allowed, with their scopes and last use; Revoke ends their access."""
    if req.method not in ("GET", "HEAD", "POST"):
        return error_response("html", 405, "use GET or POST", headers=[("allow", "GET, POST")])
    session = site.web_session(req)
    if session is None:
        if req.method == "POST":
            return error_response("html", 401, "sign in first")
        return redirect("/login?next=/connected-apps")
    store, user = site.app.store, session.user
    if req.method == "POST":
        form = await req.form()
        if not auth.csrf_ok(site.app.secret, session.id, (form.get("csrf_token") or [""])[0]):
            return error_response("html", 403, "the form's CSRF token is missing or wrong: reload the page")
        client_id = (form.get("client_id") or [""])[0]
        by_id = {a["client_id"]: a for a in grants.connected_apps(store, user["id"])}
        if client_id in by_id and grants.revoke_client(store, user["id"], client_id):
            auth.set_flash(store, session, f"Revoked {by_id[client_id]['client_name']}: it can no longer act "
                                           "for you.")
        return redirect("/connected-apps")
    flash = auth.take_flash(store, session)
    apps = grants.connected_apps(store, user["id"])
    for a in apps:
        a["client_name"] = clients.shown_name(a["client_name"])
        a["scopes"] = [s for s in SCOPES if s in a["scopes"]]
        a["document"] = clients.is_document_id(a["client_id"])
    page = html.render("oauth_apps.html.j2", {"apps": apps, "user": user, "flash": flash, "scope_text": SCOPES,
                                              "csrf": auth.csrf_token(site.app.secret, session.id)})
    return text(200, page, RENDITIONS["html"], headers=[("content-security-policy", HTML_CSP),
                                                        ("cache-control", "no-store")])
