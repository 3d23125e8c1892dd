"""The HTTP transport for the adversarial suite: `/mcp` and the web app, in process or in a real
`navmcp web` process on a loopback port.

- `Http`: a synchronous client over either httpx.ASGITransport (in process, fast) or a real
  server's base URL; every answer is checked never to be a 500.
- `HttpDriver`: the fuzz seam of `drivers.Driver` over `/mcp`: POST the frame in an initialized
  session, the response body is the output, 202 means nothing.
- `HttpAgent`: a crowd agent (`call(tool, **arguments)`) with its own Mcp-Session-Id.
- `WebProcess`: a `navmcp web` subprocess with extra environment, its stderr collected so a test
  can fail on anything the server logged.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from deadlines import HANG
from webproc import free_port, wait_until_healthy

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "adv-http", "version": "1"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class ServerError(AssertionError):
    pass


class Http:
    """Synchronous requests to an ASGI app (in process) or a base URL (a real server)."""

    def __init__(self, target: Any, timeout: float = 30.0):
        self.loop = asyncio.new_event_loop()
        if isinstance(target, str):
            self.http = httpx.AsyncClient(base_url=target, timeout=timeout)
        else:
            self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=target), base_url="http://127.0.0.1",
                                          timeout=timeout)
        self.statuses: dict[int, int] = {}

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        reply = self.loop.run_until_complete(self.http.request(method, url, **kw))
        self.statuses[reply.status_code] = self.statuses.get(reply.status_code, 0) + 1
        if reply.status_code >= 500 or b"Traceback" in reply.content:
            raise ServerError(f"{method} {url[:200]} → {reply.status_code}: {reply.text[:500]}")
        return reply

    def sign_in(self, login_link: str) -> httpx.Response:
        """Open a login link (a page naming whom it signs in) and press its button, a POST from
        the site's own page (so with its Origin, as a browser sends); the answer to the POST."""
        from html import unescape
        from urllib.parse import urlsplit

        parts = urlsplit(login_link)
        page = self.request("GET", parts.path + "?" + parts.query)
        assert page.status_code == 200, page.text[:300]
        action = unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
        return self.request("POST", action, headers={"origin": str(self.http.base_url).rstrip("/")})

    def close(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()


def open_session(http: Http, token: str, client: str = "adv-http") -> str:
    init = json.loads(json.dumps(INIT))
    init["params"]["clientInfo"]["name"] = client
    reply = http.request("POST", "/mcp", content=json.dumps(init), headers={**HEADERS, "authorization": f"Bearer {token}"})
    assert reply.status_code == 200 and "result" in reply.json(), reply.text
    session = reply.headers["mcp-session-id"]
    done = http.request("POST", "/mcp", content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                        headers={**HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": session})
    assert done.status_code == 202, done.text
    return session


def holds_request(value) -> bool:
    """A message with an id and a method, alone or in a batch: what a 200 answers."""
    messages = value if isinstance(value, list) else [value]
    return any(isinstance(m, dict) and "id" in m and "method" in m for m in messages)


class HttpDriver:
    """`drivers.Driver` over POST /mcp in one initialized session."""

    def __init__(self, http: Http, token: str):
        self.http, self.token = http, token
        self.session = open_session(http, token, "fuzz")
        self.headers = {**HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": self.session,
                        "mcp-protocol-version": "2025-11-25"}

    def post(self, frame: bytes) -> httpx.Response:
        return self.http.request("POST", "/mcp", content=frame, headers=self.headers)

    def send(self, frame: bytes) -> list[bytes]:
        """MCP Streamable HTTP's status rule (2025-06-18, "Sending Messages to the Server"): a POST
        holding no request is answered 202 when accepted, else with an HTTP error status; a 200
        answers a request. A 400 is a frame that is not JSON, or such a refusal."""
        reply = self.post(frame)
        if reply.status_code == 202:
            assert reply.content == b"", reply.content[:200]
            return []
        assert reply.status_code in (200, 400), (reply.status_code, reply.text[:300])
        assert reply.headers["content-type"].startswith("application/json"), reply.headers
        assert reply.content, "an empty answer that is not 202"
        body = json.loads(reply.content)
        if reply.status_code == 200:  # the server decoded the frame, so json.loads can too
            assert holds_request(json.loads(frame)), ("200 for a POST without a request", frame[:300], reply.text[:300])
        elif not (isinstance(body, dict) and body.get("error", {}).get("code") == -32700):
            assert not holds_request(json.loads(frame)), ("400 for a request", frame[:300], reply.text[:300])
        return [reply.content]

    def ping_ok(self) -> bool:
        reply = self.post(b'{"jsonrpc":"2.0","id":"alive","method":"ping"}')
        return reply.status_code == 200 and reply.json() == {"jsonrpc": "2.0", "id": "alive", "result": {}}

    def close(self) -> None:
        self.http.request("DELETE", "/mcp", headers=self.headers)


class HttpAgent:
    """A crowd agent: one MCP session over /mcp (its own Http client: one per thread)."""

    def __init__(self, target: Any, token: str, name: str = "agent"):
        self.http = Http(target)
        self.token = token
        self.session = open_session(self.http, token, name)
        self.headers = {**HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": self.session}
        self._ids = itertools.count(1)

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        id_ = next(self._ids)
        body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        reply = self.http.request("POST", "/mcp", content=json.dumps(body), headers=self.headers)
        assert reply.status_code == 200, (reply.status_code, reply.text[:300])
        answer = reply.json()
        assert answer["id"] == id_ and "result" in answer, answer
        return answer["result"]

    def close(self) -> None:
        self.http.request("DELETE", "/mcp", headers=self.headers)
        self.http.close()



class WebProcess:
    """`python -m navmcp web` on a free loopback port, on `home`, with extra environment."""

    def __init__(self, home: Path, env: dict[str, str | None] | None = None, timeout: float = HANG):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full = {**os.environ, "NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None,
                **(env or {})}
        self.env = {k: v for k, v in full.items() if v is not None}
        self.proc = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        self.stderr: list[bytes] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not wait_until_healthy(self.base, self.proc, time.monotonic() + timeout):
            self.stop()
            raise RuntimeError("navmcp web did not start: " + self.stderr_text())

    def _drain(self) -> None:
        for line in self.proc.stderr:
            if len(self.stderr) < 2000:
                self.stderr.append(line)

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")

    def errors(self) -> list[str]:
        """Lines the server logged at ERROR (or a traceback)."""
        return [line for line in self.stderr_text().splitlines() if re.search(r"ERROR|Traceback|Exception", line)]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=5)
        self.proc.stderr.close()
        return code


class FormAgent:
    """A crowd agent that is a browser: signed in with a login link (cookie session), it posts the
    HTML forms of the pages with their CSRF token (`join_commitment` goes through the JSON action
    API with the cookie and an X-CSRF-Token header, so its message can be read)."""

    def __init__(self, target: Any, login_link: str):
        self.http = Http(target)
        reply = self.http.sign_in(login_link)
        assert reply.status_code == 303, reply.text[:300]
        self.csrf: str | None = None

    def _csrf(self, url: str) -> str:
        if self.csrf is None:
            page = self.http.request("GET", url)
            assert page.status_code == 200, page.text[:300]
            self.csrf = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text).group(1)
        return self.csrf

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        url = arguments["url"]
        if tool == "navigate":
            page = self.http.request("GET", url)
            return {"isError": page.status_code != 200, "content": [{"type": "text", "text": page.text}]}
        action, params = arguments["action"], arguments.get("params") or {}
        csrf = self._csrf(url)
        target = url.rstrip("/") + "/actions/" + action
        if action == "join_commitment":
            reply = self.http.request("POST", target, json=params, headers={"x-csrf-token": csrf})
            answer = reply.json()
            ok = reply.status_code == 200  # the tool's text is "✓ " + the result's message
            return {"isError": not ok, "content": [{"type": "text", "text": ("✓ " if ok else "") + answer["message"]}]}
        form: dict[str, Any] = {"csrf_token": csrf}
        for name, value in params.items():
            if name == "votes":
                form["votes.option"] = [b["option"] for b in value]
                form["votes.accept"] = [b["option"] for b in value if b.get("accept")]
                form["votes.prefer"] = [b["option"] for b in value if b.get("prefer")]
            else:
                form[name] = str(value)
        reply = self.http.request("POST", target, data=form)
        if reply.status_code == 303:
            return {"isError": False, "content": [{"type": "text", "text": "✓ (form posted)"}]}
        found = re.search(r'class="alert (?:error|refusal)"[^>]*>(.*?)</(?:div|p)>', reply.text, re.S)
        return {"isError": True, "content": [{"type": "text", "text": found.group(1) if found else reply.text}]}

    def close(self) -> None:
        self.http.close()
