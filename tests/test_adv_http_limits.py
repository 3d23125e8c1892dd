"""Rate limits over HTTP: /mcp tool calls (isError naming when to retry, as on stdio), pages, the
action API and HTML forms (429 + Retry-After), all audited; floods of refused tokens are answered
429 per client IP before any token is verified. Off by default."""

from __future__ import annotations

import re
import sqlite3

import httpx
import pytest

from adversarial import figures, world
from adversarial.http import HEADERS, Http, HttpAgent, WebProcess
from navmcp.ratelimit import parse
from navmcp.web import create_app
from navmcp.web.auth import create_login_link


@pytest.fixture(scope="module")
def adv_world(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("httplimits") / "home")


def _audited(home) -> list[tuple]:
    conn = sqlite3.connect(home / "navmcp.db")
    try:
        return conn.execute("SELECT user_id, action, url, outcome FROM audit WHERE outcome LIKE 'rate limited:%' "
                            "ORDER BY id").fetchall()
    finally:
        conn.close()


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_mcp_tool_calls_are_limited_like_stdio(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app(rate_limit="3/60s")
    web = create_app(app)
    agent = HttpAgent(web, w.tokens["member"])
    try:
        for _ in range(3):
            assert agent.call("navigate", url="/studios/adv")["isError"] is False
        result = agent.call("execute_action", action="add_comment", url=w.urls["note"], params={"body": "too many"})
        assert result["isError"] is True and "retry in 20 seconds" in result["content"][0]["text"], result
        rows = _audited(w.home)
        assert [(r[0], r[1], r[2]) for r in rows] == [(w.users["member"]["id"], "add_comment", w.urls["note"])]
        # The same token's page reads share the bucket: already empty, so a page is a 429 too.
        page = agent.http.request("GET", "/studios/adv.md", headers=_bearer(w.tokens["member"]))
        assert page.status_code == 429 and page.headers["retry-after"] == "20", page.text
        figures.add("ratelimit.http.refusals", 2)
    finally:
        agent.close()
        app.store.close()


def test_pages_actions_and_forms_answer_429_with_retry_after(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app(rate_limit="2/60s")
    web = create_app(app)
    http = Http(web)
    try:
        auth = _bearer(w.tokens["author"])
        for rendition in ("/studios/adv.md", "/studios/adv.json"):
            assert http.request("GET", rendition, headers=auth).status_code == 200
        md = http.request("GET", "/studios/adv.md", headers=auth)
        assert md.status_code == 429 and md.headers["retry-after"] == "30"
        assert md.text.startswith("# Error 429") and "retry in 30 seconds" in md.text
        api = http.request("POST", w.urls["note"] + "/actions/add_comment", headers=auth, json={"body": "x"})
        assert api.status_code == 429 and api.headers["retry-after"] == "30"
        assert api.json()["status"] == 429 and "retry in 30 seconds" in api.json()["message"]
        listing = http.request("GET", w.urls["note"] + "/actions", headers=auth)
        assert listing.status_code == 429

        # A browser (cookie session + CSRF): its own bucket (per user), the form answered with an HTML 429.
        browser = Http(web)
        link = create_login_link(app.store, w.users["member"]["id"], "http://127.0.0.1")
        assert browser.sign_in(link).status_code == 303
        page = browser.request("GET", w.urls["note"])
        assert page.status_code == 200
        csrf = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text).group(1)
        posted = browser.request("POST", w.urls["note"] + "/actions/add_comment",
                                 data={"csrf_token": csrf, "body": "from the form"})
        assert posted.status_code == 303  # the second call of the member's bucket
        again = browser.request("POST", w.urls["note"] + "/actions/add_comment",
                                data={"csrf_token": csrf, "body": "one too many"})
        assert again.status_code == 429 and again.headers["retry-after"] == "30"
        assert again.headers["content-type"].startswith("text/html") and "retry in 30 seconds" in again.text
        browser.close()
        with app.store.read() as tx:
            bodies = [r["body"] for r in tx.all("SELECT body FROM comments")]
        assert "from the form" in bodies and "one too many" not in bodies and "x" not in bodies
        rows = _audited(w.home)
        assert len(rows) == 4 and {r[1] for r in rows} == {"navigate", "add_comment"}
        assert all("retry in 30 seconds" in r[3] for r in rows)
        figures.add("ratelimit.http.refusals", 4)
    finally:
        http.close()
        app.store.close()


def test_bad_token_flood_is_answered_429_per_ip_and_genuine_tokens_still_pass(adv_world, tmp_path, monkeypatch):
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app()  # per-token limits off; only the bad-token limit
    web = create_app(app)
    web.site.limits.bad_tokens = parse("5/60s")
    attacker = Http(web)  # httpx's ASGITransport reports client 127.0.0.1
    other = httpx.AsyncClient(transport=httpx.ASGITransport(app=web, client=("10.0.0.9", 1234)),
                              base_url="http://127.0.0.1")
    try:
        for n in range(5):
            bad = _bearer(f"forged.{n}.token")
            assert attacker.request("GET", "/studios/adv.md", headers=bad).status_code == 401
        calls = []
        real_authenticate = app.authenticate
        monkeypatch.setattr(app, "authenticate", lambda token: calls.append(token) or real_authenticate(token))
        for target in ("/studios/adv.md", "/studios/adv/actions"):
            flood = attacker.request("GET", target, headers=_bearer("forged.again"))
            assert flood.status_code == 429 and flood.headers["retry-after"] == "12", flood.text
        mcp = attacker.request("POST", "/mcp", headers={**HEADERS, **_bearer("forged")}, content=b"{}")
        assert mcp.status_code == 429 and mcp.json()["error"]["message"].startswith("Too Many Requests")
        login = attacker.request("GET", "/login?token=guess")
        assert login.status_code == 429
        assert calls == []  # nothing of the flood reached a user lookup
        # A genuine token from the same address is served: others at an address (a NAT, a proxy)
        # are never refused for one client's bad tokens (issue 24, item 12); so is a live login link.
        assert attacker.request("GET", "/studios/adv.md", headers=_bearer(w.tokens["author"])).status_code == 200
        link = create_login_link(app.store, w.users["author"]["id"], "http://127.0.0.1")
        assert attacker.request("GET", link.removeprefix("http://127.0.0.1")).status_code == 200
        assert attacker.request("GET", "/studios/adv.md", headers=_bearer("forged.still")).status_code == 429
        # Another address is served, and requests without a token are not affected.
        ok = attacker.loop.run_until_complete(other.get("/studios/adv.md", headers=_bearer(w.tokens["author"])))
        assert ok.status_code == 200
        assert attacker.request("GET", "/healthz").status_code == 200
        assert attacker.request("GET", "/studios/adv.md").status_code == 401  # no token: the plain 401
        figures.add("ratelimit.http.bad_token_refusals", 5)
    finally:
        attacker.loop.run_until_complete(other.aclose())
        attacker.close()
        app.store.close()


def test_limits_are_off_by_default(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app()
    web = create_app(app)
    http = Http(web)
    try:
        assert app.rate_limiter is None and web.site.limits.bad_tokens is None
        for n in range(150):
            assert http.request("GET", "/studios/adv.md", headers=_bearer(w.tokens["member"])).status_code == 200
            assert http.request("GET", "/", headers=_bearer(f"bad{n}")).status_code == 401
        assert _audited(w.home) == []
    finally:
        http.close()
        app.store.close()


def test_real_server_limits_tokens_and_bad_token_floods(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    server = WebProcess(w.home, {"NAVMCP_RATE_LIMIT": "3/60s"})
    try:
        with httpx.Client(base_url=server.base, timeout=10) as http:
            auth = _bearer(w.tokens["member"])
            statuses = [http.get("/studios/adv.md", headers=auth).status_code for _ in range(4)]
            assert statuses == [200, 200, 200, 429]
            last = http.get("/studios/adv.json", headers=auth)
            assert last.status_code == 429 and last.headers["retry-after"] == "20"
            bad = [http.get("/", headers=_bearer(f"bad{n}")).status_code for n in range(5)]
            assert bad == [401, 401, 401, 429, 429]
            assert http.get("/healthz").status_code == 200
        assert len(_audited(w.home)) == 2
        figures.add("ratelimit.http.refusals", 2)
        figures.add("ratelimit.http.bad_token_refusals", 2)
    finally:
        assert server.stop() == 0
    assert not server.errors(), server.stderr_text()[-3000:]


def test_forwarded_headers_are_believed_only_from_configured_proxies(adv_world, tmp_path):
    """X-Forwarded-For from any local process was believed (uvicorn's default trusts 127.0.0.1):
    a client dodged the bad-token limit with a new address per request, or aimed it at another's.
    Now the connection's address counts, unless `--forwarded-allow-ips` names the proxy."""
    w = world.copy(adv_world, tmp_path / "home")

    def flood(server: WebProcess) -> list[int]:
        with httpx.Client(base_url=server.base, timeout=10) as http:
            return [http.get("/", headers={**_bearer(f"bad{n}"), "x-forwarded-for": f"10.9.0.{n}"}).status_code
                    for n in range(5)]

    server = WebProcess(w.home, {"NAVMCP_BAD_TOKEN_LIMIT": "3/60s"})
    try:
        assert flood(server) == [401, 401, 401, 429, 429]  # one address: the connection's
        with httpx.Client(base_url=server.base, timeout=10) as http:  # and its genuine tokens still pass
            assert http.get("/studios/adv.md", headers=_bearer(w.tokens["member"])).status_code == 200
    finally:
        assert server.stop() == 0
    server = WebProcess(w.home, {"NAVMCP_BAD_TOKEN_LIMIT": "3/60s", "NAVMCP_FORWARDED_ALLOW_IPS": "127.0.0.1"})
    try:
        assert flood(server) == [401] * 5  # behind a named proxy: each forwarded address its own
    finally:
        assert server.stop() == 0
