"""OAuth across two `navmcp web` processes on one PostgreSQL database (as behind a load
balancer, both named by NAVMCP_PUBLIC_URL): authorize on one, exchange and call on the other,
refresh on either; a reused refresh token and a revocation on one are refused by both. And the
row-level security of the OAuth tables: a person reaches only their own grants."""

from __future__ import annotations

import time

import httpx
import psycopg
import pytest

from deadlines import HANG
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user
from oauthflow import INIT, authorization_url, consent, exchange, mcp, pkce, refresh, register
from pg_web import PgWebServer
from webclient import follow_login_link
from webproc import free_port

CREATE = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "execute_action", "arguments": {"action": "create_studio", "url": "/",
                                            "params": {"handle": "pgoauth", "name": "PG OAuth"}}}}


@pytest.fixture
def people(tmp_path, pg_url):
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=pg_url, token=None))
    alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
    app.store.close()
    return {"home": home, "url": pg_url, "alice": alice, "bob": bob}


@pytest.fixture
def pair(people):
    port = free_port()
    env = {"NAVMCP_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    servers = [PgWebServer(people["home"], people["url"], port=port, env=env),
               PgWebServer(people["home"], people["url"], env=env)]
    yield servers
    for server in servers:
        if server.proc.poll() is None:
            server.stop()


def test_authorize_on_one_process_token_and_calls_on_the_other(people, pair, pg_database):
    a, b = pair
    with httpx.Client(base_url=a.base, timeout=60) as browser_a, \
            httpx.Client(base_url=a.base, timeout=60) as agent_a, httpx.Client(base_url=b.base, timeout=60) as agent_b:
        link = a.navmcp("login-link", "alice", "--base-url", a.base)
        assert follow_login_link(browser_a, link).status_code == 303
        client = register(agent_b, name="Roaming Agent")  # registered on B, known to A
        verifier, challenge = pkce()
        back = consent(browser_a, authorization_url(client["client_id"], challenge))
        assert back["iss"] == a.base
        tokens = exchange(agent_b, client["client_id"], back["code"], verifier)
        assert tokens.status_code == 200, tokens.text
        tokens = tokens.json()
        init = mcp(agent_b, tokens["access_token"])
        assert init.status_code == 200, init.text
        made = mcp(agent_b, tokens["access_token"], CREATE, init.headers["mcp-session-id"])
        assert made.status_code == 200 and made.json()["result"]["isError"] is False, made.text
        # the session and the token work on A too
        assert mcp(agent_a, tokens["access_token"], {**CREATE, "id": 3}, init.headers["mcp-session-id"]).status_code == 200
        # the code was spent on B: A refuses it
        assert exchange(agent_a, client["client_id"], back["code"], verifier).json()["error"] == "invalid_grant"

    with httpx.Client(base_url=a.base, timeout=60) as agent_a, httpx.Client(base_url=b.base, timeout=60) as agent_b, \
            httpx.Client(base_url=a.base, timeout=60) as browser_a:
        follow_login_link(browser_a, a.navmcp("login-link", "alice", "--base-url", a.base))
        client = register(agent_a, name="Rotating Agent")
        verifier, challenge = pkce()
        back = consent(browser_a, authorization_url(client["client_id"], challenge))
        first = exchange(agent_a, client["client_id"], back["code"], verifier).json()
        second = refresh(agent_a, client["client_id"], first["refresh_token"])  # rotated on A
        assert second.status_code == 200, second.text
        reused = refresh(agent_b, client["client_id"], first["refresh_token"])  # the old one, on B
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        assert refresh(agent_a, client["client_id"], second.json()["refresh_token"]).json()["error"] == "invalid_grant"
        assert _refused_within(agent_a, second.json()["access_token"], HANG)

        # a third app, revoked by alice on Connected apps of B: A refuses its token within seconds
        client = register(agent_a, name="Revoked Agent")
        verifier, challenge = pkce()
        back = consent(browser_a, authorization_url(client["client_id"], challenge))
        tokens = exchange(agent_a, client["client_id"], back["code"], verifier).json()
        assert mcp(agent_a, tokens["access_token"]).status_code == 200
        with httpx.Client(base_url=b.base, timeout=60, cookies=browser_a.cookies) as browser_b:
            page = browser_b.get("/connected-apps")
            assert page.status_code == 200 and "Revoked Agent" in page.text
            assert "Roaming Agent" not in page.text  # its code was presented twice: that revoked it
            import re

            csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
            revoked = browser_b.post("/connected-apps", data={"csrf_token": csrf, "client_id": client["client_id"]},
                                     headers={"Origin": b.base})
            assert revoked.status_code == 303
            after = browser_b.get("/connected-apps").text
            assert "Revoked Revoked Agent" in after and 'aria-label="Revoke Revoked Agent"' not in after
        assert mcp(agent_b, tokens["access_token"]).status_code == 401  # B revoked it: at once
        assert _refused_within(agent_a, tokens["access_token"], HANG)  # A once its cache's few seconds pass


def _refused_within(http, access_token: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if mcp(http, access_token, INIT).status_code == 401:
            return True
        time.sleep(0.25)
    return False


def test_rls_a_person_reaches_only_their_own_grants(people, pg_database):
    from navmcp.oauth import grants

    app = App(Config(home=people["home"], database_url=people["url"], token=None))
    try:
        alice, bob = people["alice"], people["bob"]
        code = grants.new_code()
        grant_id = grants.approve(app.store, code, alice["id"], "c1", "C1", "read write", "http://x/mcp",
                                  "http://127.0.0.1/cb", "x" * 43)
        assert grants.take_code(app.store, code)["problem"] is None
        assert [a["client_id"] for a in grants.connected_apps(app.store, alice["id"])] == ["c1"]
        assert grants.connected_apps(app.store, bob["id"]) == []
        assert not grants.revoke_grant(app.store, bob["id"], grant_id)  # not his
        assert grants.revoke_client(app.store, bob["id"], "c1") == 0
        with app.store.read(user_id=bob["id"]) as tx:  # a query that forgets its filter
            assert tx.all("SELECT * FROM oauth_grants") == []
        with app.store.read() as tx:  # nobody
            assert tx.all("SELECT * FROM oauth_grants") == []
        for table in ("oauth_codes", "oauth_refresh_tokens", "oauth_clients"):  # reached only through the SECURITY DEFINER functions
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                with app.store.read(user_id=alice["id"]) as tx:
                    tx.all(f"SELECT * FROM {table}")
        with pytest.raises(psycopg.Error, match="row-level security"):  # bob can't approve in alice's name
            with app.store.write(user_id=bob["id"]) as tx:
                tx.execute("INSERT INTO oauth_grants (id, user_id, client_id, client_name, scope, resource, created_at)"
                           " VALUES ('g2', ?, 'c2', 'C2', 'read', 'http://x/mcp', 'now')", (alice["id"],))
    finally:
        app.store.close()
