"""The OAuth server fails safe (issue 40), on both stores, in process: a refused refresh leaves its
token unspent, errors redirect only where the spec allows, malformed requests are 400s with an
OAuth error body, registration refuses what can't be shown or followed safely, and its bounds."""

from __future__ import annotations

import json
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from adversarial import figures
from navmcp.identity import add_user
from navmcp.web import create_app
from oauthflow import authorization_url, consent, exchange, pkce, redirect_query, refresh, register
from webclient import Client, sign_in


@pytest.fixture
def oauth(any_app):
    """An anonymous client and a signed-in person's browser on the web app over either store."""
    person = add_user(any_app.store, "alice")
    web = create_app(any_app)
    anon, browser = Client(web), sign_in(web, any_app, person["id"])
    yield SimpleNamespace(app=any_app, web=web, anon=anon, browser=browser, person=person)
    anon.close()
    browser.close()


def _tokens(oauth, scope: str = "read write", **registration):
    client = register(oauth.anon, **registration)
    verifier, challenge = pkce()
    back = consent(oauth.browser, authorization_url(client["client_id"], challenge, scope=scope))
    reply = exchange(oauth.anon, client["client_id"], back["code"], verifier)
    assert reply.status_code == 200, reply.text
    return client, reply.json()


# --- item 8: a refused refresh spends nothing ----------------------------------------------------


def test_a_refused_refresh_leaves_the_token_for_the_corrected_retry(oauth):
    client, tokens = _tokens(oauth, scope="read")
    other = register(oauth.anon, name="Other App")
    wider = refresh(oauth.anon, client["client_id"], tokens["refresh_token"], scope="read write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope", wider.text
    stolen = refresh(oauth.anon, other["client_id"], tokens["refresh_token"])
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant", stolen.text
    assert "another client" in stolen.json()["error_description"]
    elsewhere = refresh(oauth.anon, client["client_id"], tokens["refresh_token"], resource="https://evil.example/mcp")
    assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "invalid_target", elsewhere.text
    retried = refresh(oauth.anon, client["client_id"], tokens["refresh_token"])  # not reuse: nothing was spent
    assert retried.status_code == 200, retried.text
    assert retried.json()["scope"] == "read"
    again = refresh(oauth.anon, client["client_id"], retried.json()["refresh_token"])
    assert again.status_code == 200, again.text  # the grant lives on
    # and reuse is still reuse: the spent token revokes the family
    reused = refresh(oauth.anon, client["client_id"], tokens["refresh_token"])
    assert reused.status_code == 400 and "already used" in reused.json()["error_description"]


# --- item 6: no anonymous 500 on the OAuth endpoints (fuzzed) -----------------------------------

_NASTY = st.sampled_from(["\\", "\t", "\r\n", "\x00", "\"", "é", "\u202e", "%", "%00", "'", " ", "#", "\x7f",
                          "https://a.example/cb", "http://127.0.0.1:9999/callback", "read write", "code", "S256",
                          "authorization_code", "refresh_token", "none", "[", "{}", "\ud800x"[1:]])
_VALUE = st.one_of(st.text(max_size=40), _NASTY, st.lists(_NASTY, max_size=4).map("".join))
_PARAMS = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method",
           "resource", "grant_type", "code", "code_verifier", "refresh_token", "token", "token_type_hint",
           "client_secret", "x"]
_FORM = st.lists(st.tuples(st.sampled_from(_PARAMS), _VALUE), max_size=8)
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _VALUE),
                     lambda inner: st.one_of(st.lists(inner, max_size=4),
                                             st.dictionaries(st.sampled_from(
                                                 ["client_name", "redirect_uris", "grant_types", "response_types",
                                                  "token_endpoint_auth_method", "scope", "client_uri", "logo_uri",
                                                  "contacts", "jwks", "software_id", "x"]), inner, max_size=6)),
                     max_leaves=12)
FUZZ = settings(max_examples=figures.pick(80, 2000), deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


def _well_formed(reply, path: str) -> None:
    assert reply.status_code < 500, (path, reply.status_code, reply.text[:300])
    if path == "/authorize":
        assert reply.status_code in (200, 302, 303, 400, 401, 403, 405, 429), reply.status_code
        return
    if reply.status_code >= 400:
        body = reply.json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str), (path, reply.text[:300])


@FUZZ
@given(form=_FORM, basic=st.one_of(st.none(), st.binary(max_size=30), _VALUE.map(str.encode)),
       path=st.sampled_from(["/authorize", "/token", "/revoke"]), signed_in=st.booleans())
def test_fuzzed_authorize_token_and_revoke_never_answer_500(oauth, logged_errors, form, basic, path, signed_in):
    import base64

    http = oauth.browser if signed_in else oauth.anon
    if path == "/authorize":
        query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in form)
        replies = [http.get(f"/authorize?{query}")]
        if signed_in:
            replies.append(http.post(f"/authorize?{query}", data={"decision": "allow", "csrf_token": "x"},
                                     headers={"Origin": "http://127.0.0.1"}))
    else:
        headers = {"Authorization": "Basic " + base64.b64encode(basic).decode()} if basic is not None else {}
        replies = [http.post(path, content="&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in form),
                             headers={"Content-Type": "application/x-www-form-urlencoded", **headers})]
    for reply in replies:
        _well_formed(reply, path)
    assert not logged_errors


@FUZZ
@given(body=st.one_of(_JSON.map(lambda v: json.dumps(v, ensure_ascii=False)),
                      st.integers(1, 1200).map(lambda n: '{"client_name": ' + "[" * n + "]" * n + "}"),
                      st.integers(1, 1200).map(lambda n: "{\"x\": " * n + "1" + "}" * n),
                      st.binary(max_size=60).map(lambda b: b.decode("latin-1"))),
       uri=st.one_of(st.none(), _VALUE))
def test_fuzzed_registration_never_answers_500(oauth, logged_errors, monkeypatch, body, uri):
    monkeypatch.setenv("NAVMCP_OAUTH_REGISTRATIONS_PER_ADDRESS", "off")  # every example reaches the checks
    if uri is not None:
        body = json.dumps({"client_name": "Fuzz", "redirect_uris": [uri], "token_endpoint_auth_method": "none"})
    reply = oauth.anon.post("/register", content=body.encode("utf-8", "surrogatepass"),
                            headers={"Content-Type": "application/json"})
    _well_formed(reply, "/register")
    assert not logged_errors


@pytest.mark.parametrize("uri", ["https://a.example/c\tb", "https://a.example/c\\b", "http://127.0.0.1:99\\x/cb",
                                 "https://a.example/c\r\nb", "https://a.example/c\nb", "https://a.example/c b"])
def test_registration_refuses_a_redirect_uri_with_a_control_character_or_backslash(oauth, uri):
    reply = oauth.anon.post("/register", json={"client_name": "X", "redirect_uris": [uri],
                                               "token_endpoint_auth_method": "none"})
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_redirect_uri", reply.text


def test_deeply_nested_registration_json_is_a_400(oauth):
    body = '{"client_name": ' + "[" * 1500 + "]" * 1500 + ', "redirect_uris": ["https://a.example/cb"]}'
    reply = oauth.anon.post("/register", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_client_metadata", reply.text


@pytest.mark.parametrize("redirect_uri", ["https://a.example\\cb", "https://a.example/cb\\", "http://127.0.0.1:99\\@e/cb",
                                          "https://a.example/cb\r\n", "https://a.example/é"])
def test_authorize_with_a_backslash_in_redirect_uri_is_a_page_not_a_500(oauth, redirect_uri):
    client = register(oauth.anon, redirect_uri="https://a.example/cb")
    for http in (oauth.anon, oauth.browser):
        reply = http.get(authorization_url(client["client_id"], pkce()[1], redirect_uri=redirect_uri))
        assert reply.status_code == 400 and "location" not in reply.headers, reply.text[:300]
        assert "invalid_request" in reply.text


# --- item 7: errors go back only to a client the person has seen ----------------------------------


def test_an_error_redirects_only_to_a_client_the_signed_in_person_allowed_before(oauth):
    trap = "https://attacker.example/landing"
    client = register(oauth.anon, redirect_uri=trap)
    no_pkce = authorization_url(client["client_id"], None, redirect_uri=trap, code_challenge_method=None)
    bad_scope = authorization_url(client["client_id"], pkce()[1], redirect_uri=trap, scope="admin")
    for url in (no_pkce, bad_scope):
        for http in (oauth.anon, oauth.browser):  # nobody signed in; signed in but never allowed it
            reply = http.get(url)
            assert reply.status_code == 400 and "location" not in reply.headers, reply.text[:300]
            assert "attacker.example" not in reply.text
    consent(oauth.browser, authorization_url(client["client_id"], pkce()[1], redirect_uri=trap))  # allowed once
    back = oauth.browser.get(no_pkce)
    assert back.status_code == 303 and back.headers["location"].startswith(trap + "?")
    assert redirect_query(back)["error"] == "invalid_request" and redirect_query(back)["iss"] == "http://127.0.0.1"
    assert oauth.anon.get(no_pkce).status_code == 400  # still a page for anyone not signed in
    # Deny on the consent page goes back to the client: the person saw it there
    other = register(oauth.anon, name="Denied App", redirect_uri=trap)
    denied = consent(oauth.browser, authorization_url(other["client_id"], pkce()[1], redirect_uri=trap), "deny")
    assert denied["error"] == "access_denied"


# --- item 10: names that can't pretend to be another app -------------------------------------------


def test_a_client_name_is_stored_as_titles_are_and_look_alikes_are_flagged(oauth):
    for name in ("Cl\u202eedua", "Claude\u2066", "\u200b\u2060"):
        reply = oauth.anon.post("/register", json={"client_name": name, "redirect_uris": ["https://a.example/cb"],
                                                   "token_endpoint_auth_method": "none"})
        assert reply.status_code == 400 and reply.json()["error"] == "invalid_client_metadata", (name, reply.text)
    hidden = register(oauth.anon, name="Cla\u200bu\u00adde  Desktop")
    assert hidden["client_name"] == "Claude Desktop"
    page = oauth.browser.get(authorization_url(hidden["client_id"], pkce()[1])).text
    assert "Allow <bdi>Claude Desktop</bdi> to use navmcp" in page and "\u200b" not in page
    assert "imitating another app" not in page
    fake = register(oauth.anon, name="\u0421laude")  # a Cyrillic С
    page = oauth.browser.get(authorization_url(fake["client_id"], pkce()[1])).text
    assert "imitating another app" in page
    honest = register(oauth.anon, name="Café Ёлка")
    assert "imitating another app" not in oauth.browser.get(authorization_url(honest["client_id"], pkce()[1])).text


def test_a_nul_or_non_ascii_value_at_token_and_revoke_is_invalid_request(oauth):
    import base64

    for path, form in (("/token", {"grant_type": "refresh_token", "refresh_token": "x\x00", "client_id": "c"}),
                       ("/revoke", {"token": "\x00", "client_id": "c"}), ("/revoke", {"token": "t", "client_id": "é"})):
        reply = oauth.anon.post(path, data=form)
        assert reply.status_code == 400 and reply.json()["error"] == "invalid_request", (path, reply.text)
    for credentials in (b"\xff\xfe:x", b"nocolon", b"a\x00:b"):
        reply = oauth.anon.post("/revoke", data={"token": "t"},
                                headers={"Authorization": "Basic " + base64.b64encode(credentials).decode()})
        assert reply.status_code in (400, 401) and reply.json()["error"] in ("invalid_client", "invalid_request"), \
            reply.text
    assert oauth.anon.post("/revoke", data={"token": "t"}, headers={"Authorization": "Basic "}).status_code == 401


# --- item 9: scope step-up -----------------------------------------------------------------------------


def test_a_client_registered_for_read_steps_up_to_write_when_the_person_allows_it(oauth):
    from oauthflow import mcp

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_action", "arguments": {"action": "create_studio", "url": "/",
                                                "params": {"handle": "stepped", "name": "Stepped"}}}}

    def act(access_token: str):
        session = mcp(oauth.anon, access_token).headers["mcp-session-id"]
        return mcp(oauth.anon, access_token, call, session)

    client = register(oauth.anon, scope="read")
    verifier, challenge = pkce()
    first = exchange(oauth.anon, client["client_id"],
                     consent(oauth.browser, authorization_url(client["client_id"], challenge, scope=None))["code"],
                     verifier).json()
    assert first["scope"] == "read"  # asked for nothing: what it registered
    refused = act(first["access_token"])
    assert refused.status_code == 403 and "consent page" in refused.text
    verifier, challenge = pkce()
    url = authorization_url(client["client_id"], challenge, scope="read write")
    page = oauth.browser.get(url).text
    assert "<strong>write</strong>" in page  # the person sees what they would allow
    stepped = exchange(oauth.anon, client["client_id"], consent(oauth.browser, url)["code"], verifier).json()
    assert stepped["scope"] == "read write", stepped
    done = act(stepped["access_token"])
    assert done.status_code == 200 and done.json()["result"]["isError"] is False, done.text


# --- item 2: registration bounds ------------------------------------------------------------------------


def _from(web, address: str):
    """An in-process client whose requests come from `address`."""
    import httpx

    client = Client(web)
    client.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=web, client=(address, 4321)),
                                    base_url="http://127.0.0.1")
    return client


def _metadata(**extra) -> dict:
    return {"client_name": "Bounded", "redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "none",
            **extra}


def test_registration_metadata_is_capped(oauth):
    big = oauth.anon.post("/register", json=_metadata(client_uri="https://a.example/" + "x" * 4200))
    assert big.status_code == 400 and big.json()["error"] == "invalid_client_metadata" and "4096" in big.text
    many = oauth.anon.post("/register", json=_metadata(redirect_uris=[f"https://a.example/cb{i}" for i in range(6)]))
    assert many.status_code == 400 and many.json()["error"] == "invalid_redirect_uri" and "at most 5" in many.text
    unknown = oauth.anon.post("/register", json=_metadata(jwks={"keys": []}, extra_field="x" * 100))
    assert unknown.status_code == 201 and "jwks" not in unknown.json() and "extra_field" not in unknown.json()


def test_registrations_are_limited_per_address_and_in_all(oauth, monkeypatch):
    monkeypatch.setenv("NAVMCP_OAUTH_REGISTRATIONS_PER_ADDRESS", "3/1h")
    monkeypatch.setenv("NAVMCP_OAUTH_REGISTRATIONS", "5/1h")
    web = create_app(oauth.app)
    one, two, three = _from(web, "10.0.0.1"), _from(web, "10.0.0.2"), _from(web, "10.0.0.3")
    try:
        assert [one.post("/register", json=_metadata()).status_code for _ in range(4)] == [201, 201, 201, 429]
        refused = one.post("/register", json=_metadata())
        assert refused.json()["error"] == "temporarily_unavailable" and int(refused.headers["retry-after"]) >= 1
        assert "this address" in refused.json()["error_description"]
        assert [two.post("/register", json=_metadata()).status_code for _ in range(3)] == [201, 201, 429]
        in_all = three.post("/register", json=_metadata())
        assert in_all.status_code == 429 and "this server" in in_all.json()["error_description"]
    finally:
        for c in (one, two, three):
            c.close()


def test_a_client_that_never_got_a_grant_expires(oauth, store_kind, request):
    from navmcp.oauth import clients

    unused = register(oauth.anon, name="Never Used")
    used, _ = _tokens(oauth)
    fresh = register(oauth.anon, name="Fresh")
    stale = "2020-01-01T00:00:00.000000Z"
    ids = (unused["client_id"], used["client_id"])
    if store_kind == "postgres":  # the app role reaches oauth_clients only through its functions
        import psycopg

        with psycopg.connect(request.getfixturevalue("pg_database").admin_url, autocommit=True) as conn:
            conn.execute("UPDATE oauth_clients SET created_at = %s WHERE client_id = ANY(%s)", (stale, list(ids)))
    else:
        with oauth.app.store.write() as tx:
            for client_id in ids:
                tx.execute("UPDATE oauth_clients SET created_at = ? WHERE client_id = ?", (stale, client_id))
    register(oauth.anon, name="Next")  # registering prunes the expired
    assert clients.load_registered(oauth.app.store, unused["client_id"]) is None
    assert clients.load_registered(oauth.app.store, used["client_id"]) is not None  # a grant names it
    assert clients.load_registered(oauth.app.store, fresh["client_id"]) is not None  # not 24 hours old


def test_the_json_endpoints_answer_their_faults_in_json(oauth):
    for path, kind in (("/register", "application/json"), ("/token", "application/x-www-form-urlencoded"),
                       ("/revoke", "application/x-www-form-urlencoded")):
        reply = oauth.anon.post(path, content=b"x" * (3 * 1024 * 1024), headers={"Content-Type": kind})
        assert reply.status_code == 413 and reply.headers["content-type"] == "application/json", (path, reply.text[:200])
        assert isinstance(reply.json()["error"], str)
