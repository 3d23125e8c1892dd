"""Protocol fuzzing over `/mcp` (Streamable HTTP): the frame generators and the oracle of the stdio
suite, plus HTTP-level oddities. Every frame gets a well-formed JSON-RPC answer (200, or 400 for a
frame that is not JSON), 202 with an empty body for notifications, or the documented HTTP status —
never a 500 or a traceback — and the session still answers ping afterwards. Runs in process
(httpx.ASGITransport) and against a real `navmcp web` process on a loopback port, and fails on
anything the server logs at ERROR.
"""

from __future__ import annotations

import json
import socket

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from adversarial import figures, fuzz, world
from adversarial.http import HEADERS, INIT, Http, HttpDriver, WebProcess, open_session
from navmcp.web import create_app
from navmcp.web.request import MAX_BODY

FUZZ = settings(max_examples=figures.pick(120, 4000), deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                       HealthCheck.function_scoped_fixture])
REAL_FUZZ = settings(FUZZ, max_examples=figures.pick(60, 2000))


@pytest.fixture(scope="module")
def adv_world(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("httpfuzz") / "home")


@pytest.fixture(scope="module")
def inproc(adv_world):
    app = adv_world.app()
    http = Http(create_app(app))
    drivers = {role: HttpDriver(http, adv_world.tokens[role]) for role in ("author", "outsider")}
    yield http, drivers
    http.close()
    app.store.close()


@pytest.fixture(scope="module")
def real(adv_world, tmp_path_factory):
    w = world.copy(adv_world, tmp_path_factory.mktemp("httpfuzz-real") / "home")
    server = WebProcess(w.home, {"NAVMCP_WEB_BODY_TIMEOUT": "1"})  # a short body is a 408 within the test
    http = Http(server.base)
    driver = HttpDriver(http, w.tokens["author"])
    yield server, http, driver, w
    http.close()
    assert server.stop() == 0
    assert not server.errors(), server.stderr_text()[-3000:]


@given(frame=fuzz.raw_frames(), role=st.sampled_from(["author", "outsider"]))
@FUZZ
def test_inprocess_mcp_answers_every_frame(adv_world, inproc, logged_errors, frame, role):
    http, drivers = inproc
    driver = drivers[role]
    frame = fuzz.bind(frame, adv_world.urls)
    fuzz.check(frame, driver.send(frame))
    assert driver.ping_ok()
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.inprocess.frames")


@given(value=fuzz.json_frames)
@FUZZ
def test_inprocess_mcp_answers_every_decoded_value(adv_world, inproc, logged_errors, value):
    http, drivers = inproc
    frame = fuzz.bind(fuzz.serialize(value, False), adv_world.urls)
    fuzz.check(frame, drivers["author"].send(frame))
    assert drivers["author"].ping_ok()
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.inprocess.frames")


@given(frame=fuzz.raw_frames())
@REAL_FUZZ
def test_real_server_answers_every_frame(real, frame):
    server, http, driver, w = real
    frame = fuzz.bind(frame, w.urls)
    fuzz.check(frame, driver.send(frame))
    assert driver.ping_ok()
    figures.add("fuzz.http.real.frames")


# --- regressions and HTTP-level oddities ---------------------------------------------------------

STRICT = [b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":NaN}}', b'{"jsonrpc":"2.0","id":Infinity,"method":"ping"}',
          b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
          b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"navigate","arguments":{"url":"/\\udfff"}}}',
          b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
          b'"clientInfo":{"name":"\\ud800"}}}']


@pytest.mark.parametrize("frame", STRICT)
def test_regression_strict_json_on_mcp(inproc, logged_errors, frame):
    """Found by the HTTP fuzzer: /mcp decoded with plain json.loads, so NaN and lone surrogates got
    through; a lone surrogate in an initialize's client name was a 500 (the session write raised)."""
    http, drivers = inproc
    reply = drivers["author"].post(frame)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700 and reply.json()["id"] is None
    assert drivers["author"].ping_ok()
    assert not logged_errors, logged_errors[-1]


def _oddities(session: str, ended: str, token: str):
    ok_ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    auth = {"authorization": f"Bearer {token}"}
    with_session = {**HEADERS, **auth, "mcp-session-id": session}

    def chunks(total: int):
        async def gen():  # no Content-Length: Transfer-Encoding: chunked
            for _ in range(total // 4096):
                yield b" " * 4096
            yield ok_ping
        return gen()

    # (name, method, headers, body, expected status, JSON-RPC error body expected)
    return [
        ("no content-type", "POST", {**auth, "mcp-session-id": session}, ok_ping, 200, False),
        ("text/plain", "POST", {**with_session, "content-type": "text/plain"}, ok_ping, 415, True),
        ("form content-type", "POST", {**with_session, "content-type": "application/x-www-form-urlencoded"}, ok_ping, 415, True),
        ("accept text/html only", "POST", {**with_session, "accept": "text/html"}, ok_ping, 200, False),
        ("no session", "POST", {**HEADERS, **auth}, ok_ping, 400, True),
        ("unknown session", "POST", {**with_session, "mcp-session-id": "nope"}, ok_ping, 404, True),
        ("huge session id", "POST", {**with_session, "mcp-session-id": "x" * 8000}, ok_ping, 404, True),
        ("ended session", "POST", {**with_session, "mcp-session-id": ended}, ok_ping, 404, True),
        ("bad protocol version", "POST", {**with_session, "mcp-protocol-version": "1999-01-01"}, ok_ping, 400, True),
        ("no token", "POST", {**HEADERS, "mcp-session-id": session}, ok_ping, 401, True),
        ("bad token", "POST", {**with_session, "authorization": "Bearer x.y.z"}, ok_ping, 401, True),
        ("basic auth", "POST", {**with_session, "authorization": "Basic YTpi"}, ok_ping, 401, True),
        ("oversized body", "POST", with_session, b" " * (MAX_BODY + 1) + ok_ping, 413, True),
        ("oversized chunked body", "POST", with_session, chunks(MAX_BODY + 8192), 413, True),
        ("small chunked body", "POST", with_session, chunks(8192), 200, False),
        ("empty body", "POST", with_session, b"", 400, True),
        ("GET", "GET", with_session, None, 405, True),
        ("PUT", "PUT", with_session, ok_ping, 405, True),
        ("PATCH", "PATCH", with_session, ok_ping, 405, True),
        ("OPTIONS", "OPTIONS", with_session, None, 405, True),
        ("DELETE without session", "DELETE", {**HEADERS, **auth}, None, 400, True),
        ("DELETE unknown", "DELETE", {**with_session, "mcp-session-id": "nope"}, None, 404, True),
        ("foreign Host", "POST", {**with_session, "host": "evil.example"}, ok_ping, 403, True),
        ("foreign Origin", "POST", {**with_session, "origin": "http://evil.example"}, ok_ping, 403, True),
        ("null Origin", "POST", {**with_session, "origin": "null"}, ok_ping, 403, True),
        ("tools/call before initialize", "POST", {**HEADERS, **auth},
         b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"navigate","arguments":{"url":"/"}}}', 400, True),
    ]


ODDITY_NAMES = [o[0] for o in _oddities("s", "e", "t")]


def _readable_id(body) -> object:
    try:
        value = json.loads(body)
    except (TypeError, ValueError):
        return None
    return value.get("id") if isinstance(value, dict) else None


def _check_oddity(http, driver, ended, name, logged=None):
    for oname, method, headers, body, status, rpc_error in _oddities(driver.session, ended, driver.token):
        if oname != name:
            continue
        reply = http.request(method, "/mcp", headers=headers, content=body)
        assert reply.status_code == status, (name, reply.status_code, reply.text[:300])
        if rpc_error:
            answer = reply.json()
            assert answer["jsonrpc"] == "2.0" and answer["error"]["message"], answer
            # the request's own id once its body was read; null when refused before (or unreadable)
            assert answer["id"] == (_readable_id(body) if method == "POST" and status in (400, 404) else None), answer
        else:
            assert reply.json()["result"] == {}, reply.text
        if status == 401:
            assert reply.headers["www-authenticate"].startswith('Bearer realm="navmcp"')
        if status == 405:
            assert "POST" in reply.headers["allow"]
        assert driver.ping_ok()
        figures.add("fuzz.http.oddities")
        return
    raise AssertionError(name)


@pytest.fixture(scope="module")
def ended_session(inproc):
    http, drivers = inproc
    from adversarial.http import open_session

    token = drivers["author"].token
    session = open_session(http, token)
    assert http.request("DELETE", "/mcp", headers={**HEADERS, "authorization": f"Bearer {token}",
                                                    "mcp-session-id": session}).status_code == 200
    return session


@pytest.mark.parametrize("name", ODDITY_NAMES)
def test_inprocess_http_oddities(inproc, ended_session, logged_errors, name):
    http, drivers = inproc
    _check_oddity(http, drivers["author"], ended_session, name)
    assert not logged_errors, logged_errors[-1]


def test_real_server_http_oddities(real):
    server, http, driver, w = real
    ended = open_session(http, driver.token)
    http.request("DELETE", "/mcp", headers={**HEADERS, "authorization": f"Bearer {driver.token}", "mcp-session-id": ended})
    for name in ODDITY_NAMES:
        _check_oddity(http, driver, ended, name)


def _raw(port: int, data: bytes, timeout: float = 5) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except TimeoutError:
            pass
        return out


def test_real_server_malformed_http(real):
    """Wire-level garbage is answered 4xx by the HTTP layer (or the connection closed), never a 500."""
    server, http, driver, w = real
    auth = f"Authorization: Bearer {driver.token}\r\nMcp-Session-Id: {driver.session}\r\n".encode()
    cases = [
        b"GARBAGE\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nabcde",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n" + auth + b"\r\nzz\r\nabc\r\n0\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + b"Content-Length: 100\r\nConnection: close\r\n\r\n{}",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,  # a TLS hello on the plain port
    ]
    for data in cases:
        out = _raw(server.port, data, timeout=3)
        if out:
            status = int(out.split(b" ", 2)[1])
            assert 400 <= status < 500 or status == 408, out[:300]
        figures.add("fuzz.http.wire")
    assert driver.ping_ok()


# --- the web app's own surfaces: the action API and the page renditions -----------------------

WEB_STATUSES = {200, 303, 400, 401, 403, 404, 405, 409, 413, 415, 422}


@given(call=fuzz.targeted_calls(), body_kind=st.sampled_from(["json", "wrapped", "form", "raw"]),
       raw=fuzz.raw_frames(), role=st.sampled_from(["author", "outsider", "admin"]))
@FUZZ
def test_action_api_answers_hostile_params(adv_world, tmp_path_factory, logged_errors, call, body_kind, raw, role):
    """Real actions on their real pages through POST {page}/actions/{name}, with the targeted
    fuzzer's hostile values (as JSON, wrapped in {"params": ...}, as a form, or as raw bytes):
    a documented status with the canonical JSON error body, never a 500."""
    w = _action_world(adv_world, tmp_path_factory)
    http = w._http
    arguments = call["params"]["arguments"]
    url = fuzz.bind(arguments["url"].encode(), w.urls).decode().rstrip("/")
    headers = {"authorization": f"Bearer {w.tokens[role]}"}
    target = f"{url}/actions/{arguments['action']}"
    params = json.loads(fuzz.bind(json.dumps(arguments["params"]).encode(), w.urls))
    if body_kind == "json":
        reply = http.request("POST", target, headers=headers, content=json.dumps(params))
    elif body_kind == "wrapped":
        reply = http.request("POST", target, headers=headers, content=json.dumps({"params": params}))
    elif body_kind == "form":
        form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items() if isinstance(k, str)}
        reply = http.request("POST", target, headers=headers, data=form)
    else:
        reply = http.request("POST", target, headers={**headers, "content-type": "application/json"}, content=raw)
    assert reply.status_code in WEB_STATUSES, (reply.status_code, reply.text[:300])
    if reply.status_code not in (200, 303) and reply.headers["content-type"].startswith("application/json"):
        body = reply.json()
        assert body["ok"] is False and body["status"] == reply.status_code and body["message"], body
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.action_api")


_ACTION_WORLD: dict = {}


def _action_world(adv_world, tmp_path_factory):
    """One writable copy of the world with an in-process web app, shared by the examples."""
    if "w" not in _ACTION_WORLD:
        w = world.copy(adv_world, tmp_path_factory.mktemp("httpfuzz-actions") / "home")
        w._app = w.app()
        w._http = Http(create_app(w._app))
        _ACTION_WORLD["w"] = w
    return _ACTION_WORLD["w"]


@given(url=st.sampled_from(fuzz.URLS) | st.text(max_size=80), accept=st.sampled_from(
    ["text/html", "text/markdown", "application/json", "*/*", "text/markdown;q=0.5, text/html;q=0.9", "", "garbage;q=x"]),
    method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE"]))
@FUZZ
def test_pages_answer_any_url(adv_world, inproc, logged_errors, url, accept, method):
    http, drivers = inproc
    url = fuzz.bind(url.encode(), adv_world.urls).decode()
    if not url.startswith("/") or url.startswith("//") or any(c in url for c in "#\r\n\x00") or "://" in url:
        url = "/" + url.lstrip("/").replace("#", "%23")
    try:
        reply = http.request(method, url, headers={"authorization": f"Bearer {drivers['author'].token}",
                                                   "accept": accept})
    except httpx_errors():  # a URL httpx itself refuses to send is not a server verdict
        return
    assert reply.status_code in WEB_STATUSES, (url, reply.status_code, reply.text[:300])
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.pages")


def httpx_errors():
    import httpx

    return (httpx.InvalidURL, httpx.LocalProtocolError, httpx.UnsupportedProtocol)


@pytest.mark.parametrize("body", [b'{"title":' + b"[" * 100_000 + b"]" * 100_000 + b',"body":"x"}',
                                  b'{"title":"\\ud800","body":"x"}', b'{"title":"t","body":NaN}',
                                  b'{"params":{"title":"\\udfff","body":"x"}}', b"\xff\xfe"])
def test_regression_action_api_strict_json(adv_world, tmp_path, body):
    """Found by the action-API fuzzer: the JSON body was read with plain json.loads, so deep nesting
    was a RecursionError (500) and a lone surrogate or NaN reached the action."""
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app()
    http = Http(create_app(app))
    count = "SELECT count(*) FROM items WHERE kind = 'note'"
    try:
        with app.store.read() as tx:
            # The shared world's note count: the fuzzers before this test may have added valid notes.
            notes = tx.scalar(count)
        reply = http.request("POST", "/studios/adv/actions/create_note", content=body,
                             headers={"authorization": f"Bearer {w.tokens['author']}"})
        assert reply.status_code == 400 and reply.json()["ok"] is False, reply.text[:300]
        with app.store.read() as tx:
            assert tx.scalar(count) == notes  # nothing was created
    finally:
        http.close()
        app.store.close()


def test_regression_internal_error_on_mcp_is_json_rpc(adv_world, tmp_path, monkeypatch, logged_errors):
    """An internal error on /mcp was answered with the web app's JSON error body, which MCP clients
    can't read; then as a JSON-RPC error with code -32600 (Invalid Request) and id null even once
    the request's id was known. It is -32603 (internal error), status 500, with the request's id
    once the body is decoded; the details are only in the log."""
    import asyncio

    import httpx

    from navmcp.mcp import sessions

    w = world.copy(adv_world, tmp_path / "home")
    app = w.app()
    web = create_app(app)
    http = Http(web)
    try:
        session = open_session(http, w.tokens["author"])
        # Both ways a stored session is read (alone, or with the user of an already-verified token).
        monkeypatch.setattr(sessions, "load", lambda *a, **k: 1 / 0)
        monkeypatch.setattr(sessions, "load_in", lambda *a, **k: 1 / 0)
        monkeypatch.setattr(sessions, "load_with_user", lambda *a, **k: 1 / 0)
        monkeypatch.setattr(sessions, "create", lambda *a, **k: 1 / 0)

        async def post(body: bytes, with_session: bool = True):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url="http://127.0.0.1") as c:
                return await c.post("/mcp", content=body,
                                    headers={**HEADERS, "authorization": f"Bearer {w.tokens['author']}",
                                             **({"mcp-session-id": session} if with_session else {})})

        def check(reply, id_):
            assert reply.status_code == 500
            body = reply.json()
            assert body == {"jsonrpc": "2.0", "id": id_, "error": {"code": -32603, "message": body["error"]["message"]}}
            assert "internal error" in body["error"]["message"].lower()
            assert "ZeroDivision" not in reply.text and "Traceback" not in reply.text
            assert logged_errors and "ZeroDivisionError" in logged_errors[-1]
            logged_errors.clear()

        # The token was verified before: the session is read with its user, before the body is.
        check(asyncio.run(post(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')), None)
        web.site.tokens.forget()  # now the session is read after the body: the reply carries the id
        check(asyncio.run(post(b'{"jsonrpc":"2.0","id":"p-2","method":"ping"}')), "p-2")
        check(asyncio.run(post(json.dumps({**INIT, "id": 3}).encode(), with_session=False)), 3)  # the new session's row
    finally:
        http.close()
        app.store.close()
