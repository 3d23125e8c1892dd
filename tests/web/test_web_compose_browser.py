"""A markdown text box in Chromium: its preview shows what the page will (the comment posted
renders to the very same HTML), written HTML stays inert, and after `@` the studio's members are
offered in a listbox the keyboard drives; axe-core finds no serious fault with both open.
Screenshots at a desk's width and a phone's land in artifacts/compose/."""

from __future__ import annotations

import re

import httpx
import pytest

from nav_helpers import accepts_at
from test_web_pages_browser import ARGS, ARTIFACTS, CHROMIUM, axe_script, navmcp, signed_in

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")
SHOTS = ARTIFACTS.parent / "compose"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from webclient import WebServer

    server = WebServer(tmp_path_factory.mktemp("compose") / "home")
    try:
        navmcp(server, "user", "add", "alice", "--name", "Alice Martin")
        navmcp(server, "user", "add", "alfred")  # not a member: never offered
        api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
        assert api.post("/actions/create_studio", json={"handle": "team", "name": "Team"}).status_code == 200
        assert api.post("/studios/team/members/actions/add_member", json={"handle": "alice"}).status_code == 200
        accepts_at(server.home, "alice")
        note = api.post("/studios/team/actions/create_note", json={"title": "Plan", "body": "The plan."}).json()["url"]
        api.close()
        yield server, note
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


def test_the_preview_is_the_page_and_at_offers_members(world, chromium):
    server, note = world
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = signed_in(chromium, server)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(server.base + note)
    box = page.locator("textarea#add_comment-body")
    box.click()
    box.type("## Thanks\n\n**Agreed**, <script>document.title='pwned'</script> cc @al")
    options = page.get_by_role("listbox", name="Members to mention").get_by_role("option")
    options.first.wait_for()
    # "@a" offered @alice and the group @admins; "@al" only @alice (alfred is no member)
    page.wait_for_function("() => document.querySelectorAll('[role=listbox] [role=option]').length === 1")
    assert options.all_inner_texts() == ["@alice"]
    assert page.get_by_role("status").filter(has_text="1 member to mention").count() == 1
    assert box.get_attribute("aria-activedescendant") == options.first.get_attribute("id")
    page.keyboard.press("Enter")
    assert box.input_value().endswith("cc @alice ")
    assert box.get_attribute("aria-activedescendant") is None and options.count() == 0
    box.type("see you")
    preview = page.locator("#add_comment-body-preview .md")
    preview.locator("a", has_text="@alice").wait_for()
    page.wait_for_function("() => document.querySelector('#add_comment-body-preview .md').textContent.includes('see you')")
    assert preview.locator("strong", has_text="Agreed").count() == 1 and preview.locator("script").count() == 0
    assert "<script>document.title='pwned'</script>" in preview.inner_text() and "pwned" not in page.title()
    shown = preview.inner_html()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        box.focus()
        page.keyboard.type(" @")
        page.get_by_role("listbox", name="Members to mention").wait_for()
        page.screenshot(path=str(SHOTS / f"comment-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.keyboard.press("Escape")
        page.keyboard.press("Backspace")
        page.keyboard.press("Backspace")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Comment", exact=True).click()
    page.wait_for_url(re.compile(re.escape(note) + "$"))
    posted = page.locator(".comment .md").last.inner_html()
    assert posted.strip() == shown.strip() and dialogs == []


def test_axe_with_the_preview_and_the_listbox_open(world, chromium):
    script = axe_script()
    if script is None:
        pytest.skip("npm is not installed: axe-core can't be fetched")
    server, note = world
    for scheme in ("light", "dark"):
        page = signed_in(chromium, server, bypass_csp=True, scheme=scheme)
        page.goto(server.base + note)
        box = page.locator("textarea#add_comment-body")
        box.click()
        box.type("**hi** @")
        page.get_by_role("listbox", name="Members to mention").wait_for()
        page.locator("#add_comment-body-preview .md strong").wait_for()
        page.add_script_tag(content=script)
        found = page.evaluate("""async () => (await axe.run(document)).violations
            .filter(v => v.impact === "serious" || v.impact === "critical")
            .map(v => v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))""")
        assert not found, (scheme, found)
        page.context.close()
