"""The session cookie and the other ports of the host (issue 24, item 6; docs/security.md).

Browsers keep one cookie jar per host name, whatever the port: every listener on 127.0.0.1 is
sent navmcp's cookie and may set one for it. What is closed here: the cookie's name is the
instance's own (another navmcp on another port no longer replaces it), `__Host-` and Secure
behind HTTPS, and a session is bound to the instance that opened it (a session id planted from
another port, not made by this instance's login flow, signs nobody in). What remains on plain
HTTP is said in docs/security.md: a page shows who is signed in.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from navmcp.identity import add_user
from navmcp.web import auth, create_app
from webclient import BASE, Client, follow_login_link, session_cookie_name
from webproc import free_port

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")


def set_cookies(response) -> list[str]:
    return [v for k, v in response.headers.multi_items() if k == "set-cookie"]


def test_the_cookie_is_named_for_this_instance_and_host_only_behind_https(app, owner):
    plain, secure = create_app(app), create_app(app, secure_cookies=True)
    name = session_cookie_name(app)
    assert name.startswith("navmcp_session_") and name != "navmcp_session"
    for web, expected in ((plain, name), (secure, "__Host-" + name)):
        client = Client(web)
        try:
            signed_in = follow_login_link(client, auth.create_login_link(app.store, owner["id"], BASE))
            cookie, = [c for c in set_cookies(signed_in) if c.startswith(expected + "=")]
            attributes = [a.strip() for a in cookie.split(";")[1:]]
            assert "Path=/" in attributes and "HttpOnly" in attributes and not any(
                a.lower().startswith("domain") for a in attributes)
            assert ("Secure" in attributes) == (web is secure)
        finally:
            client.close()
        pair = cookie.split(";", 1)[0]  # sent back as a browser would (over HTTPS for a Secure one)
        client = Client(web, {"Cookie": pair})
        try:
            assert client.get("/whoami").status_code == 200
        finally:
            client.close()
    # Another instance (another secret) names its cookie otherwise.
    assert auth.cookie_name(auth.instance_id(b"another secret" * 3), False) != name


def test_a_session_not_opened_by_this_instance_signs_nobody_in(app, owner):
    """A session id presented under this instance's cookie name must be one this instance's login
    flow opened: one stored for another instance (sharing the database) or unbound, as the cookie
    of the single shared name was, is unknown here."""
    web = create_app(app)
    name = session_cookie_name(app)
    foreign = auth.open_session(app.store, owner["id"], instance="0123456789abcdef")
    unbound = auth.open_session(app.store, owner["id"])
    ours = auth.open_session(app.store, owner["id"], instance=auth.instance_id(app.secret))
    for value, status in ((foreign, 303), (unbound, 303), (ours, 200)):
        client = Client(web, {"Cookie": f"{name}={value}"})
        try:
            assert client.get("/").status_code == status, value
        finally:
            client.close()
    # ...nor under the old shared name.
    client = Client(web, {"Cookie": f"navmcp_session={ours}"})
    try:
        assert client.get("/").status_code == 303
    finally:
        client.close()


def test_a_malformed_cookie_of_another_port_does_not_hide_ours(app, owner):
    web = create_app(app)
    ours = auth.open_session(app.store, owner["id"], instance=auth.instance_id(app.secret))
    client = Client(web, {"Cookie": f'other="a b; c"; junk; x={{"json": 1}}; {session_cookie_name(app)}={ours}'})
    try:
        assert client.get("/").status_code == 200
    finally:
        client.close()


class _Planter(BaseHTTPRequestHandler):
    """Another program on another port of 127.0.0.1: its page sets cookies for the host."""

    cookies: list[str] = []
    received: list[str] = []

    def do_GET(self):  # noqa: N802 — http.server's name
        type(self).received.append(self.headers.get("Cookie") or "")
        body = b"<p>nothing to see</p>"
        self.send_response(200)
        for cookie in type(self).cookies:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@needs_chromium
def test_in_chromium_two_instances_keep_their_sessions_and_a_planted_one_signs_nobody_in(tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    from navmcp.app import App
    from navmcp.config import Config
    from webclient import WebServer

    monkeypatch.setenv("NAVMCP_OWNER", "ana")
    a = WebServer(tmp_path / "a")
    monkeypatch.setenv("NAVMCP_OWNER", "ben")
    b = WebServer(tmp_path / "b")
    # An intruder with an account on A opens a session of A's outside its login flow (the cookie
    # value of the old single name, which any port could set) and plants it from another port.
    app = App(Config(home=tmp_path / "a", database_url=None, token=None))
    intruder = add_user(app.store, "intruder")
    planted = auth.open_session(app.store, intruder["id"])
    name_on_a = session_cookie_name(app)
    app.store.close()
    port = free_port()
    planter = HTTPServer(("127.0.0.1", port), _Planter)
    _Planter.cookies = [f"navmcp_session={planted}; Path=/", f"{name_on_a}={planted}; Path=/"]
    threading.Thread(target=planter.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/")  # the planting page
                page.goto(a.base + "/")
                assert "/login" in page.url  # the planted session signs nobody in
                for server, handle in ((a, "ana"), (b, "ben")):
                    page.goto(server.login_link)
                    page.get_by_role("button", name=f"Sign in as @{handle}").click()
                    page.wait_for_load_state()
                # Both stay signed in, each as its own user, and each page says who that is.
                for server, handle in ((a, "ana"), (b, "ben"), (a, "ana")):
                    page.goto(server.base + "/")
                    assert page.url == server.base + "/", page.url
                    assert f"Your account (@{handle})" in page.content()
                names = sorted(c["name"] for c in page.context.cookies() if c["name"].startswith("navmcp_session_"))
                assert len(names) == 2 and len(set(names)) == 2
                # What remains on plain HTTP (docs/security.md): any port the browser is sent to
                # receives the host's cookies, ours included.
                page.goto(f"http://127.0.0.1:{port}/")
                assert any(n in _Planter.received[-1] for n in names)
            finally:
                browser.close()
    finally:
        planter.shutdown()
        planter.server_close()
        a.stop()
        b.stop()
