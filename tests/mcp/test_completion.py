"""Completion (navmcp/mcp/completion.py) of prompt arguments and resource-template variables, from what
this user may see, on both stores; at most 100 values, with total and hasMore."""

from __future__ import annotations

import pytest

from mcp_rpc import Rpc
from nav_helpers import add_member

DECISION = "navmcp:///studios/{studio}/d/{item}"


@pytest.fixture
def team(any_app, new_user):
    alice, alice_token = new_user("alice")
    _, bob_token = new_user("bob")
    ws = any_app.workspace
    for handle in ("team", "tea-room", "other"):
        ws.execute(alice, "/", "create_studio", {"handle": handle, "name": handle.title()})
    offsite = ws.execute(alice, "/studios/team", "create_decision",
                         {"question": "Where is the offsite?", "options": ["Lisbon", "Berlin"]}).url
    lunch = ws.execute(alice, "/studios/team", "create_decision",
                       {"question": "Lunch place", "options": ["A", "B"], "tags": ["food"]}).url
    ws.execute(alice, "/studios/team", "create_note", {"title": "Offsite notes", "body": "x"})
    return alice_token, bob_token, offsite.rsplit("/", 1)[1], lunch.rsplit("/", 1)[1]


def complete(rpc, ref, name, value, **context):
    params = {"ref": ref, "argument": {"name": name, "value": value}}
    if context:
        params["context"] = {"arguments": context}
    return rpc.call("completion/complete", **params)["completion"]


def test_studio_handles_complete_for_prompts_and_templates(any_app, team):
    alice = Rpc(any_app, team[0])
    assert complete(alice, {"type": "ref/prompt", "name": "standup"}, "studio", "te") == {
        "values": ["tea-room", "team"], "total": 2, "hasMore": False}
    assert complete(alice, {"type": "ref/resource", "uri": DECISION}, "studio", "")["values"] == [
        "other", "tea-room", "team"]
    assert complete(alice, {"type": "ref/prompt", "name": "decide"}, "topic", "off")["values"] == []
    bob = Rpc(any_app, team[1], "legacy")  # no studio: nothing to complete
    assert complete(bob, {"type": "ref/prompt", "name": "standup"}, "studio", "")["values"] == []


def test_item_ids_complete_by_id_or_title_within_one_visible_studio(any_app, team):
    alice_token, bob_token, offsite, lunch = team
    alice = Rpc(any_app, alice_token)
    ref = {"type": "ref/resource", "uri": DECISION}
    assert complete(alice, ref, "item", "offsite", studio="team")["values"] == [offsite]  # not the note
    assert complete(alice, ref, "item", lunch[:3], studio="team")["values"][0] == lunch
    assert set(complete(alice, ref, "item", "", studio="team")["values"]) == {offsite, lunch}
    assert complete(alice, ref, "item", "", studio="other")["values"] == []
    assert complete(alice, ref, "item", "")["values"] == []  # which studio? none given
    assert complete(Rpc(any_app, bob_token), ref, "item", "", studio="team")["values"] == []  # not a member
    tags = {"type": "ref/resource", "uri": "navmcp:///studios/{studio}/tags/{tag}"}
    assert complete(alice, tags, "tag", "f", studio="team")["values"] == ["food"]
    cycles = {"type": "ref/resource", "uri": "navmcp:///studios/{studio}/cycles/{cycle}"}
    assert complete(alice, cycles, "cycle", "this")["values"] == ["this-week", "this-month"]


def test_bad_references_are_invalid_params(any_app, team):
    alice = Rpc(any_app, team[0])
    for params in ({"ref": {"type": "ref/prompt", "name": "retro"}, "argument": {"name": "studio", "value": ""}},
                   {"ref": {"type": "ref/prompt", "name": "standup"}, "argument": {"name": "x", "value": ""}},
                   {"ref": {"type": "ref/resource", "uri": "navmcp:///nope/{x}"}, "argument": {"name": "x", "value": ""}},
                   {"ref": {"type": "ref/resource", "uri": DECISION}, "argument": {"name": "cycle", "value": ""}},
                   {"ref": {"type": "ref/other"}, "argument": {"name": "studio", "value": ""}},
                   {"ref": {"type": "ref/prompt", "name": "standup"}, "argument": "studio"}):
        assert alice.error("completion/complete", **params)["code"] == -32602, params


def test_at_most_100_values_with_has_more(app, owner):
    ws = app.workspace
    for n in range(103):
        ws.execute(owner, "/", "create_studio", {"handle": f"s{n:03}", "name": f"S{n}"})
    token = __import__("navmcp.identity", fromlist=["mint_token"]).mint_token(app.secret, owner["id"])
    result = complete(Rpc(app, token), {"type": "ref/prompt", "name": "standup"}, "studio", "s")
    assert len(result["values"]) == 100 and result["total"] == 103 and result["hasMore"] is True


def test_member_handles_complete_after_an_at_sign(any_app, team):
    alice_token, bob_token, offsite, lunch = team
    alice = Rpc(any_app, alice_token)
    add_member(any_app.workspace, _user(any_app, "alice"), "/studios/team/members", {"handle": "bob"})
    ref = {"type": "ref/prompt", "name": "decide"}
    assert complete(alice, ref, "topic", "lunch with @b", studio="team")["values"] == ["lunch with @bob"]
    assert complete(alice, ref, "topic", "@", studio="team")["values"] == ["@alice", "@bob", "@admins", "@everyone"]
    assert complete(alice, ref, "topic", "@", studio="other")["values"] == ["@alice", "@admins", "@everyone"]
    assert complete(alice, ref, "topic", "@b")["values"] == []  # no studio named: nobody to offer
    bob = Rpc(any_app, bob_token)
    assert complete(bob, ref, "topic", "@", studio="other")["values"] == []  # not his studio


def _user(any_app, handle):
    with any_app.store.read() as tx:
        return tx.find_user(handle)
