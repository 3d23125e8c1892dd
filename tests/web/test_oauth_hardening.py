"""The OAuth server fails safe (issue 40), on both stores, in process: a refused refresh leaves its
token unspent, errors redirect only where the spec allows, malformed requests are 400s with an
OAuth error body, registration refuses what can't be shown or followed safely, and its bounds."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from navmcp.identity import add_user
from navmcp.web import create_app
from oauthflow import authorization_url, consent, exchange, pkce, refresh, register
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
