"""Client ID Metadata Documents are fetched off the serving path (navmcp/oauth/documents.py): one
deadline for the whole fetch, a size cap, name resolution in threads of its own, a cache that
honours HTTP caching and remembers failures, and bounds on fetches at once (globally and per client
address) past which a request is refused at once. The attack it answers: a document served one
byte at a time, forever, asked for by many anonymous clients, while other people use the server."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter

import httpx
import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user
from navmcp.oauth import documents as fetched
from oauthflow import authorization_url, pkce
from pg_web import PgWebServer
from test_oauth_cimd import Documents
from webclient import WebServer

HANG = 10.0  # seconds: only a request held by someone else's fetch takes this long (the fetch deadline is 5 s)


class Trickle:
    """A loopback HTTP server that answers every request with a 200 head and then one byte of body
    every `every` seconds, forever (until closed); it counts the connections it took."""

    def __init__(self, every: float = 0.5):
        self.every, self.stop, self.connections = every, threading.Event(), 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{")
            while not self.stop.wait(self.every):
                conn.sendall(b" ")
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def dev(monkeypatch):
    monkeypatch.setenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", "1")


@pytest.fixture
def trickle():
    server = Trickle()
    yield server
    server.close()


# --- the attack on a real server, both stores ---------------------------------------------------


def _attack(base: str, token: str, trickle: Trickle, anonymous: int = 20, seconds: float = 8.0) -> dict:
    """`anonymous` clients, each from an address of its own (127.0.0.2, …), ask /authorize for
    trickled documents in a loop (half the same URL, half a URL of their own each time) while a
    person reads a page and /healthz. Every answer's time; the person's answers must all be 200."""
    stop = threading.Event()
    anon_times: list[float] = []
    anon_status: Counter[int] = Counter()
    person_times: list[float] = []
    health_times: list[float] = []
    problems: list[str] = []

    def anonymous_client(n: int) -> None:
        transport = httpx.HTTPTransport(local_address=f"127.0.0.{n + 2}")
        with httpx.Client(base_url=base, timeout=60, transport=transport) as http:
            i = 0
            while not stop.is_set():
                i += 1
                path = "/same.json" if n % 2 else f"/c{n}-{i}.json"
                started = time.monotonic()
                try:
                    reply = http.get(authorization_url(trickle.base + path, pkce()[1]))
                    anon_status[reply.status_code] += 1
                except httpx.HTTPError as e:
                    problems.append(f"anonymous: {e!r}")
                anon_times.append(time.monotonic() - started)

    def person() -> None:
        with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {token}",
                                                                "Accept": "text/markdown"}) as http:
            while not stop.is_set():
                for path, times in (("/", person_times), ("/healthz", health_times)):
                    started = time.monotonic()
                    reply = http.get(path)
                    times.append(time.monotonic() - started)
                    if reply.status_code != 200:
                        problems.append(f"{path}: {reply.status_code}")
                time.sleep(0.05)

    threads = [threading.Thread(target=anonymous_client, args=(n,)) for n in range(anonymous)]
    threads.append(threading.Thread(target=person))
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    assert not problems, problems[:5]
    figures = {"anonymous requests": len(anon_times), "anonymous statuses": dict(anon_status),
               "anonymous max s": round(max(anon_times), 3), "page requests": len(person_times),
               "page max s": round(max(person_times), 3), "page median s": round(sorted(person_times)[len(person_times) // 2], 3),
               "healthz max s": round(max(health_times), 3), "trickle connections": trickle.connections}
    print("\nfigures:", figures)
    # Hang-only bounds: nothing waits on someone else's fetch; an anonymous request waits at most
    # its own fetch's deadline.
    assert figures["page max s"] < HANG and figures["healthz max s"] < HANG, figures
    assert figures["anonymous max s"] < fetched.DEADLINE + HANG, figures
    assert set(anon_status) <= {400, 429}, figures
    assert len(person_times) >= 5, figures  # the person was answered throughout, not once at the end
    return figures


def test_a_trickled_document_holds_nobody_on_sqlite(tmp_path, trickle):
    server = WebServer(tmp_path / "home", env={"NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS": "1"})
    try:
        _attack(server.base, server.token(), trickle)
    finally:
        server.stop()


def test_a_trickled_document_holds_nobody_on_postgres(tmp_path, pg_url, pg_database, trickle):
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=pg_url, token=None))
    add_user(app.store, "alice")
    app.store.close()
    server = PgWebServer(home, pg_url, env={"NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS": "1"})
    try:
        _attack(server.base, server.navmcp("token", "alice"), trickle)
    finally:
        server.stop()


# --- in process: the pieces -----------------------------------------------------------------------


def _together(client, *requests):
    """Send requests at once on the in-process client's loop; their replies in order."""
    async def both():
        return await asyncio.gather(*(client.http.request(method, url) for method, url in requests))
    return client.loop.run_until_complete(both())


def test_name_resolution_holds_neither_the_loop_nor_a_page(anon, browser, dev, monkeypatch):
    """A host whose name takes long to resolve: the other requests on the same event loop are answered
    while it waits (in-process, SQLite: everything runs on that one loop)."""
    release, entered = threading.Event(), threading.Event()
    real = socket.getaddrinfo

    def slow(host, *args, **kw):
        if host == "localhost":
            entered.set()
            release.wait(30)
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", slow)
    client_id = "http://localhost:9/slow.json"

    async def scenario():
        authorize = asyncio.ensure_future(anon.http.get(authorization_url(client_id, pkce()[1])))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        health = await anon.http.get("/healthz")
        page = await anon.http.get("/help")
        assert not authorize.done()
        release.set()
        return health, page, await authorize

    health, page, authorize = anon.loop.run_until_complete(scenario())
    assert health.status_code == 200 and page.status_code in (200, 401, 303)
    assert authorize.status_code == 400 and "invalid_client" in authorize.text


def test_one_deadline_for_the_whole_fetch_and_the_failure_is_remembered(anon, dev, trickle, monkeypatch):
    monkeypatch.setattr(fetched, "DEADLINE", 1.0)
    url = trickle.base + "/client.json"
    started = time.monotonic()
    first = anon.get(authorization_url(url, pkce()[1]))
    assert first.status_code == 400 and "not received within 1 seconds" in first.text
    assert time.monotonic() - started < HANG
    again = [anon.get(authorization_url(url, pkce()[1])) for _ in range(3)]
    assert all(r.status_code == 400 and "not received within" in r.text for r in again)
    assert trickle.connections == 1  # remembered: fetched once


def test_the_cache_honours_http_caching(anon, dev):
    docs = Documents()
    hits: Counter[str] = Counter()
    handler = docs.server.RequestHandlerClass
    served = handler.do_GET

    def counting(self):
        hits[self.path] += 1
        served(self)

    handler.do_GET = counting
    try:
        cases = {"/fresh.json": ({"cache-control": "max-age=600"}, 1), "/nostore.json": ({"cache-control": "no-store"}, 3),
                 "/stale.json": ({"cache-control": "max-age=60", "age": "120"}, 3), "/plain.json": ({}, 1),
                 "/expired.json": ({"expires": "Thu, 01 Jan 1970 00:00:00 GMT"}, 3)}
        for path, (headers, _) in cases.items():
            url = docs.document(path)
            status, body, _ = docs.answers[path]
            docs.answers[path] = (status, body, headers)
            for _ in range(3):
                answer = anon.get(authorization_url(url, pkce()[1]))  # the sign-in page, naming the app
                assert answer.status_code == 200 and "Sign in" in answer.text
        gone = docs.raw("/gone.json", 404, b"{}")
        for _ in range(3):
            assert anon.get(authorization_url(gone, pkce()[1])).status_code == 400
        assert {path: hits[path] for path in cases} == {path: n for path, (_, n) in cases.items()}
        assert hits["/gone.json"] == 1  # a failure is remembered
    finally:
        docs.close()


def test_freshness_reads_cache_control_age_and_expires():
    now = 1_800_000_000.0
    assert fetched.freshness({}, now) == fetched.DEFAULT_SECONDS
    assert fetched.freshness({"cache-control": "public, max-age=120"}, now) == 120
    assert fetched.freshness({"cache-control": "max-age=120", "age": "100"}, now) == 20
    assert fetched.freshness({"cache-control": "max-age=10**9"}, now) == 0
    assert fetched.freshness({"cache-control": "max-age=999999999"}, now) == fetched.MAX_SECONDS
    assert fetched.freshness({"cache-control": "no-cache, max-age=60"}, now) == 0
    assert fetched.freshness({"expires": "garbage"}, now) == 0
    assert fetched.freshness({"date": "Thu, 15 Jan 2027 08:00:00 GMT",
                              "expires": "Thu, 15 Jan 2027 08:05:00 GMT"}, now) == 300


def test_many_asking_for_one_document_share_one_fetch_and_bounds_refuse_at_once(anon, dev, trickle, monkeypatch):
    monkeypatch.setattr(fetched, "DEADLINE", 2.0)
    same = trickle.base + "/same.json"
    # one address: two wait, the third is refused at once
    replies = _together(anon, *[("GET", authorization_url(same, pkce()[1]))] * 3)
    assert sorted(r.status_code for r in replies) == [400, 400, 429], [r.text[:200] for r in replies]
    refused = next(r for r in replies if r.status_code == 429)
    assert "retry-after" in refused.headers and "already waits" in refused.text
    assert trickle.connections == 1  # the two that waited shared one fetch
    # past the global bound of fetches at once, a new document is refused at once too
    monkeypatch.setattr(fetched, "FETCHES_AT_ONCE", 1)
    monkeypatch.setattr(fetched, "WAITING_PER_ADDRESS", 5)
    replies = _together(anon, ("GET", authorization_url(trickle.base + "/a.json", pkce()[1])),
                        ("GET", authorization_url(trickle.base + "/b.json", pkce()[1])))
    assert sorted(r.status_code for r in replies) == [400, 429]
    assert "too many client metadata documents" in next(r for r in replies if r.status_code == 429).text


def test_token_and_revoke_with_a_document_client_are_bounded_too(anon, dev, trickle, monkeypatch):
    monkeypatch.setattr(fetched, "DEADLINE", 1.0)
    url = trickle.base + "/agent.json"
    token = anon.post("/token", data={"grant_type": "refresh_token", "refresh_token": "x", "client_id": url})
    assert token.status_code in (400, 401) and token.json()["error"] == "invalid_client", token.text
    revoke = anon.post("/revoke", data={"token": "x", "client_id": url})
    assert revoke.status_code in (400, 401) and revoke.json()["error"] == "invalid_client", revoke.text
    assert trickle.connections == 1


# --- the public-address fence (every embedded IPv4 unwrapped) -------------------------------------

HIDDEN = ["::127.0.0.1", "2002:7f00:1::", "2002:7f00:1::1", "64:ff9b::7f00:1", "64:ff9b:1::7f00:1",
          "::ffff:0:7f00:1", "::ffff:127.0.0.1", "2002:a00:1::", "64:ff9b::a9fe:a9fe", "::a9fe:a9fe",
          "2001:0:4136:e378:8000:63bf:80ff:fffe"]


@pytest.mark.parametrize("address", HIDDEN)
def test_an_ipv4_address_inside_an_ipv6_one_is_judged_as_itself(address, monkeypatch):
    from navmcp.oauth import clients

    monkeypatch.delenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", raising=False)
    assert clients.connectable_address([address]) is None
    assert clients.connectable_address(["2002:808:808::1", "64:ff9b::808:808", "2606:4700::1111"]) == "2002:808:808::1"
    assert clients.connectable_address(["64:ff9b::808:808"]) == "64:ff9b::808:808"


def test_a_host_resolving_to_loopback_through_6to4_or_nat64_is_not_fetched(anon, monkeypatch):
    monkeypatch.delenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", raising=False)
    real = socket.getaddrinfo

    def wrapped(host, port, *args, **kw):
        if host.endswith(".example"):
            address = {"sixtofour.example": "2002:7f00:1::", "nat64.example": "64:ff9b::7f00:1",
                       "compat.example": "::127.0.0.1"}[host]
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
        return real(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", wrapped)
    for host in ("sixtofour.example", "nat64.example", "compat.example"):
        reply = anon.get(authorization_url(f"https://{host}/client.json", pkce()[1]))
        assert reply.status_code == 400 and "not a public address" in reply.text, (host, reply.text[:300])


def test_a_document_nested_past_the_parsers_depth_is_invalid_client(anon, dev):
    docs = Documents()
    try:
        url = docs.raw("/deep.json", 200, b"[" * 2500 + b"]" * 2500)
        reply = anon.get(authorization_url(url, pkce()[1]))
        assert reply.status_code == 400 and "not JSON" in reply.text, reply.text[:300]
    finally:
        docs.close()
