"""Rate limits per token: configurable, off by default, answered with when to retry, audited."""

from __future__ import annotations

import math
import re
import sqlite3
import time

import pytest

from adversarial import figures, world
from adversarial.drivers import StdioProcess
from navmcp.errors import NavError, RateLimited
from navmcp.mcp.tools import Session
from navmcp.ratelimit import RateLimiter, key_for, parse


def waits_allowed(period: float, elapsed: float) -> range:
    """The "retry in N seconds" a limiter may name when one call comes back every `period` seconds
    and the calls took `elapsed` seconds from the bucket's first call: ceil(period - t), t in [0, elapsed]."""
    return range(max(1, math.ceil(period - elapsed)), math.ceil(period) + 1)


def named_wait(text: str) -> int:
    found = re.search(r"retry in (\d+) seconds?", text)
    assert found, text
    return int(found.group(1))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_bucket_allows_a_burst_then_a_steady_rate():
    clock = Clock()
    limiter = RateLimiter(3, 30, clock)
    for _ in range(3):
        limiter.check("k")
    with pytest.raises(RateLimited) as e:
        limiter.check("k")
    assert e.value.retry_after == pytest.approx(10.0) and "retry in 10 seconds" in e.value.message
    limiter.check("other")  # keys are independent
    clock.now += 9.9
    with pytest.raises(RateLimited) as e:
        limiter.check("k")
    assert e.value.retry_after == pytest.approx(0.1, abs=1e-6) and "retry in 1 second" in e.value.message
    clock.now += 0.1
    limiter.check("k")
    clock.now += 1000
    for _ in range(3):  # refilled to the burst size, not beyond
        limiter.check("k")
    with pytest.raises(RateLimited):
        limiter.check("k")


@pytest.mark.parametrize("spec,calls,window", [("60/60s", 60, 60), ("600/10m", 600, 600), ("5/s", 5, 1),
                                               ("1000/1h", 1000, 3600), (" 2 / 500ms ", 2, 0.5)])
def test_parse(spec, calls, window):
    limiter = parse(spec)
    assert (limiter.calls, limiter.window) == (calls, window)


@pytest.mark.parametrize("spec", [None, "", "off", "OFF", "0"])
def test_off(spec):
    assert parse(spec) is None


@pytest.mark.parametrize("spec", ["fast", "60", "/60s", "60/0s", "-1/60s", "60/60y"])
def test_bad_spec_is_a_clear_error(spec):
    with pytest.raises(NavError, match="NAVMCP_RATE_LIMIT"):
        parse(spec)


@pytest.fixture(scope="module")
def adv_world(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("ratelimit") / "home")


def _audited(home) -> list[tuple]:
    conn = sqlite3.connect(home / "navmcp.db")
    try:
        return conn.execute("SELECT user_id, action, url, studio_id, outcome FROM audit "
                            "WHERE outcome LIKE 'rate limited:%' ORDER BY id").fetchall()
    finally:
        conn.close()


def test_tools_refuse_with_seconds_and_audit(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    app = w.app(rate_limit="4/60s")
    try:
        member = Session(app, w.tokens["member"])
        started = time.monotonic()
        for _ in range(4):
            assert member.call_tool("navigate", {"url": "/studios/adv"})["isError"] is False
        result = member.call_tool("execute_action", {"action": "add_comment", "url": w.urls["note"],
                                                     "params": {"body": "one too many"}})
        allowed = waits_allowed(15, time.monotonic() - started)  # 4 per 60 s: one back every 15 s
        text = result["content"][0]["text"]
        assert result["isError"] is True and named_wait(text) in allowed, text
        # The refused write did not happen; another token is not affected; the tokenless owner has its own bucket.
        with app.store.read() as tx:
            assert tx.scalar("SELECT count(*) FROM comments WHERE body = 'one too many'") == 0
        assert Session(app, w.tokens["admin"]).call_tool("navigate", {"url": "/"})["isError"] is False
        assert Session(app, None).call_tool("navigate", {"url": "/"})["isError"] is False
        rows = _audited(w.home)
        assert len(rows) == 1
        user_id, action, url, studio_id, outcome = rows[0]
        assert (user_id, action, url) == (w.users["member"]["id"], "add_comment", w.urls["note"])
        assert studio_id is not None and named_wait(outcome) in allowed, outcome
        figures.add("ratelimit.refusals", 1)
    finally:
        app.store.close()


def test_key_is_per_token_and_per_user_without_one(adv_world):
    user = adv_world.users["member"]
    assert key_for("a", user) != key_for("b", user)
    assert key_for(None, user) == f"user:{user['id']}"
    assert "a" not in key_for("a" * 40, user)[6:]  # the token itself is not kept


def test_off_by_default_many_calls_pass(adv_world):
    app = adv_world.app()
    try:
        session = Session(app, adv_world.tokens["member"])
        assert app.rate_limiter is None
        assert all(not session.call_tool("navigate", {"url": "/help"})["isError"] for _ in range(300))
    finally:
        app.store.close()


def test_stdio_server_limits_and_audits(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    process = StdioProcess({**w.env("author"), "NAVMCP_RATE_LIMIT": "5/60s"})
    try:
        process.initialize("limited-agent")
        started = time.monotonic()
        outcomes = [process.call("navigate", url="/studios/adv/members") for _ in range(8)]
        allowed = waits_allowed(12, time.monotonic() - started)  # 5 per 60 s: one back every 12 s
        assert [r["isError"] for r in outcomes] == [False] * 5 + [True] * 3
        assert all(named_wait(r["content"][0]["text"]) in allowed for r in outcomes[5:]), outcomes[5:]
        assert process.request("ping")["result"] == {}  # the protocol itself is never limited
    finally:
        assert process.close() == 0
    rows = _audited(w.home)
    assert len(rows) == 3 and all(r[1] == "navigate" and r[3] is not None for r in rows)
    figures.add("ratelimit.refusals", 3)


def test_bad_spec_over_stdio_is_a_tool_error(adv_world):
    process = StdioProcess({**adv_world.env("author"), "NAVMCP_RATE_LIMIT": "lots"})
    try:
        process.initialize()
        result = process.call("navigate", url="/")
        assert result["isError"] is True and "NAVMCP_RATE_LIMIT" in result["content"][0]["text"]
    finally:
        assert process.close() == 0
