"""Limits: parameters are bounded with errors that name the field and the limit, URLs and lines
are bounded, and no page exceeds ~25k tokens (100 KB of markdown) even with maximal content —
titles of 200 characters that all need escaping, 20 options, links in both directions, full
pages of maximal comments, maximal bodies, hundreds of studios."""

from __future__ import annotations

import re

import pytest

from adversarial import figures, world
from adversarial.markdown import check_page
from navmcp.mcp.tools import Session, connect

MAX_PAGE_BYTES = 100_000
WORST = "#*_[]<>|`~\\"  # every one of these is escaped: a title of them doubles in length


def worst(prefix: str, length: int = 200) -> str:
    return (f"{prefix} " + WORST * 40)[:length]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A studio filled to every limit through the workspace (the same code path as agents)."""
    w = world.build(tmp_path_factory.mktemp("limits") / "home")
    app = w.app()
    ws, author, admin = app.workspace, w.users["author"], w.users["admin"]

    def act(user, url, action, **params):
        return ws.execute(user, url, action, params, worst("client", 100)).url

    notes = [act(author, "/studios/adv", "create_note", title=worst(f"n{i}"), body=f"see {w.urls['note']}",
                 tags=[f"t{k}" for k in range(10)]) for i in range(60)]
    mentions = " ".join(notes)[:4900]
    w.urls["big_decision"] = d = act(author, "/studios/adv", "create_decision", question=worst("q"),
                                     description=mentions, options=[worst(f"o{i}") for i in range(20)],
                                     tags=[f"t{k}" for k in range(10)])
    act(author, d, "vote", votes=[{"option": worst(f"o{i}"), "prefer": True} for i in range(20)])
    w.urls["big_note"] = n = act(author, "/studios/adv", "create_note", title=worst("big"),
                                 body=("`" * 50 + "x\n") * 1800 + mentions[:3000])
    w.urls["big_commitment"] = c = act(author, "/studios/adv", "create_commitment", title=worst("c"),
                                       description=mentions, critical_mass=3)
    for i in range(55):
        act(author, "/studios/adv", "create_note", title=worst(f"back{i}"), body=f"{d} {n} {c}")
    for url in (d, n, c):
        for _ in range(22):
            act(author, url, "add_comment", body=("C" * 199 + "\n") * 100)
    for i in range(25):
        act(admin, "/studios/adv", "create_decision", question=worst(f"await{i}"), options=["a"])
        act(admin, "/studios/adv", "create_commitment", title=worst(f"mass{i}"), critical_mass=5)
    for i in range(20):
        act(admin, notes[i], "pin")
    for i in range(210):
        act(author, "/", "create_studio", handle=f"s{i}", name=worst(f"studio{i}", 100), description="x" * 5000)
    app.store.close()
    return w


PAGES = ["big_decision", "big_note", "big_commitment", "/studios/adv", "/", "/whoami", "/studios/adv/members",
         "/studios/adv/cycles/today", "/studios/adv/search?q=n1", "/studios/adv/search?q=back",
         "/studios/adv/tags/t1", "/studios/adv/audit", "/help", "/help/urls", "big_note?part=2", "big_decision?page=2"]


@pytest.mark.parametrize("page", PAGES)
def test_pages_stay_bounded(big, page):
    url = page if page.startswith("/") else big.urls[page.split("?")[0]] + ("?" + page.split("?")[1] if "?" in page else "")
    app = big.app()
    try:
        role = "admin" if "audit" in url else "author"
        result = Session(app, big.tokens[role]).call_tool("navigate", {"url": url})
        markdown = result["content"][0]["text"]
        assert result["isError"] is False, markdown[:300]
        size = len(markdown.encode())
        figures.add("limits.pages_measured")
        figures.peak("max.page_bytes", size)
        assert size < MAX_PAGE_BYTES, f"{url}: {size} bytes"
        check_page(markdown, [a["name"] for a in result["structuredContent"]["actions"]])
    finally:
        app.store.close()


def test_long_comments_are_cut_with_the_url_of_the_whole(big):
    """Regression: 20 comments of 20,000 characters made one page of ~430 KB; a listed comment now
    shows its first 1,000 characters and the URL that lists it whole."""
    app = big.app()
    try:
        session = Session(app, big.tokens["member"])
        markdown = session.call_tool("navigate", {"url": big.urls["big_note"]})["content"][0]["text"]
        cuts = re.findall(r"the comment continues at `([^`]+)`", markdown)
        assert len(cuts) == 20
        whole = session.call_tool("navigate", {"url": cuts[0]})
        text = whole["content"][0]["text"]
        assert whole["isError"] is False and text.count("C" * 199) == 100 and len(text.encode()) < MAX_PAGE_BYTES
        missing = session.call_tool("navigate", {"url": big.urls["big_note"] + "?comment=nope"})
        assert missing["isError"] is True and "no comment" in missing["content"][0]["text"]
    finally:
        app.store.close()


def test_options_are_capped_at_20(big):
    """Regression: add_option had no limit, so a decision page could grow without bound."""
    app = big.app()
    try:
        session = Session(app, big.tokens["member"])
        page = session.call_tool("navigate", {"url": big.urls["big_decision"]})
        assert "add_option" not in [a["name"] for a in page["structuredContent"]["actions"]]
        result = session.call_tool("execute_action", {"action": "add_option", "url": big.urls["big_decision"],
                                                      "params": {"title": "one more"}})
        assert result["isError"] is True and "maximum of 20 options" in result["content"][0]["text"]
    finally:
        app.store.close()


FIELD_LIMITS = [
    ("/studios/adv", "create_note", {"title": "x" * 201, "body": "b"}, "title", "200"),
    ("/studios/adv", "create_note", {"title": "t", "body": "b" * 100_001}, "body", "100000"),
    ("/studios/adv", "create_note", {"title": "t", "body": "b", "tags": [f"t{i}" for i in range(11)]}, "tags", "10"),
    ("/studios/adv", "create_note", {"title": "a\nb", "body": "b"}, "title", "single line"),
    ("/studios/adv", "create_note", {"title": "t", "body": "b\x00"}, "body", "NUL"),
    ("/studios/adv", "create_decision", {"question": "q", "options": [str(i) for i in range(21)]}, "options", "20"),
    ("/studios/adv", "create_decision", {"question": "q", "description": "d" * 5001}, "description", "5000"),
    ("/studios/adv", "create_commitment", {"title": "t", "critical_mass": 0}, "critical_mass", "1"),
    ("/studios/adv", "create_commitment", {"title": "t", "critical_mass": 10**6}, "critical_mass", "100000"),
    ("note", "add_comment", {"body": "c" * 20_001}, "body", "20000"),
    ("decision", "vote", {"votes": [{"option": "Red"}] * 21}, "votes", "20"),
    ("decision", "vote", {"votes": [{"option": "R" * 201}]}, "votes.0.option", "200"),
    ("decision", "add_option", {"title": "o" * 201}, "title", "200"),
    ("/", "create_studio", {"handle": "x" * 33, "name": "n"}, "handle", "lowercase letters, digits and '-'"),
    ("/", "create_studio", {"handle": "ok", "name": "n" * 101}, "name", "100"),
]


@pytest.mark.parametrize("url,action,params,field,limit", FIELD_LIMITS)
def test_parameter_limits_name_the_field(big, url, action, params, field, limit):
    app = big.app()
    try:
        url = url if url.startswith("/") else big.urls[url]
        result = Session(app, big.tokens["admin"]).call_tool("execute_action", {"action": action, "url": url,
                                                                                "params": params})
        text = result["content"][0]["text"]
        assert result["isError"] is True and f"invalid parameters for {action}" in text, text[:300]
        assert f"'{field}'" in text and limit in text, text[:400]
        assert len(text) < 2000, "the error must not echo the oversized value"
        figures.add("limits.field_limits")
    finally:
        app.store.close()


def test_url_length_is_bounded(big):
    app = big.app()
    try:
        result = Session(app, big.tokens["member"]).call_tool("navigate", {"url": "/studios/adv/search?q=" + "a" * 5000})
        text = result["content"][0]["text"]
        assert result["isError"] is True and "longer than 2048" in text and len(text) < 200
    finally:
        app.store.close()


BIG = "x" * 1_000_000
ECHOES = [
    {"method": BIG},
    {"method": "tools/call", "params": {"name": BIG}},
    {"method": "tools/call", "params": {"name": "execute_action", "arguments": {"action": BIG, "url": "/"}}},
    {"method": "tools/call", "params": {"name": "execute_action",
                                        "arguments": {"action": "create_studio", "url": "/", "params": {BIG: 1}}}},
    {"method": "tools/call", "params": {"name": "navigate", "arguments": {"url": "/", BIG: 1}}},
]


@pytest.mark.parametrize("message", ECHOES, ids=["method", "tool", "action", "param-name", "argument-name"])
def test_answers_do_not_grow_with_what_was_sent(big, message):
    """Regression: unknown method, tool, action and parameter names were quoted whole, so a 1 MB name
    came back as a 1-2 MB answer; names are now cut in messages."""
    app = big.app()
    try:
        connection = connect(app, big.tokens["member"])
        connection.receive_bytes(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
        import json

        reply = connection.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": 1, **message}).encode())
        assert len(reply) < 2000, len(reply)
        assert b"1000000 characters" in reply
    finally:
        app.store.close()
