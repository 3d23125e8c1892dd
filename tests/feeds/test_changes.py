"""The change feed (navmcp/feeds/changes.py), on both stores: an action's change reaches a watcher of
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
from nav_helpers import add_member
from navmcp.app import App
from navmcp.errors import InvalidActionParams
from navmcp.feeds.changes import Watcher, interest, record, summary


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
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
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

    watch.app = second  # type: ignore[attr-defined]
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


def _told(events: queue.Queue):
    kind, change = events.get(timeout=HANG)
    assert kind == "notify", change
    return change.action, change.summary


def test_a_change_says_what_it_was_naming_only_whom_the_page_names(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    secret = ws.execute(alice, "/studios/team", "create_decision",
                        {"question": "Who?", "options": ["a"], "anonymous": True}).url
    events = watching(bob, decision)
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Pizza", "accept": True}]})
    assert _told(events) == ("vote", "vote by @alice")
    studio = watching(bob, "/studios/team")
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Menu", "body": "x"}).url
    assert _told(studio) == ("create_note", "note created by @alice")
    ws.execute(alice, note, "pin", {})
    assert _told(studio) == ("pin", "pinned")  # who pins is the admins' audit log's to say
    ws.execute(alice, decision, "close_decision", {})
    assert _told(events) == ("close_decision", "closed by @alice: 'Pizza'")  # the result, as the page says it
    events = watching(bob, secret)
    ws.execute(alice, secret, "vote", {"votes": [{"option": "a"}]})
    assert _told(events) == ("vote", "vote")  # an anonymous decision's ballots name nobody
    ws.execute(alice, secret, "add_comment", {"body": "hm"})
    assert _told(events) == ("add_comment", "comment by @alice")  # a comment is signed on the page


def test_a_closing_says_the_result_its_page_shows_and_nothing_more(any_app, team, watching):
    """Issue 42: a watcher waiting for a decision to close learns its result from the notification
    ("closed: Lisbon"), as every member reads it on the page; an anonymous decision's closing names
    no voter, a tie names the tied options, and a closing below the quorum says so."""
    ws, alice, bob, carol, decision = team
    new = lambda params: ws.execute(alice, "/studios/team", "create_decision", params).url  # noqa: E731
    made = new({"question": "Where?", "options": ["Lisbon", "Porto"], "anonymous": True})
    tie = new({"question": "When?", "options": ["Mon", "Tue"]})
    few = new({"question": "Cake?", "options": ["Yes"], "quorum": "2"})
    events = {url: watching(bob, url) for url in (made, tie, few)}

    def told(url):  # what the watcher of `url` hears next, past the creations made before it watched
        while (heard := _told(events[url]))[0] == "create_decision":
            pass
        return heard

    for who, place in ((alice, "Lisbon"), (bob, "Lisbon")):
        ws.execute(who, made, "vote", {"votes": [{"option": place, "accept": True}]})
    assert [told(made), told(made)] == [("vote", "vote")] * 2
    ws.execute(alice, made, "close_decision", {})
    assert told(made) == ("close_decision", "closed by @alice: 'Lisbon'")
    assert "Lisbon" in str(ws.page(bob, made).data)  # what the page shows every member
    ws.execute(alice, tie, "vote", {"votes": [{"option": "Mon"}, {"option": "Tue"}]})
    ws.execute(alice, tie, "close_decision", {})
    assert told(tie) == ("vote", "vote by @alice")
    assert told(tie) == ("close_decision", "closed by @alice: 'Mon' / tie with 'Tue'")
    ws.execute(alice, few, "close_decision", {})
    assert told(few) == ("close_decision", "closed by @alice: no quorum (0 of the 2 needed responded)")


def test_a_closing_reopened_before_it_is_told_says_no_result(any_app, team, watching):
    """The result is read when the closing is told: a decision open again by then has none to tell."""
    from navmcp.feeds.changes import Change
    from navmcp.kinds import told_result

    ws, alice, bob, carol, decision = team
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Soup", "accept": True}]})
    ws.execute(alice, decision, "close_decision", {})
    change = Change(0, None, decision.rsplit("/", 1)[1], alice["id"], action="close_decision")
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert told_result(tx, change) == "'Soup'"
    ws.execute(alice, decision, "reopen_decision", {})
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert told_result(tx, change) is None
    with any_app.store.read(user_id=carol["id"]) as tx:  # not a member: on PostgreSQL she reads nothing of it
        assert told_result(tx, change) is None or not any_app.config.database_url


def test_a_kind_the_feed_has_no_words_for_is_told_without_a_summary(any_app, team, watching):
    """A user with SQL could record a change under a kind of their own: it reaches nobody as words."""
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    with any_app.store.write(user_id=alice["id"]) as tx:
        studio_id = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
        record(tx, alice["id"], studio_id, decision.rsplit("/", 1)[1], "closed: you won a prize")
    kind, change = events.get(timeout=HANG)
    assert kind == "notify" and change.summary is None


def test_summaries_in_words():
    assert summary("vote", "bob", anonymous=False) == "vote by @bob"
    assert summary("allocate", "bob", anonymous=True) == "dots"
    assert summary("unpin", "bob", anonymous=False) == "unpinned"
    assert summary("add_comment", None, anonymous=False) == "comment"  # an actor nobody may read
    assert summary("drop_tables", "bob", anonymous=False) is None and summary(None, "bob", False) is None
    assert summary("close_decision", "bob", False, "'Lisbon'") == "closed by @bob: 'Lisbon'"
    assert summary("vote", "bob", False, "'Lisbon'") == "vote by @bob"  # only a closing tells a result
    long = summary("close_poll", None, False, "x" * 500)
    assert long is not None and len(long) == len("closed: ") + 200 and long.endswith("…")


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
    """delete_studio by its last member deletes the studio (issue 24 item 17, issue 49 item 9): the act is audited
    under no studio, and the watchers of its pages still hear of it, and are ended."""
    ws, alice, bob, carol, decision = team
    add_member(ws, alice, "/studios/other/members", {"handle": "carol", "role": "admin"})
    ws.execute(alice, "/studios/other/members", "leave_studio", None)
    events = watching(carol, "/studios/other")
    ws.execute(carol, "/studios/other/members", "delete_studio", {"confirm": "other"})
    kind, reason = events.get(timeout=HANG)
    assert kind == "end" and "no longer a member" in reason

def test_home_hears_of_a_new_studio_membership_and_of_its_studios(any_app, team, watching):
    ws, alice, bob, carol, decision = team
    home = watching(carol, "/")
    ws.execute(alice, decision, "add_comment", {"body": "carol is in no studio"})
    add_member(ws, alice, "/studios/team/members", {"handle": "carol"})
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
    from navmcp.demo.walkthrough import StdioClient
    from navmcp.identity import mint_token

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


# --- every change exactly once, in commit order (issue 41) ----------------------------------------


def _studio_id(any_app, user, handle="team"):
    with any_app.store.read(user_id=user["id"]) as tx:
        return tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))


def _drain(events, expected: int, mark) -> list:
    """The first `expected` events, then whatever else is heard before the later change `mark()`
    makes (it returns a test that knows that change): the feed hands changes on in order, so
    anything heard between the two was heard twice, and no time window is needed to see it."""
    got = [events.get(timeout=HANG) for _ in range(expected)]
    is_mark = mark()
    while True:
        kind, change = events.get(timeout=HANG)
        if kind == "notify" and is_mark(change):
            return got
        got.append((kind, change))


def _note_in_team(ws, user):
    """A later change to mark the end of what was heard: a new note in the team studio."""
    def mark():
        note = ws.execute(user, "/studios/team", "create_note", {"title": "Mark", "body": "x"}).url.rsplit("/", 1)[1]
        return lambda change: change.item_id == note
    return mark


def _comment_by(ws, user, url):
    """A later change to mark the end of what was heard: a comment by `user` (who made none before)."""
    def mark():
        ws.execute(user, url, "add_comment", {"body": "the mark"})
        return lambda change: change.user_id == user["id"]
    return mark


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_a_change_numbered_earlier_that_commits_later_is_handed_on(any_app, team, watching):
    """The deterministic reproduction: two write transactions open at once, the second (a higher
    number) commits first. A feed that read 'after the last number it saw' never handed the first on."""
    ws, alice, bob, carol, decision = team
    events = watching(bob, "/studios/team")
    studio_id = _studio_id(any_app, alice)
    first, second = any_app.store.write(user_id=alice["id"]), any_app.store.write(user_id=alice["id"])
    tx1 = first.__enter__()
    record(tx1, alice["id"], studio_id, None)
    tx2 = second.__enter__()
    record(tx2, alice["id"], studio_id, None)
    second.__exit__(None, None, None)
    kind, later = events.get(timeout=HANG)
    assert kind == "notify"
    first.__exit__(None, None, None)
    kind, earlier = events.get(timeout=HANG)
    assert kind == "notify" and earlier.seq < later.seq  # numbered earlier, committed later: still handed on
    ws.execute(bob, decision, "add_comment", {"body": "after"})
    assert _first_by(events) == bob["id"]  # nothing handed on twice: the next heard of is bob's


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_on_sqlite_a_later_number_is_a_later_commit(any_app, team, watching):
    """SQLite's writers take turns: a second write transaction cannot start (and take a number)
    until the first commits, so numbers commit in order and 'after the last number' misses none."""
    import threading

    ws, alice, bob, carol, decision = team
    events = watching(bob, "/studios/team")
    studio_id = _studio_id(any_app, alice)
    first = any_app.store.write(user_id=alice["id"])
    tx1 = first.__enter__()
    record(tx1, alice["id"], studio_id, None)
    seq1 = tx1.scalar("SELECT max(seq) FROM changes")
    started = threading.Event()
    seq2: list[int] = []

    def second() -> None:
        started.set()
        with any_app.store.write(user_id=alice["id"]) as tx2:
            record(tx2, alice["id"], studio_id, None)
            seq2.append(tx2.scalar("SELECT max(seq) FROM changes"))

    thread = threading.Thread(target=second)
    thread.start()
    assert started.wait(HANG)
    time.sleep(0.2)  # the second is waiting for the first's lock (were it not, the order below would not hold either)
    first.__exit__(None, None, None)
    thread.join(HANG)
    assert seq2 and seq2[0] > seq1
    got = _drain(events, 2, _note_in_team(ws, alice))
    assert [change.seq for kind, change in got] == [seq1, seq2[0]]


def test_every_change_reaches_a_watcher_exactly_once_under_concurrent_writers(any_app, team, watching):
    """Writers on four threads (connections of their own, commits in any order) and a watcher of
    the studio on another App: every committed change is handed on, and none twice."""
    import threading

    ws, alice, bob, carol, decision = team
    events = watching(bob, "/studios/team")
    writers, each = 4, 15

    def write(n: int) -> None:
        for k in range(each):
            ws.execute(alice if k % 2 else bob, decision, "add_comment", {"body": f"writer {n} comment {k}"})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG)
    got = _drain(events, writers * each, _note_in_team(ws, alice))
    seqs = [change.seq for kind, change in got if kind == "notify"]
    assert len(seqs) == len(got) == writers * each
    assert len(set(seqs)) == len(seqs)


# --- a database fault never ends the feed (issue 41) ----------------------------------------------


def test_a_fault_while_handing_a_change_on_is_read_through(any_app, team, watching):
    """The membership check fails once (the database went away): nobody is ended or told twice,
    and the change is handed on once the database answers."""
    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    feed = watching.app.feed
    real, failures = feed.source.members_among, []

    def flaky(*args):
        if not failures:
            failures.append(1)
            raise ConnectionError("the database went away")
        return real(*args)

    feed.source.members_among = flaky
    ws.execute(alice, decision, "add_comment", {"body": "while the database blinked"})
    got = _drain(events, 1, _comment_by(ws, bob, decision))  # and bob's later comment is heard too
    assert [kind for kind, _ in got] == ["notify"] and failures


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_the_feed_reconnects_when_its_connection_is_terminated(any_app, team, watching, pg_database):
    """The feed's LISTEN connection is terminated by the server; a change committed meanwhile is
    still handed on, the watcher stays, and so do later changes."""
    import psycopg

    ws, alice, bob, carol, decision = team
    events = watching(bob, decision)
    with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
        wait_for(lambda: admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE"
                                       " application_name = 'navmcp-feed' AND datname = current_database()").fetchall(),
                 "the feed's LISTEN connection is open, and is terminated")
    ws.execute(alice, decision, "add_comment", {"body": "while the feed was cut off"})
    assert [kind for kind, _ in _drain(events, 1, _comment_by(ws, bob, decision))] == ["notify"]  # and later ones too


# --- catching up from a position (Last-Event-ID) ---------------------------------------------------


def test_missed_tells_whether_a_change_since_a_position_concerns_a_watcher(any_app, team):
    ws, alice, bob, carol, decision = team
    feed = any_app.feed
    with any_app.store.read(user_id=bob["id"]) as tx:
        on_decision = interest(tx, bob["id"], decision)
        on_other = interest(tx, alice["id"], "/studios/other")
    start = feed.position()
    assert not feed.missed(start, on_decision)
    ws.execute(alice, decision, "add_comment", {"body": "news"})
    assert feed.missed(start, on_decision)
    assert not feed.missed(start, on_other)
    assert not feed.missed(feed.position(), on_decision)
    for nonsense in ("", "abc", "1/2/3", "9" * 40, "1:2:3//x", "5:1:/ /0"):
        assert feed.missed(nonsense, on_decision)  # unreadable: read the page again
