"""A cycle page's counts come from per-day rows the stores keep by trigger (migration 0200); they
must equal the exact counts of the window's rows, the way the page counted them before, after any
sequence of writes, on both stores: items created and closed (and reopened), comments added and
deleted, ballots cast, replaced, narrowed and moved to another day, commitments joined and left.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nav_helpers import add_member
from navmcp.actions.decisions import _UPSERT_VOTES
from navmcp.clock import stamp
from navmcp.content.domain import cycle_window
from navmcp.identity import add_user

# The counts as the cycle page took them before migration 0200: one count of rows each.
EXACT = {
    "created": "SELECT count(*) FROM items WHERE studio_id = ? AND created_at >= ? AND created_at < ?",
    "closed": "SELECT count(*) FROM items WHERE studio_id = ? AND closed_at >= ? AND closed_at < ?",
    "comments": "SELECT count(*) FROM comments WHERE studio_id = ? AND created_at >= ? AND created_at < ?",
    "votes": """SELECT count(*) FROM (SELECT DISTINCT v.decision_id, v.user_id FROM votes v JOIN items i ON i.id = v.decision_id
                 WHERE i.studio_id = ? AND v.created_at >= ? AND v.created_at < ?) b""",
    "joins": """SELECT count(*) FROM participants p JOIN items i ON i.id = p.commitment_id
                 WHERE i.studio_id = ? AND p.joined_at >= ? AND p.joined_at < ?""",
}


def _days(n: int) -> str:
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return stamp(day + timedelta(days=n))


def _windows() -> list[tuple[str, str]]:
    return [cycle_window(c) for c in ("today", "yesterday", "this-week", "last-week", "this-month")] + \
           [(_days(n), _days(n + 1)) for n in range(-3, 2)] + [("2000-01-01", "9999-12-31")]


def _check(app, user, sid: str) -> None:
    with app.store.read(user_id=user["id"]) as tx:
        for since, till in _windows():
            exact = {name: tx.scalar(sql, (sid, since, till)) for name, sql in EXACT.items()}
            assert tx.cycle_activity(sid, since, till) == exact, (since, till)


def test_the_day_counts_follow_every_write(any_app):
    ws = any_app.workspace
    alice, bob = add_user(any_app.store, "alice"), add_user(any_app.store, "bob")
    ws.execute(alice, "/", "create_studio", {"handle": "days", "name": "Days"})
    add_member(ws, alice, "/studios/days/members", {"handle": "bob", "role": "member"})
    with any_app.store.read(user_id=alice["id"]) as tx:
        sid = tx.scalar("SELECT id FROM studios WHERE handle = 'days'")
    _check(any_app, alice, sid)

    d = ws.execute(alice, "/studios/days", "create_decision", {"question": "Lunch?", "options": ["a", "b", "c"]}).url
    c = ws.execute(alice, "/studios/days", "create_commitment", {"title": "Run", "critical_mass": 5}).url
    n = ws.execute(bob, "/studios/days", "create_note", {"title": "Hello", "body": "x"}).url
    ws.execute(alice, d, "vote", {"votes": [{"option": "1"}, {"option": "2", "prefer": True}]})
    ws.execute(bob, d, "vote", {"votes": [{"option": "3"}]})
    ws.execute(alice, d, "vote", {"votes": [{"option": "3"}]})  # replaced, narrowed: still one ballot
    ws.execute(bob, c, "join_commitment", {})
    ws.execute(alice, c, "join_commitment", {})
    ws.execute(bob, c, "leave_commitment", {})
    ws.execute(bob, n, "add_comment", {"body": "first"})
    second = ws.execute(alice, n, "add_comment", {"body": "second"})
    _check(any_app, alice, sid)
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.cycle_activity(sid, *cycle_window("today")) == \
            {"created": 3, "closed": 0, "comments": 2, "votes": 2, "joins": 1}
        comment_id = tx.scalar("SELECT id FROM comments WHERE body = 'second'")
    assert second.url
    ws.execute(alice, n, "delete_comment", {"comment": comment_id})
    ws.execute(alice, d, "close_decision", {})
    _check(any_app, alice, sid)
    ws.execute(alice, d, "reopen_decision", {})
    ws.execute(alice, c, "close_commitment", {})
    _check(any_app, alice, sid)
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.cycle_activity(sid, *cycle_window("today"))["closed"] == 1  # the commitment; the decision reopened


def test_a_ballot_moved_to_another_day_counts_on_that_day_once(any_app):
    """Rows of one ballot stamped on earlier days, then a new ballot that keeps some options (updated
    in place, row by row, in one statement), adds one and leaves one out: the ballot leaves its old
    day and counts once on the new one."""
    ws = any_app.workspace
    alice, bob = add_user(any_app.store, "alice"), add_user(any_app.store, "bob")
    ws.execute(alice, "/", "create_studio", {"handle": "days", "name": "Days"})
    add_member(ws, alice, "/studios/days/members", {"handle": "bob", "role": "member"})
    d = ws.execute(alice, "/studios/days", "create_decision", {"question": "When?", "options": ["a", "b", "c", "e"]}).url
    with any_app.store.write(user_id=alice["id"]) as tx:
        sid = tx.scalar("SELECT id FROM studios WHERE handle = 'days'")
        did = tx.scalar("SELECT id FROM items WHERE title = 'When?'")
        a, b, c, e = (tx.scalar("SELECT id FROM options WHERE decision_id = ? AND title = ?", (did, t)) for t in "abce")
        two_days_ago, yesterday = stamp(datetime.now(UTC) - timedelta(days=2)), stamp(datetime.now(UTC) - timedelta(days=1))
        tx.execute(_UPSERT_VOTES[3], (did, a, alice["id"], 1, 0, two_days_ago, did, b, alice["id"], 1, 1, two_days_ago,
                                      did, c, alice["id"], 0, 0, two_days_ago))
    with any_app.store.write(user_id=bob["id"]) as tx:  # each writes their own (row-level security)
        tx.execute(_UPSERT_VOTES[2], (did, a, bob["id"], 1, 0, yesterday, did, b, bob["id"], 1, 0, yesterday))
    _check(any_app, alice, sid)
    with any_app.store.write(user_id=alice["id"]) as tx:  # alice's new ballot, as the vote action writes it
        tx.execute("DELETE FROM votes WHERE decision_id = ? AND user_id = ? AND option_id NOT IN (?, ?, ?)",
                   (did, alice["id"], a, b, e))
        tx.execute(_UPSERT_VOTES[3], (did, a, alice["id"], 1, 0, yesterday, did, b, alice["id"], 0, 0, yesterday,
                                      did, e, alice["id"], 1, 1, yesterday))
    _check(any_app, alice, sid)
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.cycle_activity(sid, _days(-2), _days(-1))["votes"] == 0
        assert tx.cycle_activity(sid, _days(-1), _days(0))["votes"] == 2
    ws.execute(bob, d, "vote", {"votes": [{"option": "c"}]})  # today, through the action
    _check(any_app, alice, sid)
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert [tx.cycle_activity(sid, _days(n), _days(n + 1))["votes"] for n in (-2, -1, 0)] == [0, 1, 1]


def test_a_cycle_page_states_the_day_counts(any_app):
    """The page's own numbers: created and closed in the table, the activity beside them."""
    ws = any_app.workspace
    alice = add_user(any_app.store, "alice")
    ws.execute(alice, "/", "create_studio", {"handle": "days", "name": "Days"})
    d = ws.execute(alice, "/studios/days", "create_decision", {"question": "Now?", "options": ["x"]}).url
    ws.execute(alice, d, "vote", {"votes": [{"option": "x"}]})
    ws.execute(alice, d, "add_comment", {"body": "done"})
    ws.execute(alice, d, "close_decision", {})
    page = ws.page(alice, "/studios/days/cycles/today")
    assert page.data["pager"]["total"] == 1 and page.data["closed_count"] == 1
    assert {k: page.data["activity"][k] for k in ("comments", "votes", "joins")} == {"comments": 1, "votes": 1, "joins": 0}
    assert ws.page(alice, "/studios/days/cycles/yesterday").data["closed_count"] == 0
