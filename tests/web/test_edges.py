"""Bad input at the edges, on both stores, over the MCP tools and the web app (issue 24): a forged
`after=` cursor (item 7) and a NUL anywhere a client can put one (item 8) are clear refusals — a
400 on the web, a teaching tool error over MCP — never an internal error, and the server goes on."""

from __future__ import annotations

import re

import pytest

from navmcp.tools import Session
from navmcp.web import create_app
from webclient import Client


@pytest.fixture
def world(any_app, new_user):
    """alice, admin of studio `team` with 25 notes tagged `t` (two pages of every list), and her
    MCP session and web client (Bearer)."""
    alice, token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for n in range(25):
        ws.execute(alice, "/studios/team", "create_note", {"title": f"Note {n}", "body": "b", "tags": ["t"]})
    web = Client(create_app(any_app), {"Authorization": f"Bearer {token}"})
    yield Session(any_app, token), web
    web.close()


LISTS = ["/studios/team", "/studios/team/tags/t", "/studios/team/cycles/today", "/studios/team/audit"]
FORGED = ["x~\u00b2", "x~%C2%B2", "1~9223372036854775808", "1~" + "9" * 40, "%00~1", "2026%00~1", "~1", "1~",
          "\u0663~\u0663", "x" * 41 + "~1", "1~-1", "1~1~1"]


@pytest.mark.parametrize("path", LISTS)
def test_a_forged_cursor_is_a_clear_refusal_on_every_list(world, path, logged_errors):
    mcp, web = world
    first = mcp.call_tool("navigate", {"url": path})
    assert first["isError"] is False
    nxt = re.search(r"Next page: `(/studios/[^`]*after=[^`]*)`", first["content"][0]["text"]).group(1)
    assert mcp.call_tool("navigate", {"url": nxt})["isError"] is False  # the list's own Next link works
    assert web.get(nxt).status_code == 200
    for cursor in FORGED:
        url = f"{path}?page=2&after={cursor}"
        result = mcp.call_tool("navigate", {"url": url})
        text = result["content"][0]["text"]
        assert result["isError"] is True and "Next link" in text, (url, text)
        for suffix in ("", ".md", ".json"):
            target = path + suffix + f"?page=2&after={cursor}"
            reply = web.get(target)
            assert reply.status_code == 400 and "Next link" in reply.text, (target, reply.status_code, reply.text[:300])
    assert mcp.call_tool("navigate", {"url": path + "?page=2"})["isError"] is False  # by number: still fine
    assert logged_errors == []
