"""The worker threads serve senders in turn (navmcp.web.workers.FairPool): one user's flood of costly
requests delays another user's request by one turn, not by the flood. Judged by the order of
service, never by the clock."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx

from deadlines import HANG
from navmcp.identity import add_user, mint_token
from navmcp.web import create_app
from navmcp.web.workers import FairPool


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def _waiting(pool: FairPool) -> int:
    with pool._ready:
        return sum(len(q) for q in pool._queues.values())


def test_senders_are_served_in_turn_not_in_order_of_arrival():
    pool = FairPool(1, "test-fair")
    gate, served = threading.Event(), []

    def job(name: str) -> str:
        served.append(name)
        if name == "a0":
            gate.wait(HANG)
        return name

    futures = [pool.submit("a", job, "a0")]
    _until(lambda: served == ["a0"], "the first job started")
    futures += [pool.submit("a", job, f"a{n}") for n in range(1, 9)]  # 8 more from a
    futures += [pool.submit("b", job, "b0"), pool.submit("c", job, "c0"), pool.submit("b", job, "b1")]
    gate.set()
    assert [f.result(HANG) for f in futures][-3:] == ["b0", "c0", "b1"]
    # each sender with work waiting gets one job per round: b and c wait for one of a's, not eight
    assert served[:7] == ["a0", "a1", "b0", "c0", "a2", "b1", "a3"]
    assert served[7:] == ["a4", "a5", "a6", "a7", "a8"]
    pool.shutdown()


def test_one_sender_never_holds_every_thread_so_another_is_served_at_once():
    """Issue 40 item 3: with two costly threads, one user's searches ran on both, and another
    user's search waited for one of them to end (0.5–1.4 s on a 100k-item studio). A sender now
    runs on all threads but one: the other's job starts while hers are all still running."""
    pool = FairPool(2, "test-fair")
    gate, started = threading.Event(), []

    def job(name: str) -> str:
        started.append(name)
        if name.startswith("a"):
            gate.wait(HANG)
        return name

    flood = [pool.submit("a", job, f"a{n}") for n in range(4)]
    _until(lambda: started, "her first job started")
    mine = pool.submit("b", job, "b0")
    assert mine.result(HANG) == "b0"  # served while hers still run: the second thread was kept free
    assert not flood[0].done() and started == ["a0", "b0"] and _waiting(pool) == 3
    gate.set()
    assert [f.result(HANG) for f in flood] == ["a0", "a1", "a2", "a3"]
    pool.shutdown()


def test_a_sender_alone_still_runs_on_all_threads_but_one():
    """The room kept is one thread: with three, one sender runs two at once."""
    pool = FairPool(3, "test-fair")
    gate, started = threading.Event(), []

    def job(n: int) -> int:
        started.append(n)
        gate.wait(HANG)
        return n

    flood = [pool.submit("a", job, n) for n in range(5)]
    _until(lambda: len(started) >= 2, "two of her jobs started")
    assert _waiting(pool) == 3 and len(started) == 2
    gate.set()
    assert [f.result(HANG) for f in flood] == list(range(5))
    pool.shutdown()


def test_a_failing_job_fails_only_its_own_future():
    pool = FairPool(2, "test-fair")
    bad = pool.submit("a", lambda: 1 / 0)
    good = pool.submit("a", lambda: 42)
    assert isinstance(bad.exception(HANG), ZeroDivisionError) and good.result(HANG) == 42
    pool.shutdown()


def test_one_users_flood_of_searches_delays_another_users_search_by_one_turn(any_app, monkeypatch):
    """8 searches from alice (as 8 attacking clients send them) hold the one costly thread; bob's one
    search is served after at most one more of hers, on either store; and two tokens of one person
    share one turn."""
    monkeypatch.setenv("NAVMCP_WEB_COSTLY_THREADS", "1")
    web = create_app(any_app)
    alice, bob = add_user(any_app.store, "alice"), add_user(any_app.store, "bob")
    tokens = {"alice": mint_token(any_app.secret, alice["id"]), "alice2": mint_token(any_app.secret, alice["id"]),
              "bob": mint_token(any_app.secret, bob["id"])}
    by_token = {f"Bearer {token}": name for name, token in tokens.items()}
    gate, served = threading.Event(), []
    answer = web._answer

    async def recorded(req, handler):  # in the costly thread, in the order of service
        served.append(by_token[req.header("authorization")])
        if len(served) == 1:
            gate.wait(HANG)
        return await answer(req, handler)

    async def run() -> list[int]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url="http://127.0.0.1") as http:
            def search(name: str):
                return asyncio.ensure_future(http.get("/search?q=lunch", headers={
                    "Authorization": f"Bearer {tokens[name]}", "Accept": "text/markdown"}))

            for name in tokens:  # each token verified once (a page that is not costly)
                assert (await http.get("/whoami", headers={"Authorization": f"Bearer {tokens[name]}"})).status_code == 200
            web._answer = recorded
            flood = [search("alice" if n % 2 else "alice2") for n in range(8)]
            while not served or _waiting(web.workers.costly) < 7:  # her first running, seven waiting
                await asyncio.sleep(0.005)
            mine = search("bob")
            while _waiting(web.workers.costly) < 8:
                await asyncio.sleep(0.005)
            gate.set()
            return [r.status_code for r in await asyncio.gather(*flood, mine)]

    assert set(asyncio.run(run())) == {200}
    assert served.index("bob") == 2  # after the search running and one waiting of alice's (both her tokens)
    assert len(served) == 9


def test_cycle_pages_are_served_in_the_costly_threads_in_turn():
    """A cycle page counts its window's votes and joins, which grows with the studio's activity: it
    is served apart, with searches, in each user's turn, never on the loop or the common threads."""
    from navmcp.pages import costly

    for cycle in ("today", "yesterday", "this-week", "last-week", "this-month"):
        assert costly(f"/studios/team/cycles/{cycle}") and costly(f"/studios/team/cycles/{cycle}?closed=2")
    assert not costly("/studios/team") and not costly("/awaiting") and not costly("/studios/team/tags/x")
