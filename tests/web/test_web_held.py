"""Held actions over a real `navmcp web` process (navmcp/held/): a rule is set in the browser and is
absent for a Bearer token; the official SDK client (2026-07-28 era, Streamable HTTP) is bob's agent:
its close_decision is held, it watches the held page, the admin approves in Chromium, and the agent
is notified and reads the executed result. User text on the held page stays inert."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import anyio
import httpx
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.subscriptions import ResourceUpdated  # noqa: E402

from deadlines import HANG  # noqa: E402
from mcp import Client  # noqa: E402
from nav_helpers import accepts_at  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SCRIPT = "<script>document.title='pwned'</script>"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")


@pytest.fixture
def world(tmp_path):
    from test_web_pages_browser import navmcp
    from webclient import WebServer

    server = WebServer(tmp_path / "home")
    try:
        navmcp(server, "user", "add", "bob")
        owner = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
        bob = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token('bob')}"})

        def act(client, url: str, action: str, **params) -> httpx.Response:
            return client.post(f"{url.rstrip('/')}/actions/{action}", json=params)

        assert act(owner, "/", "create_studio", handle="team", name="Team").status_code == 200
        assert act(owner, "/studios/team/members", "add_member", handle="bob").status_code == 200
        accepts_at(server.home, "bob")
        decision = act(bob, "/studios/team", "create_decision", question=f"Where {SCRIPT}?",
                       options=["Lisbon"]).json()["url"]
        yield server, owner, bob, act, decision
        owner.close()
        bob.close()
    finally:
        server.stop()


def set_rule(page, actions: str = "close_decision") -> None:
    """The admin's rule, set with the queue page's form: agents' `actions` wait for an admin."""
    page.locator(".actionbar").get_by_role("button", name="Set hold rule").click()
    dialog = page.locator("#dlg-set_hold_rule")
    dialog.locator('[name="actions"]').fill(actions)
    with page.expect_navigation():
        dialog.get_by_role("button", name="Set hold rule").click()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


def test_rules_are_absent_for_a_token_and_set_in_the_browser(world, chromium):
    from test_web_pages_browser import check_layout, signed_in

    server, owner, bob, act, decision = world
    listed = owner.get("/studios/team/held/actions").json()["actions"]
    assert listed == []  # a Bearer token: no rule to change
    refused = act(owner, "/studios/team/held", "set_hold_rule", actions="*")
    assert refused.status_code == 403 and "browser session only" in refused.text
    page = signed_in(chromium, server)
    page.goto(server.base + "/studios/team/held")
    set_rule(page)
    assert "close_decision" in page.inner_text("main") and "need 1 admin of the studio" in page.inner_text("main")
    # a held write's parameters, as written, fit a phone's width (they scrolled the page sideways)
    set_rule(page, "add_comment")
    held = act(bob, decision, "add_comment", body="unbroken-" * 30).json()["url"]
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(server.base + held)
    assert "unbroken-unbroken" in page.inner_text("main")
    check_layout(page, "held", 390)
    page.context.close()


def test_the_sdk_agent_is_held_watches_and_hears_the_browser_approval(world, chromium):
    from test_web_pages_browser import signed_in

    server, owner, bob, act, decision = world
    page = signed_in(chromium, server)
    page.goto(server.base + "/studios/team/held")
    set_rule(page)

    listening, done = threading.Event(), threading.Event()
    seen: dict = {}

    async def agent():  # bob's agent, in its own thread (Playwright's sync API holds this one's loop)
        with anyio.fail_after(90):
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token('bob')}"}) as http:
                async with Client(streamable_http_client(server.base + "/mcp", http_client=http), mode="auto") as client:
                    seen["era"] = client.protocol_version
                    result = await client.call_tool("execute_action", {"action": "close_decision", "url": decision})
                    seen["result"] = result
                    uri = "navmcp://" + result.structured_content["held"]["url"]
                    seen["before"] = (await client.read_resource(uri)).contents[0].text
                    async with client.listen(resource_subscriptions=[uri]) as subscription:
                        listening.set()
                        with anyio.fail_after(HANG):
                            seen["event"] = (await subscription.__anext__(), uri)
                    seen["after"] = (await client.read_resource(uri)).contents[0].text

    def run_agent() -> None:
        try:
            anyio.run(agent)
        except BaseException as e:  # noqa: BLE001 - reported by the assertions below
            seen["error"] = e
        finally:
            listening.set()
            done.set()

    thread = threading.Thread(target=run_agent, daemon=True)
    thread.start()
    assert listening.wait(HANG) and "error" not in seen, seen.get("error")
    result = seen["result"]
    assert seen["era"] == "2026-07-28" and not result.is_error
    assert result.content[0].text.startswith("⏸ Not done yet — held for approval.")
    held = result.structured_content["held"]
    assert "| pending | @bob |" in seen["before"]
    page.goto(server.base + held["url"])
    assert page.title() != "pwned" and "unchanged since it was requested" in page.inner_text("main")
    page.locator(".actionbar").get_by_role("button", name="Approve").click()
    dialog = page.locator("#dlg-approve")
    dialog.locator('[name="note"]').fill("fine by me")
    with page.expect_navigation():
        dialog.get_by_role("button", name="Approve").click()
    assert re.search(r"Approved: close_decision ran as @bob", page.inner_text("main"))
    assert done.wait(HANG) and "error" not in seen, seen.get("error")
    event, uri = seen["event"]
    assert event == ResourceUpdated(uri=uri)  # the agent was told
    assert "| executed | @bob |" in seen["after"] and "Decision closed" in seen["after"]
    assert "closed" in bob.get(decision + ".md").text
    # The audit in words: the held request and the run its approval made are not refusals.
    page.goto(server.base + "/studios/team/audit")
    lines = [line.strip() for line in page.locator("ul.items > li").all_inner_texts()]
    held_line = [line for line in lines if "held for approval" in line]
    ran_line = [line for line in lines if "approved by @" in line]
    assert len(held_line) == 1 and held_line[0].startswith("@bob closed voting on a decision"), lines
    assert len(ran_line) == 1 and ran_line[0].startswith("@bob closed voting on a decision"), lines
    assert "in the web app" in ran_line[0] and "through" in ran_line[0]  # bob's agent's client, her browser
    assert not any("not done:" in line for line in held_line + ran_line), lines
    assert any(line.startswith("@root approved a held action at " + held["url"]) for line in lines), lines
    assert page.locator(f'ul.items a[href="{held["url"]}"]', has_text="held for approval").count() == 1
    page.context.close()
