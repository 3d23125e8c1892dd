"""Every page type in a real browser (Debian's Chromium through Playwright), against a real
`navmcp web` process, at a desk's width and a phone's: nothing scrolls sideways, no word in a
label, chip or table breaks across lines, axe-core finds no serious or critical accessibility
fault; markdown renders and user-written HTML stays inert; a vote cast in place updates the
tallies; a destructive action asks and can be cancelled; the keyboard alone signs in, votes and
comments. Screenshots of every page at both widths land in artifacts/pages/.

axe-core comes from npm (installed on first use into .cache/npm). Without npm the axe test skips,
unless NAVMCP_REQUIRE_AXE=1 (as `make test-all` and CI set): then it fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import httpx
import pytest

from nav_helpers import accepts_at

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "pages"
AXE_VERSION = "4.14.1"
AXE = ROOT / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDTHS = (1280, 390)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")

NOTE_BODY = """Plan for **the offsite**, see https://example.com/venue and /studios/team/members.

- book the room
- order food

```
fenced <b>block</b>
```

<script>document.title = "pwned by script"</script>
<img src="x" onerror="document.title = 'pwned by onerror'">
"""

# Elements whose words must never break across lines: labels, chips, key/value lines, buttons, tables.
NO_SPLIT = "dt, dd, .chip, label, button, th, td, .counts, .crumbs a, .side a, .awaits, .meta > span, .progress-text"

SPLIT_WORDS_JS = """(selector) => {
  const split = [];
  for (const el of document.querySelectorAll(selector)) {
    if (!el.getClientRects().length) continue;  // not shown (a closed dialog)
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const words = /\\S+/g;
      let m;
      while ((m = words.exec(node.data))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(el.tagName + "." + el.className + ": " + m[0]);
      }
    }
  }
  return split;
}"""


def navmcp(server, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "navmcp", *args], env=server.env, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A real server with a small team's workspace, made through the action API."""
    from webclient import WebServer

    server = WebServer(tmp_path_factory.mktemp("pages") / "home")
    try:
        navmcp(server, "user", "add", "alice", "--name", "Alice Martin")
        navmcp(server, "user", "add", "bob", "--name", "Bob <b>Builder</b>")
        api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})

        def act(url: str, action: str, **params) -> str:
            reply = api.post(f"{url.rstrip('/')}/actions/{action}", json=params)
            assert reply.status_code == 200, reply.text
            return reply.json()["url"]

        act("/", "create_studio", handle="team", name="Product team", description="Where we **decide** things.")
        for handle in ("alice", "bob"):
            act("/studios/team/members", "add_member", handle=handle)
            accepts_at(server.home, handle)
        note = act("/studios/team", "create_note", title="Offsite planning", body=NOTE_BODY, tags=["offsite", "planning"])
        decision = act("/studios/team", "create_decision", question="Where is the offsite?",
                       description="Pick what you could live with.", options=["Lisbon", "Berlin", "Online"],
                       tags=["offsite"])
        commitment = act("/studios/team", "create_commitment", title="Book the venue together", critical_mass=3,
                         limit=6, description="Join if you can help.")
        act(note, "add_comment", body="Looks good, **ship it**. <script>document.title='pwned'</script>")
        act(decision, "add_comment", body="Berlin is cheaper.")
        act(commitment, "join_commitment")
        closing = act("/studios/team", "create_decision", question="Which snacks?", options=["Fruit", "Cake"])
        # each decision kind's ballot (navmcp/kinds), with an answer given
        consent = act("/studios/team", "create_decision", question="Adopt the four-day week?", kind="consent",
                      description="From March, **Fridays off**; support rotates.", quorum="50%")
        act(consent, "object", reason="Support rotation needs a second person first")
        dots = act("/studios/team", "create_decision", question="What do we fix first?", kind="dots", dots=5,
                   options=["Signup emails", "Slow search", "Dark mode contrast"])
        act(dots, "allocate", dots=[{"option": 1, "dots": 3}, {"option": 2, "dots": 2}])
        times = act("/studios/team", "create_decision", question="When is the retro?", kind="times",
                    options=["2100-12-02 10:00 Europe/Lisbon", "2100-12-02T15:00+01:00", "2100-12-03 09:00"])
        act(times, "answer", times=[{"option": 1, "answer": "yes"}, {"option": 2, "answer": "maybe"},
                                    {"option": 3, "answer": "no"}])
        # a note deleted (navmcp.content.deletion): on the studio's Deleted list, with its Restore button
        old = act("/studios/team", "create_note", title="Old draft of the agenda", body="superseded")
        act(old, "delete_item", confirm="Old draft of the agenda")
        urls = {"home": "/", "help": "/help", "whoami": "/whoami", "studio": "/studios/team",
                "members": "/studios/team/members", "note": note, "decision": decision, "commitment": commitment,
                "cycle": "/studios/team/cycles/today", "search": "/studios/team/search?q=offsite",
                "tag": "/studios/team/tags/offsite", "audit": "/studios/team/audit", "closing": closing,
                "consent": consent, "dots": dots, "times": times, "deleted": "/studios/team/deleted"}
        api.close()
        yield server, urls
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


def signed_in(chromium, server, width: int = 1280, bypass_csp: bool = False, scheme: str = "light"):
    """A browser page signed in as the owner with a login link (pressing its button). `bypass_csp`:
    for injecting axe-core, which our CSP (rightly) refuses as an inline script. `scheme`: the
    device's preference, light or dark."""
    context = chromium.new_context(viewport={"width": width, "height": 900}, bypass_csp=bypass_csp, color_scheme=scheme)
    page = context.new_page()
    page.goto(navmcp(server, "login-link", server.owner_handle(), "--base-url", server.base))
    page.get_by_role("button", name=re.compile("^Sign in as")).click()
    page.wait_for_url(server.base + "/")
    return page


def axe_script() -> str | None:
    """axe-core's script, installed from npm on first use; None when npm is not there."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(AXE.parents[2]),
                        f"axe-core@{AXE_VERSION}"], check=True, capture_output=True, timeout=300)
    return AXE.read_text()


def check_layout(page, name: str, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{name} at {width} px scrolls sideways ({scroll} px)"
    split = page.evaluate(SPLIT_WORDS_JS, NO_SPLIT)
    assert not split, f"{name} at {width} px splits words: {split[:10]}"


def test_every_page_type_at_desk_and_phone_width(world, chromium):
    server, urls = world
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page = signed_in(chromium, server, width)
        for name, url in urls.items():
            reply = page.goto(server.base + url)
            assert reply.status == 200, (name, reply.status)
            check_layout(page, name, width)
            page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        # the sign-in page and an error page, signed out
        anon = chromium.new_context(viewport={"width": width, "height": 900}).new_page()
        for name, url in (("login", "/login"), ("error", "/studios/nope/n/nothing")):
            anon.goto(server.base + url)
            check_layout(anon, name, width)
            anon.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        page.goto(server.base + "/studios/nope")
        check_layout(page, "not-found", width)
        anon.context.close()
        page.context.close()


def test_markdown_renders_and_written_html_stays_inert(world, chromium):
    server, urls = world
    page = signed_in(chromium, server)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(server.base + urls["note"])
    body = page.locator(".md.body")
    assert body.locator("strong", has_text="the offsite").count() == 1
    assert body.locator("ul > li").all_inner_texts() == ["book the room", "order food"]
    assert body.locator('a[href="https://example.com/venue"]').count() == 1
    assert body.locator('a[href="/studios/team/members"]').count() == 1  # a navmcp path: a link in the app
    assert body.locator("pre code").inner_text().strip() == "fenced <b>block</b>"
    # the script and the onerror are text on the page, and never ran
    assert body.locator("script, img").count() == 0
    assert '<script>document.title = "pwned by script"</script>' in body.inner_text()
    assert "onerror" in body.inner_text()
    assert "pwned" not in page.title() and dialogs == []
    assert page.locator(".comment strong", has_text="ship it").count() == 1


def test_a_vote_cast_in_place_updates_the_tallies(world, chromium):
    server, urls = world
    page = signed_in(chromium, server, 390)
    page.goto(server.base + urls["decision"])
    rows = page.locator(".ballot > li")
    assert rows.locator(".opt-title").all_inner_texts() == ["Lisbon", "Berlin", "Online"]
    berlin = rows.filter(has_text="Berlin")
    assert berlin.locator(".counts").inner_text() == "0 accept, 0 prefer"
    assert not page.get_by_label("accept Lisbon").is_checked()  # a first vote starts empty
    page.get_by_label("accept Berlin").check()
    page.get_by_label("prefer Berlin").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Save my vote").click()
    assert page.url == server.base + urls["decision"]
    assert "✓ Vote recorded" in page.locator("main").inner_text()
    berlin = page.locator(".ballot > li").filter(has_text="Berlin")
    assert berlin.locator(".counts").inner_text() == "1 accept, 1 prefer"
    assert berlin.locator(".bar .prefer").evaluate("e => e.getBoundingClientRect().width") > 100
    # the rows keep their order after the vote: nothing moves under the cursor
    assert page.locator(".ballot .opt-title").all_inner_texts() == ["Lisbon", "Berlin", "Online"]
    assert page.get_by_label("prefer Berlin").is_checked() and not page.get_by_label("accept Lisbon").is_checked()
    page.context.close()


def test_a_destructive_action_asks_and_can_be_cancelled(world, chromium):
    server, urls = world
    page = signed_in(chromium, server)
    page.goto(server.base + urls["closing"])
    page.get_by_role("button", name="Close voting").click()
    dialog = page.get_by_role("dialog")
    assert dialog.is_visible()
    assert "Voting ends for everyone and the result is fixed" in dialog.inner_text()
    assert "danger" in dialog.get_by_role("button", name="Close voting").get_attribute("class")
    dialog.get_by_role("button", name="Cancel").click()
    assert not dialog.is_visible()
    page.reload()
    assert page.locator(".facts .chip.open").count() == 1  # still open: nothing was done
    # Escape cancels too; then confirming does it
    page.get_by_role("button", name="Close voting").click()
    page.keyboard.press("Escape")
    assert not page.get_by_role("dialog").is_visible()
    page.get_by_role("button", name="Close voting").click()
    with page.expect_navigation():
        page.get_by_role("dialog").get_by_role("button", name="Close voting").click()
    assert page.locator(".facts .chip.closed").count() == 1 and "Decision closed" in page.inner_text("main")
    page.context.close()


def test_the_keyboard_alone_signs_in_votes_and_comments(world, chromium):
    server, urls = world
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(navmcp(server, "login-link", "alice", "--base-url", server.base) + "&next=" + urls["decision"])

    def tab_to(locator, limit: int = 80) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if locator.evaluate("e => e === document.activeElement"):
                return
        raise AssertionError(f"Tab never reached {locator}")

    tab_to(page.get_by_role("button", name="Sign in as @alice"))
    page.keyboard.press("Enter")
    page.wait_for_url(server.base + urls["decision"])
    # vote: Space toggles the boxes (a first vote starts with none ticked), Enter on the button saves
    tab_to(page.get_by_label("accept Lisbon"))
    page.keyboard.press("Space")
    tab_to(page.get_by_label("accept Berlin"))
    page.keyboard.press("Space")
    tab_to(page.get_by_label("prefer Lisbon"))
    page.keyboard.press("Space")
    tab_to(page.get_by_role("button", name="Save my vote"))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Your vote: Lisbon: accept + prefer; Berlin: accept." in page.inner_text("main")
    # comment: type in the box, Enter on its button
    tab_to(page.get_by_label("Comment", exact=True))
    page.keyboard.type("Typed with the keyboard alone")
    tab_to(page.get_by_role("button", name="Comment", exact=True))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator(".comment", has_text="Typed with the keyboard alone").count() == 1
    # and a dialog: open with Enter, its first field has focus, Escape closes it
    tab_to(page.get_by_role("button", name="Add an option"))
    page.keyboard.press("Enter")
    assert page.get_by_role("dialog").is_visible()
    page.keyboard.type("Porto")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator(".ballot .opt-title", has_text="Porto").count() == 1
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_fault_on_any_page(world, chromium, scheme):
    script = axe_script()
    if script is None:
        if os.environ.get("NAVMCP_REQUIRE_AXE"):
            pytest.fail("npm is needed to install axe-core (NAVMCP_REQUIRE_AXE is set)")
        pytest.skip("npm is not installed: axe-core can't be fetched")
    server, urls = world
    faults = {}
    for width in WIDTHS:
        page = signed_in(chromium, server, width, bypass_csp=True, scheme=scheme)
        targets = [(name, url, None) for name, url in urls.items()]
        targets += [("decision+dialog", urls["decision"], "Add an option"), ("studio+dialog", urls["studio"], "New decision")]
        for name, url, opener in targets:
            page.goto(server.base + url)
            if opener:
                page.get_by_role("button", name=opener).click()
            page.add_script_tag(content=script)
            found = page.evaluate("""async () => {
                const r = await axe.run(document, {resultTypes: ["violations"]});
                return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
                    .map(v => v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
            }""")
            if found:
                faults[f"{name}@{width}"] = found
        anon = chromium.new_context(viewport={"width": width, "height": 900}, bypass_csp=True,
                                    color_scheme=scheme).new_page()
        for name, url in (("login", "/login"), ("error", "/studios/nope")):
            anon.goto(server.base + url)
            anon.add_script_tag(content=script)
            found = anon.evaluate("""async () => (await axe.run(document)).violations
                .filter(v => v.impact === "serious" || v.impact === "critical").map(v => v.id + ": " + v.help)""")
            if found:
                faults[f"{name}@{width}"] = found
        anon.context.close()
        page.context.close()
    assert not faults, "\n".join(f"{page}: {fault}" for page, found in faults.items() for fault in found)


def test_tags_and_options_are_chips_that_send_what_the_text_area_sent(world, chromium):
    """With JavaScript a list of words is chips: typed, Enter (or a comma, where a comma can't be part
    of one) makes a chip, its Remove button (reached with Backspace) takes it away; the form sends
    the same params as the text area it hides. The deadline takes words beside its date picker."""
    from datetime import datetime, timedelta

    server, urls = world
    page = signed_in(chromium, server, 390, bypass_csp=True)
    page.goto(server.base + urls["studio"])
    page.get_by_role("button", name="New decision").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Question").fill("Lunch where?")
    options = dialog.get_by_role("textbox", name=re.compile("^Options"))
    for title in ("Pizza, with cheese", "Sushi", "Tacos"):
        options.fill(title)
        options.press("Enter")  # Enter makes a chip, and does not send the form
    assert dialog.is_visible()
    chips = dialog.locator('ul[aria-label="Options"] .entry-text')
    assert chips.all_inner_texts() == ["Pizza, with cheese", "Sushi", "Tacos"]
    dialog.get_by_role("button", name="Remove Sushi").click()
    assert chips.all_inner_texts() == ["Pizza, with cheese", "Tacos"]
    tags = dialog.get_by_role("textbox", name=re.compile("^Tags"))
    tags.press_sequentially("food,lunch,q4,")
    assert dialog.locator('ul[aria-label="Tags"] .entry-text').all_inner_texts() == ["food", "lunch", "q4"]
    assert dialog.locator("#create_decision-tags-hint").inner_text().endswith("; Enter or a comma after each")
    tags.press("Backspace")  # from an empty input: to the last chip's Remove button, and Enter removes it
    assert dialog.get_by_role("button", name="Remove q4").evaluate("e => e === document.activeElement")
    page.keyboard.press("Enter")
    assert dialog.locator('ul[aria-label="Tags"] .entry-text').all_inner_texts() == ["food", "lunch"]
    assert tags.evaluate("e => e === document.activeElement")
    tags.press_sequentially("ops")  # typed, not yet a chip: sent too
    assert dialog.locator("textarea[name=tags]").input_value() == "food\nlunch\nops"
    assert not dialog.locator("textarea[name=tags]").is_visible()
    dialog.get_by_label("or in words").fill("next friday")
    check_layout(page, "chips", 390)
    dialog.screenshot(path=str(ARTIFACTS / "chips-390.png"))
    page.add_script_tag(content=axe_script() or "window.axe = null")
    found = page.evaluate("""async () => window.axe ? (await axe.run(document)).violations
        .filter(v => v.impact === "serious" || v.impact === "critical").map(v => v.id + ": " + v.help) : []""")
    assert not found, found
    with page.expect_navigation():
        dialog.get_by_role("button", name="New decision").click()
    md = httpx.get(page.url + ".md", headers={"Authorization": f"Bearer {server.token()}"}).text
    assert "Pizza, with cheese" in md and "Tacos" in md and "Sushi" not in md, md
    assert all(f"#{tag}" in md for tag in ("food", "lunch", "ops")) and "#q4" not in md, md
    today = datetime.now(UTC).date()
    friday = today + timedelta(days=(4 - today.weekday()) % 7 or 7)
    assert f"{friday.isoformat()} 23:59 UTC" in md, md
    page.context.close()
    # without JavaScript: the text area, one per line
    context = chromium.new_context(viewport={"width": 390, "height": 900}, java_script_enabled=False)
    plain = context.new_page()
    plain.goto(navmcp(server, "login-link", server.owner_handle(), "--base-url", server.base) + "&next=/studios/team")
    plain.get_by_role("button", name=re.compile("^Sign in as")).click()
    plain.wait_for_url(server.base + "/studios/team")
    assert plain.locator("textarea[data-chips][name=tags]").count() >= 1 and plain.locator(".chipbox").count() == 0
    context.close()


def test_dark_follows_the_device_and_the_choice_on_whoami(world, chromium):
    server, urls = world
    background = "getComputedStyle(document.querySelector('main')).backgroundColor"
    page = signed_in(chromium, server, scheme="dark")
    page.goto(server.base + urls["note"])
    dark = page.evaluate(background)
    assert dark != "rgb(255, 255, 255)"
    page.screenshot(path=str(ARTIFACTS / "note-dark-1280.png"), full_page=True)
    page.goto(server.base + "/whoami")
    page.get_by_label("Light").check()  # this browser's choice wins over the device's
    page.goto(server.base + urls["note"])
    assert page.evaluate(background) == "rgb(255, 255, 255)"
    page.goto(server.base + "/whoami")
    assert page.get_by_label("Light").is_checked()
    page.get_by_label("Like this device").check()
    page.goto(server.base + urls["note"])
    assert page.evaluate(background) == dark
    page.context.close()
    light = signed_in(chromium, server)  # a light device, choosing dark
    light.goto(server.base + "/whoami")
    light.get_by_label("Dark").check()
    assert light.evaluate(background) == dark
    light.context.close()


def test_keyboard_shortcuts_do_not_fire_while_typing(world, chromium):
    server, urls = world
    page = signed_in(chromium, server)
    page.goto(server.base + urls["note"])
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "shell-q"
    page.keyboard.type("g h ?/")  # typed into the search box: no shortcut fires
    assert page.locator("#shell-q").input_value() == "g h ?/" and page.url == server.base + urls["note"]
    assert page.locator("dialog#shortcuts").count() == 0
    page.locator("#shell-q").fill("")
    page.get_by_label("Comment", exact=True).click()
    page.keyboard.type("g h")
    assert page.get_by_label("Comment", exact=True).input_value() == "g h" and page.url == server.base + urls["note"]
    page.get_by_label("Comment", exact=True).fill("")
    page.locator("h1").click()  # away from the fields
    page.keyboard.press("?")
    shortcuts = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert shortcuts.is_visible() and "Go home" in shortcuts.inner_text()
    page.keyboard.press("Escape")
    assert not shortcuts.is_visible()
    with page.expect_navigation():
        page.keyboard.press("g")
        page.keyboard.press("h")
    assert page.url == server.base + "/"
    page.context.close()


def test_on_a_phone_the_studios_are_reached_from_the_top(world, chromium):
    server, urls = world
    for width, shown in ((390, True), (1280, False)):
        page = signed_in(chromium, server, width)
        page.goto(server.base + urls["note"])
        link = page.locator("header .to-studios")
        assert link.is_visible() == shown
        if shown:
            link.click()
            top = page.locator("#studios").evaluate("e => e.getBoundingClientRect().top")
            assert 0 <= top < 900, top  # scrolled into view (as far as the page goes)
        page.context.close()


def test_studios_of_one_name_are_told_apart_and_a_handle_is_proposed(world, chromium):
    """The handle is proposed from the name as it is typed, until a handle is typed; two studios of
    the same name show their handles at the side."""
    server, urls = world
    page = signed_in(chromium, server)
    page.get_by_role("button", name="New studio").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name", exact=True).fill("Product Team – Café")
    handle = dialog.get_by_label("Short name for its web address")
    assert handle.input_value() == "product-team-cafe"
    handle.fill("product-two")
    dialog.get_by_label("Name", exact=True).fill("Product team")
    assert handle.input_value() == "product-two"  # typed by the person: left alone
    with page.expect_navigation():
        dialog.get_by_role("button", name="New studio").click()
    side = page.locator("nav.side")
    assert side.locator("a", has_text="Product team").count() == 2
    assert sorted(side.locator(".handle").all_inner_texts()) == ["product-two", "team"]
    page.context.close()


def test_a_reply_its_edit_and_its_deletion_in_place_reach_another_open_page(world, chromium):
    """Issue 44 in a browser: reply in a thread with its Reply form, edit the reply, delete it; a
    person with the same decision open in another browser context sees each change without reloading."""
    from playwright.sync_api import expect

    server, urls = world
    page, other = signed_in(chromium, server), signed_in(chromium, server)
    for p in (page, other):
        p.goto(server.base + urls["decision"])
    wait = 30_000  # a hang-only deadline: the live page follows within a moment
    page.locator("article.comment", has_text="Berlin is cheaper.").locator(
        "xpath=following-sibling::div[1]//summary").click()
    page.locator("details[open] textarea").fill("Agreed: Berlin.")
    with page.expect_navigation():
        page.locator("details[open]").get_by_role("button", name="Reply", exact=True).click()
    reply = page.locator("article.comment.reply", has_text="Agreed: Berlin.")
    expect(reply).to_have_count(1)
    reply_id = reply.get_attribute("id").removeprefix("comment-")
    expect(other.locator("article.comment.reply", has_text="Agreed: Berlin.")).to_have_count(1, timeout=wait)
    # edit it: the dialog of "Edit a comment of yours"
    page.get_by_role("button", name="Edit a comment of yours").click()
    dialog = page.locator("dialog#dlg-edit_comment")
    dialog.get_by_label("Which comment").fill(reply_id)
    dialog.get_by_label("Text").fill("Agreed: Berlin, by train.")
    with page.expect_navigation():
        dialog.get_by_role("button", name="Edit a comment of yours").click()
    expect(other.locator("article.comment.reply", has_text="by train")).to_have_count(1, timeout=wait)
    expect(other.locator(f"#comment-{reply_id} a.edited")).to_have_count(1, timeout=wait)
    # delete it
    page.get_by_role("button", name="Delete a comment").click()
    dialog = page.locator("dialog#dlg-delete_comment")
    dialog.get_by_label("Which comment").fill(reply_id)
    with page.expect_navigation():
        dialog.get_by_role("button", name="Delete a comment").click()
    expect(other.locator("article.comment.reply", has_text="by train")).to_have_count(0, timeout=wait)
    expect(page.locator("article.comment", has_text="Berlin is cheaper.")).to_have_count(1)
    page.context.close()
    other.context.close()


def test_a_note_restored_from_the_deleted_list_reaches_another_open_page(world, chromium):
    """Issue 44 in a browser: a deleted note is on the studio's Deleted list; its Restore button
    brings it back, to its own page; a person with the studio's feed open in another browser
    context sees it return without reloading."""
    from playwright.sync_api import expect

    server, urls = world
    api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
    try:
        made = api.post("/studios/team/actions/create_note", json={"title": "Minutes of the kickoff", "body": "m"})
        note = made.json()["url"]
        assert api.post(f"{note}/actions/delete_item", json={"confirm": "Minutes of the kickoff"}).status_code == 200
    finally:
        api.close()
    page, other = signed_in(chromium, server), signed_in(chromium, server)
    other.goto(server.base + urls["studio"])
    feed = other.locator("#main")
    expect(feed).not_to_contain_text("Minutes of the kickoff")
    page.goto(server.base + urls["deleted"])
    row = page.locator("ul.deleted li", has_text="Minutes of the kickoff")
    expect(row).to_contain_text("deleted by @")
    other.wait_for_timeout(500)  # the feed's event stream is open
    with page.expect_navigation():
        row.get_by_role("button", name="Restore").click()
    assert page.url == server.base + note
    expect(page.locator("#main > .alert.flash")).to_contain_text("Restored the note")
    expect(page.locator("#main > .alert.deleted")).to_have_count(0)
    expect(feed).to_contain_text("Minutes of the kickoff", timeout=30_000)  # a hang-only deadline: it follows live
    assert other.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
    page.goto(server.base + urls["deleted"])
    expect(page.locator("ul.deleted li", has_text="Minutes of the kickoff")).to_have_count(0)
    page.context.close()
    other.context.close()


def test_a_deadline_typed_in_the_browser_is_read_in_its_zone_and_times_show_in_it(world, chromium):
    """Someone who set no zone on /whoami types a deadline in a browser in Tokyo: the form sends the
    browser's zone (app.js) and the deadline is the end of that day in Tokyo, not in UTC; the
    exact time of a comment, on hover, is in Tokyo too."""
    from datetime import datetime

    server, urls = world
    year = datetime.now(UTC).year + 1
    api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
    try:
        made = api.post("/studios/team/actions/create_decision", json={"question": "When is the party?",
                                                                       "options": ["Soon"]})
        decision = made.json()["url"]
        api.post(f"{decision}/actions/add_comment", json={"body": "Before the holidays, please."})
        context = chromium.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo",
                                       locale="en-US")
        page = context.new_page()
        page.goto(navmcp(server, "login-link", server.owner_handle(), "--base-url", server.base) + "&next=" + decision)
        page.get_by_role("button", name=re.compile("^Sign in as")).click()
        page.wait_for_url(server.base + decision)
        exact = page.locator("article.comment time.exact").first.get_attribute("title") or ""
        assert "GMT+9" in exact and "UTC" not in exact, exact  # the browser's zone
        page.get_by_role("button", name="Extend the deadline").click()
        page.locator("dialog#dlg-extend_decision input[type=date]").fill(f"{year}-01-15")
        with page.expect_navigation():
            page.locator("dialog#dlg-extend_decision").get_by_role("button", name="Extend the deadline").click()
        stored = api.get(decision + ".json").json()["data"]["item"]["deadline"]
        assert stored.startswith(f"{year}-01-15T14:59:59"), stored  # 23:59:59 on the 15th in Tokyo
        context.close()
    finally:
        api.close()


def test_a_deadline_shows_in_the_browsers_zone_or_the_one_the_person_set(world, chromium):
    """Someone who set no zone on /whoami reads a deadline in the browser's (app.js); someone who
    did reads it in theirs, whatever the browser's (navmcp.clock.zones)."""
    from datetime import datetime

    server, urls = world
    year = datetime.now(UTC).year + 1
    api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
    try:
        made = api.post("/studios/team/actions/create_decision",
                        json={"question": "When do we fly?", "options": ["Early"], "deadline": f"{year}-01-15T03:30Z"})
        assert made.status_code == 200, made.text
        decision = made.json()["url"]
        context = chromium.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo",
                                       locale="en-US")
        page = context.new_page()
        page.goto(navmcp(server, "login-link", server.owner_handle(), "--base-url", server.base) + "&next=" + decision)
        page.get_by_role("button", name=re.compile("^Sign in as")).click()
        page.wait_for_url(server.base + decision)
        shown = page.locator("time.local").first.text_content() or ""
        assert "12:30" in shown and "Jan 15" in shown and "UTC" not in shown, shown  # 03:30 UTC in Tokyo
        said = api.post("/whoami/actions/set_time_zone", json={"zone": "Europe/Paris"})
        assert said.status_code == 200, said.text
        page.reload()
        shown = page.locator("time.local").first.text_content() or ""
        assert shown == f"Fri 15 Jan {year}, 04:30 Europe/Paris" or "04:30 Europe/Paris" in shown, shown
        context.close()
    finally:
        api.post("/whoami/actions/set_time_zone", json={"zone": "none"})
        api.close()
