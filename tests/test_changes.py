"""The change feed (navmcp/changes.py), on both stores: an action's change reaches a watcher of
the page it changed from another store object (another connection, as another process has), a
refused or rolled-back action announces nothing, and a watcher who loses the page is ended.

No test here times anything: a watch begins where `Feed.add` read the last change, so nobody waits
for the feed's thread to start; what must arrive is waited for up to HANG (a hang, not slowness);
"nothing was announced" is shown by a later change being the first one heard (the feed hands
changes on in order)."""

from __future__ import annotations

import queue
import time

import pytest

from deadlines import HANG, wait_for
from navmcp.app import App
from navmcp.changes import Watcher, interest, record
from navmcp.errors import InvalidActionParams


def _first_by(events: queue.Queue) -> str:
    """Who made the first change a watcher hears of (it must be told of one, not ended)."""
    kind, change = events.get(timeout=HANG)
    assert kind == "notify", change
    return change.user_id


@pytest.fixture
def team(any_app, new_user):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    carol, _ = new_user("carol")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    ws.execute(alice, "/studios/team/members", "add_member", {"handle": "bob"})
    ws.execute(alice, "/", "create_studio", {"handle": "other", "name": "Other"})
    made = ws.execute(alice, "/studios/team", "create_decision",
                      {"question": "Lunch?", "options": ["Pizza", "Soup"]})
    return ws, alice, bob, carol, made.url


@pytest.fixture
def watching(any_app):
    """watch(user, url) -> a queue of ("notify", change) / ("end", reason), from a second App on the
    same store: its own connections, as a second process would have."""
    second = App(any_app.config)
    feeds = []

    def watch(user, url):
        events: queue.Queue = queue.Queue()
        with second.store.read(user_id=user["id"]) as tx:
            wanted = interest(tx, user["id"], url)
        watcher = Watcher(wanted, lambda change: events.put(("notify", change)),
                          lambda reason: events.put(("end", reason)))
        second.feed.add(watcher)
        feeds.append(watcher)
        return events

    yield watch
    if "feed" in second.__dict__:
        second.feed.close()
    if "store" in second.__dict__:
        second.store.close()


def test_a_vote_reaches_the_decisions_watcher_and_no_other(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    on_decision = watching(bob, decision)
    on_other = watching(alice, "/studios/other")
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Pizza", "accept": True}]})
    kind, change = on_decision.get(timeout=HANG)
    assert kind == "notify" and change.item_id == decision.rsplit("/", 1)[1]
    note = ws.execute(alice, "/studios/other", "create_note", {"title": "Later", "body": "x"}).url
    kind, change = on_other.get(timeout=HANG)  # the first the other studio's watcher hears of
    assert kind == "notify" and change.item_id == note.rsplit("/", 1)[1]


def test_a_refused_action_announces_nothing(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    with pytest.raises(InvalidActionParams):
        ws.execute(alice, decision, "vote", {"votes": [{"option": "Nope", "accept": True}]})
    ws.execute(bob, decision, "add_comment", {"body": "hi"})
    assert _first_by(events) == bob["id"]  # the first heard of is bob's


def test_a_change_whose_transaction_rolls_back_announces_nothing(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    with any_app.store.read(user_id=alice["id"]) as tx:
        studio_id = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    with pytest.raises(RuntimeError):
        with any_app.store.write(user_id=alice["id"]) as tx:
            record(tx, alice["id"], studio_id, decision.rsplit("/", 1)[1])
            raise RuntimeError("the write fails after recording its change")
    ws.execute(bob, decision, "add_comment", {"body": "after"})
    assert _first_by(events) == bob["id"]


@pytest.mark.parametrize("store_kind", ["sqlite"])  # on PostgreSQL every write is its own transaction
def test_a_rolled_back_group_announces_nothing(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    with pytest.raises(RuntimeError):
        with any_app.store.group():
            ws.execute(alice, decision, "add_comment", {"body": "never committed"})
            raise RuntimeError("the group fails before it commits")
    ws.execute(bob, decision, "add_comment", {"body": "after"})
    assert _first_by(events) == bob["id"]


def test_a_removed_members_watch_ends_with_a_reason(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    feed_page = watching(bob, "/studios/team")
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"})
    for watched in (events, feed_page):
        kind, reason = watched.get(timeout=HANG)
        assert kind == "end" and "no longer a member" in reason


def test_the_last_member_deleting_a_studio_ends_its_watches(any_app, team, watching):
    """leave_studio by its last member deletes the studio (issue 24 item 17): the act is audited
    under no studio, and the watchers of its pages still hear of it, and are ended."""
    ws, alice, bob, carol, decision = team
    ws.execute(alice, "/studios/other/members", "add_member", {"handle": "carol", "role": "admin"})
    ws.execute(alice, "/studios/other/members", "leave_studio", None)
    events = watching(carol, "/studios/other")
    ws.execute(carol, "/studios/other/members", "leave_studio", {"confirm": "other"})
    kind, reason = events.get(timeout=HANG)
    assert kind == "end" and "no longer a member" in reason

def test_home_hears_of_a_new_studio_membership_and_of_its_studios(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    home = watching(carol, "/")
    ws.execute(alice, decision, "add_comment", {"body": "carol is in no studio"})
    ws.execute(alice, "/studios/team/members", "add_member", {"handle": "carol"})
    kind, change = home.get(timeout=HANG)  # the first heard of: her membership, not the comment
    assert kind == "notify" and change.item_id is None
    ws.execute(alice, decision, "add_comment", {"body": "now carol's home shows it"})
    assert home.get(timeout=HANG)[0] == "notify"


def test_ones_own_pages_hear_of_ones_own_change_outside_studios(any_app, team, watching):
    """make_findable changes no studio: bob's /whoami (open in another tab) hears of it; nobody
    else's pages do."""
    ws, alice, bob, carol, decision = team
    mine, theirs = watching(bob, "/whoami"), watching(alice, "/")
    ws.execute(bob, "/whoami", "make_unfindable", None)
    kind, change = mine.get(timeout=HANG)
    assert kind == "notify" and change.studio_id is None and change.user_id == bob["id"]
    ws.execute(alice, decision, "add_comment", {"body": "alice's own"})
    assert _first_by(theirs) == alice["id"]


def test_nobody_watching_costs_no_thread(any_app, team):
    ws, alice, bob, carol, decision = team
    feed = any_app.feed
    assert feed._thread is None
    events: queue.Queue = queue.Queue()
    with any_app.store.read(user_id=bob["id"]) as tx:
        watcher = Watcher(interest(tx, bob["id"], decision), events.put, events.put)
    feed.add(watcher)
    assert feed._thread is not None
    time.sleep(0.3)  # the thread is waiting for changes by now, not about to look whether anyone watches
    feed.remove(watcher)
    wait_for(lambda: feed._thread is None, "the feed's thread ends once nobody watches")
    feed.close()


def test_a_vote_in_another_process_reaches_a_watcher_here(any_app, team, watching):
    """bin/mcp-server, a process of its own acting as alice with her token, votes; bob's watcher in
    this process hears of it."""
    from navmcp.identity import mint_token
    from navmcp.walkthrough import StdioClient

    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    config = any_app.config
    client = StdioClient(env={"NAVMCP_HOME": str(config.home), "NAVMCP_DATABASE_URL": config.database_url,
                              "NAVMCP_TOKEN": mint_token(any_app.secret, alice["id"])})
    try:
        client.initialize()
        result = client.call("execute_action", action="vote", url=decision,
                             params={"votes": [{"option": "Soup", "accept": True}]})
        assert not result["isError"], result
        kind, change = events.get(timeout=HANG)
        assert kind == "notify" and change.user_id == alice["id"]
    finally:
        client.close()
