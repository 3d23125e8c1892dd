"""Helpers for the web tests: a synchronous in-process client, sign-in, CSRF, a real server process."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from navmcp.web.auth import cookie_name, create_login_link, instance_id
from webproc import free_port, wait_until_healthy

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://127.0.0.1"
SCRIPT = "<script>alert('x')</script>"


def session_cookie_name(app, secure: bool = False) -> str:
    """The session cookie's name of the web app over `app` (its instance's own)."""
    return cookie_name(instance_id(app.secret), secure)


class Client:
    """A synchronous face on httpx.AsyncClient over httpx.ASGITransport (one event loop per client)."""

    def __init__(self, web, headers: dict[str, str] | None = None):
        self.loop = asyncio.new_event_loop()
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url=BASE, headers=headers or {})

    def request(self, method: str, url: str, **kw) -> httpx.Response:
        return self.loop.run_until_complete(self.http.request(method, url, **kw))

    def get(self, url: str, **kw) -> httpx.Response:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw) -> httpx.Response:
        return self.request("POST", url, **kw)

    def delete(self, url: str, **kw) -> httpx.Response:
        return self.request("DELETE", url, **kw)

    def close(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()



def sign_in(web, app, user_id: str) -> Client:
    client = Client(web)
    reply = follow_login_link(client, create_login_link(app.store, user_id, BASE).removeprefix(BASE))
    assert reply.status_code == 303, reply.text
    return client


def confirm_form(page_text: str) -> str:
    """The action of a login link's page's button (its token and `next` in the query)."""
    return unescape(re.search(r'<form method="post" action="([^"]+)"', page_text).group(1))


def follow_login_link(http, link: str) -> httpx.Response:
    """What a person does with a login link: open it (a page naming whom it signs in), then press
    its button, a POST from this site's page (so with its Origin, as a browser sends). `http` is a
    `Client` (relative links) or an httpx.Client (absolute ones); the answer to the POST."""
    page = http.get(link)
    assert page.status_code == 200 and "<h1>Sign in as @" in page.text, page.text[:500]
    parts = urlsplit(link)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else BASE
    return http.post(urljoin(link, confirm_form(page.text)), headers={"Origin": origin})


def csrf_of(html_text: str) -> str:
    return re.search(r'name="csrf_token" value="([0-9a-f]+)"', html_text).group(1)



class WebServer:
    """A real `navmcp web` process on a free loopback port; `login_link` is the one it printed."""

    def __init__(self, home: Path, env: dict[str, str] | None = None, port: int | None = None):
        self.home = home
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "NAVMCP_HOME": str(home), **(env or {})}
        env.pop("NAVMCP_TOKEN", None)
        env.pop("NAVMCP_DATABASE_URL", None)
        self.env = env
        self.proc = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(self.port)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        self.login_link = None
        deadline = time.monotonic() + 20
        while self.login_link is None:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("navmcp web exited: " + self.proc.stderr.read())
            m = re.search(r"(http://\S+/login\?token=\S+)", line)
            if m:
                self.login_link = m.group(1)
            if time.monotonic() > deadline:
                raise RuntimeError("navmcp web printed no login link")
        if not wait_until_healthy(self.base, self.proc, deadline):
            raise RuntimeError("navmcp web did not answer /healthz")

    def token(self, handle: str | None = None) -> str:
        args = [sys.executable, "-m", "navmcp", "token", handle or self.owner_handle()]
        return subprocess.run(args, env=self.env, capture_output=True, text=True, check=True).stdout.strip()

    def owner_handle(self) -> str:
        out = subprocess.run([sys.executable, "-m", "navmcp", "get", "/whoami"], env=self.env, capture_output=True,
                             text=True, check=True).stdout
        return re.search(r"You: @([a-z0-9-]+)", out).group(1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()
