"""Connected apps in Chromium: an app known by a long metadata-document URL fits its card at a
desk's width and a phone's (it overflowed the card at 1280 px). Screenshots in artifacts/pages/."""

from __future__ import annotations

import re

import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import ensure_owner
from navmcp.oauth import grants
from test_web_pages_browser import ARGS, ARTIFACTS, CHROMIUM, signed_in

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")
DOCUMENT = "https://agents.example.com/.well-known/oauth-client/navmcp-workspace-assistant/metadata-document.json"


def test_connected_apps_fit_their_card(tmp_path):
    from playwright.sync_api import sync_playwright

    from webclient import WebServer

    server = WebServer(tmp_path / "home")
    app = App(Config(home=server.home, database_url=None, token=None))
    try:
        owner = ensure_owner(app.store)
        grant = grants.approve(app.store, grants.new_code(), owner["id"], DOCUMENT, "Workspace Assistant for Teams",
                               "read write", server.base + "/mcp", "http://127.0.0.1:1/cb", "x" * 43)
        with app.store.write(user_id=owner["id"]) as tx:  # as if its code was exchanged
            tx.execute("UPDATE oauth_grants SET issued_at = created_at WHERE id = ?", (grant,))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                for width in (1280, 390):
                    page = signed_in(chromium, server, width)
                    page.goto(server.base + "/connected-apps")
                    assert page.get_by_role("button", name=re.compile("^Revoke Workspace Assistant")).is_visible()
                    overflow = page.evaluate("""() => { const m = document.getElementById('main');
                        const card = m.getBoundingClientRect();
                        const out = [...m.querySelectorAll('*')].filter(e => e.getClientRects().length)
                            .filter(e => { const r = e.getBoundingClientRect(); return r.right > card.right + 0.5 || r.left < card.left - 0.5; })
                            .map(e => e.tagName + '.' + e.className);
                        const scrolled = [...m.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
                            .map(e => e.tagName + '.' + e.className);
                        return [m.scrollWidth - m.clientWidth, document.documentElement.scrollWidth - innerWidth, out, scrolled]; }""")
                    page.screenshot(path=str(ARTIFACTS / f"connected-apps-{width}.png"), full_page=True)
                    assert overflow == [0, 0, [], []], (width, overflow)  # nothing sticks out or scrolls inside
                    page.context.close()
            finally:
                chromium.close()
    finally:
        app.store.close()
        server.stop()
