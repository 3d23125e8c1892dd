"""One page in every rendition (navmcp/page.py, navmcp/web/renderers.py), on both stores: the JSON
rendition carries the page's data (a decision's options and tallies, a studio's lists with their
pager, a note's comments), with user text as written; the renderers table has one entry per
rendition, each with its own template."""

from __future__ import annotations

import json

import pytest

from nav_helpers import add_member
from navmcp.errors import NavError
from navmcp.pages import PAGE_SIZE, ROUTES
from navmcp.render import templates_dir
from navmcp.web.renderers import RENDERERS, render

TRICKY = "# <b>not a heading</b> \\ `tick` *star*"  # markdown and HTML both would have to escape this


@pytest.fixture
def team(any_app, new_user):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team", "description": TRICKY})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Where?", "options": ["Lisbon", "Berlin", TRICKY], "tags": ["offsite"]}).url
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}, {"option": "Berlin"}]})
    ws.execute(bob, decision, "vote", {"votes": [{"option": "Lisbon"}]})
    ws.execute(bob, decision, "add_comment", {"body": TRICKY + "\n## Available actions"})
    return ws, alice, bob, decision


def as_json(ws, user, url) -> dict:
    page = ws.page(user, url)
    text = render("json", page)
    value = json.loads(text)
    assert value == page.as_json()  # what a script reads is exactly the page's value
    return value


def test_the_renderers_table_has_one_entry_per_rendition():
    assert set(RENDERERS) == {"markdown", "html", "json"}
    assert len({r.media_type for r in RENDERERS.values()}) == len(RENDERERS)
    assert RENDERERS["json"].media_type == "application/json"
    # every page kind's row names templates that exist, in every rendition that has templates
    for spec in ROUTES:
        for name, renderer in RENDERERS.items():
            if renderer.template:
                where = templates_dir() / ("html" if name == "html" else "") / renderer.template.format(spec.template)
                assert where.is_file(), f"{spec.name}: no {name} template at {where}"


def test_every_rendition_of_a_page_comes_from_its_data(team):
    ws, alice, _, decision = team
    page = ws.page(alice, decision)
    assert render("markdown", page) == page.markdown
    html = render("html", page, csrf="t", alternates={})
    assert html.startswith("<!doctype html>") and "Lisbon" in html and "&lt;b&gt;" in html
    assert json.loads(render("json", page))["data"]["item"]["title"] == "Where?"


def test_a_decisions_json_carries_its_options_tallies_and_votes(team):
    ws, alice, bob, decision = team
    page = as_json(ws, alice, decision)
    structured = ws.page(alice, decision).structured()
    assert {k: page[k] for k in structured} == structured  # url, title, actions, as navigate gives them
    assert page["page"] == "decision" and page["title"] == "Where?"
    assert page["breadcrumb"] == [{"label": "Home", "url": "/"}, {"label": "Team", "url": "/studios/team"},
                                  {"label": "Decision: Where?", "url": decision}]
    data = page["data"]
    tallies = {o["title"]: (o["accepts"], o["prefers"]) for o in data["options"]}
    assert tallies == {"Lisbon": (2, 1), "Berlin": (1, 0), TRICKY: (0, 0)}
    assert [o["title"] for o in data["numbered_options"]] == ["Lisbon", "Berlin", TRICKY]  # the oldest first
    assert (data["voters"], data["members"], data["open"], data["result"]) == (2, 2, True, None)
    assert [(v["title"], bool(v["accept"]), bool(v["prefer"])) for v in data["your_votes"]] == [
        ("Lisbon", True, True), ("Berlin", True, False)]
    assert data["tags"] == ["offsite"] and data["studio"]["handle"] == "team"
    assert data["studio"]["description"] == TRICKY  # user text as written: no escapes, no fence
    comment = data["comments"][0]
    assert comment["body"] == TRICKY + "\n## Available actions" and comment["author"] == "bob"
    assert data["pager"]["total"] == 1 and data["pager"]["next"] is None
    assert [a["name"] for a in page["actions"]] == ["add_comment", "delete_comment", "add_option", "vote",
                                                   "close_decision", "edit_decision", "extend_decision", "attach",
                                                   "delete_item"]
    # what pages never show: the store's ids of people and studios, its order of rows
    text = json.dumps(page)
    assert alice["id"] not in text and bob["id"] not in text
    for key in ("created_by", "user_id", "studio_id", "seq", "fts"):  # (fts: PostgreSQL's search index)
        assert f'"{key}"' not in text
    # bob sees his own vote, and no close_decision (he is neither its creator nor an admin)
    theirs = as_json(ws, bob, decision)
    assert [(v["title"], bool(v["prefer"])) for v in theirs["data"]["your_votes"]] == [("Lisbon", False)]
    assert "close_decision" not in [a["name"] for a in theirs["actions"]]


def test_a_studios_json_carries_its_lists_and_pager(team):
    ws, alice, _, decision = team
    notes = [ws.execute(alice, "/studios/team", "create_note", {"title": f"Note {n}", "body": "x"}).url
             for n in range(PAGE_SIZE + 2)]
    ws.execute(alice, notes[0], "pin", {})
    page = as_json(ws, alice, "/studios/team")
    data = page["data"]
    assert page["page"] == "studio" and page["title"] == "Team"
    assert data["counts"] == {"note": PAGE_SIZE + 2, "decision": 1, "commitment": 0, "members": 2}
    assert data["role"] == "admin"
    assert [(r["title"], r["url"]) for r in data["pinned"]] == [("Note 0", notes[0])]
    assert len(data["recent"]) == PAGE_SIZE and data["recent"][0]["title"] == f"Note {PAGE_SIZE + 1}"  # the newest
    pager = data["pager"]
    # Recent lists what Pinned does not: PAGE_SIZE + 3 items, one of them pinned
    assert (pager["number"], pager["pages"], pager["total"], pager["prev"]) == (1, 2, PAGE_SIZE + 2, None)
    assert pager["next"].startswith("/studios/team?page=2&after=")
    second = as_json(ws, alice, pager["next"])["data"]  # the Next link the JSON gave leads on
    assert {r["url"] for r in second["recent"]} | {r["url"] for r in data["recent"]} == {*notes[1:], decision}
    assert second["pager"]["prev"] == "/studios/team" and second["pager"]["next"] is None


def test_every_page_kinds_json_is_its_data(team):
    """For every kind of page: JSON values only, the data the markdown shows, the same actions."""
    ws, alice, bob, decision = team
    note = ws.execute(bob, "/studios/team", "create_note", {"title": TRICKY, "body": f"see {decision}",
                                                            "tags": ["offsite"]}).url
    commitment = ws.execute(alice, "/studios/team", "create_commitment", {"title": "Book", "critical_mass": 2}).url
    ws.execute(bob, commitment, "join_commitment", {})
    file = ws.execute(bob, note, "attach", {"filename": "a.txt", "content_type": "text/plain", "data": "aGk="}).url
    # one held write of bob's agent (the rule then goes, so nothing else here is held)
    rule = ws.execute(alice, "/studios/team/held", "set_hold_rule", {"actions": "add_option"}, browser=True)
    held = ws.execute(bob, decision, "add_option", {"title": "Later"}).url
    ws.execute(alice, "/studios/team/held", "remove_hold_rule", {"rule": rule.message.split()[1]}, browser=True)
    with pytest.raises(NavError):  # audited with its message, which quotes the title escaped for markdown
        ws.execute(alice, decision, "add_option", {"title": TRICKY})
    urls = {"home": "/", "help": "/help", "help_topic": "/help/decisions", "whoami": "/whoami",
            "awaiting": "/awaiting", "near_mass": "/near-mass", "inbox": "/inbox",
                "workspace_search": "/search?q=lisbon",
            "studio": "/studios/team", "members": "/studios/team/members", "note": note, "decision": decision,
            "commitment": commitment, "cycle": "/studios/team/cycles/today", "search": "/studios/team/search?q=where",
            "tag": "/studios/team/tags/offsite", "audit": "/studios/team/audit", "file": file,
            "held_queue": "/studios/team/held", "held": held, "deleted": "/studios/team/deleted"}
    assert set(urls) == {spec.name for spec in ROUTES}
    seen = {}
    for kind, url in urls.items():
        page = as_json(ws, alice, url)
        assert page["page"] == kind and page["url"] == url and isinstance(page["data"], dict), kind
        assert [a["name"] for a in page["actions"]] == [a.name for a in ws.page(alice, url).actions], kind
        seen[kind] = page["data"]
    assert [s["handle"] for s in seen["home"]["studios"]] == ["team"]
    assert seen["home"]["awaiting_count"] == 0 and seen["home"]["near_count"] == 1
    assert [r["title"] for r in seen["near_mass"]["rows"]] == ["Book"]
    assert seen["whoami"]["studios"][0]["role"] == "admin"
    # bob commented on alice's decision (the fixture); joining her commitment, short of its mass, told her nothing
    # and his held write asks for her approval
    assert [(e["kind"], e["name"], e["actor"]) for e in seen["inbox"]["entries"]] == [
        ("approval_requested", "Team", "bob"), ("comment", "Where?", "bob")]
    assert seen["help_topic"]["topic"] == "decisions"
    assert [r["title"] for r in seen["workspace_search"]["results"]] == ["Where?"]
    assert [r["title"] for r in seen["search"]["results"]] == ["Where?"]
    assert [(m["handle"], m["role"]) for m in seen["members"]["members"]] == [("alice", "admin"), ("bob", "member")]
    assert seen["note"]["item"]["title"] == TRICKY and seen["note"]["item"]["author"] == "bob"
    assert [r["url"] for r in seen["note"]["links_to"]] == [decision]
    assert (seen["commitment"]["count"], seen["commitment"]["needed"]) == (1, 1)
    assert [p["handle"] for p in seen["commitment"]["participants"]] == ["bob"]
    assert {r["title"] for r in seen["cycle"]["created"]} == {"Where?", TRICKY, "Book"}
    assert {r["url"] for r in seen["tag"]["items"]} == {decision, note}
    outcomes = [e["outcome"] for e in seen["audit"]["entries"]]
    # the stored message puts the title in a code span, as a page shows it; the JSON gives plain text
    assert outcomes[0] == f"failed: add_option failed: an option titled {TRICKY} already exists. " \
                          "Available here: add_comment, delete_comment, add_option, vote, close_decision, edit_decision, extend_decision, attach, " \
                          "delete_item."
    assert {e["handle"] for e in seen["audit"]["entries"]} == {"alice", "bob"}
