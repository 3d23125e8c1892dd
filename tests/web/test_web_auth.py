"""Signing in and staying safe: login links, cookie sessions, CSRF, Bearer tokens, Origin/Host, escaping."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from navmcp.identity import create_user
from navmcp.web.auth import create_login_link
from navmcp.web.request import MAX_BODY
from webclient import BASE, Client, confirm_form, csrf_of, follow_login_link, session_cookie_name


def test_nothing_is_readable_without_login(anon, seeded):
    for url in ("/", seeded["note"], "/studios/team", "/whoami"):
        reply = anon.get(url)
        assert reply.status_code == 303 and reply.headers["location"].startswith("/login?next=")
        assert "Standup" not in reply.text
    for url in (seeded["note"] + ".md", seeded["note"] + ".json", seeded["note"] + "/actions"):
        reply = anon.get(url)
        assert reply.status_code == 401 and reply.headers["www-authenticate"].startswith("Bearer")
        assert "Standup" not in reply.text
    assert anon.post(seeded["note"] + "/actions/add_comment", json={"body": "x"}).status_code == 401
    login = anon.get("/login?next=/studios/team")
    assert login.status_code == 200 and " login-link " in login.text


def test_login_link_is_single_use_and_expires(app, owner, anon):
    link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
    first = follow_login_link(anon, link + "&next=/whoami")
    assert first.status_code == 303 and first.headers["location"] == "/whoami"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert anon.get("/whoami").status_code == 200
    again = Client(anon.http._transport.app)
    try:
        reused = again.get(link)
        assert reused.status_code == 401 and "already used" in reused.text
        assert "set-cookie" not in reused.headers
        expired = create_login_link(app.store, owner["id"], BASE, minutes=-1).removeprefix(BASE)
        assert again.get(expired).status_code == 401
        assert again.get("/login?token=forged").status_code == 401
        assert again.get("/").status_code == 303
        # an open redirect through `next` is refused
        evil = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
        assert follow_login_link(again, evil + "&next=//evil.example/").headers["location"] == "/"
    finally:
        again.close()


def test_logout_ends_the_session(browser):
    page = browser.get("/").text
    assert browser.post("/logout", data={}).status_code == 403  # no CSRF token
    out = browser.post("/logout", data={"csrf_token": csrf_of(page)})
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert browser.get("/").status_code == 303


def test_a_stolen_cookie_is_dead_after_logout(web, app, owner):
    from webclient import sign_in

    client = sign_in(web, app, owner["id"])
    try:
        name = session_cookie_name(app)
        cookie = client.http.cookies.get(name)
        page = client.get("/").text
        client.post("/logout", data={"csrf_token": csrf_of(page)})
        thief = Client(web, {"Cookie": f"{name}={cookie}"})
        assert thief.get("/").status_code == 303
        thief.close()
    finally:
        client.close()


def test_form_without_csrf_token_is_refused(browser, seeded, api):
    before = api.get(seeded["note"] + ".md").text
    for data in ({"body": "sneaky"}, {"body": "sneaky", "csrf_token": "0" * 64}):
        reply = browser.post(seeded["note"] + "/actions/add_comment", data=data)
        assert reply.status_code == 403 and "CSRF" in reply.text
    # a cookie session posting JSON needs the token as a header too
    assert browser.post(seeded["note"] + "/actions/add_comment", json={"body": "sneaky"}).status_code == 403
    assert api.get(seeded["note"] + ".md").text == before
    # the token is per session: another user's token doesn't work
    assert "sneaky" not in api.get(seeded["note"] + ".md").text


def test_a_non_ascii_csrf_token_is_refused_like_any_wrong_one(browser, seeded, api):
    """Issue 24, item 10: `hmac.compare_digest` raises on a str that isn't ASCII: that was a 500."""
    before = api.get(seeded["note"] + ".md").text
    for token in ("é" * 64, "\u2603", "0" * 63 + "\u00b2"):
        form = browser.post(seeded["note"] + "/actions/add_comment", data={"body": "sneaky", "csrf_token": token})
        assert form.status_code == 403 and "CSRF" in form.text
        logout = browser.post("/logout", data={"csrf_token": token})
        assert logout.status_code == 403
    # a header is read as Latin-1: any byte above 0x7f is a non-ASCII character there
    header = browser.post(seeded["note"] + "/actions/add_comment", json={"body": "sneaky"},
                          headers={"X-CSRF-Token": b"\xe9" * 64})
    assert header.status_code == 403 and header.json()["status"] == 403
    assert api.get(seeded["note"] + ".md").text == before
    assert browser.get("/").status_code == 200  # still signed in


def test_foreign_origin_and_host_are_refused(browser, seeded, api):
    page = browser.get(seeded["note"]).text
    reply = browser.post(seeded["note"] + "/actions/add_comment", data={"csrf_token": csrf_of(page), "body": "x"},
                         headers={"Origin": "http://evil.example"})
    assert reply.status_code == 403
    assert browser.get("/", headers={"Host": "evil.example:8765"}).status_code == 403
    assert api.get("/.md", headers={"Host": "rebind.attacker.test"}).status_code == 403
    assert browser.get("/", headers={"Origin": "null"}).status_code == 403
    # our own origin, on any loopback name, is fine
    ok = browser.post(seeded["note"] + "/actions/add_comment", data={"csrf_token": csrf_of(page), "body": "x"},
                      headers={"Origin": "http://localhost:8765"})
    assert ok.status_code == 303


def test_bearer_token_on_any_page(seeded, api, anon, app):
    assert api.get(seeded["decision"]).status_code == 200  # HTML too
    assert anon.get("/.md", headers={"Authorization": "Bearer not-a-jwt"}).status_code == 401
    assert anon.get("/.md", headers={"Authorization": "Basic abc"}).status_code == 401
    # a bad Bearer token never falls back to the cookie or the local owner
    reply = anon.get("/", headers={"Authorization": "Bearer x.y.z"})
    assert reply.status_code == 401


def test_user_text_with_script_is_escaped_everywhere(seeded, browser, api):
    urls = ["/", "/whoami", "/studios/team", "/studios/team/members", seeded["note"], seeded["decision"],
            seeded["commitment"], "/studios/team/cycles/today", "/studios/team/search?q=script",
            "/studios/team/search?q=comment", "/studios/team/tags/meetings", "/studios/team/audit"]
    for url in urls:
        page = browser.get(url)
        assert page.status_code == 200
        # our pages carry one script, our own file; nothing else is a script
        ours = re.findall(r'<script src="(/static/app\.[0-9a-f]{12}\.js)" defer></script>', page.text)
        assert len(ours) == 1 and page.text.lower().count("<script") == 1, url
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "script-src 'self';" in page.headers["content-security-policy"]
    assert "&lt;script&gt;" in browser.get(seeded["note"]).text
    # the search query itself, echoed back
    echoed = browser.get("/studios/team/search?q=%3Cscript%3Ealert(1)%3C/script%3E")
    assert echoed.text.lower().count("<script") == 1
    # in markdown, user text stays inert (escaped or fenced): no action or heading injected
    md = api.get(seeded["note"] + ".md").text
    outside_fences = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", md, flags=re.M | re.S)
    assert re.findall(r"^## Available actions", outside_fences, flags=re.M) == ["## Available actions"]
    assert "Body <script>" in md  # the body is shown, inert inside its fence
    # error pages escape what they echo
    missing = browser.get("/studios/%3Cscript%3E")
    assert missing.text.lower().count("<script") == 1 and "%3Cscript" not in missing.text


def test_login_links_for_other_users(app, web, owner):
    with app.store.write() as tx:
        bob = create_user(tx, "bob", findable=True)
    client = Client(web)
    try:
        link = create_login_link(app.store, bob["id"], BASE).removeprefix(BASE)
        assert follow_login_link(client, link).status_code == 303
        assert "@bob" in client.get("/whoami").text
    finally:
        client.close()


def test_oversized_form_is_refused(browser, seeded):
    reply = browser.post(seeded["note"] + "/actions/add_comment", content=b"a=" + b"x" * MAX_BODY,
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status_code == 413


def test_the_longest_valid_body_fits_a_form(browser, api):
    """A body at its limit (100,000 characters) of 4-byte characters is 1.2 MB form-encoded: the
    1 MiB request cap answered 413 to the edit form of such a note, and the edit was lost."""
    api.post("/actions/create_studio", json={"handle": "wide", "name": "Wide"})
    body = "\U0001F642" * 99_990
    note = api.post("/studios/wide/actions/create_note", json={"title": "Smiles", "body": body}).json()["url"]
    page = browser.get(note).text
    reply = browser.post(note + "/actions/edit_note", data={"csrf_token": csrf_of(page), "title": "Smiles, renamed",
                                                             "body": body + "!", "tags": ""})
    assert reply.status_code == 303, reply.text[:300]
    assert api.get(note + ".md").text.startswith("# Smiles, renamed")


def test_remembered_token_still_checks_the_user(app, web, make_user):
    """A Bearer token verified once is remembered, but a deleted user is refused at once."""
    user, token = make_user("temp")
    client = Client(web, {"Authorization": f"Bearer {token}"})
    try:
        assert client.get("/whoami.md").status_code == 200
        assert client.get("/whoami.md").status_code == 200
        with app.store.write() as tx:
            tx.execute("UPDATE users SET deleted_at = '2026-01-01T00:00:00Z' WHERE id = ?", (user["id"],))
        assert client.get("/whoami.md").status_code == 401
        assert client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
    finally:
        client.close()


def test_refusals_before_routing_use_the_canonical_bodies(api):
    as_json = api.get("/.json", headers={"Host": "evil.example"})
    assert as_json.status_code == 403 and as_json.json()["error"] == "Forbidden"
    as_md = api.get("/.md", headers={"Origin": "http://evil.example"})
    assert as_md.status_code == 403 and as_md.text.startswith("# Error 403: Forbidden")
    on_mcp = api.post("/mcp", json={}, headers={"Origin": "http://evil.example"})
    assert on_mcp.status_code == 403 and on_mcp.json()["error"]["message"].startswith("Forbidden")


def test_bearer_form_post_redirects_without_a_session(api, seeded):
    reply = api.post(seeded["note"] + "/actions/confirm_read", data={"x": "1"}, headers={"Accept": "text/html"})
    assert reply.status_code == 303 and reply.headers["location"] == seeded["note"]


def test_expired_web_session_is_signed_out(app, browser):
    assert browser.get("/").status_code == 200
    with app.store.write() as tx:
        tx.execute("UPDATE web_sessions SET expires_at = '2000-01-01T00:00:00.000000Z'")
    assert browser.get("/").status_code == 303


# `next` values that must not leave the site, as the query or form decodes them: browsers drop tabs
# and newlines from a Location ("/\t/evil.example" is "//evil.example"), CR/LF broke the response
# and a non-Latin-1 character made a 500 — after the one-time login link was spent.
FOREIGN_NEXT = ["/\t/evil.example", "/\n/evil.example", "/\r/evil.example", "/\u20ac", "//x", "/\\x", "https://x"]
GOOD_NEXT = "/studios/team?q=a%20b"  # as the login redirect of a page sends it: percent-encoded


def _next_query(value: str) -> str:
    return "&next=" + quote(value, safe="")


@pytest.mark.parametrize("nxt", FOREIGN_NEXT)
def test_login_link_never_redirects_off_site(app, owner, web, nxt):
    client = Client(web)
    try:
        link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
        reply = follow_login_link(client, link + _next_query(nxt))
        assert reply.status_code == 303 and reply.headers["location"] == "/"
        assert client.get("/whoami").status_code == 200  # the spent link did sign in
        page = client.get("/login" + _next_query(nxt).replace("&", "?", 1))
        assert page.status_code == 200 and "After signing in" not in page.text  # nor offered on the page
    finally:
        client.close()


def test_login_link_keeps_a_local_next(app, owner, anon):
    link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
    reply = follow_login_link(anon, link + _next_query(GOOD_NEXT))
    assert reply.status_code == 303 and reply.headers["location"] == GOOD_NEXT


class _SignIn:
    """Stands in for Supabase Auth at the network edge: any code is right and buys `token`."""

    def __init__(self, token: str):
        self.token = token

    def send_code(self, email: str) -> None:
        pass

    def verify_code(self, email: str, code: str) -> str:
        return self.token


@pytest.mark.parametrize("nxt, expected", [*((n, "/") for n in FOREIGN_NEXT), (GOOD_NEXT, GOOD_NEXT)])
def test_emailed_code_sign_in_never_redirects_off_site(web, anon, owner_token, nxt, expected):
    web.site.signin = _SignIn(owner_token)
    kept = expected if expected != "/" else ""
    login = anon.get("/login" + _next_query(nxt).replace("&", "?", 1))
    assert f'name="next" value="{kept}"' in login.text
    asked = anon.post("/login/email", data={"email": "o@example.com", "next": nxt})
    assert asked.status_code == 200 and f'name="next" value="{kept}"' in asked.text
    signed = anon.post("/login/code", data={"email": "o@example.com", "code": "123456", "next": nxt})
    assert signed.status_code == 303 and signed.headers["location"] == expected
    assert anon.get("/whoami").status_code == 200


@pytest.mark.parametrize("value", ["/\u20ac", "/a\r\nset-cookie: x=1", "/a\nb"], ids=["not-latin-1", "crlf", "lf"])
def test_an_answer_whose_header_cannot_be_sent_is_a_500_the_client_reads(web, anon, monkeypatch, value, logged_errors):
    """A header value that is not Latin-1 raised outside the app's error handling (no answer but
    the server's own 500), and a line break made uvicorn drop the connection. Whatever the source,
    the answer is the app's own error, and the fault is in the log."""
    from navmcp.web import routing
    from navmcp.web.response import redirect

    async def bad(site, req):
        return redirect(value)

    monkeypatch.setitem(routing.ROUTES, routing.HEALTH, bad)
    reply = anon.get("/healthz")
    assert reply.status_code == 500 and "internal error" in reply.text
    assert "location" not in reply.headers and "set-cookie" not in reply.headers
    assert logged_errors and "unsendable header" in logged_errors[-1]
    logged_errors.clear()


# --- a login link's page: GET shows it, only its button's POST spends it -------------------------


def test_head_and_get_of_a_login_link_spend_nothing(app, owner, anon):
    """A link preview (GET) or `curl -I` (HEAD) used to spend the link: the person got "already used"."""
    link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
    head = anon.request("HEAD", link)
    assert head.status_code == 200 and head.content == b"" and "set-cookie" not in head.headers
    for _ in range(2):  # a preview, then the person
        page = anon.get(link)
        assert page.status_code == 200 and "set-cookie" not in page.headers
        assert f"<h1>Sign in as @{owner['handle']}</h1>" in page.text and "already used" not in page.text
        assert page.headers["cache-control"] == "no-store"
    assert anon.get("/").status_code == 303  # not signed in by looking
    signed = anon.post(confirm_form(page.text), headers={"Origin": BASE})
    assert signed.status_code == 303 and "HttpOnly" in signed.headers["set-cookie"]
    assert anon.get("/whoami").status_code == 200
    # once: the button again, or the link again, says it was used
    for reply in (anon.post(confirm_form(page.text), headers={"Origin": BASE}), anon.get(link),
                  anon.request("HEAD", link)):
        assert reply.status_code == 401 and "set-cookie" not in reply.headers
    assert "already used" in anon.get(link).text


def test_a_link_for_someone_else_says_who_you_are_now(app, web, owner, make_user):
    """Signed in as the owner, opening @bob's link (with a next) used to switch accounts silently."""
    bob, _ = make_user("bob")
    client = Client(web)
    try:
        assert follow_login_link(client, create_login_link(app.store, owner["id"], BASE)).status_code == 303
        owner_cookie = client.http.cookies.get(session_cookie_name(app))
        link = create_login_link(app.store, bob["id"], BASE).removeprefix(BASE) + "&next=/studios/team/members"
        page = client.get(link)
        assert page.status_code == 200 and "<h1>Sign in as @bob</h1>" in page.text
        assert (f"You are signed in as @{owner['handle']}; continuing signs you in as @bob instead."
                in page.text)
        assert confirm_form(page.text).endswith("&next=/studios/team/members")
        assert f"@{owner['handle']}" in client.get("/whoami").text  # still the owner until the button
        switched = client.post(confirm_form(page.text), headers={"Origin": BASE})
        assert switched.status_code == 303 and switched.headers["location"] == "/studios/team/members"
        assert "@bob" in client.get("/whoami").text
        stale = Client(web, {"Cookie": f"{session_cookie_name(app)}={owner_cookie}"})  # the replaced session was ended
        assert stale.get("/").status_code == 303
        stale.close()
        # signed in as bob already: said, no warning
        again = client.get(create_login_link(app.store, bob["id"], BASE).removeprefix(BASE))
        assert "You are already signed in as @bob" in again.text and "instead" not in again.text
    finally:
        client.close()


@pytest.mark.parametrize("headers", [{}, {"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Referer": "http://evil.example/auto-submit"},
                                     {"Origin": "http://127.0.0.1:9999"}],
                         ids=["no-origin", "foreign-origin", "null-origin", "foreign-referer", "other-port"])
def test_a_login_post_not_from_its_page_is_refused(app, owner, anon, headers):
    """Login CSRF: a foreign page auto-submitting the attacker's own link would sign a visitor in as
    the attacker, unseen. The POST must come from this site (Origin, else Referer)."""
    link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
    refused = anon.post(link, headers=headers)
    assert refused.status_code == 403 and "set-cookie" not in refused.headers
    assert anon.get(link).status_code == 200  # not spent
    by_referer = anon.post(link, headers={"Referer": BASE + link})  # a browser that sends no Origin
    assert by_referer.status_code == 303 and "set-cookie" in by_referer.headers


def test_login_answers_only_get_head_and_post(app, owner, anon):
    link = create_login_link(app.store, owner["id"], BASE).removeprefix(BASE)
    reply = anon.request("PUT", link, headers={"Origin": BASE})
    assert reply.status_code == 405 and reply.headers["allow"] == "GET, HEAD, POST"
    assert anon.get(link).status_code == 200
