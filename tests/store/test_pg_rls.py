"""Row-level security on PostgreSQL: a query that forgets its studio filter, run through the store
as one user, returns nothing of another user's studio; the server's role cannot get around it."""

from __future__ import annotations

import contextlib
import json
import secrets
from urllib.parse import urlsplit

import psycopg
import pytest

from nav_helpers import add_member
from navmcp.app import App
from navmcp.clock import now
from navmcp.config import Config
from navmcp.content.search import parse
from navmcp.errors import ActionUnavailable
from navmcp.identity import add_user
from navmcp.mcp import sessions
from navmcp.store.migrations import postgres_migrations
from navmcp.store.postgres import PostgresStore, migrate
from store_fixtures import PARTICIPANT_COUNTS, TAG_COPIES, tag_copies_exact

TABLES = ["users", "settings", "studios", "memberships", "studio_people", "items", "item_tags", "options", "votes",
          "participants", "comments", "reads", "links", "audit", "mcp_sessions"]


@pytest.fixture
def two_studios(tmp_path, pg_url):
    """alice in studio `a`, bob in studio `b`, each with one of everything."""
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    users = {}
    for handle, studio in (("alice", "a"), ("bob", "b")):
        user = users[handle] = add_user(app.store, handle)
        ws.execute(user, "/", "create_studio", {"handle": studio, "name": studio.upper()})
        note = ws.execute(user, f"/studios/{studio}", "create_note",
                          {"title": f"secret of {handle}", "body": "hidden", "tags": [f"tag-{handle}"]}).url
        ws.execute(user, f"/studios/{studio}", "create_note", {"title": "linking", "body": f"see {note}"})
        ws.execute(user, note, "add_comment", {"body": f"comment of {handle}"})
        ws.execute(user, note, "confirm_read", {})
        dec = ws.execute(user, f"/studios/{studio}", "create_decision", {"question": "q", "options": ["o"]}).url
        ws.execute(user, dec, "vote", {"votes": [{"option": "o"}]})
        com = ws.execute(user, f"/studios/{studio}", "create_commitment", {"title": "c", "critical_mass": 1}).url
        ws.execute(user, com, "join_commitment", {})
        sessions.create(app.store, user["id"], "test", "2025-11-25")
    yield app, users["alice"], users["bob"]
    app.store.close()


def test_unfiltered_queries_as_alice_see_nothing_of_bobs_studio(two_studios, pg_database):
    app, alice, bob = two_studios
    with psycopg.connect(pg_database.admin_url) as admin:  # the owner sees everything
        bob_studio = admin.execute("SELECT id FROM studios WHERE handle = 'b'").fetchone()[0]
        bob_items = {r[0] for r in admin.execute("SELECT id FROM items WHERE studio_id = %s", (bob_studio,))}
        totals = {t: admin.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    assert bob_items and all(totals[t] for t in TABLES if t != "settings")
    with app.store.read(user_id=alice["id"]) as tx:
        seen = {t: tx.all(f"SELECT * FROM {t}") for t in TABLES}
    text = repr(seen)
    assert bob_studio not in text and "secret of bob" not in text and "comment of bob" not in text
    assert not any(item in text for item in bob_items)
    assert "tag-bob" not in text and bob["id"] not in text
    # ...while alice's own rows are all there: the filter is the policy, not an empty database.
    assert {r["handle"] for r in seen["studios"]} == {"a"}
    assert len(seen["items"]) == 4 and len(seen["comments"]) == 1 and len(seen["votes"]) == 1
    assert len(seen["mcp_sessions"]) == 1 and {r["id"] for r in seen["users"]} == {alice["id"]}
    # Search as well as plain SQL: bob's words are not found from alice's side.
    with app.store.read(user_id=alice["id"]) as tx:
        assert tx.search([bob_studio], parse("secret"), now(), 20, 0) == ([], 0, False)
        assert tx.search([bob_studio], parse("type:note"), now(), 20, 0) == ([], 0, False)  # nor listed by a filter
        # ...nor counted in a cycle's activity (a function that runs as the owner), while bob's are.
        window = ("2000-01-01", "9999-12-31")
        assert tx.cycle_activity(bob_studio, *window) == {"created": 0, "closed": 0, "comments": 0, "votes": 0, "joins": 0}
    with app.store.read(user_id=bob["id"]) as tx:
        assert {k: v for k, v in tx.cycle_activity(bob_studio, *window).items() if k not in ("created", "closed")} \
            == {"comments": 1, "votes": 1, "joins": 1}


def test_without_a_user_nothing_is_visible(two_studios):
    app, alice, bob = two_studios
    with app.store.read() as tx:
        for table in TABLES:
            assert tx.all(f"SELECT * FROM {table}") == [], table


def test_writes_into_another_studio_are_refused(two_studios, pg_database):
    app, alice, bob = two_studios
    with psycopg.connect(pg_database.admin_url) as admin:
        bob_studio = admin.execute("SELECT id FROM studios WHERE handle = 'b'").fetchone()[0]
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        with app.store.write(user_id=alice["id"]) as tx:
            tx.execute("INSERT INTO items (id, studio_id, kind, title, created_by, created_at, updated_at)"
                       " VALUES ('intruder', ?, 'note', 'x', ?, 'now', 'now')", (bob_studio, alice["id"]))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        with app.store.write(user_id=alice["id"]) as tx:  # joining bob's studio on one's own
            tx.execute("INSERT INTO memberships VALUES (?, ?, 'admin', 'now')", (bob_studio, alice["id"]))
    with app.store.write(user_id=alice["id"]) as tx:
        # only alice's four (a change of text is a revision: migration 20261128000056)
        assert tx.execute("UPDATE items SET title = 'defaced', revision = revision + 1") == 4
        assert tx.execute("DELETE FROM comments WHERE studio_id = ?", (bob_studio,)) == 0
        tx.execute("UPDATE items SET title = 'x' WHERE false")  # keep the transaction usable
    with psycopg.connect(pg_database.admin_url) as admin:
        assert admin.execute("SELECT count(*) FROM items WHERE title = 'defaced' AND studio_id = %s",
                             (bob_studio,)).fetchone()[0] == 0
    # Another user's session is not found, so it cannot be hijacked.
    with app.store.read(user_id=bob["id"]) as tx:
        bob_session = tx.scalar("SELECT id FROM mcp_sessions")
    assert sessions.load(app.store, bob_session, user_id=alice["id"]) is None


def test_the_app_role_cannot_bypass_rls(two_studios, pg_database):
    app, alice, bob = two_studios
    with app.store.read(user_id=alice["id"]) as tx:
        role = tx.one("SELECT current_user AS name, r.rolsuper, r.rolbypassrls FROM pg_roles r"
                      " WHERE r.rolname = current_user")
        owners = {r["tableowner"] for r in tx.all("SELECT tableowner FROM pg_tables WHERE schemaname = 'public'")}
        unprotected = tx.all("SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                             " WHERE n.nspname = 'public' AND c.relkind = 'r' AND NOT c.relrowsecurity")
    assert role == {"name": "navmcp_app", "rolsuper": False, "rolbypassrls": False}
    assert "navmcp_app" not in owners and unprotected == []
    for attempt in (["SET LOCAL ROLE postgres"], ["ALTER TABLE items DISABLE ROW LEVEL SECURITY"],
                    ["DROP POLICY items_member ON items"], ["SET LOCAL row_security = off", "SELECT * FROM items"]):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.store.write(user_id=alice["id"]) as tx:
                for statement in attempt:
                    tx.execute(statement)


def test_owner_url_still_works_as_the_app_role(two_studios, pg_database):
    # Given the owner's URL, the store steps down to navmcp_app on every connection.
    app, alice, bob = two_studios
    store = PostgresStore(pg_database.admin_url)
    try:
        with store.read(user_id=alice["id"]) as tx:
            assert tx.scalar("SELECT current_user") == "navmcp_app"
            assert {r["handle"] for r in tx.all("SELECT handle FROM studios")} == {"a"}
    finally:
        store.close()


def test_migrating_twice_is_harmless(pg_database):
    assert migrate(pg_database.admin_url) == []
    with psycopg.connect(pg_database.admin_url) as admin:
        versions = [r[0] for r in admin.execute("SELECT version FROM navmcp.schema_migrations ORDER BY 1")]
    assert versions == [version for version, _, _ in postgres_migrations()]


def test_placeholders_are_translated_outside_string_literals():
    from navmcp.store.postgres import translate

    assert translate("SELECT 'a?b', x FROM t WHERE y = ? AND z LIKE 'it''s %?'") == \
        "SELECT 'a?b', x FROM t WHERE y = %s AND z LIKE 'it''s %%?'"


def test_a_connection_dropped_while_idle_is_replaced_transparently(pg_url, pg_database):
    store = PostgresStore(pg_url, max_size=1)
    try:
        with store.read() as tx:
            pid = tx.scalar("SELECT pg_backend_pid()")
        with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:  # e.g. a server restart
            assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
        with store.read() as tx:
            assert tx.scalar("SELECT pg_backend_pid()") != pid
    finally:
        store.close()


def _visible(app, user, sql: str) -> set:
    with app.store.read(user_id=user["id"]) as tx:
        return {next(iter(row.values())) for row in tx.all(sql)}


@pytest.fixture
def former_member(tmp_path, pg_url):
    """alice (admin) and dave in `team`; bob wrote there and was removed; carol has her own studio
    `other` and never shared one with any of them."""
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    alice, bob, carol, dave = (add_user(app.store, h) for h in ("alice", "bob", "carol", "dave"))
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    ws.execute(carol, "/", "create_studio", {"handle": "other", "name": "Other"})
    for who in ("bob", "dave"):
        add_member(ws, alice, "/studios/team/members", {"handle": who})
    note = ws.execute(bob, "/studios/team", "create_note", {"title": "Handover", "body": "all yours"}).url
    ws.execute(bob, note, "add_comment", {"body": "ping me"})
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"})
    yield app, alice, bob, carol, dave
    app.store.close()


def test_a_former_member_stays_visible_to_the_studios_members_only(former_member):
    app, alice, bob, carol, dave = former_member
    users = "SELECT id FROM users"
    # The studio's members (admin or not) still read bob's row: his note, comment and audit lines keep his handle.
    assert _visible(app, alice, users) == _visible(app, dave, users) == {alice["id"], bob["id"], dave["id"]}
    # carol never shared a studio with any of them: she reads her own row only.
    assert _visible(app, carol, users) == {carol["id"]}
    # bob left: he reads nothing of the studio any more, not even who is in it.
    assert _visible(app, bob, users) == {bob["id"]}
    for table in ("studios", "memberships", "items", "comments", "audit", "studio_people", "studio_item_counts"):
        assert _visible(app, bob, f"SELECT * FROM {table}") == set(), table
    # Who was in a studio is known to its members alone.
    people = "SELECT user_id FROM studio_people"
    assert _visible(app, alice, people) == {alice["id"], bob["id"], dave["id"]}
    assert _visible(app, carol, people) == {carol["id"]}


def test_studio_people_is_written_by_the_membership_trigger_only(former_member, pg_database):
    # Were it writable, carol could list bob among `other`'s people and so read his row.
    app, alice, bob, carol, dave = former_member
    with psycopg.connect(pg_database.admin_url) as admin:
        other = admin.execute("SELECT id FROM studios WHERE handle = 'other'").fetchone()[0]
    for statement, params in (("INSERT INTO studio_people (studio_id, user_id) VALUES (?, ?)", (other, bob["id"])),
                              ("UPDATE studio_people SET user_id = ?", (bob["id"],)),
                              ("DELETE FROM studio_people", ())):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.store.write(user_id=carol["id"]) as tx:
                tx.execute(statement, params)
    assert _visible(app, carol, "SELECT id FROM users") == {carol["id"]}


def test_the_day_and_tag_counts_are_the_triggers_to_write_and_the_members_to_read(former_member):
    """`cycle_days` (read only through navmcp.cycle_activity), `filter_counts` (only through
    navmcp.find_items) and `tag_counts` (members read their studios' rows) are written by triggers as
    the owner: a member could otherwise make a cycle, a search or a tag page state any number."""
    app, alice, bob, carol, dave = former_member
    ws = app.workspace
    ws.execute(alice, "/studios/team", "create_note", {"title": "Tagged", "body": "x", "tags": ["q1"]})
    with app.store.read(user_id=alice["id"]) as tx:
        team = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    assert _visible(app, alice, "SELECT tag FROM tag_counts") == {"q1"}
    assert _visible(app, carol, "SELECT tag FROM tag_counts") == _visible(app, bob, "SELECT tag FROM tag_counts") == set()
    for table in ("cycle_days", "filter_counts"):  # the functions' to read (cycle_activity, find_items)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _visible(app, alice, f"SELECT studio_id FROM {table}")
    for statement, params in (("UPDATE tag_counts SET n = 99", ()),
                              ("UPDATE filter_counts SET n = 99", ()),
                              ("INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)"
                               " VALUES (?, '', 'note', '', 1, 5)", (team,)),
                              ("INSERT INTO tag_counts (studio_id, tag, n) VALUES (?, 'x', 5)", (team,)),
                              ("UPDATE cycle_days SET ballots = 99", ()),
                              ("INSERT INTO cycle_days (studio_id, day, created) VALUES (?, '2026-01-01', 5)", (team,))):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.store.write(user_id=alice["id"]) as tx:
                tx.execute(statement, params)
    with app.store.read(user_id=carol["id"]) as tx:  # not hers: nothing, as for a studio with no activity
        assert set(tx.cycle_activity(team, "2000-01-01", "9999-12-31").values()) == {0}


def test_the_app_role_cannot_write_the_counts_the_triggers_keep(two_studios, pg_database):
    """A commitment's participant count and a decision's option count are the triggers' to keep (as
    the owner): a member could otherwise make a commitment read "critical mass reached", or full
    and closed, with nobody joined, or put a decision with no option on everyone's list to vote.
    The columns the actions write stay writable, and every action that writes an item still works."""
    app, alice, bob = two_studios
    ws = app.workspace
    with app.store.read(user_id=alice["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'a'")
        commitment = tx.scalar("SELECT id FROM items WHERE kind = 'commitment'")
    forged = ("INSERT INTO items (id, studio_id, kind, title, created_by, created_at, updated_at, critical_mass,"
              " participant_count) VALUES ('forged', ?, 'commitment', 'x', ?, 'now', 'now', 3, 3)")
    for statement, params in (("UPDATE items SET participant_count = 99 WHERE id = ?", (commitment,)),
                              ("UPDATE items SET title = 't', participant_count = 0", ()),
                              ("UPDATE items SET option_count = 1", ()),
                              (forged, (studio, alice["id"]))):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            with app.store.write(user_id=alice["id"]) as tx:
                tx.execute(statement, params)
    with psycopg.connect(pg_database.admin_url) as admin:
        assert admin.execute("SELECT participant_count FROM items WHERE id = %s", (commitment,)).fetchone() == (1,)
        assert admin.execute("SELECT count(*) FROM items WHERE id = 'forged'").fetchone() == (0,)

    url = f"/studios/a/c/{commitment}"
    ws.execute(alice, url, "leave_commitment", {})
    ws.execute(alice, url, "join_commitment", {})
    ws.execute(alice, url, "close_commitment", {})
    full = ws.execute(alice, "/studios/a", "create_commitment", {"title": "f", "critical_mass": 1, "limit": 1}).url
    assert "now closed" in ws.execute(alice, full, "join_commitment", {}).message  # the limit closes it
    note = ws.execute(alice, "/studios/a", "create_note", {"title": "n", "body": "b", "tags": ["t"]}).url
    ws.execute(alice, note, "edit_note", {"title": "n2", "body": "b2"})
    ws.execute(alice, note, "pin", {})
    ws.execute(alice, note, "unpin", {})
    ws.execute(alice, note, "add_comment", {"body": "c"})
    decision = ws.execute(alice, "/studios/a", "create_decision", {"question": "q?", "options": ["o"]}).url
    ws.execute(alice, decision, "add_option", {"title": "p"})
    ws.execute(alice, decision, "close_decision", {})
    with psycopg.connect(pg_database.admin_url) as admin:
        counts = {i: (kept, n) for i, kept, n in admin.execute(PARTICIPANT_COUNTS)}
        closed = admin.execute("SELECT count(*) FROM items WHERE studio_id = %s AND closed_at IS NOT NULL",
                               (studio,)).fetchone()
    assert counts[commitment] == counts[full.rsplit("/", 1)[1]] == (1, 1) and closed == (3,)


def test_tag_rows_carry_their_items_studio_whatever_the_app_role_writes(two_studios, pg_database):
    """A tag row's studio, time and seq are its item's, set by the trigger as the owner (migration
    20261124000017): the app role cannot move a tag row into another studio's tag pages, nor tag
    another studio's item by naming its own studio."""
    app, alice, bob = two_studios
    with psycopg.connect(pg_database.admin_url) as admin:
        studio_a, studio_b = (admin.execute("SELECT id FROM studios WHERE handle = %s", (h,)).fetchone()[0]
                              for h in ("a", "b"))
        bobs_note = admin.execute("SELECT item_id FROM item_tags WHERE tag = 'tag-bob'").fetchone()[0]
    with app.store.write(user_id=alice["id"]) as tx:  # her own tag row: allowed, and put back
        assert tx.execute("UPDATE item_tags SET studio_id = ?, updated_at = '2000', seq = 0", (studio_b,)) == 1
    for studio in (studio_a, studio_b):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            with app.store.write(user_id=alice["id"]) as tx:
                tx.execute("INSERT INTO item_tags (item_id, tag, studio_id) VALUES (?, 'planted', ?)", (bobs_note, studio))
    with psycopg.connect(pg_database.admin_url, row_factory=psycopg.rows.dict_row) as admin:
        assert tag_copies_exact(admin.execute(TAG_COPIES).fetchall())
        assert [r["tag"] for r in admin.execute("SELECT tag FROM item_tags WHERE studio_id = %s", (studio_b,))] == ["tag-bob"]
    assert [i["title"] for i in app.workspace.page(alice, "/studios/a/tags/tag-alice").data["items"]] == ["secret of alice"]
    assert _visible(app, bob, "SELECT tag FROM item_tags") == {"tag-bob"}


def test_a_vote_is_updated_in_place_only_by_its_voter_and_only_its_choice(two_studios, pg_database):
    """Voting again updates your rows (ON CONFLICT DO UPDATE): the app role may update your own votes'
    accept, prefer and time, never another member's votes nor which option or decision a vote is on."""
    app, alice, bob = two_studios
    ws = app.workspace
    url = ws.execute(alice, "/studios/a", "create_decision", {"question": "When?", "options": ["Mon", "Tue"]}).url
    ws.execute(alice, url, "vote", {"votes": [{"option": "Mon"}, {"option": "Tue", "accept": False}]})
    add_member(ws, alice, "/studios/a/members", {"handle": "bob"})  # he sees the votes, can't change them
    assert ws.execute(alice, url, "vote", {"votes": [{"option": "Tue", "prefer": True}]}).message.startswith(
        "Vote replaced")
    decision = url.rsplit("/", 1)[1]
    with app.store.read(user_id=alice["id"]) as tx:
        other = tx.scalar("SELECT id FROM options WHERE decision_id = ? AND title = 'Mon'", (decision,))
        assert tx.all("SELECT o.title, v.accept, v.prefer FROM votes v JOIN options o ON o.id = v.option_id"
                      " WHERE v.decision_id = ?", (decision,)) == [{"title": "Tue", "accept": 1, "prefer": 1}]
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
        with app.store.write(user_id=alice["id"]) as tx:
            tx.execute("UPDATE votes SET option_id = ? WHERE decision_id = ?", (other, decision))
    with app.store.write(user_id=bob["id"]) as tx:
        assert len(tx.all("SELECT 1 FROM votes WHERE decision_id = ?", (decision,))) == 1
        assert tx.execute("UPDATE votes SET accept = 0 WHERE decision_id = ?", (decision,)) == 0
    with psycopg.connect(pg_database.admin_url) as admin:
        assert admin.execute("SELECT accept FROM votes WHERE decision_id = %s", (decision,)).fetchall() == [(1,)]


# --- authors' rights (migration 20261125000022) ---------------------------------------------------
# Membership alone no longer lets the app role change or delete someone else's work: a query bug
# that names the wrong row changes nothing. Each test also shows the writes the actions make still
# go through, for the authors and admins they belong to.


@pytest.fixture
def team(tmp_path, pg_url):
    """`team`: alice its admin; bob, carol and dave members. bob wrote a note (tagged, commented on
    twice by him and once by carol), a note linking to it, a decision with an option, and a
    commitment with a limit of 2. alice also has a studio of her own, `solo`, with one note."""
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    alice, bob, carol, dave = (add_user(app.store, h) for h in ("alice", "bob", "carol", "dave"))
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    ws.execute(alice, "/", "create_studio", {"handle": "solo", "name": "Solo"})
    for who in ("bob", "carol", "dave"):
        add_member(ws, alice, "/studios/team/members", {"handle": who})
    new = lambda user, studio, action, params: ws.execute(  # noqa: E731
        user, f"/studios/{studio}", action, params).url
    urls = {
        "note": new(bob, "team", "create_note", {"title": "Bob's plan", "body": "mine", "tags": ["plan"]}),
        "decision": new(bob, "team", "create_decision", {"question": "When?", "options": ["Mon"]}),
        "commitment": new(bob, "team", "create_commitment", {"title": "Run", "critical_mass": 1, "limit": 2}),
        "solo": new(alice, "solo", "create_note", {"title": "Alone", "body": "x"}),
    }
    urls["linking"] = new(bob, "team", "create_note", {"title": "See", "body": f"see {urls['note']}"})
    for user, body in ((bob, "first"), (bob, "second"), (carol, "carol's")):
        ws.execute(user, urls["note"], "add_comment", {"body": body})
    ids = {key: url.rsplit("/", 1)[1] for key, url in urls.items()}
    with app.store.read(user_id=bob["id"]) as tx:
        ids.update({f"comment {c['body']}": c["id"] for c in tx.all("SELECT id, body FROM comments")})
        ids["option"] = tx.scalar("SELECT id FROM options")
    yield app, urls, ids, {"alice": alice, "bob": bob, "carol": carol, "dave": dave}
    app.store.close()


def _as(app, user, sql: str, params=()) -> int:
    """One statement as `user` through the store (navmcp_app under row-level security): rows affected."""
    with app.store.write(user_id=user["id"]) as tx:
        return tx.execute(sql, params)


def _refused(app, user, sql: str, params=()) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        _as(app, user, sql, params)


def _owner_all(pg_database, sql: str, params=()) -> list[tuple]:
    """What the owner reads (past row-level security), on a connection closed at once."""
    with psycopg.connect(pg_database.admin_url) as admin:
        return admin.execute(sql, params).fetchall()


def _owner_one(pg_database, sql: str, params=()) -> tuple:
    (row,) = _owner_all(pg_database, sql, params)
    return row


def test_only_an_items_author_or_an_admin_changes_or_deletes_it(team, pg_database):
    """Title and body are the author's (edit_note), pinning an admin's, closing a decision its
    creator's or an admin's and a commitment its creator's; deleting an item its creator's or an
    admin's. Any member still locks an item and touches its time (comments, options, joins)."""
    app, urls, ids, u = team
    alice, bob, carol = u["alice"], u["bob"], u["carol"]
    note, decision, commitment = ids["note"], ids["decision"], ids["commitment"]
    item = lambda: _owner_one(pg_database, "SELECT title, body, pinned, closed_at, updated_at"  # noqa: E731
                              " FROM items WHERE id = %s", (note,))
    before = item()
    # carol, a plain member, changes nothing of bob's items, whatever the statement names.
    for sql, params in (("UPDATE items SET title = 'defaced' WHERE id = ?", (note,)),
                        ("UPDATE items SET body = 'defaced', updated_at = 'x' WHERE id = ?", (note,)),
                        ("UPDATE items SET title = 'defaced'", ()),  # a forgotten filter
                        ("UPDATE items SET pinned = 1", ()),
                        ("UPDATE items SET closed_at = '2000', updated_at = 'x' WHERE id IN (?, ?)",
                         (decision, commitment)),
                        ("DELETE FROM items WHERE id = ?", (note,)),
                        ("DELETE FROM items", ())):
        assert _as(app, carol, sql, params) == 0, sql
    assert item() == before
    assert _owner_one(pg_database, "SELECT count(*) FROM items WHERE closed_at IS NOT NULL") == (0,)
    # ...while she may lock any item of the studio and touch its time, as every action on it does.
    with app.store.write(user_id=carol["id"]) as tx:
        tx.lock("items", note)
        assert tx.all("SELECT id FROM items WHERE id = ? FOR NO KEY UPDATE", (note,)) == [{"id": note}]
        assert tx.execute("UPDATE items SET updated_at = ? WHERE id = ?", ("2999-01-01", note)) == 1
    # alice, the admin: pins and closes the decision, but neither rewrites the note nor closes
    # bob's commitment.
    assert _as(app, alice, "UPDATE items SET title = 'by the admin', body = 'x' WHERE id = ?", (note,)) == 0
    assert _as(app, alice, "UPDATE items SET pinned = 1 WHERE id = ?", (note,)) == 1
    assert _as(app, alice, "UPDATE items SET closed_at = '2001' WHERE id = ?", (commitment,)) == 0
    assert _as(app, alice, "UPDATE items SET closed_at = '2001' WHERE id = ?", (decision,)) == 1
    # bob, the author: rewrites his note and closes his commitment, but doesn't unpin (admins do),
    # and nobody reopens a closed item or changes when it closed.
    assert _as(app, bob, "UPDATE items SET title = 'Bob''s plan, v2', body = 'b2', revision = revision + 1"
                         " WHERE id = ?", (note,)) == 1
    assert _as(app, bob, "UPDATE items SET pinned = 0 WHERE id = ?", (note,)) == 0
    assert _as(app, bob, "UPDATE items SET closed_at = '2002' WHERE id = ?", (commitment,)) == 1
    for user in (alice, bob):
        assert _as(app, user, "UPDATE items SET closed_at = NULL WHERE id IN (?, ?)", (decision, commitment)) == 0
        assert _as(app, user, "UPDATE items SET closed_at = '2003' WHERE id = ?", (decision,)) == 0
    assert item() == ("Bob's plan, v2", "b2", 1, None, "2999-01-01")
    assert _owner_one(pg_database, "SELECT closed_at FROM items WHERE id = %s", (decision,)) == ("2001",)
    assert _owner_one(pg_database, "SELECT closed_at FROM items WHERE id = %s", (commitment,)) == ("2002",)
    # Deleting: the admin deletes bob's decision, bob his note.
    assert _as(app, alice, "DELETE FROM items WHERE id = ?", (decision,)) == 1
    assert _as(app, bob, "DELETE FROM items WHERE id = ?", (note,)) == 1
    assert _owner_one(pg_database, "SELECT count(*) FROM items WHERE id IN (%s, %s)", (decision, note)) == (0,)
    # Creating an item in someone else's name is refused.
    with app.store.read(user_id=carol["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    _refused(app, carol, "INSERT INTO items (id, studio_id, kind, title, created_by, created_at, updated_at)"
                         " VALUES ('forged', ?, 'note', 'x', ?, 'now', 'now')", (studio, bob["id"]))


def test_only_a_comments_author_or_an_admin_deletes_it(team, pg_database):
    app, urls, ids, u = team
    alice, bob, carol = u["alice"], u["bob"], u["carol"]
    comments = lambda: {r[0] for r in _owner_all(pg_database, "SELECT body FROM comments")}  # noqa: E731
    assert _as(app, carol, "DELETE FROM comments WHERE id = ?", (ids["comment first"],)) == 0
    assert _as(app, carol, "DELETE FROM comments WHERE body <> ?", ("carol's",)) == 0
    assert _as(app, carol, "UPDATE comments SET body = 'defaced'") == 0
    assert comments() == {"first", "second", "carol's"}
    assert _as(app, carol, "DELETE FROM comments") == 1  # a forgotten filter: her own only
    assert _as(app, bob, "DELETE FROM comments WHERE id = ?", (ids["comment first"],)) == 1
    assert _as(app, alice, "DELETE FROM comments WHERE id = ?", (ids["comment second"],)) == 1  # the admin
    assert comments() == set()
    # Writing a comment in someone else's name stays refused.
    with app.store.read(user_id=carol["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    _refused(app, carol, "INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at)"
                         " VALUES ('forged', ?, ?, 'x', ?, 'now')", (ids["note"], studio, bob["id"]))


def test_tags_options_and_links_are_written_as_their_actions_write_them(team, pg_database):
    """An item's tags are its author's; an option is added in its adder's name, to a decision, and
    never changed or removed; a link joins two items of one studio, and only the linking item's
    author removes it."""
    app, urls, ids, u = team
    alice, bob, carol = u["alice"], u["bob"], u["carol"]
    note, decision = ids["note"], ids["decision"]
    tags = lambda: {r[0] for r in _owner_all(pg_database, "SELECT tag FROM item_tags WHERE item_id = %s",  # noqa: E731
                                             (note,))}
    # Tags: carol (a member) and alice (the admin) neither remove, rename nor add bob's.
    for user in (carol, alice):
        assert _as(app, user, "DELETE FROM item_tags WHERE item_id = ?", (note,)) == 0
        assert _as(app, user, "UPDATE item_tags SET tag = 'renamed'") == 0
        _refused(app, user, "INSERT INTO item_tags (item_id, tag) VALUES (?, 'planted')", (note,))
    assert tags() == {"plan"}
    assert _as(app, bob, "INSERT INTO item_tags (item_id, tag) VALUES (?, 'q1')", (note,)) == 1
    assert _as(app, bob, "DELETE FROM item_tags WHERE item_id = ? AND tag = 'plan'", (note,)) == 1
    assert tags() == {"q1"}
    # Options: added in one's own name, to a decision only; renamed or removed by the decision's
    # creator or an admin alone (edit_decision), and only while nobody voted on them
    # (tests/content/test_revisions.py has the votes).
    option = "INSERT INTO options (id, decision_id, title, created_by, created_at) VALUES (?, ?, ?, ?, 'now')"
    _refused(app, carol, option, ("o-forged", decision, "forged", bob["id"]))
    _refused(app, carol, option, ("o-note", note, "on a note", carol["id"]))
    assert _as(app, carol, option, ("o-carol", decision, "Tue", carol["id"])) == 1
    assert _as(app, carol, "UPDATE options SET title = 'renamed' WHERE decision_id = ?", (decision,)) == 0
    assert _as(app, carol, "DELETE FROM options WHERE decision_id = ?", (decision,)) == 0
    assert _owner_one(pg_database, "SELECT count(*) FROM options WHERE decision_id = %s AND title IN ('Mon', 'Tue')",
                      (decision,)) == (2,)
    assert _as(app, bob, "UPDATE options SET title = 'Wed' WHERE id = 'o-carol'") == 1
    assert _as(app, alice, "DELETE FROM options WHERE id = 'o-carol'") == 1
    # Links: between items of one studio (alice is in both of hers), made from what one wrote
    # (test_links_are_made_only_from_ones_own_writing), removed by the linking item's author.
    _refused(app, alice, "INSERT INTO links (from_item, to_item) VALUES (?, ?)", (note, ids["solo"]))
    _refused(app, alice, "INSERT INTO links (from_item, to_item) VALUES (?, ?)", (ids["solo"], note))
    _refused(app, carol, "INSERT INTO links (from_item, to_item) VALUES (?, ?)", (decision, note))
    for user in (carol, alice):
        assert _as(app, user, "DELETE FROM links WHERE from_item = ?", (ids["linking"],)) == 0
        assert _as(app, user, "UPDATE links SET to_item = ? WHERE from_item = ?", (decision, ids["linking"])) == 0
    assert _as(app, bob, "DELETE FROM links WHERE from_item = ?", (ids["linking"],)) == 1
    assert _owner_one(pg_database, "SELECT count(*) FROM links") == (0,)


def test_every_action_still_writes_what_it_writes_for_whoever_may_use_it(team, pg_database):
    """Through the actions, as the people they are offered to: a member's comment (touching the
    item, linking what it mentions), option, vote, join and leave on someone else's items; the join
    that fills a commitment closes it; the admin pins and closes; the author edits. The narrow
    exception for closing stays narrow: a participant closes nothing before the limit is reached."""
    app, urls, ids, u = team
    ws = app.workspace
    alice, bob, carol, dave = u["alice"], u["bob"], u["carol"], u["dave"]
    updated = lambda key: _owner_one(pg_database, "SELECT updated_at FROM items WHERE id = %s", (ids[key],))[0]  # noqa: E731

    touched = updated("note")
    ws.execute(carol, urls["note"], "add_comment", {"body": f"see also {urls['decision']}"})
    assert updated("note") > touched
    assert _owner_one(pg_database, "SELECT count(*) FROM links WHERE from_item = %s AND to_item = %s",
                      (ids["note"], ids["decision"])) == (1,)
    ws.execute(carol, urls["note"], "confirm_read", {})
    touched = updated("decision")
    ws.execute(carol, urls["decision"], "add_option", {"title": "Tue"})
    assert updated("decision") > touched
    ws.execute(carol, urls["decision"], "vote", {"votes": [{"option": "Tue", "prefer": True}]})
    ws.execute(carol, urls["decision"], "vote", {"votes": [{"option": "Mon"}]})

    commitment = ids["commitment"]
    ws.execute(dave, urls["commitment"], "join_commitment", {})
    # dave has joined, the limit (2) is not reached: he may not close it himself.
    assert _as(app, dave, "UPDATE items SET closed_at = '2000' WHERE id = ?", (commitment,)) == 0
    ws.execute(dave, urls["commitment"], "leave_commitment", {})
    ws.execute(dave, urls["commitment"], "join_commitment", {})
    assert "now closed" in ws.execute(carol, urls["commitment"], "join_commitment", {}).message
    closed = _owner_one(pg_database, "SELECT closed_at, participant_count FROM items WHERE id = %s", (commitment,))
    assert closed[0] is not None and closed[1] == 2
    for user in (carol, dave, bob):  # closed it stays
        assert _as(app, user, "UPDATE items SET closed_at = NULL WHERE id = ?", (commitment,)) == 0

    ws.execute(alice, urls["note"], "pin", {})
    ws.execute(alice, urls["decision"], "close_decision", {})
    ws.execute(bob, urls["note"], "edit_note", {"title": "Bob's plan, v2", "body": f"now see {urls['decision']}",
                                                "tags": ["q1"]})
    assert _owner_one(pg_database, "SELECT title, pinned, closed_at IS NOT NULL FROM items WHERE id = %s",
                      (ids["note"],)) == ("Bob's plan, v2", 1, False)
    assert _owner_one(pg_database, "SELECT closed_at IS NOT NULL FROM items WHERE id = %s", (ids["decision"],)) == (True,)
    assert _owner_one(pg_database, "SELECT array_agg(tag) FROM item_tags WHERE item_id = %s", (ids["note"],)) == (["q1"],)
    ws.execute(alice, urls["note"], "unpin", {})
    # bob's own commitment: he closes it (here a fresh one: the other is full).
    mine = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Walk", "critical_mass": 1}).url
    ws.execute(bob, mine, "close_commitment", {})
    assert _owner_one(pg_database, "SELECT count(*) FROM items WHERE closed_at IS NOT NULL") == (3,)
    assert _owner_one(pg_database, "SELECT pinned FROM items WHERE id = %s", (ids["note"],)) == (0,)


@contextlib.contextmanager
def _throwaway_database():
    """An empty database of its own, dropped afterwards: (owner URL, app URL). The tests that make
    one ask for `pg_database` too, which skips them where no server answers (or fails the run
    under NAVMCP_REQUIRE_POSTGRES) instead of ending in a connection error."""
    from store_fixtures import PG_ADMIN_URL, _url

    name = f"navmcp_test_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as server:
        server.execute(f'CREATE DATABASE "{name}"')
        try:
            yield (_url(PG_ADMIN_URL, urlsplit(PG_ADMIN_URL).username or "postgres", name),
                   _url(PG_ADMIN_URL, "navmcp_app", name))
        finally:
            server.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _seeded_as_navmcp_seed_does(owner_url: str) -> tuple[dict[str, str], dict[str, int]]:
    """A studio "old" of 300 items filled as `navmcp seed` fills one (COPY as the owner): its
    fixture URLs and the seed's counts."""
    from navmcp.demo import seed

    with psycopg.connect(owner_url, row_factory=psycopg.rows.dict_row) as raw:
        conn = seed._PgConn(raw)
        _, rng, new_id, start, span, counts = seed._plan(7)
        urls = seed._fill(conn, rng, new_id, seed._pg_owner(conn), 300, "old", 8, start, span, counts)
    return urls, counts


def _counts_kept(owner_url: str, sql: str):
    """A reader of each item's (count kept in its row, count of its rows) by `sql`, which selects the
    item's id and the two, read as the owner."""
    def read() -> dict[str, tuple[int, int]]:
        with psycopg.connect(owner_url) as owner:
            return {i: (kept, n) for i, kept, n in owner.execute(sql)}
    return read


@contextlib.contextmanager
def _as_old_member(tmp_path, app_url: str):
    """(workspace, a member of the seeded studio "old"), the app connected as navmcp_app: row-level
    security on, as in production."""
    app = App(Config(home=tmp_path / "home", database_url=app_url, token=None))
    try:
        with app.store.read() as tx:
            member = tx.find_user("old-member-01")
        yield app.workspace, member
    finally:
        app.store.close()


# Later migrations without which today's app cannot write a test's rows into an older schema.
TODAYS_APP_NEEDS = ("participant_count", "hold_membership", "changes", "findable", "storage_bounds", "inbox",
                    "invitations", "who_voted", "mail", "issue44_columns", "change_order", "change_kind",
                    "attachments", "decision_kinds", "held_actions", "inbox_held", "deleted_items", "invitee")


def todays_app_needs() -> tuple[str, ...]:
    """The versions of TODAYS_APP_NEEDS, for `_database_migrated_up_to(..., also=...)`."""
    return tuple(v for v, name, _ in postgres_migrations() if name in TODAYS_APP_NEEDS)


@contextlib.contextmanager
def _database_migrated_up_to(version: str, also: tuple[str, ...] = ()):
    """A throwaway database with every migration before `version` applied, and the later ones named
    in `also` (what today's app needs to write a test's data there): (owner URL, app URL)."""
    with _throwaway_database() as (owner_url, app_url):
        # Marked applied, so `migrate` skips them; unmarked again afterwards.
        skipped = [(v, n) for v, n, _ in postgres_migrations() if v >= version and v not in also]
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("CREATE SCHEMA navmcp")
            owner.execute("CREATE TABLE navmcp.schema_migrations (version TEXT PRIMARY KEY, name TEXT NOT NULL,"
                          " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            for skip in skipped:
                owner.execute("INSERT INTO navmcp.schema_migrations (version, name) VALUES (%s, %s)", skip)
        migrate(owner_url)
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("DELETE FROM navmcp.schema_migrations WHERE version = ANY(%s)", ([v for v, _ in skipped],))
        yield owner_url, app_url


def test_the_migration_backfills_people_who_left_before_it(tmp_path, pg_database):
    """A database that lost sight of former members before `studio_people` existed gets them back
    from what they left behind: items, comments, options, votes, participants, reads, audit lines."""
    (version,) = [v for v, name, _ in postgres_migrations() if name == "studio_people"]
    # Today's app reads a commitment's participant count from its item, holds the acting user's
    # membership, records changes, writes whether a user is findable and now and then prunes the
    # audit (every AUDIT_PRUNE_EVERY-th line of the process, so whether this test's lines include
    # one depends on the tests before it): those later migrations are applied beforehand too (none
    # needs or touches studio_people). Adding a member writes an inbox entry; the members page
    # counts invitations; a new item says whether it is anonymous.
    needed = todays_app_needs()
    with _database_migrated_up_to(version, also=needed) as (owner_url, app_url):
        app = App(Config(home=tmp_path / "home", database_url=app_url, token=None))
        try:
            ws = app.workspace
            traces = ("noter", "commenter", "optioner", "voter", "joiner", "reader", "refused")
            alice, carol, stayer, silent, *left = (
                add_user(app.store, h) for h in ("alice", "carol", "stayer", "silent", *traces))
            by = dict(zip(traces, left))
            ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
            ws.execute(carol, "/", "create_studio", {"handle": "other", "name": "Other"})
            for user in (stayer, silent, *left):
                add_member(ws, alice, "/studios/team/members", {"handle": user["handle"]})
            new = lambda action, params: ws.execute(alice, "/studios/team", action, params).url  # noqa: E731
            note = new("create_note", {"title": "n", "body": "b"})
            decision = new("create_decision", {"question": "q", "options": ["o"]})
            commitment = new("create_commitment", {"title": "c", "critical_mass": 3})
            ws.execute(by["noter"], "/studios/team", "create_note", {"title": "mine", "body": "b"})
            ws.execute(by["commenter"], note, "add_comment", {"body": "hi"})
            ws.execute(by["optioner"], decision, "add_option", {"title": "p"})
            ws.execute(by["voter"], decision, "vote", {"votes": [{"option": "o"}]})
            ws.execute(by["joiner"], commitment, "join_commitment", {})
            ws.execute(by["reader"], note, "confirm_read", {})
            with pytest.raises(ActionUnavailable):  # only the refusal, in the audit log, remains of it
                ws.execute(by["refused"], note, "edit_note", {"title": "not yours"})
            for user in (silent, *left):
                ws.execute(alice, "/studios/team/members", "remove_member", {"handle": user["handle"]})
            users = "SELECT handle FROM users"
            assert _visible(app, alice, users) == {"alice", "stayer"}  # the bug, before the migration

            with psycopg.connect(owner_url, autocommit=True) as owner:  # each trace counts on its own
                owner.execute("DELETE FROM audit WHERE user_id <> %s", (by["refused"]["id"],))
            assert migrate(owner_url) == [v for v, _, _ in postgres_migrations() if v >= version and v not in needed]
            # Everyone who left a trace is back; `silent` left none, and so nothing of his is shown anyway.
            assert _visible(app, alice, users) == _visible(app, stayer, users) == {"alice", "stayer", *traces}
            assert _visible(app, carol, users) == {"carol"}
            assert _visible(app, by["noter"], users) == {"noter"}
        finally:
            app.store.close()


def test_the_participant_count_migration_counts_existing_participants(tmp_path, pg_database):
    """A database at the migration before `participant_count`, seeded as `navmcp seed` does (COPY as
    the owner), gets every commitment's count; afterwards a plain member's join and leave, as
    navmcp_app under row-level security, are counted by the trigger."""

    (version,) = [v for v, name, _ in postgres_migrations() if name == "participant_count"]
    with _database_migrated_up_to(version) as (owner_url, app_url):
        urls, counts = _seeded_as_navmcp_seed_does(owner_url)
        assert migrate(owner_url) == [v for v, _, _ in postgres_migrations() if v >= version]

        kept_and_counted = _counts_kept(owner_url, PARTICIPANT_COUNTS)
        rows = kept_and_counted()
        assert len(rows) == 303 and all(kept == n for kept, n in rows.values())
        assert sum(kept for kept, _ in rows.values()) == counts["participants"]
        assert len({kept for kept, _ in rows.values()}) >= 4  # commitments with 0 to 4 participants

        commitment = urls["commitment"]
        before = rows[commitment.rsplit("/", 1)[1]][0]
        with _as_old_member(tmp_path, app_url) as (workspace, member):
            workspace.execute(member, commitment, "join_commitment", {})
            assert kept_and_counted()[commitment.rsplit("/", 1)[1]] == (before + 1, before + 1)
            workspace.execute(member, commitment, "leave_commitment", {})
            assert kept_and_counted()[commitment.rsplit("/", 1)[1]] == (before, before)


def test_the_option_count_migration_counts_existing_options(tmp_path, pg_database):
    """A database at the migration before `option_count`, seeded as `navmcp seed` does (COPY as the
    owner), gets every decision's count; afterwards a plain member's new option, as navmcp_app under
    row-level security, is counted by the trigger."""

    counted = "SELECT i.id, i.option_count, (SELECT count(*) FROM options o WHERE o.decision_id = i.id) FROM items i"
    (version,) = [v for v, name, _ in postgres_migrations() if name == "option_count"]
    with _database_migrated_up_to(version) as (owner_url, app_url):
        urls, counts = _seeded_as_navmcp_seed_does(owner_url)
        assert migrate(owner_url) == [v for v, _, _ in postgres_migrations() if v >= version]

        kept_and_counted = _counts_kept(owner_url, counted)
        rows = kept_and_counted()
        assert len(rows) == 303 and all(kept == n for kept, n in rows.values())
        assert sum(kept for kept, _ in rows.values()) == counts["options"] > 0

        decision = urls["decision"]
        before = rows[decision.rsplit("/", 1)[1]][0]
        with _as_old_member(tmp_path, app_url) as (workspace, member):
            workspace.execute(member, decision, "add_option", {"title": "One more way"})
            assert kept_and_counted()[decision.rsplit("/", 1)[1]] == (before + 1, before + 1)


def test_the_tag_order_migration_copies_every_tag_rows_item(tmp_path, pg_database):
    """A database at the migration before `tag_order`, seeded as `navmcp seed` does (COPY as the
    owner), gets its tag rows' copies; a member's tag page, under row-level security, then counts
    and lists what the join of items and tags gives."""

    (version,) = [v for v, name, _ in postgres_migrations() if name == "tag_order"]
    with _database_migrated_up_to(version) as (owner_url, app_url):
        _, counts = _seeded_as_navmcp_seed_does(owner_url)
        assert migrate(owner_url) == [v for v, _, _ in postgres_migrations() if v >= version]
        with psycopg.connect(owner_url, row_factory=psycopg.rows.dict_row) as owner:
            assert tag_copies_exact(owner.execute(TAG_COPIES).fetchall())
            tagged = owner.execute("""SELECT i.id FROM items i JOIN item_tags t ON t.item_id = i.id
                                       WHERE t.tag = 'q1' ORDER BY i.updated_at DESC, i.seq DESC""").fetchall()
        with _as_old_member(tmp_path, app_url) as (workspace, member):
            page = workspace.page(member, "/studios/old/tags/q1")
            assert [i["id"] for i in page.data["items"]] == [r["id"] for r in tagged][:20] != []
            assert page.data["pager"]["total"] == len(tagged)


SUPABASE_API_ROLES = ("anon", "authenticated")  # the Data API's roles on every Supabase project


@contextlib.contextmanager
def _supabase_like_database():
    """A throwaway database where, as on Supabase, every table and sequence created in `public` is
    granted to the Data API's roles by default; migrated; (owner URL, app URL). The roles are made
    for the test if the server lacks them, and dropped again afterwards."""
    from store_fixtures import PG_ADMIN_URL

    made = []
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as server:
        try:
            for role in SUPABASE_API_ROLES:
                if not server.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    with contextlib.suppress(psycopg.errors.DuplicateObject):  # another run made it meanwhile
                        server.execute(f"CREATE ROLE {role} NOLOGIN")
                        made.append(role)
            with _throwaway_database() as (owner_url, app_url):
                with psycopg.connect(owner_url, autocommit=True) as owner:
                    for kind in ("TABLES", "SEQUENCES"):
                        owner.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON {kind} TO anon, authenticated")
                    owner.execute("GRANT USAGE ON SCHEMA public TO anon, authenticated")
                migrate(owner_url)
                yield owner_url, app_url
        finally:  # the database is gone by now, and with it what the roles held there
            for role in made:
                with contextlib.suppress(psycopg.Error):  # still used by another run's database
                    server.execute(f"DROP ROLE {role}")


def test_supabase_data_api_roles_reach_no_table(tmp_path, pg_database):
    """On Supabase a user's token also works in the Data API, as `authenticated`; there it would
    pass navmcp's policies but none of its rules (closing someone else's decision, writing a
    commitment's count). The migrations leave those roles no privilege on any table or sequence."""
    with _supabase_like_database() as (owner_url, app_url):
        app = App(Config(home=tmp_path / "home", database_url=app_url, token=None))
        try:
            alice = add_user(app.store, "alice")
            app.workspace.execute(alice, "/", "create_studio", {"handle": "a", "name": "A"})
            app.workspace.execute(alice, "/studios/a", "create_decision", {"question": "q", "options": ["o"]})
        finally:
            app.store.close()
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("CREATE TABLE probe (x int)")  # the default grant is live: a new table gets it
            assert owner.execute("SELECT has_table_privilege('authenticated', 'probe', 'UPDATE')").fetchone()[0]
            owner.execute("DROP TABLE probe")
            relations = owner.execute(
                "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')").fetchall()
            assert {"items", "votes", "audit", "items_seq_seq"} <= {r for r, _ in relations}
            for role in SUPABASE_API_ROLES:
                for relation, kind in relations:
                    if kind == "S":
                        held = owner.execute("SELECT has_sequence_privilege(%s, %s, 'USAGE, SELECT, UPDATE')",
                                             (role, relation)).fetchone()[0]
                    else:
                        held = owner.execute("SELECT has_table_privilege(%s, %s, 'SELECT, INSERT, UPDATE, DELETE,"
                                             " TRUNCATE, REFERENCES, TRIGGER')", (role, relation)).fetchone()[0]
                    assert not held, f"{role} holds a privilege on {relation}"
            # What the Data API would run for alice: refused before any policy is looked at.
            owner.execute("SET ROLE authenticated")
            owner.execute("SELECT set_config('request.jwt.claims', %s, false)", (f'{{"sub": "{alice["id"]}"}}',))
            for sql in ("SELECT * FROM items", "UPDATE items SET closed_at = 'now'", "DELETE FROM votes"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    owner.execute(sql)


# --- gaps closed by migration 20261126000021 --------------------------------------------------------


def test_audit_lines_go_only_to_a_studio_of_ones_own(team, pg_database):
    """A member recorded audit lines in any studio, one they were never in included (shown on its
    admins' audit page). Now: one's own studios, none, or the studio one has just left, for the act
    of leaving (audited after its membership is gone)."""
    app, urls, ids, u = team
    alice, bob, carol = u["alice"], u["bob"], u["carol"]
    team_id, solo_id = (_owner_one(pg_database, "SELECT id FROM studios WHERE handle = %s", (h,))[0]
                        for h in ("team", "solo"))
    line = ("INSERT INTO audit (at, user_id, client, studio_id, url, action, param_names, outcome, duration_ms)"
            " VALUES ('now', ?, 'forged', ?, '/', ?, '[]', 'refused: x', 0)")  # an "ok" needs its write (below)
    _refused(app, carol, line, (carol["id"], solo_id, "create_note"))  # alice's studio: carol was never in it
    _refused(app, carol, line, (alice["id"], team_id, "create_note"))  # in another's name
    assert _as(app, carol, line, (carol["id"], team_id, "create_note")) == 1
    assert _as(app, carol, line, (carol["id"], None, "create_note")) == 1
    # Leaving is audited in the studio left; afterwards nothing else is accepted there.
    app.workspace.execute(bob, "/studios/team/members", "leave_studio", None)
    app.workspace.execute(alice, "/studios/team/members", "remove_member", {"handle": "carol"})
    assert _owner_all(pg_database, "SELECT user_id, outcome FROM audit WHERE studio_id = %s AND action IN"
                      " ('leave_studio', 'remove_member') ORDER BY id", (team_id,)) == [(bob["id"], "ok"), (alice["id"], "ok")]
    _refused(app, bob, line, (bob["id"], team_id, "create_note"))
    _refused(app, carol, line, (carol["id"], team_id, "create_note"))
    assert _owner_one(pg_database, "SELECT count(*) FROM audit WHERE client = 'forged'") == (2,)


def test_a_closed_decision_takes_no_vote_and_no_option(team, pg_database):
    """Votes and options were checked for being one's own, not for the decision being open: a
    closed decision's result could still be changed by a query the app does not make."""
    app, urls, ids, u = team
    bob, carol, dave = u["bob"], u["carol"], u["dave"]
    decision, option = ids["decision"], ids["option"]
    app.workspace.execute(carol, urls["decision"], "vote", {"votes": [{"option": "Mon"}]})
    app.workspace.execute(bob, urls["decision"], "close_decision", {})
    vote = "INSERT INTO votes (decision_id, option_id, user_id, accept, prefer, created_at) VALUES (?, ?, ?, 1, 1, 'now')"
    new_option = "INSERT INTO options (id, decision_id, title, created_by, created_at) VALUES (?, ?, ?, ?, 'now')"
    _refused(app, dave, vote, (decision, option, dave["id"]))
    _refused(app, dave, new_option, ("o-late", decision, "Late", dave["id"]))
    assert _as(app, carol, "UPDATE votes SET accept = 0 WHERE decision_id = ?", (decision,)) == 0
    assert _as(app, carol, "DELETE FROM votes WHERE decision_id = ?", (decision,)) == 0
    assert _owner_all(pg_database, "SELECT user_id, accept FROM votes WHERE decision_id = %s", (decision,)) == [
        (carol["id"], 1)]
    # A decision whose deadline passed is closed too; an open one still takes both.
    url = app.workspace.execute(bob, "/studios/team", "create_decision", {"question": "Where?", "options": ["Here"]}).url
    late = url.rsplit("/", 1)[1]
    with app.store.read(user_id=dave["id"]) as tx:
        here = tx.scalar("SELECT id FROM options WHERE decision_id = ?", (late,))
    assert _as(app, dave, vote, (late, here, dave["id"])) == 1
    assert _as(app, dave, new_option, ("o-there", late, "There", dave["id"])) == 1
    with psycopg.connect(pg_database.admin_url, autocommit=True) as owner:
        owner.execute("UPDATE items SET deadline = '2000-01-01T00:00:00.000000Z' WHERE id = %s", (late,))
    _refused(app, carol, vote, (late, here, carol["id"]))
    _refused(app, carol, new_option, ("o-else", late, "Elsewhere", carol["id"]))
    assert _as(app, dave, "DELETE FROM votes WHERE decision_id = ?", (late,)) == 0


def test_links_are_made_only_from_ones_own_writing(team, pg_database):
    """Any member could link any two items of their studio: a link is what an item's body, or a
    comment on it, mentions, made by its writer (or by the item's author, editing it)."""
    app, urls, ids, u = team
    ws = app.workspace
    bob, carol, dave = u["bob"], u["carol"], u["dave"]
    note, decision = ids["note"], ids["decision"]
    link = "INSERT INTO links (from_item, to_item) VALUES (?, ?)"
    count = lambda a, b: _owner_one(pg_database, "SELECT count(*) FROM links WHERE from_item = %s"  # noqa: E731
                                    " AND to_item = %s", (ids[a], ids[b]))[0]
    _refused(app, carol, link, (note, decision))  # bob's items, and nobody mentioned it
    _refused(app, bob, link, (note, decision))  # his note, but its text does not mention the decision
    ws.execute(carol, urls["note"], "add_comment", {"body": f"see {urls['decision']}"})  # the action links them
    assert count("note", "decision") == 1
    _refused(app, dave, link, (note, ids["commitment"]))
    _refused(app, dave, link, (decision, note))
    # The mention is carol's, on bob's note: she may make that link again, and so may bob, editing his note.
    assert _as(app, carol, "DELETE FROM links WHERE from_item = ?", (note,)) == 0  # not hers to remove
    assert _as(app, bob, "DELETE FROM links WHERE from_item = ?", (note,)) == 1
    assert _as(app, carol, link, (note, decision)) == 1
    ws.execute(bob, urls["note"], "edit_note", {"body": "rewritten"})
    assert count("note", "decision") == 1 and count("linking", "note") == 1


def test_a_user_row_is_only_ever_marked_deleted_by_its_user(team, pg_database):
    """A user could rewrite their own row (handle, name, created_at) and undo the deletion of their
    account; now the app role writes `deleted_at` alone, only on one's own row, only to delete it."""
    from navmcp.identity import delete_user

    app, urls, ids, u = team
    bob, carol = u["bob"], u["carol"]
    for sql in ("UPDATE users SET name = 'Mallory' WHERE id = ?", "UPDATE users SET handle = 'root' WHERE id = ?",
                "UPDATE users SET created_at = '2000' WHERE id = ?"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            _as(app, carol, sql, (carol["id"],))
    assert _as(app, carol, "UPDATE users SET deleted_at = 'now' WHERE id = ?", (bob["id"],)) == 0
    with app.store.write(user_id=carol["id"]) as tx:
        delete_user(tx, "carol")
    assert _as(app, carol, "UPDATE users SET deleted_at = NULL WHERE id = ?", (carol["id"],)) == 0
    assert _as(app, carol, "UPDATE users SET findable = 1 WHERE id = ?", (carol["id"],)) == 0  # nor anything else
    assert _owner_all(pg_database, "SELECT handle, name, deleted_at IS NOT NULL FROM users WHERE id IN (%s, %s)"
                      " ORDER BY handle", (bob["id"], carol["id"])) == [("bob", "bob", False), ("carol", "carol", True)]


def test_an_admin_adds_only_a_findable_person_and_each_sets_only_their_own(team, pg_database):
    """Consent to be added, as row-level security (migrations 20261126000023, 20261130000261): an
    admin's insert of another's membership is refused whatever the query, findable or not (they are
    invited, and join by their own answer); a user sets whether they are findable on their own row only."""
    from navmcp.identity import create_user, new_id

    app, urls, ids, u = team
    alice, carol = u["alice"], u["carol"]
    dana_id = new_id(10)
    with app.store.write(user_id=dana_id) as tx:
        create_user(tx, "dana", user_id=dana_id, findable=False)
    team_id = _owner_one(pg_database, "SELECT id FROM studios WHERE handle = 'team'")[0]
    join = "INSERT INTO memberships (studio_id, user_id, role, created_at) VALUES (?, ?, 'member', 'now')"
    _refused(app, alice, join, (team_id, dana_id))
    assert _as(app, carol, "UPDATE users SET findable = 1 WHERE id = ?", (dana_id,)) == 0
    assert _as(app, {"id": dana_id}, "UPDATE users SET findable = 1 WHERE id = ?", (dana_id,)) == 1
    # findable, she may be invited (add_member), never put in by an admin's insert (migration
    # 20261130000261): she joins by her own answer
    _refused(app, alice, join, (team_id, dana_id))
    _refused(app, {"id": dana_id}, join, (team_id, dana_id))  # nor by her own insert, uninvited


def test_the_findable_migration_sorts_accounts_and_clears_email_names(tmp_path, pg_database):
    """Accounts made before it: those Supabase made (uuid ids) start unfindable, the operator's
    findable; a name holding an e-mail address becomes the handle."""
    (version,) = [v for v, name, _ in postgres_migrations() if name == "findable"]
    with _database_migrated_up_to(version) as (owner_url, app_url):
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("INSERT INTO users (id, handle, name, created_at) VALUES"
                          " ('0b7e7f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'lin', 'lin@example.com', 'now'),"
                          " ('k3f9q2abcd', 'olive', 'Olive <olive@example.org>', 'now'), ('m2n3p4q5r6', 'sam', 'Sam', 'now')")
        migrate(owner_url)
        with psycopg.connect(owner_url) as owner:
            assert owner.execute("SELECT handle, name, findable FROM users ORDER BY handle").fetchall() == [
                ("lin", "lin", 0), ("olive", "olive", 1), ("sam", "Sam", 1)]


def test_audit_lines_are_stamped_by_the_database_and_never_changed(team, pg_database):
    """Issue 40 item 12: a member wrote lines in their own studio at any time they chose (or with an
    id of their choosing), which sat among the real ones. Now the database stamps time and id, and
    nobody but the owner's pruning changes or deletes a line."""
    app, urls, ids, u = team
    carol = u["carol"]
    team_id = _owner_one(pg_database, "SELECT id FROM studios WHERE handle = 'team'")[0]
    _as(app, carol, "INSERT INTO audit (at, user_id, client, studio_id, url, action, param_names, outcome,"
                    " duration_ms) VALUES ('2001-01-01T00:00:00.000000Z', ?, 'dated', ?, '/', 'x', '[]', 'refused: x', -5)",
        (carol["id"], team_id))
    (at, duration), = _owner_all(pg_database, "SELECT at, duration_ms FROM audit WHERE client = 'dated'")
    assert at > "2026" and duration == 0
    with pytest.raises(psycopg.errors.GeneratedAlways):
        _as(app, carol, "INSERT INTO audit (id, at, user_id, client, studio_id, url, action, param_names, outcome,"
                        " duration_ms) VALUES (1, 'now', ?, 'x', ?, '/', 'x', '[]', 'refused: x', 0)", (carol["id"], team_id))
    for sql in ("UPDATE audit SET outcome = 'changed' WHERE user_id = ?", "DELETE FROM audit WHERE user_id = ?"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _as(app, carol, sql, (carol["id"],))
    # what the app writes is still written
    count = "SELECT count(*) FROM audit WHERE user_id = %s AND action = 'add_comment'"
    (before,) = _owner_one(pg_database, count, (carol["id"],))
    app.workspace.execute(carol, urls["note"], "add_comment", {"body": "still audited"})
    assert _owner_one(pg_database, count, (carol["id"],)) == (before + 1,)


def test_an_audit_line_records_a_write_of_its_own_transaction(team, pg_database):
    """Issue 40 item 12: a member could write, by SQL through the app role, a line of any action,
    outcome and client in their own studio ("carol: delete_studio, ok", which never happened).
    Now "ok" claims one change of its own transaction, of that action, which needs that action's
    write; anything else is a refusal's line; the client is the transaction's own."""
    from navmcp.feeds import changes

    app, urls, ids, u = team
    alice, bob, carol = u["alice"], u["bob"], u["carol"]
    team_id = _owner_one(pg_database, "SELECT id FROM studios WHERE handle = 'team'")[0]
    line = ("INSERT INTO audit (at, user_id, client, studio_id, url, action, param_names, outcome, duration_ms)"
            " VALUES ('now', ?, 'claude-code', ?, '/studios/team', ?, '[]', ?, 0)")
    forged = "SELECT count(*) FROM audit WHERE user_id = %s AND url = '/studios/team' AND param_names = '[]'"
    without = lambda: pytest.raises(psycopg.errors.InsufficientPrivilege, match="without the write")  # noqa: E731
    with without():  # nothing written at all
        _as(app, carol, line, (carol["id"], team_id, "delete_studio", "ok"))
    with without(), app.store.write(user_id=carol["id"]) as tx:  # a change of an admin's action, without its write
        changes.record(tx, carol["id"], team_id, None, "delete_studio")
        tx.execute(line, (carol["id"], team_id, "delete_studio", "ok"))
    with without(), app.store.write(user_id=carol["id"]) as tx:  # a write of hers, told as another action
        tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, 'now')", (ids["note"], carol["id"]))
        changes.record(tx, carol["id"], team_id, ids["note"], "pin")
        tx.execute(line, (carol["id"], team_id, "pin", "ok"))
    with without(), app.store.write(user_id=carol["id"]) as tx:  # an approval nobody gave
        tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, 'now')", (ids["note"], carol["id"]))
        changes.record(tx, carol["id"], team_id, ids["note"], "confirm_read")
        tx.execute(line, (carol["id"], team_id, "confirm_read", "ok, approved by @alice via web"))
    with without(), app.store.write(user_id=carol["id"]) as tx:  # a write she undid
        tx.execute("SAVEPOINT undone")
        tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, 'now')", (ids["note"], carol["id"]))
        tx.execute("ROLLBACK TO SAVEPOINT undone")
        changes.record(tx, carol["id"], team_id, ids["note"], "confirm_read")
        tx.execute(line, (carol["id"], team_id, "confirm_read", "ok"))
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="without the hold"):
        _as(app, carol, line, (carol["id"], team_id, "close_decision", "held: /studios/team/held/x"))
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="a refusal"):
        _as(app, carol, line, (carol["id"], team_id, "delete_studio", "done"))
    # One write, one line: the write she may make is hers to record, once, in her client's name.
    with app.store.write(user_id=carol["id"], client="web") as tx:
        tx.execute("INSERT INTO reads (note_id, user_id, confirmed_at) VALUES (?, ?, 'now')", (ids["note"], carol["id"]))
        changes.record(tx, carol["id"], team_id, ids["note"], "confirm_read")
        tx.execute(line, (carol["id"], team_id, "confirm_read", "ok"))
        with without():
            tx.execute("SAVEPOINT again")
            tx.execute(line, (carol["id"], team_id, "confirm_read", "ok"))
        tx.execute("ROLLBACK TO SAVEPOINT again")
    assert _owner_all(pg_database, forged.replace("count(*)", "action, outcome, client"), (carol["id"],)) == [
        ("confirm_read", "ok", "web")]
    _as(app, carol, line, (carol["id"], team_id, "delete_studio", "refused: only admins"))  # an attempt's line
    assert _owner_one(pg_database, forged, (carol["id"],)) == (2,)
    # The app's own lines pass, each tied to its change, in the client the call came through; an
    # approved hold's line names its approver.
    app.workspace.execute(bob, urls["note"], "add_comment", {"body": "audited"}, client="claude-code")
    app.workspace.execute(alice, "/studios/team/held", "set_hold_rule", {"actions": "add_option",
                                                                        "approvers": "admins"}, "web", browser=True)
    held = app.workspace.execute(bob, urls["decision"], "add_option", {"title": "Tue"}, client="claude-ai")
    app.workspace.execute(alice, held.url, "approve", {}, client="web", browser=True)
    app.workspace.execute(bob, urls["note"], "edit_note", {"title": "Bob's plan"}, client="claude-code")  # no write
    got = _owner_all(pg_database, "SELECT u.handle, a.action, a.outcome, a.client, a.change_seq IS NOT NULL"
                     " FROM audit a JOIN users u ON u.id = a.user_id WHERE a.user_id IN (%s, %s) ORDER BY a.id DESC"
                     " LIMIT 6", (alice["id"], bob["id"]))
    assert got[::-1] == [("bob", "add_comment", "ok", "claude-code", True), ("alice", "set_hold_rule", "ok", "web", True),
                         ("bob", "add_option", f"held: {held.url}", "claude-ai", False),
                         ("alice", "approve", "ok", "web", True),
                         ("bob", "add_option", "ok, approved by @alice (browser)", "claude-ai", True),
                         ("bob", "edit_note", "unchanged", "claude-code", False)]


def test_every_studio_action_names_the_tables_it_writes(pg_database):
    """navmcp.action_writes (migration 20261129000210) lists each action that acts in a studio: one
    not listed is judged by any write of the transaction, a looser tie."""
    from navmcp.actions import ACTIONS

    personal = {"mark_read", "dismiss", "make_findable", "make_unfindable", "set_time_zone", "set_email",
                "digest_on", "digest_off"}  # outside any studio: no studio's audit shows them
    listed = {a for (a,) in _owner_all(pg_database, "SELECT action FROM navmcp.action_writes")}
    assert {a.name for a in ACTIONS} - personal == listed


def test_a_revoked_grant_stays_revoked_and_a_grant_changes_only_its_use(team, pg_database):
    """Issue 40 item 12: a person could un-revoke their own OAuth grant (or widen its scope, move it
    to another client) by SQL through the app role."""
    from navmcp.oauth import grants

    app, urls, ids, u = team
    alice = u["alice"]
    code = grants.new_code()
    grant_id = grants.approve(app.store, code, alice["id"], "c1", "C1", "read", "http://x/mcp", "http://127.0.0.1/cb",
                              "x" * 43)
    assert grants.take_code(app.store, code)["problem"] is None
    assert grants.GrantCache.live(app.store, alice["id"], grant_id)  # the app's own update of its use
    for sql in ("UPDATE oauth_grants SET scope = 'read write' WHERE id = ?",
                "UPDATE oauth_grants SET client_id = 'c2' WHERE id = ?"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _as(app, alice, sql, (grant_id,))
    assert grants.revoke_grant(app.store, alice["id"], grant_id)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="stays revoked"):
        _as(app, alice, "UPDATE oauth_grants SET revoked_at = NULL WHERE id = ?", (grant_id,))
    assert _owner_one(pg_database, "SELECT revoked_at IS NOT NULL, scope FROM oauth_grants WHERE id = %s",
                      (grant_id,)) == (True, "read")
    _refused(app, alice, "INSERT INTO oauth_grants (id, user_id, client_id, client_name, scope, resource, created_at,"
                         " issued_at) VALUES ('g9', ?, 'c9', 'C9', 'read write', 'http://x/mcp', 'now', 'now')",
             (alice["id"],))


def test_a_held_request_is_never_rewritten_and_a_decided_one_stays_decided(team, pg_database):
    """Issue 46: what runs on approval is what the approvers read. A member could rewrite a pending
    held action's params (or its action, its approvers) by SQL through the app role, or mark it
    decided in another's name; now only a decision is written, signed by its maker, once."""
    app, urls, ids, u = team
    ws, alice, bob, carol = app.workspace, u["alice"], u["bob"], u["carol"]
    ws.execute(alice, "/studios/team/held", "set_hold_rule", {"actions": "create_note"}, browser=True)
    held = ws.execute(bob, "/studios/team", "create_note", {"title": "Held", "body": "b"}).url
    held_id = held.rsplit("/", 1)[1]
    for sql in ("UPDATE held_actions SET params = '{\"title\": \"Other\", \"body\": \"x\"}' WHERE id = ?",
                "UPDATE held_actions SET action = 'create_decision' WHERE id = ?",
                "UPDATE held_actions SET approvers = 'members' WHERE id = ?"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _as(app, carol, sql, (held_id,))
    _refused(app, carol, "UPDATE held_actions SET status = 'rejected', decided_by = ? WHERE id = ?", (alice["id"], held_id))
    ws.execute(bob, held, "withdraw", {})  # the app's own decision passes
    assert _as(app, bob, "UPDATE held_actions SET status = 'pending', decided_by = NULL WHERE id = ?", (held_id,)) == 0
    status, params = _owner_one(pg_database, "SELECT status, params FROM held_actions WHERE id = %s", (held_id,))
    assert (status, json.loads(params)) == ("withdrawn", {"title": "Held", "body": "b"})


def test_only_an_eligible_approver_approves_or_decides_a_hold(team, pg_database):
    """Issue 46: a member could insert an approval in their own name for a hold they may not approve,
    mark a pending hold decided in their own name, or insert a hold already decided, by SQL through
    the app role (the app recounted eligibility; the database did not). Now the policies judge who
    may approve as the app does (migration 20261129000170), and the app's own decisions still pass."""
    app, urls, ids, u = team
    ws, alice, bob, carol = app.workspace, u["alice"], u["bob"], u["carol"]
    rule_url = "/studios/team/held"
    ws.execute(alice, rule_url, "set_hold_rule", {"actions": "create_note", "approvers": "admins"}, browser=True)
    held = ws.execute(bob, "/studios/team", "create_note", {"title": "Held", "body": "b"}).url
    held_id = held.rsplit("/", 1)[1]
    approve = "INSERT INTO held_approvals (held_id, user_id, note, created_at) VALUES (?, ?, '', 'now')"
    _refused(app, carol, approve, (held_id, carol["id"]))  # a member, not an admin
    _refused(app, bob, approve, (held_id, bob["id"]))  # the requester: their own approval does not count
    decide = "UPDATE held_actions SET status = ?, decided_by = ?, decided_at = 'now' WHERE id = ?"
    for status in ("rejected", "executed", "failed", "expired", "withdrawn"):
        _refused(app, carol, decide, (status, carol["id"], held_id))
    for status in ("executed", "failed", "rejected"):
        _refused(app, bob, decide, (status, bob["id"], held_id))
    _refused(app, alice, decide, ("executed", alice["id"], held_id))  # eligible, but nobody approved it
    _refused(app, carol, "UPDATE held_actions SET reason = 'approved' WHERE id = ?", (held_id,))  # still pending
    team_id, rule_id, row = _owner_one(
        pg_database, "SELECT studio_id, rule_id, row_to_json(held_actions)::text FROM held_actions WHERE id = %s",
        (held_id,))
    row = json.loads(row)
    columns = ("id", "studio_id", "requester_id", "client", "url", "action", "params", "digest", "preview",
               "rule_id", "rule_text", "approvers", "approvals", "own_counts", "created_at", "expires_at")
    insert = (f"INSERT INTO held_actions ({', '.join(columns)}, status, decided_by) VALUES"
              f" ({', '.join('?' * len(columns))}, ?, ?)")
    forged = lambda **over: tuple({**row, "id": "forged" + secrets.token_hex(2), **over}[c]  # noqa: E731
                                  for c in columns)
    _refused(app, bob, insert, (*forged(), "executed", bob["id"]))  # born decided
    _refused(app, bob, insert, (*forged(approvers="self", own_counts=1), "pending", None))  # not its rule's approvers
    _refused(app, bob, insert, (*forged(rule_id="nosuchrule"), "pending", None))
    assert _as(app, bob, insert, (*forged(), "pending", None)) == 1  # as the app holds one, it passes
    assert _owner_one(pg_database, "SELECT status, decided_by FROM held_actions WHERE id = %s", (held_id,)) == (
        "pending", None)
    assert _owner_one(pg_database, "SELECT count(*) FROM held_approvals WHERE held_id = %s", (held_id,)) == (0,)
    # The app's own decisions pass: alice approves in her browser, and the note is written.
    assert ws.execute(alice, held, "approve", {}, browser=True).message.startswith("Approved")
    assert _owner_one(pg_database, "SELECT status, decided_by FROM held_actions WHERE id = %s", (held_id,)) == (
        "executed", alice["id"])
    for who in (alice, carol):  # what it did is written once, by the one who ran it, and stays
        assert _as(app, who, "UPDATE held_actions SET result_message = 'forged' WHERE id = ?", (held_id,)) == 0
    assert (team_id, rule_id) == (row["studio_id"], row["rule_id"])
    second = ws.execute(bob, "/studios/team", "create_note", {"title": "Held too", "body": "b"}).url
    assert ws.execute(alice, second, "reject", {"note": "no"}, browser=True).message.startswith("Rejected")
