"""The inbox (navmcp/feeds/inbox.py) and @mentions (navmcp/content/mentions.py), on both stores: every kind of
entry is written by the action that makes it, in its own transaction (none when it rolls back), for
members only and never for the actor; bursts fold; the page, its actions and home show them."""

from __future__ import annotations

import re
import time

import pytest

from nav_helpers import add_member
from navmcp import identity, workspace
from navmcp.content import mentions
from navmcp.errors import ActionUnavailable, InvalidActionParams
from navmcp.feeds import inbox
from navmcp.web.html import render_page


@pytest.fixture
def team(any_app, new_user):
    """alice (admin), bob and carol (members) in team; dave outside it, findable."""
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    carol, _ = new_user("carol")
    dave, _ = new_user("dave")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    add_member(ws, alice, "/studios/team/members", {"handle": "carol"})
    return ws, alice, bob, carol, dave


def entries(any_app, user) -> list[dict]:
    with any_app.store.read(user_id=user["id"]) as tx:
        unread, total = inbox.counts(tx, user["id"])
        return inbox.entries(tx, user["id"], unread, 0, 100)


def kinds(any_app, user) -> list[tuple[str, str | None, int]]:
    return [(e["kind"], e["name"], e["count"]) for e in entries(any_app, user)]



def test_an_edit_that_adds_a_mention_notifies_the_newly_mentioned_only(any_app, team):
    """An edit tells whom its new text mentions and the old did not (edit_note, edit_comment):
    nobody mentioned before is told again, and a mention an edit removes tells nobody."""
    ws, alice, bob, carol, dave = team
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "draft for @bob"}).url
    assert kinds(any_app, bob).count(("mention", "Plan", 1)) == 1 and ("mention", "Plan", 1) not in kinds(any_app, carol)
    ws.execute(alice, note, "edit_note", {"body": "draft for @bob and @carol"})
    assert ("mention", "Plan", 1) in kinds(any_app, carol)
    assert [k for k in kinds(any_app, bob) if k[0] == "mention"] == [("mention", "Plan", 1)]  # not told twice
    ws.execute(alice, note, "edit_note", {"body": "draft, nobody named"})
    assert [k for k in kinds(any_app, carol) if k[0] == "mention"] == [("mention", "Plan", 1)]
    # a comment edited to mention someone tells them too
    ws.execute(carol, note, "add_comment", {"body": "looks fine"})
    cid = ws.page(carol, note).data["comments"][0]["id"]
    before = [k for k in kinds(any_app, bob) if k[0] == "mention"]
    ws.execute(carol, note, "edit_comment", {"comment": cid, "body": "looks fine, @bob?"})
    after = [k for k in kinds(any_app, bob) if k[0] == "mention"]
    assert after != before and sum(n for _, _, n in after) == sum(n for _, _, n in before) + 1
    assert kinds(any_app, dave) == []

def test_being_invited_to_a_studio_is_an_entry_for_the_one_invited_only(any_app, team):
    """add_member of a newcomer invites them (nobody is added without agreeing): an `invited` entry
    for them alone, unread until they answer; the admin who asked is told nothing."""
    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team/members", "add_member", {"handle": "dave"})
    assert kinds(any_app, dave) == [("invited", "the invitations for you", 1)]
    assert entries(any_app, dave)[0]["unread"]
    assert kinds(any_app, alice) == []  # your own actions never notify you
    assert [k for k in kinds(any_app, carol) if k[0] == "invited"] == [("invited", "the invitations for you", 1)]
    assert not [e for e in entries(any_app, carol) if e["kind"] == "invited" and e["read_at"] is None]  # she accepted


def test_a_mention_of_a_member_notifies_them_and_a_non_member_nobody(any_app, team):
    ws, alice, bob, carol, dave = team
    made = ws.execute(alice, "/studios/team", "create_note",
                      {"title": "Plan", "body": "@bob please look; @dave too; mail bob@example.com; @alice"})
    assert ("mention", "Plan", 1) in kinds(any_app, bob)
    assert kinds(any_app, dave) == []  # not a member: no entry
    assert ("mention", "Plan", 1) not in kinds(any_app, alice)  # her own mention of herself
    assert ("mention", "Plan", 1) not in kinds(any_app, carol)
    page = ws.page(alice, made.url)
    assert "@dave" in page.markdown  # left as plain text ...
    assert "not a member" not in page.markdown and "no such" not in page.markdown  # ... with no hint either way
    assert "Mentions: @alice, @bob\n" in page.markdown  # the members it mentions, listed
    html = render_page(page, csrf="", alternates={})  # and, for people, linked to the members page
    assert '<a href="/studios/team/members">@bob</a> please look; @dave too' in html
    ws.execute(bob, "/studios/team", "create_decision", {"question": "Where?", "description": "thanks @carol-"})
    assert ("mention", "Where?", 1) in kinds(any_app, carol)


def test_a_mention_names_current_members_by_handle_whatever_its_case(any_app, team):
    """`mentions.mentioned` (the store's `member_ids`): members by handle, case aside, once each
    and sorted; a deleted account, a non-member and an unknown handle name nobody."""
    ws, alice, bob, carol, dave = team
    said = "@BOB, @carol and @bob again; @dave @nobody @alice"

    def mentioned(text: str, role: str = "admin") -> list[str]:
        with any_app.store.read(user_id=alice["id"]) as tx:
            return mentions.mentioned(tx, tx.scalar("SELECT id FROM studios WHERE handle = 'team'"), role, text)

    assert mentioned(said) == sorted([alice["id"], bob["id"], carol["id"]])
    assert mentioned("@admins @carol", "member") == sorted([alice["id"], carol["id"]])
    assert mentioned("@everyone") == sorted([alice["id"], bob["id"], carol["id"]])
    assert mentioned("@everyone", "member") == mentioned("@nobody") == []
    with any_app.store.write(user_id=carol["id"]) as tx:
        identity.delete_user(tx, "carol")
    assert mentioned(said) == mentioned("@everyone") == sorted([alice["id"], bob["id"]])


def test_admins_and_everyone(any_app, team):
    ws, alice, bob, carol, dave = team
    ws.execute(bob, "/studios/team", "create_note", {"title": "Ask", "body": "@admins and @everyone: help"})
    assert ("mention", "Ask", 1) in kinds(any_app, alice)  # @admins
    assert ("mention", "Ask", 1) not in kinds(any_app, carol)  # @everyone from a member counts for nothing
    ws.execute(alice, "/studios/team", "create_commitment", {"title": "Clean", "critical_mass": 2,
                                                            "description": "@everyone join"})
    assert ("mention", "Clean", 1) in kinds(any_app, carol) and ("mention", "Clean", 1) in kinds(any_app, bob)


def test_a_comment_tells_the_creator_and_commenters_and_a_burst_folds(any_app, team):
    ws, alice, bob, carol, dave = team
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "text"}).url
    ws.execute(bob, note, "add_comment", {"body": "one"})
    assert kinds(any_app, alice) == [("comment", "Plan", 1)]
    assert kinds(any_app, bob) == [("invited", "the invitations for you", 1)]  # his own comment told him nothing
    ws.execute(carol, note, "add_comment", {"body": "two"})
    ws.execute(carol, note, "add_comment", {"body": "three"})
    assert kinds(any_app, alice) == [("comment", "Plan", 3)]  # folded: "3 new comments on"
    first = entries(any_app, alice)[0]
    assert (first["before"], first["after"]) == ("3 new comments on", ", the last by @carol")
    assert ("comment", "Plan", 2) in kinds(any_app, bob)  # he commented on it
    # a mention in a comment is one entry, the mention, not a comment as well
    ws.execute(carol, note, "add_comment", {"body": "@bob?"})
    assert ("mention", "Plan", 1) in kinds(any_app, bob) and ("comment", "Plan", 2) in kinds(any_app, bob)


def test_a_closed_decision_tells_its_creator_and_voters(any_app, team):
    ws, alice, bob, carol, dave = team
    made = ws.execute(bob, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["Pizza"]}).url
    ws.execute(carol, made, "vote", {"votes": [{"option": "Pizza", "accept": True}]})
    ws.execute(alice, made, "close_decision", {})
    assert ("decision_closed", "Lunch?", 1) in kinds(any_app, bob)
    assert ("decision_closed", "Lunch?", 1) in kinds(any_app, carol)
    assert ("decision_closed", "Lunch?", 1) not in kinds(any_app, alice)  # she closed it


def test_only_the_kinds_that_fold_fold(any_app, team):
    """A decision closed, reopened and closed again is two entries (its kind does not fold), while
    comments on one item fold into the unread entry; once read, the next comment is a new entry."""
    ws, alice, bob, carol, dave = team
    made = ws.execute(bob, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["Pizza"]}).url
    ws.execute(carol, made, "vote", {"votes": [{"option": "Pizza", "accept": True}]})
    ws.execute(alice, made, "close_decision", {})
    ws.execute(bob, made, "reopen_decision", {"deadline": "in 3 days"})
    ws.execute(alice, made, "close_decision", {})
    assert [k for k in kinds(any_app, carol) if k[0] == "decision_closed"] == [("decision_closed", "Lunch?", 1)] * 2
    ws.execute(carol, made, "add_comment", {"body": "one"})
    ws.execute(alice, made, "add_comment", {"body": "two"})
    assert [k for k in kinds(any_app, bob) if k[0] == "comment"] == [("comment", "Lunch?", 2)]
    ws.execute(bob, "/inbox", "mark_read", {"all": True})
    ws.execute(carol, made, "add_comment", {"body": "three"})
    assert [k for k in kinds(any_app, bob) if k[0] == "comment"] == [("comment", "Lunch?", 1), ("comment", "Lunch?", 2)]


class Recording:
    """A cursor that keeps the SQL text of each statement it runs."""

    def __init__(self, real):
        self.real, self.statements = real, []

    def execute(self, sql, args=()):
        self.statements.append(sql)
        return self.real.execute(sql, args)


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_an_inbox_write_is_the_same_statements_whatever_the_number_of_recipients(any_app, team):
    """The recipients are one bound JSON array: SQLite parses each statement once, not once for each
    number of recipients (an IN list of N placeholders); the fold and the new entries are one upsert,
    which keeps to the members. Only when it wrote for fewer than it was given (a non-member, the
    actor) does a query ask whom: who is told is still the members only, the actor left out. Pruning looks once, then not again
    until an entry can have expired."""
    ws, alice, bob, carol, dave = team
    with any_app.store.read(user_id=alice["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    seen: list[list[str]] = []
    for recipients in ([bob["id"]], [bob["id"]], [bob["id"], carol["id"]],
                       [bob["id"], carol["id"], dave["id"], alice["id"]]):
        with any_app.store.write(user_id=alice["id"]) as tx:
            tx.cursor = recorder = Recording(tx.cursor)
            try:
                told = tx.note_inbox("2099-01-01T00:00:00Z", "mention", studio, None, alice["id"], "", recipients,
                                     True, "2000")
            finally:
                tx.cursor = recorder.real
        seen.append(recorder.statements)
        assert told == sorted(u["id"] for u in (bob, carol) if u["id"] in recipients)
    assert len(seen[0]) == 4 and seen[0][1].startswith("DELETE FROM inbox ")  # the upsert, the pruning, its horizon
    assert seen[1] == seen[2] == seen[0][:1]  # the upsert alone: nothing can have expired since
    assert seen[3][:1] == seen[1] and len(seen[3]) == 2  # then: who of those given are members
    assert ("mention", "Team", 1) in kinds(any_app, carol) and kinds(any_app, dave) == []


def test_a_closing_entry_carries_the_result(any_app, team):
    """A decision's closing entry says what was decided, as its page does ("result: 'Lisbon'"); a
    commitment's says how many joined; a decision reopened since says no result."""
    ws, alice, bob, carol, dave = team
    made = ws.execute(bob, "/studios/team", "create_decision",
                      {"question": "Where?", "options": ["Lisbon", "Porto"]}).url
    ws.execute(carol, made, "vote", {"votes": [{"option": "Lisbon", "accept": True, "prefer": True}]})
    ws.execute(bob, made, "close_decision", {})
    entry = next(e for e in ws.page(carol, "/inbox").data["entries"] if e["kind"] == "decision_closed")
    assert "Lisbon" in entry["result"] and "Porto" not in entry["result"]
    assert f"[Where?]({made}), result: 'Lisbon' in `team`" in ws.page(carol, "/inbox").markdown
    assert "result: 'Lisbon'" in ws.page(carol, "/").markdown
    html = render_page(ws.page(carol, "/inbox"), csrf="", alternates={})
    assert "Where?</a>, result: &#39;Lisbon&#39;" in html or "Where?</a>, result: 'Lisbon'" in html
    ws.execute(bob, made, "reopen_decision", {"deadline": "in 3 days"})
    assert next(e for e in ws.page(carol, "/inbox").data["entries"] if e["kind"] == "decision_closed")["result"] is None
    pact = ws.execute(alice, "/studios/team", "create_commitment", {"title": "Picnic", "critical_mass": 2}).url
    ws.execute(bob, pact, "join_commitment", {})
    ws.execute(alice, pact, "close_commitment", {})
    assert f"@alice closed [Picnic]({pact}), 1 of 2 joined in `team`" in ws.page(bob, "/inbox").markdown


def test_critical_mass_and_closing_a_commitment(any_app, team):
    ws, alice, bob, carol, dave = team
    made = ws.execute(alice, "/studios/team", "create_commitment",
                      {"title": "Picnic", "critical_mass": 2, "limit": 3}).url
    ws.execute(bob, made, "join_commitment", {})
    assert kinds(any_app, alice) == []
    ws.execute(carol, made, "join_commitment", {})
    assert ("commitment_mass", "Picnic", 1) in kinds(any_app, alice)
    assert ("commitment_mass", "Picnic", 1) in kinds(any_app, bob)
    ws.execute(alice, made, "close_commitment", {})
    assert ("commitment_closed", "Picnic", 1) in kinds(any_app, bob)
    assert ("commitment_closed", "Picnic", 1) in kinds(any_app, carol)


def test_an_action_that_rolls_back_leaves_no_entry(any_app, team, monkeypatch):
    ws, alice, bob, carol, dave = team
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "text"}).url

    def fails(*args, **kwargs):
        raise RuntimeError("the write fails after its handler ran")

    monkeypatch.setattr(workspace, "write_audit", fails)
    with pytest.raises(RuntimeError):
        ws.execute(bob, note, "add_comment", {"body": "@carol look"})
    assert kinds(any_app, alice) == [] and ("mention", "Plan", 1) not in kinds(any_app, carol)


def test_mark_read_and_dismiss(any_app, team):
    ws, alice, bob, carol, dave = team
    for title in ("One", "Two", "Three"):
        ws.execute(alice, "/studios/team", "create_note", {"title": title, "body": "@bob"})
    page = ws.page(bob, "/inbox")
    assert {a.name for a in page.actions} == {"mark_read", "dismiss"}
    listed = page.data["entries"]
    assert [e["name"] for e in listed] == ["Three", "Two", "One", "the invitations for you"]  # that one read
    assert "3 unread" in page.markdown and "[Three](/studios/team/n/" in page.markdown
    ws.execute(bob, "/inbox", "mark_read", {"entry": listed[0]["id"]})
    after = ws.page(bob, "/inbox").data["entries"]
    assert [(e["name"], e["unread"]) for e in after] == [("Two", True), ("One", True), ("Three", False),
                                                                         ("the invitations for you", False)]
    ws.execute(bob, "/inbox", "mark_read", {"all": True, "until": listed[1]["id"]})  # Two and older
    assert [e["unread"] for e in ws.page(bob, "/inbox").data["entries"]] == [False] * 4
    with pytest.raises(ActionUnavailable):
        ws.execute(bob, "/inbox", "mark_read", {"all": True})  # nothing unread
    ws.execute(bob, "/inbox", "dismiss", {"entry": listed[0]["id"]})
    assert len(ws.page(bob, "/inbox").data["entries"]) == 3
    with pytest.raises(InvalidActionParams):
        ws.execute(bob, "/inbox", "dismiss", {"entry": listed[0]["id"]})  # gone already
    with pytest.raises(InvalidActionParams):
        ws.execute(bob, "/inbox", "dismiss", {})  # neither entry nor all
    with pytest.raises(InvalidActionParams):
        ws.execute(carol, "/inbox", "dismiss", {"entry": listed[1]["id"]})  # bob's, not hers
    ws.execute(bob, "/inbox", "dismiss", {"all": True})
    assert ws.page(bob, "/inbox").data["entries"] == []


def test_home_shows_the_unread_count_and_the_newest(any_app, team):
    ws, alice, bob, carol, dave = team
    for n in range(5):
        ws.execute(alice, "/studios/team", "create_note", {"title": f"Note {n} " + "x" * 180, "body": "@bob"})
    home = ws.page(bob, "/")
    assert home.data["unread"] == 5
    assert "## [Inbox](/inbox) (5 unread)" in home.markdown and "Note 4" in home.markdown and "Note 1" not in home.markdown
    assert len(home.markdown) < 2000
    # in one studio, no line names it (Your studios does); in two, each line does
    assert "in `team`" not in home.markdown
    ws.execute(alice, "/", "create_studio", {"handle": "side", "name": "Side"})
    add_member(ws, alice, "/studios/side/members", {"handle": "bob"})
    home = ws.page(bob, "/")
    assert re.search(r"\[Note 4 x+…?\]\(/studios/team/n/\w+\) in `team`", home.markdown)


def test_entries_are_kept_90_days(any_app, team, monkeypatch):
    """An entry last changed more than KEEP_DAYS ago goes when the next entry is written (on SQLite
    anyone's, on PostgreSQL one for the same person); a newer one stays."""
    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_note", {"title": "Old", "body": "@bob"})
    real, real_ns = time.time, time.time_ns
    monkeypatch.setattr(time, "time", lambda: real() + 60 * 86_400)
    monkeypatch.setattr(time, "time_ns", lambda: real_ns() + 60 * 86_400 * 10**9)
    ws.execute(alice, "/studios/team", "create_note", {"title": "Middle", "body": "@bob"})
    monkeypatch.setattr(time, "time", lambda: real() + (inbox.KEEP_DAYS + 1) * 86_400)
    monkeypatch.setattr(time, "time_ns", lambda: real_ns() + (inbox.KEEP_DAYS + 1) * 86_400 * 10**9)
    assert ("mention", "Old", 1) in kinds(any_app, bob)
    ws.execute(alice, "/studios/team", "create_note", {"title": "New", "body": "@bob"})
    assert [k for k in kinds(any_app, bob) if k[0] == "mention"] == [("mention", "New", 1), ("mention", "Middle", 1)]


def test_a_write_that_rolls_back_leaves_expired_entries_to_the_next(any_app, team, monkeypatch):
    """A write's pruning is undone with it, and the next write prunes again (SQLite remembers how
    old the oldest entry left is, so the write that rolled back must not have taught it)."""
    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_note", {"title": "Old", "body": "@bob"})
    real, real_ns = time.time, time.time_ns
    monkeypatch.setattr(time, "time", lambda: real() + (inbox.KEEP_DAYS + 1) * 86_400)
    monkeypatch.setattr(time, "time_ns", lambda: real_ns() + (inbox.KEEP_DAYS + 1) * 86_400 * 10**9)

    def fails(*args, **kwargs):
        raise RuntimeError("the write fails after its handler ran")

    with monkeypatch.context() as m:
        m.setattr(workspace, "write_audit", fails)
        with pytest.raises(RuntimeError):
            ws.execute(alice, "/studios/team", "create_note", {"title": "Lost", "body": "@bob"})
    assert ("mention", "Old", 1) in kinds(any_app, bob)
    ws.execute(alice, "/studios/team", "create_note", {"title": "New", "body": "@bob"})
    assert [k for k in kinds(any_app, bob) if k[0] == "mention"] == [("mention", "New", 1)]


def test_leaving_a_studio_hides_its_entries(any_app, team):
    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "@bob"})
    ws.execute(bob, "/studios/team/members", "leave_studio", {})
    assert [k[0] for k in kinds(any_app, bob)] == ["invited"]  # his own, of no studio: he accepted it


def test_handles_are_read_as_loomio_reads_them():
    assert mentions.handles("Hi @Ana, @bob-! mail x@y.com @ana (@carol) /@no") == ["ana", "bob", "carol"]
    assert mentions.handles("no mentions") == []


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_keeps_entries_to_their_owner(any_app, team):
    """On the hosted store a user reads and changes their own entries only, and writes nobody's
    directly: entries for others go through navmcp.note_inbox, for members of the actor's studio."""
    import psycopg

    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "@bob"})
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.all("SELECT * FROM inbox") == []  # bob's entries are not hers to see
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    with any_app.store.write(user_id=alice["id"]) as tx:
        assert tx.execute("UPDATE inbox SET read_at = 'x'") == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        with any_app.store.write(user_id=alice["id"]) as tx:
            tx.execute("INSERT INTO inbox (id, user_id, kind, created_at, updated_at) VALUES ('x', ?, 'mention', 'a', 'a')",
                       (bob["id"],))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # dave writing in a studio he is not in
        with any_app.store.write(user_id=dave["id"]) as tx:
            tx.note_inbox("a", "mention", studio, None, dave["id"], "", [bob["id"]], False, "a")
    with any_app.store.write(user_id=alice["id"]) as tx:  # alice, for dave, who is no member: nothing
        tx.note_inbox("2099", "mention", studio, None, alice["id"], "", [dave["id"]], False, "a")
    assert kinds(any_app, dave) == []
    assert [k for k, _, _ in kinds(any_app, bob)] == ["mention", "invited"]


def test_who_voted_and_remind(any_app, team):
    ws, alice, bob, carol, dave = team
    made = ws.execute(bob, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["Pizza", "Soup"]}).url
    ws.execute(carol, made, "vote", {"votes": [{"option": "Pizza", "prefer": True}, {"option": "Soup", "accept": False}]})
    page = ws.page(alice, made)
    assert page.data["ballots"] == [{"handle": "carol", "accepts": ["Pizza"], "prefers": ["Pizza"]}]
    assert page.data["not_voted"] == ["alice", "bob"] and "- @carol: Pizza ★" in page.markdown
    assert "Not voted yet (2): @alice, @bob." in page.markdown
    assert "remind" in {a.name for a in page.actions}  # an admin
    assert "remind" not in {a.name for a in ws.page(carol, made).actions}  # neither creator nor admin
    done = ws.execute(bob, made, "remind", {})
    assert done.message == "Reminded 1 member(s) who have not voted yet."  # alice; bob made it
    assert ("reminder", "Lunch?", 1) in kinds(any_app, alice) and ("reminder", "Lunch?", 1) not in kinds(any_app, carol)
    with pytest.raises(ActionUnavailable, match="less than a day ago"):
        ws.execute(alice, made, "remind", {})
    secret = ws.execute(bob, "/studios/team", "create_decision",
                        {"question": "Raise?", "options": ["Yes"], "anonymous": True}).url
    ws.execute(carol, secret, "vote", {"votes": [{"option": "Yes"}]})
    hidden = ws.page(alice, secret)
    assert hidden.data["ballots"] == [] and "@carol" not in hidden.markdown and "Anonymous" in hidden.markdown
    assert "1 accept" in hidden.markdown
