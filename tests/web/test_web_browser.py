"""A real browser: headless Chromium (Debian's, driven by Playwright) signs in with a login link,
opens a decision an agent created over MCP (stdio), votes through the form; then the agent sees the vote.
Screenshots of the pages visited are saved in artifacts/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from nav_helpers import accepts_at
from navmcp.demo.walkthrough import StdioClient, text_of

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")


def navmcp(server, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "navmcp", *args], env=server.env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_human_votes_in_the_browser_and_the_agent_sees_it(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    navmcp(server, "user", "add", "alice", "--name", "Alice <b>Human</b>")
    with StdioClient(env={"NAVMCP_HOME": str(server.home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None},
                     client_name="browser-test-agent") as agent:
        agent.initialize()
        assert not agent.act("create_studio", url="/", handle="team", name="Team")["isError"]
        assert not agent.act("add_member", url="/studios/team/members", handle="alice")["isError"]
        accepts_at(server.home, "alice")  # she agrees, in her browser
        made = agent.act("create_decision", url="/studios/team", question="Where is the offsite?",
                         options=["Lisbon", "Berlin", "Online <script>alert(1)</script>"])
        decision = made["structuredContent"]["url"]

        link = navmcp(server, "login-link", "alice", "--base-url", server.base)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                dialogs = []
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                # without a session: the login page explains how to get a link
                page.goto(server.base + decision)
                assert "/login" in page.url and " login-link " in page.content()  # the command for this workspace
                page.screenshot(path=str(ARTIFACTS / "browser-1-login.png"), full_page=True)
                # follow the one-time link: a page naming whom it signs in, whose button does it
                page.goto(link)
                assert page.locator("h1").inner_text() == "Sign in as @alice"
                # opening the link signed nothing in (the login page only remembered where to go on to)
                assert [c["name"] for c in page.context.cookies()] == ["navmcp_next"]
                page.screenshot(path=str(ARTIFACTS / "browser-1-confirm.png"), full_page=True)
                page.get_by_role("button", name="Sign in as @alice").click()
                page.wait_for_load_state()
                # back on the decision it came for, though the link named no `next`
                assert page.url == server.base + decision, page.locator("body").inner_text()[:500]
                assert page.locator("h1").inner_text() == "Where is the offsite?"
                assert "You have not voted" in page.locator("main").inner_text()
                page.screenshot(path=str(ARTIFACTS / "browser-2-decision.png"), full_page=True)
                # vote through the form: accept Berlin and Lisbon, prefer Berlin; Online is left
                # as it starts, unticked (a first vote starts empty): no say on it
                form = page.locator('form[data-action="vote"]')
                assert form.locator("input[type=checkbox]:checked").count() == 0
                form.get_by_label("accept Berlin").check()
                form.get_by_label("prefer Berlin").check()
                form.get_by_label("accept Lisbon").check()
                form.get_by_label(re.compile(r"^accept Online")).uncheck()
                form.get_by_role("button", name="vote").click()
                page.wait_for_load_state()
                assert page.url == server.base + decision, page.locator("body").inner_text()[:1500]  # PRG
                main = page.locator("main").inner_text()
                assert "✓ Vote recorded" in main
                assert "Your vote: Lisbon: accept; Berlin: accept + prefer." in main
                page.screenshot(path=str(ARTIFACTS / "browser-3-voted.png"), full_page=True)
                assert dialogs == []  # the <script> in an option title never ran
                # a long unbroken title and the facts tables stay inside a phone's width
                long = agent.act("create_note", url="/studios/team", title="W" * 190, body="x")
                page.set_viewport_size({"width": 390, "height": 800})
                for url in (long["structuredContent"]["url"], "/studios/team", decision):
                    page.goto(server.base + url)
                    assert page.evaluate("document.documentElement.scrollWidth") <= 390, url
            finally:
                browser.close()

        # the agent, over MCP, sees the human's vote
        seen = text_of(agent.navigate(decision))
        assert "1 of 2 members" in seen
        assert re.search(r"Berlin — id `\w+` — 1 accept, 1 prefer", seen)
        assert re.search(r"Lisbon — id `\w+` — 1 accept, 0 prefer", seen)
    audit = subprocess.run([sys.executable, "-m", "navmcp", "get", "/studios/team/audit"], env=server.env,
                           capture_output=True, text=True).stdout
    assert "@alice | web | vote on" in audit
