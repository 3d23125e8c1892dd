"""Row-level security on PostgreSQL: a query that forgets its studio filter, run through the store
as one user, returns nothing of another user's studio; the server's role cannot get around it."""

from __future__ import annotations

import psycopg
import pytest

from navmcp import sessions
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user
from navmcp.pgstore import PostgresStore, migrate, migration_files

TABLES = ["users", "settings", "studios", "memberships", "items", "item_tags", "options", "votes", "participants",
          "comments", "reads", "links", "audit", "mcp_sessions"]


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
        assert tx.search(bob_studio, "secret", 20, 0) == ([], 0)


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
        assert tx.execute("UPDATE items SET title = 'defaced'") == 4  # only alice's four
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
    assert versions == [version for version, _, _ in migration_files()]


def test_placeholders_are_translated_outside_string_literals():
    from navmcp.pgstore import translate

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
