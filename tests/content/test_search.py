"""Search finds items (issue 28): one row per item at the best place it was found, title first;
filters in the query; a workspace-wide search beside each studio's. Every test runs on both stores
(`any_app`): they must give the same pages."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from nav_helpers import add_member
from navmcp.content.search import parse
from navmcp.errors import InvalidQuery


@pytest.fixture
def team(any_app, new_user):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    return ws, alice, bob


def note(ws, user, title, body="x", tags=None, studio="team"):
    params = {"title": title, "body": body, **({"tags": tags} if tags else {})}
    return ws.execute(user, f"/studios/{studio}", "create_note", params).url


def search(ws, user, query, where="/studios/team"):
    return ws.page(user, f"{where}/search?q={quote(query)}")


def titles(ws, user, query, where="/studios/team"):
    return [r["title"] for r in search(ws, user, query, where).data["results"]]


def test_titles_rank_above_tags_text_options_and_comments(team):
    # Made best-last, so that newest first alone would give the reverse order.
    ws, alice, bob = team
    commented = note(ws, alice, "Five")
    ws.execute(bob, commented, "add_comment", {"body": "the walrus said"})
    decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Four?", "options": ["Walrus"]}).url
    note(ws, alice, "Three", body="a walrus in the text")
    note(ws, alice, "Two", tags=["walrus"])
    note(ws, alice, "One walrus")
    page = search(ws, alice, "walrus")
    assert [(r["title"], r["found_in"]) for r in page.data["results"]] == [
        ("One walrus", "title"), ("Two", "tag"), ("Three", "text"), ("Four?", "option"), ("Five", "comment")]
    assert page.data["pager"]["total"] == 5
    assert decision in page.markdown and "an option: Walrus" in page.markdown
    assert "in a comment: the walrus said" in page.markdown and "tagged #walrus" in page.markdown


def test_an_item_is_listed_once_with_its_other_matches_counted(team):
    ws, alice, bob = team
    url = ws.execute(alice, "/studios/team", "create_decision",
                     {"question": "Which walrus?", "options": ["Big walrus", "Small walrus", "None"]}).url
    for _ in range(2):
        ws.execute(bob, url, "add_comment", {"body": "walrus again"})
    page = search(ws, alice, "walrus")
    (row,) = page.data["results"]
    assert (row["found_in"], row["more_options"], row["more_comments"]) == ("title", 2, 2)
    assert page.data["pager"]["total"] == 1
    assert "(and 2 options, 2 comments)" in page.markdown


def test_within_a_place_the_newest_first_and_pages_repeat_nothing(team):
    ws, alice, bob = team
    made = [note(ws, alice, f"Walrus {n}") for n in range(25)]
    first, second = search(ws, alice, "walrus"), ws.page(alice, "/studios/team/search?q=walrus&page=2")
    urls = [r["url"] for r in first.data["results"] + second.data["results"]]
    assert urls == made[::-1] and first.data["pager"]["total"] == 25


def test_a_tag_named_by_the_words(team):
    ws, alice, bob = team
    note(ws, alice, "Offsite", tags=["q4-planning"])
    assert [(r["title"], r["found_in"]) for r in search(ws, alice, "q4 planning").data["results"]] == \
        [("Offsite", "tag")]


def test_type_status_and_tag_filters(team):
    ws, alice, bob = team
    note(ws, alice, "Walrus note", tags=["zoo"])
    open_d = ws.execute(alice, "/studios/team", "create_decision", {"question": "Walrus open?", "options": ["a"]}).url
    closed_d = ws.execute(alice, "/studios/team", "create_decision", {"question": "Walrus closed?", "options": ["a"]}).url
    ws.execute(alice, closed_d, "close_decision", {})
    ws.execute(alice, "/studios/team", "create_commitment", {"title": "Walrus walk", "critical_mass": 2, "tags": ["zoo"]})
    assert titles(ws, alice, "walrus type:decision") == ["Walrus closed?", "Walrus open?"]
    assert titles(ws, alice, "type:decision walrus status:open") == ["Walrus open?"]
    assert titles(ws, alice, "walrus status:closed") == ["Walrus closed?"]
    assert titles(ws, alice, "walrus tag:zoo") == ["Walrus walk", "Walrus note"]
    assert titles(ws, alice, "TYPE:Commitment walrus") == ["Walrus walk"]
    # Filters alone list what they select, newest first.
    assert titles(ws, alice, "type:decision") == ["Walrus closed?", "Walrus open?"]
    assert titles(ws, alice, "tag:zoo type:note") == ["Walrus note"]
    assert open_d in search(ws, alice, "status:open type:decision").markdown


def test_words_left_out_and_phrases(team):
    ws, alice, bob = team
    note(ws, alice, "Pricing model draft")
    note(ws, alice, "Pricing model", body="the final one")
    commented = note(ws, alice, "Pricing")
    ws.execute(bob, commented, "add_comment", {"body": "model of the draft"})
    note(ws, alice, "Model for pricing")
    assert titles(ws, alice, "pricing model -draft") == ["Model for pricing", "Pricing model"]
    assert titles(ws, alice, '"pricing model"') == ["Pricing model", "Pricing model draft"]
    assert titles(ws, alice, '"pricing model" -"the final"') == ["Pricing model draft"]
    # A word left out leaves out the item whose own text has it, whatever its comments say.
    assert "Pricing model draft" not in titles(ws, alice, "model -draft")


@pytest.mark.parametrize("query, says", [
    ("title:plan", "no filter 'title:'"),
    ("type:task", "'type:' takes note, decision, commitment, not 'task'"),
    ("status:done", "'status:' takes open, closed"),
    ("-plan", "needs a word to look for"),
    ("type:note type:decision", "given twice"),
])
def test_an_unknown_filter_teaches(team, query, says):
    ws, alice, bob = team
    with pytest.raises(InvalidQuery) as refused:
        search(ws, alice, query)
    assert says in refused.value.message and "type:decision" in refused.value.message


def test_the_workspace_search_covers_your_studios_only(team, new_user):
    ws, alice, bob = team
    carol, _ = new_user("carol")
    ws.execute(alice, "/", "create_studio", {"handle": "lab", "name": "Lab"})
    ws.execute(carol, "/", "create_studio", {"handle": "secret", "name": "Secret"})
    note(ws, alice, "Kestrel one")
    note(ws, alice, "Kestrel two", studio="lab")
    note(ws, carol, "Kestrel three", studio="secret")
    page = ws.page(alice, "/search?q=kestrel")
    assert [(r["title"], r["studio"]) for r in page.data["results"]] == [("Kestrel two", "lab"), ("Kestrel one", "team")]
    assert "in `lab`" in page.markdown and "/studios/lab/n/" in page.markdown
    assert [r["title"] for r in ws.page(bob, "/search?q=kestrel").data["results"]] == ["Kestrel one"]
    assert ws.page(carol, "/search?q=kestrel").data["pager"]["total"] == 1
    assert "/search?q=your+words" in ws.page(alice, "/search").markdown


def test_the_parser():
    q = parse('Pricing "team plan" -draft type:decision status:OPEN tag:q4 mod')
    assert q.terms == (("Pricing",), ("team", "plan"), ("mod",)) and q.prefix
    assert (q.excluded, q.kind, q.status, q.tag) == (("draft",), "decision", "open", "q4")
    assert parse("   ") is None and parse('"x y"').prefix is False
    assert parse("10:30").terms == (("10",), ("30",))  # digits before a colon are no filter's name


def test_a_word_beyond_the_newest_rows_is_found_as_one_in_them_is(team, monkeypatch):
    """PostgreSQL walks each source's newest rows (20 windows) before it reads the index for a rarer
    word (migration 20261129000201); both ways give the newest matches, on both stores: a word found
    only in old items and once in a new one, and a word in every item."""
    from navmcp.content import search as search_module

    ws, alice, bob = team
    monkeypatch.setattr(search_module, "SEARCH_WINDOW", 3)  # a walk of 60 rows
    for n in range(75):
        note(ws, alice, f"Common {n:02d}", body=f"rare{'word' if n in (0, 1, 2, 70) else 'none'} step")
    assert titles(ws, alice, "rareword") == ["Common 70", "Common 02", "Common 01"]
    found = search(ws, alice, "rareword").data
    assert found["pager"]["total"] == 3 and found["windowed"]  # the newest three of four
    assert titles(ws, alice, "common") == ["Common 74", "Common 73", "Common 72"]
    monkeypatch.setattr(search_module, "SEARCH_WINDOW", 1000)
    assert len(search(ws, alice, "rareword").data["results"]) == 4
