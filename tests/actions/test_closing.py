"""A decision after it opens (navmcp/actions/closing.py), on both stores: a later deadline, an
outcome statement written at closing or later, a tie named as a tie, reopening within 7 days (the
clock moved by the clock module's own time source) with the earlier result kept in its history;
each rule judged for the creator, an admin, a member and a former member."""

from __future__ import annotations

import time

import pytest

from nav_helpers import add_member
from navmcp.errors import ActionUnavailable, InvalidActionParams, NotFound

STUDIO = "/studios/team"
LATER = {"extend_decision", "reopen_decision", "set_outcome", "close_decision", "edit_decision"}


@pytest.fixture
def team(any_app, new_user):
    ws = any_app.workspace
    u = {h: new_user(h)[0] for h in ("alice", "bob", "carol", "dave")}
    ws.execute(u["alice"], "/", "create_studio", {"handle": "team", "name": "Team"})
    for h in ("bob", "carol", "dave"):
        add_member(ws, u["alice"], f"{STUDIO}/members", {"handle": h})
    decision = ws.execute(u["bob"], STUDIO, "create_decision",
                          {"question": "Where?", "options": ["Lisbon", "Berlin"], "deadline": "2100-01-01"}).url
    ws.execute(u["alice"], f"{STUDIO}/members", "remove_member", {"handle": "dave"})
    return any_app, u, decision


def _listed(ws, user, url) -> set[str]:
    return {a.name for a in ws.page(user, url).actions} & LATER


def test_extend_close_with_an_outcome_and_reopen_by_role(team):
    app, u, decision = team
    ws, alice, bob, carol = app.workspace, u["alice"], u["bob"], u["carol"]
    for user in (bob, alice):  # the creator, an admin
        assert _listed(ws, user, decision) == {"extend_decision", "close_decision", "edit_decision"}
    assert _listed(ws, carol, decision) == set()  # a member
    with pytest.raises(NotFound):  # a former member
        ws.execute(u["dave"], decision, "extend_decision", {"deadline": "2101-01-01"})
    with pytest.raises(ActionUnavailable):
        ws.execute(carol, decision, "extend_decision", {"deadline": "2101-01-01"})
    with pytest.raises(InvalidActionParams, match="later than the deadline now"):
        ws.execute(bob, decision, "extend_decision", {"deadline": "2099-01-01"})
    assert ws.execute(alice, decision, "extend_decision", {"deadline": "2101-01-01", "base": 1}).message.startswith(
        "Deadline moved to 2101-01-01 23:59 UTC: revision 2")
    for who in (alice, bob, carol):
        ws.execute(who, decision, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Berlin"}]})
    closed = ws.execute(bob, decision, "close_decision", {})
    assert closed.message == ("Decision closed. Result: 'Lisbon' / tie with 'Berlin'. A tie: set_outcome says "
                              "which is chosen.")
    page = ws.page(carol, decision)
    assert "(a tie)" in page.markdown and "| closed 20" in page.markdown and "2101-01-01" not in page.markdown
    for user in (bob, alice):
        assert _listed(ws, user, decision) == {"reopen_decision", "set_outcome"}
    assert _listed(ws, carol, decision) == set()
    ws.execute(alice, decision, "set_outcome", {"outcome": "Lisbon: the tie goes to the cheaper trip"})
    md = ws.page(carol, decision).markdown
    assert md.index("**Outcome**") < md.index("**Result**") and "the tie goes to the cheaper trip" in md
    # reopened: open again, its earlier result and outcome kept in its history
    reopened = ws.execute(bob, decision, "reopen_decision", {})
    assert reopened.message.startswith("Decision reopened: revision 4")
    history = ws.page(carol, decision + "?history=1").markdown
    assert "- result: 'Lisbon' / tie with 'Berlin' → (none)" in history  # as closing said it
    assert "- status: closed at 20" in history and "Lisbon: the tie goes to the cheaper trip → (none)" in history
    assert ws.page(carol, decision).data["open"] and "**Outcome**" not in ws.page(carol, decision).markdown
    # closing with an outcome writes it at once
    ws.execute(alice, decision, "close_decision", {"outcome": "Berlin, after all"})
    assert "Berlin, after all" in ws.page(carol, decision).markdown


def test_reopening_is_for_a_week_after_closing_and_a_passed_deadline_needs_a_new_one(team, monkeypatch):
    app, u, decision = team
    ws, bob = app.workspace, u["bob"]
    ws.execute(bob, decision, "close_decision", {})
    real, real_ns = time.time, time.time_ns
    monkeypatch.setattr(time, "time", lambda: real() + 8 * 86_400)  # the clock module's source, 8 days on
    monkeypatch.setattr(time, "time_ns", lambda: real_ns() + 8 * 86_400 * 10**9)
    with pytest.raises(ActionUnavailable, match="closed more than 7 days ago"):
        ws.execute(bob, decision, "reopen_decision", {})
    assert "reopen_decision" not in _listed(ws, bob, decision)
    monkeypatch.setattr(time, "time", real)
    monkeypatch.setattr(time, "time_ns", real_ns)
    other = ws.execute(bob, STUDIO, "create_decision", {"question": "Soon?", "options": ["a"],
                                                       "deadline": "2100-01-01"}).url
    with app.store.write(user_id=bob["id"]) as tx:  # its deadline passes (by its author, as an edit)
        tx.execute("UPDATE items SET deadline = ?, revision = revision + 1 WHERE id = ?",
                   (time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() - 3600)),
                    other.rsplit("/", 1)[1]))
    with pytest.raises(InvalidActionParams, match="give a new one"):
        ws.execute(bob, other, "reopen_decision", {})
    ws.execute(bob, other, "reopen_decision", {"deadline": "2100-02-01"})
    assert ws.page(bob, other).data["open"]
