"""A scripted OAuth client for the tests: register, authorize (a signed-in person's browser presses
a consent button), exchange the code, refresh. `http` is an in-process `Client` or an httpx.Client
(a real server); `browser` is one of those with the person's session cookie."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "scripted", "version": "1"}}}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def register(http, redirect_uri: str = "http://127.0.0.1:9999/callback", name: str = "Scripted App", **extra):
    reply = http.post("/register", json={"client_name": name, "redirect_uris": [redirect_uri],
                                         "grant_types": ["authorization_code", "refresh_token"],
                                         "token_endpoint_auth_method": "none", **extra})
    assert reply.status_code == 201, reply.text
    return reply.json()


def authorization_url(client_id: str, challenge: str, redirect_uri: str = "http://127.0.0.1:9999/callback",
                      **params) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": "st-1",
             "code_challenge": challenge, "code_challenge_method": "S256", "scope": "read write", **params}
    return "/authorize?" + urlencode({k: v for k, v in query.items() if v is not None})


def consent(browser, url: str, decision: str = "allow"):
    """Open the consent page and press a button; the redirect back to the client (its query)."""
    page = browser.get(url)
    assert page.status_code == 200, page.text[:800]
    action = unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    origin = "http://127.0.0.1" if not str(getattr(browser, "base_url", "")) else str(browser.base_url).rstrip("/")
    answer = browser.post(action, data={"csrf_token": csrf, "decision": decision}, headers={"Origin": origin})
    assert answer.status_code == 303, answer.text[:800]
    return redirect_query(answer)


def redirect_query(answer) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}


def exchange(http, client_id: str, code: str, verifier: str | None,
             redirect_uri: str = "http://127.0.0.1:9999/callback", **extra):
    data = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "redirect_uri": redirect_uri,
            **({"code_verifier": verifier} if verifier is not None else {}), **extra}
    return http.post("/token", data=data)


def refresh(http, client_id: str, refresh_token: str, **extra):
    return http.post("/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                     "client_id": client_id, **extra})


def connect(http, browser, scope: str = "read write", name: str = "Scripted App") -> tuple[dict, dict]:
    """The whole flow: (the registered client, the token response)."""
    client = register(http, name=name)
    verifier, challenge = pkce()
    back = consent(browser, authorization_url(client["client_id"], challenge, scope=scope))
    reply = exchange(http, client["client_id"], back["code"], verifier)
    assert reply.status_code == 200, reply.text
    return client, reply.json()


def mcp(http, access_token: str, message: dict | None = None, session: str | None = None):
    headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"}
    if session:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    return http.post("/mcp", json=message or INIT, headers=headers)
