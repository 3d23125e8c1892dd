"""A large fan-out (navmcp/store/sqlite_tx.py `note_inbox`, migration 0320): on SQLite a write that
tells PACK_FROM members or more is one `inbox_packs` row, read by each of them as their own entry
(navmcp/feeds/inbox.py); on PostgreSQL it is a row each. Either way every person sees, marks and
dismisses their entry alone, a burst folds, and the inbox's rules hold: members only, never the
actor, nothing for a write that rolled back, hidden with a deleted item or a studio left, kept
KEEP_DAYS."""

from __future__ import annotations

import time

import pytest

from nav_helpers import add_member
from navmcp import workspace
from navmcp.errors import ActionUnavailable, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.store.sqlite_tx import PACK_FROM

FOUR = "@bob @carol @erin @frank"


@pytest.fixture
def crowd(any_app, new_user):
    """alice (admin) and four members in team (bob, carol, erin, frank); dave outside it."""
    users = {name: new_user(name)[0] for name in ("alice", "bob", "carol", "erin", "frank", "dave")}
    ws = any_app.workspace
    ws.execute(users["alice"], "/", "create_studio", {"handle": "team", "name": "Team"})
    for name in ("bob", "carol", "erin", "frank"):
        add_member(ws, users["alice"], "/studios/team/members", {"handle": name})
    return ws, users


def mentions(ws, user) -> list[tuple[str, int, bool]]:
    """(name, count, unread) of the user's mention entries, as /inbox lists them."""
    return [(e["name"], e["count"], e["unread"]) for e in ws.page(user, "/inbox").data["entries"] if e["kind"] == "mention"]


def stored(any_app) -> tuple[int, int]:
    """(packs, mention rows of one person each) in the store."""
    with any_app.store.read() as tx:
        packs = tx.scalar("SELECT count(*) FROM inbox_packs") if tx.inbox_packs else 0
        return packs, tx.scalar("SELECT count(*) FROM inbox WHERE kind = 'mention'")


def test_a_mention_of_four_is_one_pack_each_of_them_reads(any_app, crowd):
    ws, u = crowd
    assert len(FOUR.split()) == PACK_FROM
    ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Plan", "body": f"draft for {FOUR}, @alice and @dave"})
    if not any_app.store.hosted:
        assert stored(any_app) == (1, 0)
    for name in ("bob", "carol", "erin", "frank"):
        assert mentions(ws, u[name]) == [("Plan", 1, True)]
        assert ws.page(u[name], "/").data["unread"] == 1
    assert mentions(ws, u["alice"]) == [] and mentions(ws, u["dave"]) == []  # never the actor; members only
    with any_app.store.read() as tx:  # the pack names the members only
        if tx.inbox_packs:
            assert u["dave"]["id"] not in tx.scalar("SELECT recipients FROM inbox_packs")


def test_a_burst_folds_and_nobody_learns_who_read_it(any_app, crowd):
    """The next burst on the item for the same people folds into their entry. One person's mark is
    theirs alone: it holds until the entry changes after it (then it is unread again, as a new
    entry of their own would be), and what the others see is the same as if nobody had marked."""
    ws, u = crowd
    note = ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Plan", "body": FOUR}).url
    ws.execute(u["alice"], note, "add_comment", {"body": f"and again {FOUR}"})
    assert mentions(ws, u["carol"]) == [("Plan", 2, True)]
    entry = ws.page(u["bob"], "/inbox").data["entries"][0]
    ws.execute(u["bob"], "/inbox", "mark_read", {"entry": entry["id"]})
    ws.execute(u["frank"], "/inbox", "dismiss", {"all": True})
    assert mentions(ws, u["bob"]) == [("Plan", 2, False)] and mentions(ws, u["frank"]) == []
    assert mentions(ws, u["carol"]) == [("Plan", 2, True)]
    ws.execute(u["alice"], note, "add_comment", {"body": f"once more {FOUR}"})
    assert mentions(ws, u["carol"]) == mentions(ws, u["erin"]) == [("Plan", 3, True)]
    if any_app.store.hosted:  # a row each: a new entry for those who had marked theirs
        assert mentions(ws, u["bob"]) == [("Plan", 1, True), ("Plan", 2, False)]
        assert mentions(ws, u["frank"]) == [("Plan", 1, True)]
    else:  # one pack: the entry changed after their marks, so it is unread (and shown) again
        assert mentions(ws, u["bob"]) == mentions(ws, u["frank"]) == [("Plan", 3, True)]
        assert ws.execute(u["bob"], "/inbox", "mark_read", {"entry": entry["id"]}).message == "Marked 1 entry read."
        assert mentions(ws, u["bob"]) == [("Plan", 3, False)] and mentions(ws, u["carol"]) == [("Plan", 3, True)]
        with pytest.raises(ActionUnavailable):  # nothing unread now: marked again, it is read
            ws.execute(u["bob"], "/inbox", "mark_read", {"all": True})


def test_a_discussion_folds_per_person_whoever_writes(any_app, crowd):
    """Who a comment tells changes with who writes it (the creator and the commenters, the writer
    left out), so comments keep a row each, folded per person: one entry each, however many write."""
    ws, u = crowd
    note = ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Plan", "body": "what do we think"}).url
    for name in ("bob", "carol", "erin", "frank", "bob", "carol", "erin", "bob"):
        ws.execute(u[name], note, "add_comment", {"body": f"{name} thinks so"})

    def comments(user):
        return [(e["count"], e["unread"]) for e in ws.page(user, "/inbox").data["entries"] if e["kind"] == "comment"]

    assert comments(u["alice"]) == [(8, True)]
    assert comments(u["frank"]) == [(4, True)]  # carol, erin and bob after frank wrote; not his own
    assert stored(any_app)[0] == 0


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_a_packs_entry_id_names_one_pack_ever(any_app, crowd):
    """A pack's id grows with time, not with a count of packs (that would say how many other
    studios wrote), and is never another's once its pack is gone."""
    ws, u = crowd
    first = ws.execute(u["alice"], "/studios/team", "create_note", {"title": "First", "body": FOUR}).url
    gone = ws.page(u["bob"], "/inbox").data["entries"][0]["id"]
    with any_app.store.write() as tx:  # purged: the pack goes with its item
        tx.execute("DELETE FROM items WHERE id = ?", (first.rsplit("/", 1)[1],))
    ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Second", "body": FOUR})
    now = ws.page(u["bob"], "/inbox").data["entries"][0]["id"]
    assert now != gone and abs(int(now[1:]) / 1e9 - time.time()) < 600  # nanoseconds since 1970
    with pytest.raises(InvalidActionParams):
        ws.execute(u["bob"], "/inbox", "dismiss", {"entry": gone})
    assert mentions(ws, u["bob"]) == [("Second", 1, True)]


def test_each_marks_and_dismisses_their_own_entry(any_app, crowd):
    ws, u = crowd
    for title in ("One", "Two", "Three"):
        ws.execute(u["alice"], "/studios/team", "create_note", {"title": title, "body": FOUR})
    listed = ws.page(u["bob"], "/inbox").data["entries"]
    assert [e["name"] for e in listed][:3] == ["Three", "Two", "One"]
    ws.execute(u["bob"], "/inbox", "mark_read", {"all": True, "until": listed[1]["id"]})  # Two and older
    assert mentions(ws, u["bob"]) == [("Three", 1, True), ("Two", 1, False), ("One", 1, False)]
    assert all(unread for _, _, unread in mentions(ws, u["carol"]))
    ws.execute(u["bob"], "/inbox", "dismiss", {"entry": listed[0]["id"]})
    assert [name for name, _, _ in mentions(ws, u["bob"])] == ["Two", "One"]
    assert [name for name, _, _ in mentions(ws, u["carol"])] == ["Three", "Two", "One"]
    with pytest.raises(InvalidActionParams):
        ws.execute(u["bob"], "/inbox", "dismiss", {"entry": listed[0]["id"]})  # gone already
    add_member(ws, u["alice"], "/studios/team/members", {"handle": "dave"})  # a member the pack does not name
    assert mentions(ws, u["dave"]) == []
    with pytest.raises(InvalidActionParams):  # nor is its entry one of his
        ws.execute(u["dave"], "/inbox", "dismiss", {"entry": listed[1]["id"]})
    for made_up in ("p0", "p" + "9" * 18, "p" + "9" * 40):  # no pack's; too large for SQLite's integers
        with pytest.raises(InvalidActionParams):
            ws.execute(u["carol"], "/inbox", "mark_read", {"entry": made_up})
    ws.execute(u["carol"], "/inbox", "mark_read", {"all": True})
    ws.execute(u["carol"], "/inbox", "dismiss", {"all": True})
    assert mentions(ws, u["carol"]) == [] and len(mentions(ws, u["erin"])) == 3


def test_packs_and_single_entries_are_one_list_newest_first(any_app, crowd):
    """A page of /inbox reads both kinds of entry, unread first, each newest first, and pages on."""
    ws, u = crowd
    titles = []
    for n in range(7):  # alternately telling four (a pack) and bob alone (his own row)
        title = f"Note {n}"
        ws.execute(u["alice"], "/studios/team", "create_note", {"title": title, "body": FOUR if n % 2 else "@bob"})
        titles.append(title)
    with any_app.store.read(user_id=u["bob"]["id"]) as tx:
        unread, total = inbox.counts(tx, u["bob"]["id"])
        assert (unread, total) == (7, 8)  # and his invitation, read
        assert inbox.unread_count(tx, u["bob"]["id"]) == 7
        assert [e["name"] for e in inbox.newest(tx, u["bob"]["id"], 3)] == titles[::-1][:3]
        pages = [inbox.entries(tx, u["bob"]["id"], unread, offset, 3) for offset in (0, 3, 6)]
    assert [e["name"] for page in pages for e in page] == [*titles[::-1], "the invitations for you"]


def test_what_hides_an_entry_hides_a_packs(any_app, crowd, monkeypatch):
    ws, u = crowd
    note = ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Plan", "body": FOUR}).url
    ws.execute(u["frank"], "/studios/team/members", "leave_studio", {})
    assert mentions(ws, u["frank"]) == [] and mentions(ws, u["erin"]) == [("Plan", 1, True)]
    ws.execute(u["alice"], note, "delete_item", {"confirm": "Plan"})
    assert mentions(ws, u["erin"]) == []
    ws.execute(u["alice"], note, "restore_item", {})
    assert mentions(ws, u["erin"]) == [("Plan", 1, True)]

    def fails(*args, **kwargs):
        raise RuntimeError("the write fails after its handler ran")

    before = stored(any_app)
    with monkeypatch.context() as m:
        m.setattr(workspace, "write_audit", fails)
        with pytest.raises(RuntimeError):
            ws.execute(u["alice"], note, "add_comment", {"body": f"{FOUR} look"})
    assert stored(any_app) == before and mentions(ws, u["erin"]) == [("Plan", 1, True)]


def test_packs_are_kept_90_days_and_go_with_their_item(any_app, crowd, monkeypatch):
    ws, u = crowd
    ws.execute(u["alice"], "/studios/team", "create_note", {"title": "Old", "body": FOUR})
    real, real_ns = time.time, time.time_ns
    monkeypatch.setattr(time, "time", lambda: real() + (inbox.KEEP_DAYS + 1) * 86_400)
    monkeypatch.setattr(time, "time_ns", lambda: real_ns() + (inbox.KEEP_DAYS + 1) * 86_400 * 10**9)
    assert ("Old", 1, True) in mentions(ws, u["bob"])
    ws.execute(u["alice"], "/studios/team", "create_note", {"title": "New", "body": FOUR})
    assert mentions(ws, u["bob"]) == [("New", 1, True)]
    if any_app.store.hosted is False:  # a pack goes with its item, and its marks with it
        ws.execute(u["bob"], "/inbox", "mark_read", {"all": True})
        with any_app.store.write() as tx:
            assert tx.scalar("SELECT count(*) FROM inbox_marks") == 1
            tx.execute("DELETE FROM items WHERE title = 'New'")
            assert (tx.scalar("SELECT count(*) FROM inbox_packs"), tx.scalar("SELECT count(*) FROM inbox_marks")) == (0, 0)
