"""Deadlines within a day (navmcp/feeds/due.py), on both stores: the sweep writes an inbox entry for each
person an open decision awaits a vote from, or an open commitment awaits, once its deadline is less
than a day away; once per item per person (read or dismissed, it does not come back), never for a
non-member, one who voted or joined, a closed item or a deadline further off. The clock is moved
through the clock module's own time source."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from deadlines import wait_for
from nav_helpers import add_member
from navmcp.feeds import due, inbox

DAY = 86_400


@pytest.fixture
def team(any_app, new_user):
    """alice (admin), bob and carol (members) in team; dave outside it."""
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    carol, _ = new_user("carol")
    dave, _ = new_user("dave")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    add_member(ws, alice, "/studios/team/members", {"handle": "carol"})
    return ws, alice, bob, carol, dave


@pytest.fixture
def later(monkeypatch):
    """Move the clock on by some seconds."""
    real, real_ns = time.time, time.time_ns

    def move(seconds: float) -> None:
        monkeypatch.setattr(time, "time", lambda: real() + seconds)
        monkeypatch.setattr(time, "time_ns", lambda: real_ns() + int(seconds * 10**9))
    return move


def hours(n: float) -> str:
    """A deadline `n` hours from the real now, as create_decision takes one."""
    return (datetime.now(UTC) + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


def deadline_entries(any_app, user) -> list[dict]:
    with any_app.store.read(user_id=user["id"]) as tx:
        unread, _ = inbox.counts(tx, user["id"])
        return [e for e in inbox.entries(tx, user["id"], unread, 0, 100) if e["kind"] == "deadline"]


def test_a_decision_due_within_a_day_tells_who_has_not_voted_once(any_app, team, later):
    ws, alice, bob, carol, dave = team
    made = ws.execute(alice, "/studios/team", "create_decision",
                      {"question": "Where?", "options": ["Lisbon", "Porto"], "deadline": hours(48)}).url
    ws.execute(bob, made, "vote", {"votes": [{"option": "Lisbon", "accept": True}]})
    assert due.sweep(any_app.store) == 0  # two days off
    later(1.5 * DAY)
    assert due.sweep(any_app.store) == 2  # alice (her own decision awaits her vote too) and carol
    for user in (alice, carol):
        [entry] = deadline_entries(any_app, user)
        assert entry["url"] == made and entry["unread"] and entry["actor"] is None
    assert deadline_entries(any_app, bob) == [] and deadline_entries(any_app, dave) == []
    page = ws.page(carol, "/inbox").markdown
    assert f"**new** Due within a day, awaiting your vote: [Where?]({made}) (deadline " in page
    assert " UTC) in `team`" in page
    # once per item per person: not on the next sweep, nor after it was read or dismissed
    assert due.sweep(any_app.store) == 0
    ws.execute(carol, "/inbox", "dismiss", {"entry": deadline_entries(any_app, carol)[0]["id"]})
    ws.execute(alice, made, "extend_decision", {"deadline": hours(36 + 20)})
    assert due.sweep(any_app.store) == 0
    assert deadline_entries(any_app, carol) == [] and len(deadline_entries(any_app, alice)) == 1


def test_a_commitment_due_within_a_day_tells_who_has_not_joined(any_app, team, later):
    ws, alice, bob, carol, dave = team
    made = ws.execute(alice, "/studios/team", "create_commitment",
                      {"title": "Picnic", "critical_mass": 3, "deadline": hours(30)}).url
    ws.execute(bob, made, "join_commitment", {})
    later(10 * 3600)
    assert due.sweep(any_app.store) == 2
    assert [e["url"] for e in deadline_entries(any_app, carol)] == [made]
    assert len(deadline_entries(any_app, alice)) == 1 and deadline_entries(any_app, bob) == []
    assert "Due within a day and still short of critical mass: [Picnic]" in ws.page(carol, "/").markdown


def test_nothing_for_a_closed_item_one_at_critical_mass_or_a_decision_with_nothing_to_vote_on(any_app, team, later):
    ws, alice, bob, carol, dave = team
    closed = ws.execute(alice, "/studios/team", "create_decision",
                        {"question": "Lunch?", "options": ["Pizza"], "deadline": hours(20)}).url
    ws.execute(alice, closed, "close_decision", {})
    ws.execute(alice, "/studios/team", "create_decision", {"question": "Empty?", "deadline": hours(20)})
    full = ws.execute(alice, "/studios/team", "create_commitment",
                      {"title": "Walk", "critical_mass": 1, "deadline": hours(20)}).url
    ws.execute(bob, full, "join_commitment", {})
    assert due.sweep(any_app.store) == 0
    later(2 * DAY)  # every deadline has passed
    assert due.sweep(any_app.store) == 0


def test_the_sweep_is_noted_in_the_change_feed_and_a_sweeper_runs_it(any_app, team, later):
    """Inbox watchers hear of a sweep's entries: each item it wrote about is a change of its studio
    (as its creator; no words, as nobody acted). A `Sweeper` sweeps `first` seconds after it starts."""
    ws, alice, bob, carol, dave = team
    made = ws.execute(alice, "/studios/team", "create_decision",
                      {"question": "Where?", "options": ["Lisbon"], "deadline": hours(20)}).url
    with any_app.store.read(user_id=carol["id"]) as tx:
        before = tx.scalar("SELECT max(seq) FROM changes") if not any_app.store.hosted else None
    sweeper = due.Sweeper(any_app.store, every=3600, first=0)
    sweeper.start()
    try:
        wait_for(lambda: deadline_entries(any_app, carol), "the sweeper's first sweep")
    finally:
        sweeper.stop()
    item_id = made.rsplit("/", 1)[1]
    if not any_app.store.hosted:  # on PostgreSQL the feed's table is not the users' to read
        with any_app.store.read() as tx:
            rows = tx.all("SELECT item_id, user_id, action FROM changes WHERE seq > ?", (before,))
        assert rows == [{"item_id": item_id, "user_id": alice["id"], "action": "deadline"}]


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_the_web_app_sweeps_while_it_serves(any_app, team):
    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_commitment", {"title": "Walk", "critical_mass": 2, "deadline": hours(5)})
    from navmcp.web.app import create_app

    web = create_app(any_app)
    web.due = due.Sweeper(any_app.store, first=0)  # its own waits EVERY before the first sweep
    web._start()  # what its first request does: it starts the sweeper
    try:
        wait_for(lambda: deadline_entries(any_app, carol), "the web app's first sweep")
    finally:
        web.due.stop()
        web.workers.shutdown()


def _break_sweep(any_app, store_kind, request, broken: bool) -> None:
    """Make the sweep's own query fail in the database, or work again, as its owner would: on SQLite
    the inbox table is renamed away (back), on PostgreSQL the app's right to run the sweep's function
    is revoked (granted)."""
    if store_kind == "sqlite":
        with any_app.store.write() as tx:
            tx.execute("ALTER TABLE inbox RENAME TO inbox_away" if broken else "ALTER TABLE inbox_away RENAME TO inbox")
        return
    import psycopg

    grant = ("REVOKE EXECUTE ON FUNCTION navmcp.note_deadlines(text, text) FROM navmcp_app" if broken
             else "GRANT EXECUTE ON FUNCTION navmcp.note_deadlines(text, text) TO navmcp_app")
    with psycopg.connect(request.getfixturevalue("pg_database").admin_url, autocommit=True) as owner:
        owner.execute(grant)


def test_a_failed_sweep_is_logged_and_the_sweeper_sweeps_again(any_app, team, store_kind, request, capsys):
    """The sweeper's fault path, on a real store whose sweep fails in the database: the error is
    logged (to stderr, where the CLI's logging writes), the sweeper's thread lives on, and the next
    period's sweep, with the database fine again, writes the entries due."""
    import logging
    import sys

    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_decision", {"question": "Where?", "options": ["Lisbon"],
                                                           "deadline": hours(20)})
    logger = logging.getLogger("navmcp.feeds.due")
    stderr = logging.StreamHandler(sys.stderr)  # as navmcp.cli sets up logging: a stream on stderr
    logger.addHandler(stderr)
    _break_sweep(any_app, store_kind, request, broken=True)
    sweeper = due.Sweeper(any_app.store, every=0.2, first=0)
    try:
        sweeper.start()
        failed = wait_for(lambda: "the deadline sweep failed" in (got := capsys.readouterr().err) and got,
                          "a failed sweep logged")
        assert "Traceback" in failed and ("inbox" in failed if store_kind == "sqlite" else "permission denied" in failed)
        time.sleep(0.5)  # more periods go by, each failing: the thread lives on
        assert sweeper._thread.is_alive()
        _break_sweep(any_app, store_kind, request, broken=False)
        wait_for(lambda: deadline_entries(any_app, carol), "the sweep after the fault")
        assert sweeper._thread.is_alive() and len(deadline_entries(any_app, bob)) == 1
    finally:
        logger.removeHandler(stderr)
        sweeper.stop()
    assert not sweeper._thread.is_alive()


def test_stop_waits_for_a_sweep_under_way(any_app, team, store_kind, request):
    """stop() during a sweep (held up by another's lock) returns once the sweep is done, its entries
    written: the store is never closed beneath a sweep."""
    import threading

    ws, alice, bob, carol, dave = team
    ws.execute(alice, "/studios/team", "create_commitment", {"title": "Walk", "critical_mass": 3, "deadline": hours(5)})
    if store_kind == "sqlite":  # another writer holds the database's write lock
        import sqlite3

        other = sqlite3.connect(any_app.store.path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
    else:  # another session holds the items table
        import psycopg

        other = psycopg.connect(request.getfixturevalue("pg_database").admin_url)
        other.execute("LOCK TABLE items IN ACCESS EXCLUSIVE MODE")
    writing = threading.Event()
    real_write = any_app.store.write

    def write(*args, **kwargs):  # the store's own write, noting that a sweep has reached it
        writing.set()
        return real_write(*args, **kwargs)

    any_app.store.write = write
    sweeper = due.Sweeper(any_app.store, every=3600, first=0)
    try:
        if store_kind == "sqlite":
            sweeper.start()
            assert writing.wait(10)
        else:
            from store_fixtures import waiting_for_locks

            sweeper.start()
            wait_for(lambda: waiting_for_locks(request.getfixturevalue("pg_database")), "the sweep waiting")
        release = threading.Timer(0.5, other.commit)
        release.start()
        started = time.monotonic()
        sweeper.stop()
        assert time.monotonic() - started >= 0.4  # it waited for the sweep
        assert not sweeper._thread.is_alive()
    finally:
        any_app.store.write = real_write
        other.close()
    assert len(deadline_entries(any_app, carol)) == 1  # the sweep under way finished its write
