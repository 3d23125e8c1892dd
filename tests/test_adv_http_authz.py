"""The authorization matrix and the token attacks through the HTTP surfaces: pages with a Bearer
token (every rendition), the action API, and /mcp. The expectations are the ones of the tools
layer (test_adv_authz.py, generated from the page and action tables): a page someone may not see
is a 404 that leaks nothing, a bad token is a 401 with WWW-Authenticate naming the reason, a bad
Bearer token is never downgraded to the cookie session or to the owner, and nothing refused writes.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from adversarial import figures, world
from adversarial.http import HEADERS, INIT, Http, HttpAgent, WebProcess
from navmcp.web import create_app
from navmcp.web.auth import create_login_link
from test_adv_authz import ACTION_EXPECT, PAGE_EXPECT, ROLES, SETUP, digest, params_of, token_of, url_of
from test_adv_tokens import ROOT, attacks

SECRETS = ("Adversarial", "A note", "Which?", "Do it", "Red")
ACCEPT = {"json": "application/json", "markdown": "text/markdown", "html": "text/html"}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("httpauthz") / "home")


@pytest.fixture(scope="module")
def served(template):
    app = template.app()
    web = create_app(app)
    http = Http(web)
    yield web, http
    http.close()
    app.store.close()


@pytest.mark.parametrize("page", sorted(PAGE_EXPECT))
def test_page_matrix_over_http(template, served, page):
    web, http = served
    key, allowed = PAGE_EXPECT[page]
    url = url_of(template, key)
    for role in ROLES:
        for rendition, accept in ACCEPT.items():
            reply = http.request("GET", url, headers={"authorization": f"Bearer {token_of(template, role)}",
                                                      "accept": accept})
            figures.add("authz.http.page_checks")
            if role in allowed:
                assert reply.status_code == 200, (role, url, rendition, reply.text[:300])
                if rendition == "json":
                    listed = {a["name"] for a in reply.json()["actions"]}
                    may = {name for (p, name), (_, _, who) in ACTION_EXPECT.items() if p == page and role in who}
                    assert listed <= may, f"{page} lists {listed - may} to {role} over HTTP"
            elif role == "invalid":
                assert reply.status_code == 401, (url, rendition, reply.status_code)
                assert 'error="invalid_token"' in reply.headers["www-authenticate"]
            else:
                assert reply.status_code == 404, (role, url, rendition, reply.status_code)
                assert not [s for s in SECRETS if s in reply.text], (role, url, reply.text[:300])


@pytest.mark.parametrize("page,action", sorted(ACTION_EXPECT))
def test_action_matrix_over_the_action_api(template, tmp_path, page, action):
    key, params, allowed = ACTION_EXPECT[(page, action)]
    for role in ROLES:
        w = world.copy(template, tmp_path / role)
        app = w.app()
        http = Http(create_app(app))
        try:
            auth = {"authorization": f"Bearer {token_of(w, role)}"}
            url = url_of(w, key).rstrip("/")
            if (page, action) in SETUP and role in allowed:
                steps = SETUP[(page, action)]
                for name, before_params in steps if isinstance(steps, list) else [steps]:
                    assert http.request("POST", f"{url}/actions/{name}", json=before_params,
                                        headers=auth).status_code == 200
            before = digest(w.home)
            reply = http.request("POST", f"{url}/actions/{action}", json=params_of(w, params), headers=auth)
            figures.add("authz.http.action_checks")
            if role in allowed:
                assert reply.status_code == 200 and reply.json()["ok"] is True, (role, action, reply.text[:300])
                assert digest(w.home) != before
            else:
                assert digest(w.home) == before, f"refused {action} by {role} still wrote"
                if role == "invalid":
                    assert reply.status_code == 401 and "invalid_token" in reply.headers["www-authenticate"]
                elif role == "outsider" and page not in ("home", "inbox", "whoami"):  # pages of your own
                    assert reply.status_code == 404 and not [s for s in SECRETS if s in reply.text], reply.text
                else:
                    assert reply.status_code in (403, 409) and "not available" in reply.json()["message"], reply.text
        finally:
            http.close()
            app.store.close()


def test_matrix_sample_over_mcp(template, served):
    """navigate over /mcp (one HTTP session per role): the same verdicts as the tools layer."""
    web, http = served
    for role in ("admin", "member", "outsider"):
        agent = HttpAgent(web, template.tokens[role], f"authz-{role}")
        try:
            for page, (key, allowed) in PAGE_EXPECT.items():
                result = agent.call("navigate", url=url_of(template, key))
                assert result["isError"] is (role not in allowed), (role, page)
                if role not in allowed:
                    assert not [s for s in SECRETS if s in result["content"][0]["text"]]
                figures.add("authz.http.mcp_checks")
            pin = agent.call("execute_action", action="pin", url=template.urls["note"])
            assert pin["isError"] is (role != "admin"), (role, pin)
            if role == "admin":
                agent.call("execute_action", action="unpin", url=template.urls["note"])
        finally:
            agent.close()
    # A session belongs to the token that opened it: another user's token can't use it.
    agent = HttpAgent(web, template.tokens["admin"])
    try:
        stolen = http.request("POST", "/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                              headers={**HEADERS, "authorization": f"Bearer {template.tokens['member']}",
                                       "mcp-session-id": agent.session})
        assert stolen.status_code == 404
    finally:
        agent.close()


def test_bad_bearer_is_never_downgraded(template, served):
    """A browser with a valid cookie session that also sends a bad Bearer token is refused, not
    served as the cookie's user (nor as the local owner)."""
    web, http = served
    browser = Http(web)
    try:
        link = create_login_link(web.app.store, template.users["admin"]["id"], "http://127.0.0.1")
        assert browser.sign_in(link).status_code == 303
        assert browser.request("GET", "/studios/adv").status_code == 200
        for header in ("Bearer forged.token.x", "Basic YWRtaW46YWRtaW4=", "Bearer", "bearer  "):
            reply = browser.request("GET", "/studios/adv.md", headers={"authorization": header})
            assert reply.status_code == 401 and "Adversarial" not in reply.text, (header, reply.status_code)
            act = browser.request("POST", "/actions/create_studio", headers={"authorization": header},
                                  json={"handle": "pwned", "name": "P"})
            assert act.status_code == 401, (header, act.status_code)
            figures.add("authz.http.downgrade_checks")
        with web.app.store.read() as tx:
            assert tx.scalar("SELECT count(*) FROM studios WHERE handle = 'pwned'") == 0
    finally:
        browser.close()


def _check_refusals(http, w, cases, writes_before, count_writes) -> None:
    for name, (token, reason) in cases.items():
        auth = {"authorization": f"Bearer {token}"}
        init = http.request("POST", "/mcp", content=json.dumps(INIT), headers={**HEADERS, **auth})
        assert init.status_code == 401, (name, init.status_code)
        challenge = init.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="navmcp"'), (name, challenge)
        page = http.request("GET", "/whoami.json", headers=auth)
        assert page.status_code == 401, (name, page.text[:300])
        if token:  # "Bearer " with nothing after it is answered as no token at all on /mcp
            assert 'error="invalid_token"' in challenge, (name, challenge)
            assert reason.replace('"', "'") in challenge or reason in init.json()["error"]["message"], (name, challenge)
            assert reason in page.json()["message"], (name, page.text[:300])
        assert "@" not in page.json()["message"]
        act = http.request("POST", "/actions/create_studio", headers=auth, json={"handle": "pwned", "name": "P"})
        assert act.status_code == 401, (name, act.status_code)
        figures.add("tokens.http.attacks_tried", 3)
    assert count_writes() == writes_before


def test_token_attacks_over_http(template, served):
    web, http = served
    app = web.app

    def writes() -> int:
        with app.store.read() as tx:
            return tx.scalar("SELECT count(*) FROM audit WHERE outcome = 'ok'")

    _check_refusals(http, template, attacks(template, app.secret), writes(), writes)


def test_token_attacks_and_deleted_user_on_a_real_server(template, tmp_path):
    w = world.copy(template, tmp_path / "home")
    app = w.app()
    cases = {k: v for k, v in attacks(w, app.secret).items()
             if k not in ("huge", "empty string")}  # a 200 kB header: see below; httpx won't send "Bearer "
    server = WebProcess(w.home)
    http = Http(server.base)
    try:
        _check_refusals(http, w, cases, 0, lambda: 0)
        huge = http.request("GET", "/whoami.json", headers={"authorization": "Bearer " + "a" * 200_000})
        assert huge.status_code in (400, 401, 431), huge.status_code  # h11 refuses a head over 16 KiB
        # A member's open MCP session stops working as soon as the member is deleted.
        agent = HttpAgent(server.base, w.tokens["member"])
        assert agent.call("navigate", url="/whoami")["isError"] is False
        env = {**server.env, "PATH": "/usr/bin:/bin"}
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "navmcp"), "user", "delete", "member"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        ghost = agent.http.request("POST", "/mcp", content=b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
                                   headers=agent.headers)
        assert ghost.status_code == 401 and "deleted" in ghost.headers["www-authenticate"]
        page = http.request("GET", "/whoami.json", headers={"authorization": f"Bearer {w.tokens['member']}"})
        assert page.status_code == 401 and "deleted" in page.json()["message"]
        agent.http.close()
        figures.add("tokens.http.attacks_tried", 2)
    finally:
        http.close()
        app.store.close()
        assert server.stop() == 0
    assert not server.errors(), server.stderr_text()[-3000:]
