"""An invitation link in a browser (navmcp/web/invite.py): a person with no account creates one on
the invitation's page and lands in the studio; a signed-in person joins with a button; a link that
does not work is one page that adds nobody; nothing joins without a POST from the page itself."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from navmcp.identity import invitations
from test_web_live import CHROMIUM_ARGS
from webclient import Client, csrf_of, sign_in


def make_link(app, owner, **params) -> str:
    ws = app.workspace
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    said = ws.execute(owner, "/studios/team/members", "create_invitation", params).message
    return re.search(r"`(/invite/[A-Za-z0-9_-]+)`", said).group(1)


def members(app, owner) -> dict[str, str]:
    return {m["handle"]: m["role"] for m in app.workspace.page(owner, "/studios/team/members").data["members"]}


def test_a_newcomer_creates_an_account_and_lands_in_the_studio(app, owner, web, anon):
    link = make_link(app, owner)
    page = anon.get(link)
    assert page.status_code == 200 and "Join Team" in page.text and "Create your account" in page.text
    assert "bob" not in members(app, owner)  # opening it added nobody
    assert anon.post(link, data={"handle": "bob", "name": "Bob"}).status_code == 403  # not from the page
    taken = anon.post(link, data={"handle": owner["handle"], "name": "X"}, headers={"Origin": "http://127.0.0.1"})
    assert taken.status_code == 422 and "already exists" in taken.text
    mailed = anon.post(link, data={"handle": "bob", "name": "bob@example.com"}, headers={"Origin": "http://127.0.0.1"})
    assert mailed.status_code == 422 and "leave out the e-mail address" in mailed.text  # a name is no address
    joined = anon.post(link, data={"handle": "bob", "name": "Bob"}, headers={"Origin": "http://127.0.0.1"})
    assert joined.status_code == 303 and joined.headers["location"] == "/studios/team"
    assert members(app, owner)["bob"] == "member"
    studio = anon.get("/studios/team")  # signed in by the cookie it set
    assert studio.status_code == 200 and "@bob" in studio.text
    used = Client(web)  # a second browser: the one-use link is used up
    try:
        gone = used.get(link)
        assert gone.status_code == 404 and invitations.REFUSED in gone.text.replace("&#39;", "'")
        assert used.post(link, data={"handle": "carol"}, headers={"Origin": "http://127.0.0.1"}).status_code == 404
    finally:
        used.close()
    assert "carol" not in members(app, owner)


def test_a_signed_in_person_joins_with_the_button(app, owner, web, make_user):
    link = make_link(app, owner, role="admin")
    carol, _ = make_user("carol")
    browser = sign_in(web, app, carol["id"])
    try:
        page = browser.get(link)
        assert "Join as @carol" in page.text and "an admin" in page.text
        no_csrf = browser.post(link, data={}, headers={"Origin": "http://127.0.0.1"})
        assert no_csrf.status_code == 403 and "carol" not in members(app, owner)
        joined = browser.post(link, data={"csrf_token": csrf_of(page.text)}, headers={"Origin": "http://127.0.0.1"})
        assert joined.status_code == 303 and members(app, owner)["carol"] == "admin"
    finally:
        browser.close()


def test_a_revoked_or_unknown_link_is_one_page(app, owner, anon):
    link = make_link(app, owner, uses=5)
    [listed] = app.workspace.page(owner, "/studios/team/members").data["invitations"]
    app.workspace.execute(owner, "/studios/team/members", "revoke_invitation", {"invitation": listed["id"]})
    revoked, unknown = anon.get(link), anon.get("/invite/nothing-here")
    assert revoked.status_code == unknown.status_code == 404 and revoked.text == unknown.text
    assert anon.post(link, data={"handle": "bob"}, headers={"Origin": "http://127.0.0.1"}).status_code == 404
    assert "bob" not in members(app, owner)


def test_an_agent_gets_a_link_for_a_browser_only(app, owner):
    link = make_link(app, owner)
    from navmcp.errors import NotFound

    try:
        app.workspace.page(owner, link)
        raise AssertionError("an invitation is no page an agent navigates to")
    except NotFound:
        pass


def test_a_newcomer_joins_on_postgresql(tmp_path, pg_url):
    """The same, on the hosted store: the link is read and spent through its SECURITY DEFINER
    functions by someone who is no member yet (row-level security shows them nothing else)."""
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.identity import add_user
    from navmcp.web import create_app

    app = App(Config(home=tmp_path / "pg", database_url=pg_url, token=None))
    try:
        alice = add_user(app.store, "alice")
        link = make_link(app, alice, uses=2)
        anon = Client(create_app(app))
        try:
            assert "Join Team" in anon.get(link).text
            joined = anon.post(link, data={"handle": "bob", "name": "Bob"}, headers={"Origin": "http://127.0.0.1"})
            assert joined.status_code == 303 and joined.headers["location"] == "/studios/team"
            assert anon.get("/studios/team").status_code == 200
        finally:
            anon.close()
        assert members(app, alice) == {"alice": "admin", "bob": "member"}
        [listed] = app.workspace.page(alice, "/studios/team/members").data["invitations"]
        assert (listed["uses"], listed["used_by"], listed["state"]) == (1, ["bob"], "open")
    finally:
        app.store.close()


def test_in_chromium_a_newcomer_joins_and_the_admins_members_page_shows_them_live(server):
    """The admin creates a link on the members page; a second browser context with no account opens
    it, creates the account and lands in the studio; the admin's open members page lists them
    without a reload. The used-up link then shows the one refusal page."""
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("needs Debian's chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            admin = browser.new_context().new_page()
            admin.goto(server.login_link)
            admin.get_by_role("button", name=re.compile("^Sign in as")).click()
            admin.wait_for_url(server.base + "/")
            api = {"Authorization": f"Bearer {server.token()}"}
            httpx.post(server.base + "/actions/create_studio", json={"handle": "team", "name": "Team"}, headers=api)
            admin.goto(server.base + "/studios/team/members")
            admin.get_by_role("button", name="Create an invitation link").first.click()
            admin.get_by_role("dialog").get_by_role("button", name="Create an invitation link").click()
            admin.wait_for_url(server.base + "/studios/team/members")
            link = re.search(r"/invite/[A-Za-z0-9_-]+", admin.locator(".alert.flash").inner_text()).group(0)
            admin.wait_for_timeout(500)  # its event stream is open

            newcomer = browser.new_context().new_page()
            newcomer.goto(server.base + link)
            newcomer.get_by_label(re.compile("^Handle")).fill("bob")
            newcomer.get_by_label("Display name").fill("Bob")
            newcomer.get_by_role("button", name="Create my account and join").click()
            newcomer.wait_for_url(server.base + "/studios/team")
            assert "@bob" in newcomer.locator("header.shell").inner_text()

            admin.wait_for_function("() => document.querySelector('main').innerText.includes('@bob')", timeout=10_000)
            assert admin.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded

            other = browser.new_context().new_page()
            other.goto(server.base + link)
            assert "does not work" in other.locator("main").inner_text()
            assert other.get_by_role("button").count() == 0  # nothing to press: nobody is added
        finally:
            browser.close()
