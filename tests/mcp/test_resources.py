"""Pages as resources (navmcp/mcp/resources.py) through the protocol core, on both stores and in both
eras: the URI of every page maps one-to-one to its URL, a read is exactly the page `navigate`
returns, and a resource you may not see does not exist (-32602 with data.uri, SEP-2164)."""

from __future__ import annotations

import pytest

from mcp_rpc import Rpc
from navmcp.mcp import resources
from navmcp.pages import ROUTES


@pytest.fixture
def team(any_app, new_user):
    """alice (admin of `team`, with a decision and a commitment); bob is in no studio."""
    alice, alice_token = new_user("alice")
    bob, bob_token = new_user("bob")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Where is the offsite?", "options": ["Lisbon", "Berlin"]}).url
    commitment = ws.execute(alice, "/studios/team", "create_commitment",
                            {"title": "Book the venue", "critical_mass": 3}).url
    return {"alice": alice_token, "bob": bob_token, "decision": decision, "commitment": commitment}


@pytest.fixture(params=["modern", "legacy"])
def era(request):
    return request.param


def test_one_template_per_page_kind(any_app, team, era):
    listed = Rpc(any_app, team["alice"], era).call("resources/templates/list")["resourceTemplates"]
    assert [t["name"] for t in listed] == [spec.name for spec in ROUTES]
    assert {t["mimeType"] for t in listed} == {"text/markdown"}
    by_name = {t["name"]: t["uriTemplate"] for t in listed}
    assert by_name["decision"] == "navmcp:///studios/{studio}/d/{item}"
    assert by_name["search"] == "navmcp:///studios/{studio}/search{?q}"
    assert all(t["title"] and t["description"] for t in listed)


def test_reading_a_resource_is_the_page_navigate_returns(any_app, team, era):
    rpc = Rpc(any_app, team["alice"], era)
    for url in ("/", team["decision"], "/studios/team/search?q=offsite", "/help/urls"):
        read = rpc.call("resources/read", uri="navmcp://" + url)
        page = rpc.call("tools/call", name="navigate", arguments={"url": url})
        assert read["contents"] == [{"uri": "navmcp://" + url, "mimeType": "text/markdown",
                                     "text": page["content"][0]["text"]}]
    if era == "modern":
        assert read["cacheScope"] == "private" and read["ttlMs"] == 0


def test_a_resource_you_may_not_see_does_not_exist(any_app, team, era):
    bob = Rpc(any_app, team["bob"], era)
    hidden = bob.error("resources/read", uri="navmcp://" + team["decision"])
    missing = bob.error("resources/read", uri="navmcp:///studios/never/d/abc123")
    assert hidden["code"] == missing["code"] == -32602
    assert hidden["data"] == {"uri": "navmcp://" + team["decision"]}
    assert hidden["message"].replace("/team/d/" + team["decision"].rsplit("/", 1)[1], "") == \
        missing["message"].replace("/never/d/abc123", "")  # the same answer, but for the URI it names
    assert "Where is the offsite" not in str(hidden)
    for bad in ("https://example.com/", "navmcp://studios/team", 5, None):
        error = bob.error("resources/read", uri=bad)
        assert error["code"] == -32602 and "uri" in error["data"], error


def test_listing_names_your_studios_and_what_awaits_you(any_app, team, era):
    alice = Rpc(any_app, team["alice"], era).call("resources/list")
    uris = [r["uri"] for r in alice["resources"]]
    assert uris == ["navmcp:///", "navmcp:///studios/team", "navmcp://" + team["decision"],
                    "navmcp://" + team["commitment"]]
    assert "nextCursor" not in alice
    assert {r["mimeType"] for r in alice["resources"]} == {"text/markdown"}
    bob = Rpc(any_app, team["bob"], era).call("resources/list")
    assert [r["uri"] for r in bob["resources"]] == ["navmcp:///"]  # bob sees none of team


def test_listing_pages_with_a_cursor(any_app, team, monkeypatch):
    monkeypatch.setattr(resources, "LIST_PAGE", 3)
    rpc = Rpc(any_app, team["alice"])
    first = rpc.call("resources/list")
    assert len(first["resources"]) == 3 and first["ttlMs"] == 0 and first["cacheScope"] == "private"
    second = rpc.call("resources/list", cursor=first["nextCursor"])
    assert len(second["resources"]) == 1 and "nextCursor" not in second
    assert second["cacheScope"] == "private"  # every page of one list has the same scope
    assert rpc.error("resources/list", cursor="not a cursor")["code"] == -32602
    assert rpc.error("resources/list", cursor=5)["code"] == -32602
