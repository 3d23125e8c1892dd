"""A search in a small studio reads what it finds, not every studio's rows (issue 40, item 3), on
PostgreSQL. `navmcp.search_hits` was a SQL function, planned once for any studios: beside a big
studio it walked every comment by seq and the options' text index in every studio (one-note search
46 ms at 100k items; under 8 attackers p95 187 ms). Since migration 20261129000201 it plans each
call with its values. The evidence is the buffers the call touches (EXPLAIN's BUFFERS, which count
the function's own statements), beside a big studio of someone else's. Never the clock. SQLite's
search is one query planned with its values each time (navmcp.store.sqlite_tx)."""

from __future__ import annotations

import json

from navmcp.app import App
from navmcp.config import Config
from navmcp.content import search
from navmcp.demo import seed
from navmcp.identity import add_user
from navmcp.store.fulltext import tsquery

# The one-note studio's search touches a few index and heap pages per source of matches; the
# plan made once for any studios touched 4,578 here (20261129000201's: 94; 20261130000242's
# samples of each source's newest rows, which decide whether to walk them, make it 160).
MOST_BUFFERS = 200


def test_a_one_note_studios_search_does_not_read_a_big_studio(pg_database, pg_url, tmp_path):
    seed.seed_postgres(pg_database.admin_url, 3000, members=5)  # someone else's studio `bench`
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        bob = add_user(app.store, "bob")
        app.workspace.execute(bob, "/", "create_studio", {"handle": "quiet", "name": "Quiet"})
        note = app.workspace.execute(bob, "/studios/quiet", "create_note", {"title": "Hello", "body": "one note"}).url
        q = search.parse("hello")
        assert q is not None
        with app.store.read(user_id=bob["id"]) as tx:
            studio = tx.scalar("SELECT id FROM studios WHERE handle = 'quiet'")
            args = ([studio], tsquery(q), tsquery(q, title_only=True), None, q.tag_word, None, None, None,
                    "2026-11-29T00:00:00Z", 20, 0, search.SEARCH_WINDOW, None)
            call = "SELECT * FROM navmcp.find_items(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            for _ in range(6):  # past the plan cache's five custom plans: what a long-lived connection does
                found = tx.conn.execute(call, args).fetchone()
            plan = tx.conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + call, args).fetchone()["QUERY PLAN"]
        assert found["item_ids"] == [note.rsplit("/", 1)[1]]
        plan = (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]
        touched = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
        assert touched <= MOST_BUFFERS, f"{touched} buffers for a one-note studio's search"
    finally:
        app.store.close()



def test_a_search_is_never_compiled_with_jit(pg_database, pg_url, tmp_path):
    """At a million items a search's plan costs past `jit_above_cost`, and compiling its dynamic
    query took 53 ms of an 86 ms search for a word nobody wrote (migration 20261130000280): the
    function runs with JIT off whatever the server's setting."""
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        with app.store.read(user_id=None) as tx:
            config = tx.scalar("SELECT array_to_string(proconfig, ',') FROM pg_proc p"
                               " JOIN pg_namespace n ON n.oid = p.pronamespace"
                               " WHERE n.nspname = 'navmcp' AND p.proname = 'search_hits'")
        assert "jit=off" in (config or "").split(","), config
    finally:
        app.store.close()
