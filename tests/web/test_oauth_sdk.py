"""OAuth 2.1 end to end: the official MCP SDK's OAuth client against a real `navmcp web`, with a
person pressing Allow in headless Chromium. The client is given nothing but the server's URL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from webclient import WebServer

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")


def navmcp(server: WebServer, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "navmcp", *args], env=server.env, capture_output=True, text=True,
                          check=True).stdout.strip()


class Memory:
    """The SDK's token storage, in memory, so the test can look at what the client holds."""

    def __init__(self):
        self.tokens = None
        self.client_info = None
        self.history = []  # every token set the client stored, in order

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class Callback:
    """The client's loopback redirect URI (RFC 8252): a server that records where the browser came back."""

    def __init__(self):
        import http.server
        import threading

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/callback"):  # (not the browser's /favicon.ico)
                    seen.append(f"http://127.0.0.1:{self.server.server_port}{self.path}")
                self.send_response(200)
                self.send_header("content-type", "text/plain")
                self.end_headers()
                self.wfile.write(b"You may close this window.")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Person:
    """Alice in Chromium, signed in with a login link; she presses a button on the consent page."""

    def __init__(self, page, callback: Callback):
        self.page = page
        self.redirected = callback.seen  # where the browser was sent back to the client
        self.consents = 0
        self.press = "Allow"
        self.log: list[str] = []
        page.on("console", lambda m: self.log.append(m.text))
        page.on("requestfailed", lambda r: self.log.append(f"{r.url} {r.failure}"))

    async def start(self, server: WebServer):
        link = navmcp(server, "login-link", "alice", "--base-url", server.base)
        await self.page.goto(link)
        await self.page.get_by_role("button", name="Sign in as @alice").click()
        await self.page.wait_for_url(server.base + "/")

    async def open(self, url: str):
        """The SDK's redirect handler: the authorization URL opens in the person's browser."""
        self.consents += 1
        await self.page.goto(url)
        heading = await self.page.locator("h1").inner_text()
        assert heading == "Allow Test Agent to use navmcp as @alice?", heading
        if self.consents == 1:  # what the person sees, on a laptop and on a phone
            ARTIFACTS.mkdir(exist_ok=True)
            for width in (1280, 390):
                await self.page.set_viewport_size({"width": width, "height": 800})
                await self.page.screenshot(path=str(ARTIFACTS / f"oauth-consent-{width}.png"), full_page=True)
                scroll = await self.page.evaluate("document.documentElement.scrollWidth")
                assert scroll <= width, f"the consent page scrolls sideways at {width}px ({scroll}px)"
        await self.page.get_by_role("button", name=self.press, exact=True).click()
        for _ in range(100):
            if len(self.redirected) == self.consents:
                return
            await anyio.sleep(0.05)
        raise AssertionError(f"the browser was not sent back to the client: {self.page.url} {self.log}")

    async def callback_result(self):
        from mcp.shared.auth import AuthorizationCodeResult

        query = parse_qs(urlsplit(self.redirected[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                       iss=query.get("iss", [None])[0])


def sdk_provider(server: WebServer, person: Person, storage: Memory, callback: Callback):
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(client_name="Test Agent", redirect_uris=[callback.base + "/callback"],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    return OAuthClientProvider(server.base + "/mcp", metadata, storage, redirect_handler=person.open,
                               callback_handler=person.callback_result)


def test_sdk_oauth_client_connects_by_url_consents_refreshes_and_is_revoked(tmp_path):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from playwright.async_api import async_playwright

    from mcp import Client as SDKClient

    server = WebServer(tmp_path / "home", env={"NAVMCP_OAUTH_ACCESS_SECONDS": "4"})
    callback = Callback()
    try:
        navmcp(server, "user", "add", "alice", "--name", "Alice Example")
        storage = Memory()

        async def main():
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
                person = Person(await browser.new_page(), callback)
                await person.start(server)
                provider = sdk_provider(server, person, storage, callback)
                async with create_mcp_http_client(auth=provider) as http:
                    async with SDKClient(streamable_http_client(server.base + "/mcp", http_client=http)) as client:
                        tools = await client.session.list_tools()
                        assert [t.name for t in tools.tools] == ["navigate", "execute_action"]
                        who = await client.call_tool("navigate", {"url": "/whoami"})
                        assert "@alice" in who.content[0].text and "Test Agent" in who.content[0].text
                        made = await client.call_tool("execute_action", {
                            "action": "create_studio", "url": "/", "params": {"handle": "ours", "name": "Ours"}})
                        assert made.is_error is False, made.content[0].text
                        first = storage.tokens
                        assert first.scope == "read write" and first.refresh_token
                        # the access token expires; the client refreshes (the refresh token rotates)
                        await anyio.sleep(5)
                        page = await client.call_tool("navigate", {"url": "/studios/ours"})
                        assert page.is_error is False and "Ours" in page.content[0].text
                        assert storage.tokens.access_token != first.access_token
                        assert storage.tokens.refresh_token != first.refresh_token
                        assert person.consents == 1  # refreshing asked nobody
                    # on Connected apps, alice sees the app and revokes it
                    await person.page.goto(server.base + "/whoami")
                    await person.page.get_by_role("link", name="Connected apps").click()
                    row = person.page.locator(".apps li", has_text="Test Agent")
                    assert "read, write" in await row.inner_text()
                    await row.get_by_role("button", name="Revoke Test Agent").click()
                    await person.page.wait_for_url(server.base + "/connected-apps")
                    assert "Revoked Test Agent" in await person.page.locator("main").inner_text()
                    assert "No app has access" in await person.page.locator("main").inner_text()
                await browser.close()
            return person

        person = anyio.run(main)
        assert person.consents == 1
        # the revoked app's tokens: the next call is a 401, and its refresh token is refused
        tokens = storage.tokens
        call = httpx.post(server.base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}},
            headers={"Authorization": f"Bearer {tokens.access_token}", "Accept": "application/json"})
        assert call.status_code == 401, call.text
        assert 'error="invalid_token"' in call.headers["www-authenticate"] and "revoked" in call.headers["www-authenticate"]
        refresh = httpx.post(server.base + "/token", data={"grant_type": "refresh_token", "refresh_token":
                                                          tokens.refresh_token, "client_id": storage.client_info.client_id})
        assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"
        # the audit says who acted through which app
        audit = httpx.get(server.base + "/studios/ours/audit.md",
                          headers={"Authorization": f"Bearer {server.token('alice')}"})
        assert "| @alice | Test Agent | `create_studio` on / |" in audit.text, audit.text
    finally:
        callback.close()
        server.stop()
