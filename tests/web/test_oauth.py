"""The OAuth 2.1 authorization server for /mcp (navmcp/oauth), in process: its documents, its
endpoints, and a test per bad input, each answered with the error the RFCs name."""

from __future__ import annotations

import jwt

from navmcp.identity import Access, mint_access_token, mint_token
from oauthflow import INIT, authorization_url, connect, consent, exchange, mcp, pkce, redirect_query, refresh, register

ISSUER = "http://127.0.0.1"
RESOURCE = ISSUER + "/mcp"
CALL_ACTION = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "execute_action", "arguments": {"action": "create_studio", "url": "/",
                                            "params": {"handle": "viaoauth", "name": "Via OAuth"}}}}


# --- discovery --------------------------------------------------------------------------------


def test_protected_resource_and_authorization_server_metadata(anon):
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        prm = anon.get(path)
        assert prm.status_code == 200 and prm.headers["content-type"] == "application/json"
        assert prm.json()["resource"] == RESOURCE and prm.json()["authorization_servers"] == [ISSUER]
        assert prm.json()["scopes_supported"] == ["read", "write"]
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"):
        asm = anon.get(path).json()
        assert asm["issuer"] == ISSUER and asm["token_endpoint"] == ISSUER + "/token"
        assert asm["code_challenge_methods_supported"] == ["S256"]
        assert asm["authorization_response_iss_parameter_supported"] is True
        assert asm["client_id_metadata_document_supported"] is True
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

    AuthorizationServerMetadata(anon.get("/.well-known/oauth-authorization-server").json()).validate()


def test_well_known_paths_answer_json_or_404_never_a_login_page(anon, browser):
    for client in (anon, browser):
        for path in ("/.well-known/openid-configuration", "/.well-known/anything", "/.well-known/"):
            reply = client.get(path)
            assert reply.status_code == 404 and reply.json()["error"] == "not_found", (path, reply.text[:200])


def test_the_401_from_mcp_names_the_resource_metadata_and_scopes(anon):
    reply = anon.post("/mcp", json=INIT)
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="navmcp"')
    assert f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="read write"' in challenge


def test_the_public_url_setting_names_the_issuer(anon, monkeypatch):
    monkeypatch.setenv("NAVMCP_PUBLIC_URL", "https://navmcp.example.com/")
    assert anon.get("/.well-known/oauth-protected-resource").json()["resource"] == "https://navmcp.example.com/mcp"


# --- the whole flow, scripted ------------------------------------------------------------------


def test_a_scripted_client_registers_is_allowed_and_calls_mcp_as_the_person(anon, browser, owner):
    client, tokens = connect(anon, browser)
    assert "client_secret" not in client  # a public client (token_endpoint_auth_method none)
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "read write" and tokens["expires_in"] == 3600
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == RESOURCE and claims["sub"] == owner["id"] and claims["client_id"] == client["client_id"]
    init = mcp(anon, tokens["access_token"])
    assert init.status_code == 200, init.text
    made = mcp(anon, tokens["access_token"], CALL_ACTION, init.headers["mcp-session-id"])
    assert made.status_code == 200 and made.json()["result"]["isError"] is False, made.text


def test_consent_page_names_the_client_the_scopes_and_the_person(anon, browser, owner):
    client = register(anon, name="Nice <b>App</b>")
    verifier, challenge = pkce()
    page = browser.get(authorization_url(client["client_id"], challenge))
    assert page.status_code == 200
    assert "Allow <bdi>Nice &lt;b&gt;App&lt;/b&gt;</bdi> to use navmcp as @" + owner["handle"] in page.text
    assert "<strong>read</strong>" in page.text and "<strong>write</strong>" in page.text
    assert ">Allow</button>" in page.text and ">Deny</button>" in page.text
    assert "form-action 'self' http://127.0.0.1:9999" in page.headers["content-security-policy"]


def test_a_signed_out_person_signs_in_and_comes_back_to_consent(anon, web, app, owner):
    """Shown the sign-in page, which says which app asks (not its raw /authorize URL), the person
    fetches a login link (which names no `next`): opening it in the same browser still brings them
    back to the app's consent page."""
    from navmcp.web.auth import create_login_link
    from webclient import Client, follow_login_link

    client = register(anon)
    url = authorization_url(client["client_id"], pkce()[1])
    person = Client(web)
    try:
        away = person.get(url)
        assert away.status_code == 200 and "Sign in to navmcp" in away.text
        assert "An app calling itself <strong>“Scripted App”</strong> asks to use navmcp as you" in away.text
        assert "/authorize" not in away.text.split("<main", 1)[1] and "login-link" in away.text
        link = create_login_link(app.store, owner["id"], ISSUER).removeprefix(ISSUER)
        signed = follow_login_link(person, link)
        assert signed.status_code == 303 and signed.headers["location"] == url
        assert "navmcp_next=;" in signed.headers.get_list("set-cookie")[-1]  # forgotten once used
        assert "Allow Scripted App" in person.get(signed.headers["location"]).text
    finally:
        person.close()


def test_loopback_redirect_uris_may_use_another_port(anon, browser):
    client = register(anon)
    verifier, challenge = pkce()
    other = "http://127.0.0.1:41234/callback"
    back = consent(browser, authorization_url(client["client_id"], challenge, redirect_uri=other))
    assert exchange(anon, client["client_id"], back["code"], verifier, redirect_uri=other).status_code == 200


def test_the_authorization_response_carries_iss_and_state(anon, browser):
    client = register(anon)
    back = consent(browser, authorization_url(client["client_id"], pkce()[1]))
    assert back["iss"] == ISSUER and back["state"] == "st-1" and back["code"]


# --- bad input: the authorization endpoint ------------------------------------------------------


def test_deny_answers_access_denied_with_iss(anon, browser):
    client = register(anon)
    back = consent(browser, authorization_url(client["client_id"], pkce()[1]), decision="deny")
    assert back["error"] == "access_denied" and back["iss"] == ISSUER and back["state"] == "st-1"
    assert "code" not in back


def test_an_unknown_client_is_refused_on_a_page_not_redirected(browser):
    reply = browser.get(authorization_url("no-such-client", pkce()[1]))
    assert reply.status_code == 400 and "location" not in reply.headers
    assert "invalid_client" in reply.text


def test_a_redirect_uri_that_does_not_match_is_refused_on_a_page(anon, browser):
    client = register(anon)
    for uri in ("http://127.0.0.1:9999/other", "https://evil.example/callback", "http://127.0.0.1:9999/callback/x"):
        reply = browser.get(authorization_url(client["client_id"], pkce()[1], redirect_uri=uri))
        assert reply.status_code == 400 and "location" not in reply.headers, uri
        assert "invalid_request" in reply.text


def _seen_client(anon, browser) -> dict:
    """A client the signed-in person has allowed once: errors of its requests go back to it
    (for one they never saw, a page: tests/web/test_oauth_hardening.py)."""
    client = register(anon)
    consent(browser, authorization_url(client["client_id"], pkce()[1]))
    return client


def test_pkce_is_required_and_s256_only(anon, browser):
    client = _seen_client(anon, browser)
    missing = browser.get(authorization_url(client["client_id"], None, code_challenge_method=None))
    assert missing.status_code == 303 and redirect_query(missing)["error"] == "invalid_request"
    assert redirect_query(missing)["iss"] == ISSUER
    plain = browser.get(authorization_url(client["client_id"], "x" * 43, code_challenge_method="plain"))
    assert redirect_query(plain)["error"] == "invalid_request"


def test_a_resource_other_than_this_mcp_is_refused(anon, browser):
    client = _seen_client(anon, browser)
    reply = browser.get(authorization_url(client["client_id"], pkce()[1], resource="https://other.example/mcp"))
    assert reply.status_code == 303 and redirect_query(reply)["error"] == "invalid_target"
    ok = browser.get(authorization_url(client["client_id"], pkce()[1], resource="HTTP://127.0.0.1/mcp/"))
    assert ok.status_code == 200  # the same resource, case and trailing slash aside


def test_an_unknown_scope_is_refused(anon, browser):
    client = _seen_client(anon, browser)
    reply = browser.get(authorization_url(client["client_id"], pkce()[1], scope="read admin"))
    assert redirect_query(reply)["error"] == "invalid_scope"


def test_the_consent_buttons_need_the_sessions_csrf_token(anon, browser):
    client = register(anon)
    url = authorization_url(client["client_id"], pkce()[1])
    reply = browser.post(url, data={"decision": "allow", "csrf_token": "forged"}, headers={"Origin": ISSUER})
    assert reply.status_code == 403 and "location" not in reply.headers


# --- bad input: the token endpoint -----------------------------------------------------------------


def _code(anon, browser):
    client = register(anon)
    verifier, challenge = pkce()
    back = consent(browser, authorization_url(client["client_id"], challenge))
    return client["client_id"], back["code"], verifier


def test_a_wrong_pkce_verifier_is_invalid_grant(anon, browser):
    client_id, code, _ = _code(anon, browser)
    reply = exchange(anon, client_id, code, pkce()[0])
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"


def test_a_missing_pkce_verifier_is_invalid_request(anon, browser):
    client_id, code, _ = _code(anon, browser)
    reply = exchange(anon, client_id, code, None)
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_request"


def test_a_reused_code_is_invalid_grant_and_revokes_what_it_gave(anon, browser):
    client_id, code, verifier = _code(anon, browser)
    first = exchange(anon, client_id, code, verifier)
    assert first.status_code == 200
    again = exchange(anon, client_id, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert mcp(anon, first.json()["access_token"]).status_code == 401
    assert refresh(anon, client_id, first.json()["refresh_token"]).json()["error"] == "invalid_grant"


def test_an_expired_code_is_invalid_grant(anon, browser, app):
    client_id, code, verifier = _code(anon, browser)
    with app.store.write() as tx:
        tx.execute("UPDATE oauth_codes SET expires_at = '2000-01-01T00:00:00.000000Z'")
    reply = exchange(anon, client_id, code, verifier)
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"
    assert "expired" in reply.json()["error_description"]


def test_a_redirect_uri_other_than_the_authorization_requests_is_invalid_grant(anon, browser):
    client_id, code, verifier = _code(anon, browser)
    reply = exchange(anon, client_id, code, verifier, redirect_uri="http://127.0.0.1:9999/elsewhere")
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"


def test_an_unknown_client_at_the_token_endpoint_is_invalid_client(anon, browser):
    _, code, verifier = _code(anon, browser)
    reply = exchange(anon, "no-such-client", code, verifier)
    assert reply.status_code in (400, 401) and reply.json()["error"] == "invalid_client"


def test_a_code_of_another_client_is_invalid_grant(anon, browser):
    _, code, verifier = _code(anon, browser)
    other = register(anon, name="Other")
    reply = exchange(anon, other["client_id"], code, verifier)
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"


def test_a_token_request_for_another_resource_is_invalid_target(anon, browser):
    client_id, code, verifier = _code(anon, browser)
    reply = exchange(anon, client_id, code, verifier, resource="https://other.example/mcp")
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_target"


def test_the_token_endpoint_wants_a_form_post(anon):
    assert anon.get("/token").status_code == 405
    reply = anon.post("/token", json={"grant_type": "authorization_code"})
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_request"
    unsupported = anon.post("/token", data={"grant_type": "password", "username": "a", "password": "b"})
    assert unsupported.status_code == 400 and unsupported.json()["error"] == "unsupported_grant_type"


# --- refresh tokens and revocation --------------------------------------------------------------


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_family(anon, browser):
    client, tokens = connect(anon, browser)
    newer = refresh(anon, client["client_id"], tokens["refresh_token"])
    assert newer.status_code == 200, newer.text
    newer = newer.json()
    assert newer["refresh_token"] != tokens["refresh_token"] and newer["access_token"] != tokens["access_token"]
    assert mcp(anon, newer["access_token"]).status_code == 200
    reused = refresh(anon, client["client_id"], tokens["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert "already used" in reused.json()["error_description"]
    # the whole family is revoked: the newest refresh token and the access tokens too
    assert refresh(anon, client["client_id"], newer["refresh_token"]).json()["error"] == "invalid_grant"
    assert mcp(anon, newer["access_token"]).status_code == 401


def test_a_refresh_may_narrow_the_scope_but_not_widen_it(anon, browser):
    client, tokens = connect(anon, browser, scope="read")
    assert tokens["scope"] == "read"
    wider = refresh(anon, client["client_id"], tokens["refresh_token"], scope="read write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"


def test_revocation_of_a_refresh_token_ends_the_grant(anon, browser):
    client, tokens = connect(anon, browser)
    reply = anon.post("/revoke", data={"token": tokens["refresh_token"], "client_id": client["client_id"]})
    assert reply.status_code == 200
    assert refresh(anon, client["client_id"], tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert mcp(anon, tokens["access_token"]).status_code == 401


def test_revocation_of_an_access_token_ends_the_grant(anon, browser):
    client, tokens = connect(anon, browser)
    reply = anon.post("/revoke", data={"token": tokens["access_token"], "token_type_hint": "access_token",
                                       "client_id": client["client_id"]})
    assert reply.status_code == 200
    assert mcp(anon, tokens["access_token"]).status_code == 401


def test_revoking_an_unknown_token_is_a_quiet_200(anon):
    client = register(anon)
    reply = anon.post("/revoke", data={"token": "no-such-token", "client_id": client["client_id"]})
    assert reply.status_code == 200


# --- /mcp as the protected resource -----------------------------------------------------------------


def test_a_read_only_token_gets_403_insufficient_scope_for_an_action(anon, browser):
    client, tokens = connect(anon, browser, scope="read")
    init = mcp(anon, tokens["access_token"])
    assert init.status_code == 200
    refused = mcp(anon, tokens["access_token"], CALL_ACTION, init.headers["mcp-session-id"])
    assert refused.status_code == 403 and refused.json()["id"] == CALL_ACTION["id"]  # the request's own id
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="read write"' in challenge
    assert "resource_metadata=" in challenge
    navigate = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "navigate", "arguments": {"url": "/"}}}
    assert mcp(anon, tokens["access_token"], navigate, init.headers["mcp-session-id"]).status_code == 200


def test_a_token_for_another_resource_is_refused(anon, app, owner):
    access = Access("g", "c", "C", frozenset({"read", "write"}), "https://other.example/mcp")
    token = mint_access_token(app.secret, issuer=ISSUER, user_id=owner["id"], access=access, seconds=60)
    reply = mcp(anon, token)
    assert reply.status_code == 401 and "another resource" in reply.headers["www-authenticate"]


def test_an_expired_access_token_is_refused(anon, browser, app, owner):
    _, tokens = connect(anon, browser)
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    access = Access(claims["gid"], claims["client_id"], claims["client_name"], frozenset({"read"}), RESOURCE)
    old = mint_access_token(app.secret, issuer=ISSUER, user_id=owner["id"], access=access, seconds=-10)
    reply = mcp(anon, old)
    assert reply.status_code == 401 and "expired" in reply.headers["www-authenticate"]


def test_an_access_token_is_for_mcp_only_not_the_pages(anon, browser):
    _, tokens = connect(anon, browser)
    page = anon.get("/.md", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert page.status_code == 401


def test_navmcp_tokens_keep_working_on_mcp_and_pages(anon, app, owner):
    token = mint_token(app.secret, owner["id"])
    assert mcp(anon, token).status_code == 200
    assert anon.get("/.md", headers={"Authorization": f"Bearer {token}"}).status_code == 200


# --- dynamic client registration ---------------------------------------------------------------------


def test_registration_refuses_bad_redirect_uris_and_bad_bodies(anon):
    for uri in ("http://evil.example/cb", "javascript:alert(1)", "https://a.example/cb#frag", "not a uri"):
        reply = anon.post("/register", json={"client_name": "x", "redirect_uris": [uri]})
        assert reply.status_code == 400 and reply.json()["error"] in ("invalid_redirect_uri",
                                                                      "invalid_client_metadata"), (uri, reply.text)
    assert anon.post("/register", content=b"not json").json()["error"] == "invalid_client_metadata"
    assert anon.post("/register", json=[1]).json()["error"] == "invalid_client_metadata"
    assert anon.post("/register", json={"client_name": "no redirect"}).status_code == 400


def test_a_confidential_client_gets_a_secret_and_must_use_it(anon, browser):
    client = register(anon, token_endpoint_auth_method="client_secret_post")
    assert client["client_secret"]
    verifier, challenge = pkce()
    back = consent(browser, authorization_url(client["client_id"], challenge))
    no_secret = exchange(anon, client["client_id"], back["code"], verifier)
    assert no_secret.json()["error"] == "invalid_client"
    back = consent(browser, authorization_url(client["client_id"], challenge))
    ok = exchange(anon, client["client_id"], back["code"], verifier, client_secret=client["client_secret"])
    assert ok.status_code == 200, ok.text
