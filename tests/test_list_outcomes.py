"""List rows carry outcomes (issue 42): a closed decision's result, as its kind and its quorum judge
it (the same words its page and its closing say), with its closer's outcome; a commitment's joins;
an open item's deadline. So "what did we decide this week" and "what needs me" are answered from
the lists (the studio feed, cycles, tags, search, home, /near-mass), on both stores."""

from __future__ import annotations

import re

import pytest

from nav_helpers import add_member

STUDIO = "/studios/team"


@pytest.fixture
def team(any_app, new_user):
    """ann (admin), ben and cy in `team`."""
    people = {h: new_user(h)[0] for h in ("ann", "ben", "cy")}
    ws = any_app.workspace
    ws.execute(people["ann"], "/", "create_studio", {"handle": "team", "name": "Team"})
    for h in ("ben", "cy"):
        add_member(ws, people["ann"], f"{STUDIO}/members", {"handle": h})
    return people


def _row(page: str, url: str) -> str:
    """The list row (one line) that links to `url`; on a cycle's page, which lists an item in Created
    and in Closed, the rows up to their `updated` (Created's names the author too)."""
    found = re.findall(rf"^- \[[^\n]*\]\({re.escape(url)}\)[^\n]*$", page, re.M)
    assert found and len({f.split(", updated")[0] for f in found}) == 1, (url, page)
    return found[0]


def test_a_closed_decisions_row_says_its_result_as_its_page_does(any_app, team):
    ws = any_app.workspace
    ann, ben, cy = team["ann"], team["ben"], team["cy"]
    lisbon = ws.execute(ann, STUDIO, "create_decision", {
        "question": "Where is the offsite?", "options": ["Lisbon", "Porto"], "tags": ["offsite"]}).url
    ws.execute(ben, lisbon, "vote", {"votes": [{"option": "Lisbon", "prefer": True}]})
    ws.execute(cy, lisbon, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Porto"}]})
    closing = ws.execute(ann, lisbon, "close_decision", {"outcome": "Lisbon, in May"}).message
    dots = ws.execute(ann, STUDIO, "create_decision", {
        "question": "Which topics?", "options": ["Pricing", "Hiring"], "kind": "dots", "tags": ["offsite"]}).url
    ws.execute(ben, dots, "allocate", {"dots": [{"option": "Hiring", "dots": 3}]})
    ws.execute(ann, dots, "close_decision", {})
    unmet = ws.execute(ann, STUDIO, "create_decision", {
        "question": "Which bus?", "options": ["Red"], "quorum": 3, "tags": ["offsite"]}).url
    ws.execute(ben, unmet, "vote", {"votes": [{"option": "Red"}]})
    ws.execute(ann, unmet, "close_decision", {})
    assert closing == "Decision closed. Result: 'Lisbon'."
    expected = {lisbon: "(result: 'Lisbon'; outcome: Lisbon, in May)",
                dots: "(result: 'Hiring' (3 dots))",
                unmet: "(result: no quorum (1 of the 3 needed responded))"}
    for list_url in (STUDIO, f"{STUDIO}/cycles/this-week?closed=1", f"{STUDIO}/tags/offsite",
                     f"{STUDIO}/search?q=status:closed", "/search?q=tag:offsite"):
        page = ws.page(ben, list_url).markdown
        for url, result in expected.items():
            row = _row(page, url)
            assert f"closed {result}" in row, (list_url, row)
            verdict = ws.page(ben, url).as_json()["data"]["verdict"]["text"]  # the page's own words
            assert f"result: {verdict}" in row


def test_an_open_items_row_says_its_deadline_and_a_commitments_its_joins(any_app, team):
    ws = any_app.workspace
    ann, ben = team["ann"], team["ben"]
    vote = ws.execute(ann, STUDIO, "create_decision", {
        "question": "Lunch?", "options": ["Soup"], "deadline": "2100-01-01 12:00", "tags": ["food"]}).url
    rota = ws.execute(ann, STUDIO, "create_commitment", {
        "title": "Cook on Friday", "critical_mass": 3, "deadline": "2100-01-02", "tags": ["food"]}).url
    ws.execute(ben, rota, "join_commitment", {})
    for list_url in (STUDIO, f"{STUDIO}/cycles/today", f"{STUDIO}/tags/food", f"{STUDIO}/search?q=tag:food"):
        page = ws.page(ann, list_url).markdown
        assert ", deadline 2100-01-01 12:00 UTC" in _row(page, vote), list_url
        row = _row(page, rota)
        assert ", deadline 2100-01-02 23:59 UTC" in row and ", 1 of 3 joined" in row, (list_url, row)
    # Home and /near-mass: the commitments that need you, with their deadlines.
    for page in (ws.page(ann, "/").markdown, ws.page(ann, "/near-mass").markdown):
        assert "1 of 3 joined, 2 more needed, deadline 2100-01-02 23:59 UTC" in page


def test_a_title_cannot_pass_for_a_result(any_app, team):
    """An option's title is user text: in a row's result it is literal and cut, never a link."""
    ws = any_app.workspace
    ann, ben = team["ann"], team["ben"]
    title = "X](/studios/team/d/evil) [fake](/x) " + "y" * 300
    url = ws.execute(ann, STUDIO, "create_decision", {"question": "Q?", "options": [title[:200]]}).url
    ws.execute(ben, url, "vote", {"votes": [{"option": 1}]})
    ws.execute(ann, url, "close_decision", {})
    page = ws.page(ben, STUDIO).markdown
    row = _row(page, url)
    # The result's markup is literal: in a code span, as a title with markup is in a row.
    assert re.search(r"result: (`+) `X\]\(/studios/team/d/evil\) \[fake\]\(/x\) y+… \1\)", row), row
    assert len(row) < 400  # the result is cut, as a title in a row is


def test_near_mass_by_deadline_lists_the_soonest_due_first(any_app, team):
    """What needs me today: `/near-mass?order=deadline`, linked from home and from the list itself."""
    from navmcp.errors import NavError

    ws = any_app.workspace
    ann, ben = team["ann"], team["ben"]
    made = {}
    for title, mass, deadline in (("Later, nearly there", 2, "2100-03-01"), ("Soon, far off", 9, "2100-01-01"),
                                  ("Open-ended", 3, None)):
        made[title] = ws.execute(ann, STUDIO, "create_commitment", {
            "title": title, "critical_mass": mass, **({"deadline": deadline} if deadline else {})}).url
    by_joins = [r["title"] for r in ws.page(ben, "/near-mass").data["rows"]]
    by_deadline = ws.page(ben, "/near-mass?order=deadline")
    assert by_joins == ["Later, nearly there", "Open-ended", "Soon, far off"]
    assert [r["title"] for r in by_deadline.data["rows"]] == ["Soon, far off", "Later, nearly there", "Open-ended"]
    assert "(3 in all). The fewest joins still needed first: `/near-mass`." in by_deadline.markdown
    assert "The soonest deadline first: `/near-mass?order=deadline`." in ws.page(ben, "/near-mass").markdown
    with pytest.raises(NavError, match="order=deadline"):
        ws.page(ben, "/near-mass?order=soon")
