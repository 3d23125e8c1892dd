"""The embedded store under concurrency (real processes, one file) and its migrations."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from nav_helpers import text_of
from navmcp.demo.walkthrough import StdioClient
from navmcp.store.migrations import postgres_migrations, sqlite_migrations
from navmcp.store.sqlite import SqliteStore
from store_fixtures import PARTICIPANT_COUNTS, TAG_COPIES, tag_copies_exact

WRITER = textwrap.dedent("""
    import sys
    from navmcp.store.sqlite import SqliteStore
    store = SqliteStore(sys.argv[1])
    with store.write() as tx:
        tx.execute("INSERT INTO settings (key, value) VALUES ('counter', '0') ON CONFLICT DO NOTHING")
    for _ in range(int(sys.argv[2])):
        with store.write() as tx:  # read-modify-write: a lost update would show in the total
            n = int(tx.scalar("SELECT value FROM settings WHERE key = 'counter'"))
            tx.execute("UPDATE settings SET value = ? WHERE key = 'counter'", (str(n + 1),))
        with store.read() as tx:
            tx.scalar("SELECT count(*) FROM settings")
    print("done")
""")


def test_concurrent_processes_lose_no_writes(tmp_path):
    db = tmp_path / "shared.db"
    runs = 250
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(runs)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(3)]  # the first ones also race the migration
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out == b"done\n", err.decode()
        assert b"locked" not in err
    store = SqliteStore(db)
    with store.read() as tx:
        assert tx.scalar("SELECT value FROM settings WHERE key = 'counter'") == str(3 * runs)
    assert store.integrity_check() == "ok"
    store.close()


def test_two_servers_on_one_file_lose_no_writes(home):
    env = {"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None}
    with StdioClient(env=env) as first:
        first.initialize()
        assert first.act("create_studio", "/", handle="busy", name="Busy")["isError"] is False
        c = first.act("create_commitment", "/studios/busy", title="Everyone", critical_mass=1)
        commitment = c["structuredContent"]["url"]
        with StdioClient(env=env) as second:
            second.initialize()
            per_server = 120
            for client, tag in ((first, "a"), (second, "b")):
                for i in range(per_server):  # pipelined: all written before any reply is read
                    client.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                        "name": "execute_action", "arguments": {"url": "/studios/busy", "action": "create_note",
                                                                "params": {"title": f"{tag}{i}", "body": "x"}}}})
                client.send({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {
                    "name": "execute_action", "arguments": {"url": commitment, "action": "add_comment",
                                                            "params": {"body": tag}}}})
            for client in (first, second):
                replies = [client.receive() for _ in range(per_server + 1)]
                bad = [text_of(r["result"]) for r in replies if r["result"]["isError"]]
                assert bad == []
                assert not any("locked" in json.dumps(r) for r in replies)
            page = first.navigate("/studios/busy")["content"][0]["text"]
            assert f"| `busy` | admin | {2 * per_server} | 0 | 1 | [1]" in page
            assert "## Comments (2)" in text_of(second.navigate(commitment))


def test_migration_versions_are_unique_on_both_stores():
    # Two files with one version would be one migration to the runner: the second would never run.
    sqlite_versions = [m.version for m in sqlite_migrations()]
    pg_versions = [m.version for m in postgres_migrations()]
    assert len(set(sqlite_versions)) == len(sqlite_versions), sqlite_versions
    assert len(set(pg_versions)) == len(pg_versions), pg_versions


def test_migrations_are_idempotent(tmp_path):
    db = tmp_path / "m.db"
    versions = [m.version for m in sqlite_migrations()]
    assert versions == sorted(set(versions)) and versions[:2] == [1, 2]
    first = SqliteStore(db)
    with first.write() as tx:
        tx.execute("INSERT INTO settings (key, value) VALUES ('keep', 'me')")
    first.migrate()
    first.migrate()
    first.close()
    again = SqliteStore(db)  # a restart migrates again: nothing changes, nothing is lost
    with again.read() as tx:
        assert [r["version"] for r in tx.all("SELECT version FROM schema_migrations ORDER BY version")] == versions
        assert tx.scalar("SELECT value FROM settings WHERE key = 'keep'") == "me"
        assert tx.scalar("PRAGMA journal_mode") == "wal"
        assert tx.scalar("PRAGMA foreign_keys") == 1
    again.close()


def test_migration_split_keeps_trigger_bodies_whole():
    from navmcp.store.sqlite import _split_sql

    sql = {m.version: m.sql for m in sqlite_migrations()}[1]
    statements = _split_sql(sql)
    triggers = [s for s in statements if s.lstrip().upper().startswith("CREATE TRIGGER")]
    assert len(triggers) == 5 and all(t.rstrip().endswith("END;") for t in triggers)


def test_a_failed_write_rolls_back(tmp_path):
    store = SqliteStore(tmp_path / "r.db")
    try:
        with store.write() as tx:
            tx.execute("INSERT INTO settings (key, value) VALUES ('half', 'done')")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    with store.read() as tx:
        assert tx.one("SELECT 1 FROM settings WHERE key = 'half'") is None
    with store.write() as tx:  # and the connection is usable afterwards
        tx.execute("INSERT INTO settings (key, value) VALUES ('next', 'ok')")
    store.close()


def test_a_write_whose_commit_fails_keeps_nothing_and_the_store_stays_usable(tmp_path):
    import sqlite3

    import pytest

    store = SqliteStore(tmp_path / "c.db")
    # A real COMMIT-time failure: a deferred foreign key, broken when the transaction ends.
    store.conn.execute("CREATE TEMP TABLE parent (id TEXT PRIMARY KEY)")
    store.conn.execute("CREATE TEMP TABLE child (parent_id TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError):
        with store.write() as tx:
            tx.execute("INSERT INTO settings (key, value) VALUES ('lost', 'yes')")
            tx.execute("INSERT INTO temp.child VALUES ('nobody')")
    assert not store.conn.in_transaction  # the failed COMMIT did not leave its transaction open
    with store.write() as tx:
        tx.execute("INSERT INTO settings (key, value) VALUES ('next', 'ok')")
    with store.read() as tx:
        assert tx.one("SELECT 1 FROM settings WHERE key = 'lost'") is None
        assert tx.one("SELECT 1 FROM settings WHERE key = 'next'") is not None
    store.close()


def test_a_write_lock_held_elsewhere_is_busy_in_bounded_time_and_reads_go_on(tmp_path, monkeypatch):
    """Another process's open write transaction (a sqlite3 shell, a stuck writer) kept a write
    waiting 8.5 minutes (50 retries of the 10 s busy timeout), to end in an internal error. It now
    waits BUSY_SECONDS in all and is refused as Busy; it goes through once the lock is gone."""
    import sqlite3

    import pytest

    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.errors import Busy
    from navmcp.identity import ensure_owner

    monkeypatch.setattr(SqliteStore, "BUSY_SECONDS", 0.5)
    app = App(Config(home=tmp_path / "home", database_url=None, token=None))
    owner = ensure_owner(app.store)
    app.workspace.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    other = sqlite3.connect(app.store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(Busy, match="held its write lock for more than 0.5s; nothing of this call was applied"):
        app.workspace.execute(owner, "/studios/team", "create_note", {"title": "Plan", "body": "x"})
    assert app.workspace.page(owner, "/studios/team").title == "Team"  # readers are not held up (WAL)
    other.execute("ROLLBACK")
    assert app.workspace.execute(owner, "/studios/team", "create_note", {"title": "Plan", "body": "x"}).ok
    with app.store.read() as tx:
        assert tx.one("SELECT count(*) AS n FROM items")["n"] == 1
        assert tx.one("SELECT count(*) AS n FROM audit WHERE action = 'create_note'")["n"] == 1  # the one that went through
    other.close()
    app.store.close()


def test_a_read_left_mid_result_holds_no_snapshot_after_its_transaction(tmp_path):
    import sqlite3

    store = SqliteStore(tmp_path / "s.db")
    with store.write() as tx:
        for n in range(3):
            tx.execute("INSERT INTO settings (key, value) VALUES (?, 'x')", (f"k{n}",))
    with store.read() as tx:
        tx.one("SELECT key FROM settings ORDER BY key")  # three rows; one read, the statement left open
    # Another process writes, then checkpoints the whole WAL away: a snapshot still held here
    # would block the reset (SQLITE_BUSY, reported as busy = 1).
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("INSERT INTO settings (key, value) VALUES ('k9', 'x')")
    busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0
    other.close()
    store.close()


def _seeded_before(tmp_path, version: int, items: int = 300):
    """A database file at the migrations before `version`, holding a seeded studio of `items` items
    (`navmcp seed`'s own generator) and its owner; returns its path and the seed's counts."""
    import sqlite3

    from navmcp.demo import seed
    from navmcp.store.sqlite import _split_sql

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.execute("BEGIN")
    for earlier, _, sql in sqlite_migrations():
        if earlier < version:
            for statement in _split_sql(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00.000Z')", (earlier,))
    conn.execute("INSERT INTO users (id, handle, name, created_at) VALUES ('owner', 'olive', 'Olive', '2026')")
    _, rng, new_id, start, span, counts = seed._plan(7)
    seed._fill(conn, rng, new_id, "owner", items, "old", 8, start, span, counts)
    conn.execute("COMMIT")
    conn.close()
    return path, counts


def test_the_participant_count_migration_counts_existing_participants(tmp_path):
    """A database at the migration before `participant_count` (a seeded studio, its commitments
    with 0 to 4 participants each) gets every commitment's count on opening, and joins counted after."""
    (version,) = [v for v, _, sql in sqlite_migrations() if "ADD COLUMN participant_count" in sql]
    path, counts = _seeded_before(tmp_path, version)

    store = SqliteStore(path)  # opening it applies the pending migrations
    with store.read() as tx:
        assert tx.scalar("SELECT max(version) FROM schema_migrations") == sqlite_migrations()[-1].version
        rows = tx.all(PARTICIPANT_COUNTS)
        owner_member = tx.scalar("SELECT count(*) FROM memberships WHERE user_id = 'owner'")
    assert len(rows) == 303 and owner_member == 1
    assert all(r["kept"] == r["counted"] for r in rows)
    assert sum(r["kept"] for r in rows) == counts["participants"] and len({r["kept"] for r in rows}) >= 4
    with store.write() as tx:  # the triggers count from now on
        fixture = tx.one("SELECT id, participant_count FROM items WHERE title LIKE 'Benchmark commitment%'")
        tx.execute("INSERT INTO participants (commitment_id, user_id, joined_at) VALUES (?, 'owner', '2026')",
                   (fixture["id"],))
        assert tx.scalar("SELECT participant_count FROM items WHERE id = ?", (fixture["id"],)) == \
            fixture["participant_count"] + 1
    store.close()


# The tag page's list before migration 0008, from the items: what the page must still show.
TAGGED_BY_ITEMS = """SELECT i.id FROM items i JOIN item_tags t ON t.item_id = i.id
                      WHERE i.studio_id = ? AND t.tag = ? ORDER BY i.updated_at DESC, i.seq DESC"""


def test_the_tag_order_migration_copies_every_tag_rows_item(tmp_path):
    """A database at the migration before `tag_order` gets its tag rows' copies on opening, and
    every tag page then lists and counts what the join of items and tags gives, walking the new
    index rather than the studio's items."""
    from navmcp.demo.seed import TAGS
    from navmcp.pages import PAGE_SIZE
    from navmcp.workspace import Workspace

    (version,) = [v for v, _, sql in sqlite_migrations() if "CREATE INDEX item_tags_studio_tag" in sql]
    path, counts = _seeded_before(tmp_path, version, items=1200)  # some tags on two pages
    store = SqliteStore(path)  # opening it applies the migration
    with store.read() as tx:
        assert tag_copies_exact(tx.all(TAG_COPIES)) and tx.scalar("SELECT count(*) FROM item_tags") == counts["tags"]
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'old'")
        expected = {tag: [r["id"] for r in tx.all(TAGGED_BY_ITEMS, (studio, tag))] for tag in TAGS}
        owner = tx.one("SELECT * FROM users WHERE id = 'owner'")
    assert sum(map(len, expected.values())) == counts["tags"] and max(map(len, expected.values())) > PAGE_SIZE
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)  # each statement with its values in place
    for tag, ids in expected.items():  # every page, by the Next links (keyset) as an agent walks them
        url, listed = f"/studios/old/tags/{tag}", []
        while url:
            page = Workspace(store).page(owner, url)
            listed += [item["id"] for item in page.data["items"]]
            assert page.data["pager"]["total"] == len(ids)
            url = page.data["pager"]["next"]
        assert listed == ids
    store.conn.set_trace_callback(None)
    tagged = {s for s in statements if "item_tags" in s}
    assert len(tagged) > len(TAGS)  # each page's list (some tags have two); the count is kept (migration 0202)
    assert sum("tag_counts" in s for s in statements) >= len(TAGS)
    for sql in tagged:
        plan = " ".join(row["detail"] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "item_tags_studio_tag" in plan and "items_studio" not in plan, plan
    store.close()


# Home's capped counts before migrations 0024 and 0025, looking up each open item's options and
# your vote or join: the counts they must still give. Arguments: studio, time, user, cap.
_OPEN_ITEMS = "i.studio_id = ? AND i.kind = '{}' AND i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > ?)"
COUNTS_BY_LOOKUPS = {
    "awaiting": f"""SELECT count(*) FROM (SELECT 1 FROM items i WHERE {_OPEN_ITEMS.format("decision")}
                      AND EXISTS (SELECT 1 FROM options o WHERE o.decision_id = i.id)
                      AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = i.id AND v.user_id = ?) LIMIT ?)""",
    "near": f"""SELECT count(*) FROM (SELECT 1 FROM items i WHERE {_OPEN_ITEMS.format("commitment")}
                  AND i.participant_count < i.critical_mass
                  AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.commitment_id = i.id AND p.user_id = ?) LIMIT ?)""",
}


def test_the_home_counts_migrations_walk_open_items_without_reading_their_rows(tmp_path):
    """A database at the migration before `home_counts` opens with the wider index of open items
    and the option count (0025), and home's capped counts then read every column they test from
    that index: no item's row (the table's cursor reads no column), no option, with the same counts
    as the lookups gave before."""
    import sqlite3

    from navmcp.pages.home import _CAPPED_COUNTS, COUNT_CAP

    (version,) = [v for v, name, _ in sqlite_migrations() if name == "home_counts"]
    path, _ = _seeded_before(tmp_path, version, items=600)
    plain = sqlite3.connect(path)
    studio = plain.execute("SELECT id FROM studios WHERE handle = 'old'").fetchone()[0]
    at = "2026-01-01T00:00:00.000000Z"
    before = {key: plain.execute(sql, (studio, at, "owner", COUNT_CAP + 1)).fetchone()[0]
              for key, sql in COUNTS_BY_LOOKUPS.items()}
    plain.close()
    SqliteStore(path).close()  # opening it applies the migrations
    conn = sqlite3.connect(path)
    roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE tbl_name IN ('items', 'options')"))
    options = {root for name, root in roots.items() if "option" in name and "fts" not in name}
    args = ("owner", studio, at, COUNT_CAP + 1)
    for key, sql in _CAPPED_COUNTS.items():
        program = conn.execute("EXPLAIN " + sql, args).fetchall()  # (addr, opcode, p1, p2, ...)
        table = {p1 for _, op, p1, p2, *_ in program if op == "OpenRead" and p2 == roots["items"]}
        assert table and not [row for row in program if row[1] == "Column" and row[2] in table], key
        assert not [row for row in program if row[1] == "OpenRead" and row[3] in options], key
        assert "items_open_kind " in " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))
        assert conn.execute(sql, args).fetchone()[0] == before[key] > 0, key
    conn.close()


def test_the_option_count_migration_counts_existing_options(tmp_path):
    """A database at the migration before `option_count` gets every decision's count on opening,
    and options added, moved or deleted after are counted by the triggers."""
    (version,) = [v for v, name, _ in sqlite_migrations() if name == "option_count"]
    path, counts = _seeded_before(tmp_path, version)
    store = SqliteStore(path)  # opening it applies the migration
    counted = "SELECT count(*) FROM options o WHERE o.decision_id = i.id"
    with store.read() as tx:
        rows = tx.all(f"SELECT i.option_count AS kept, ({counted}) AS counted FROM items i")
    assert all(r["kept"] == r["counted"] for r in rows)
    assert sum(r["kept"] for r in rows) == counts["options"] > 0 and 0 in {r["kept"] for r in rows}
    with store.write() as tx:
        first, second = tx.all("SELECT id FROM items WHERE kind = 'decision' ORDER BY seq LIMIT 2")
        tx.execute("INSERT INTO options (id, decision_id, title, created_by, created_at) VALUES"
                   " ('new1', ?, 'One more', 'owner', '2026'), ('new2', ?, 'And another', 'owner', '2026')",
                   (first["id"], first["id"]))
        tx.execute("UPDATE options SET decision_id = ? WHERE id = 'new2'", (second["id"],))
        tx.execute("DELETE FROM options WHERE id = (SELECT id FROM options WHERE decision_id = ? AND id != 'new2'"
                   " LIMIT 1)", (second["id"],))
        rows = tx.all(f"SELECT i.option_count AS kept, ({counted}) AS counted FROM items i WHERE i.id IN (?, ?)",
                      (first["id"], second["id"]))
        assert len(rows) == 2 and all(r["kept"] == r["counted"] for r in rows)
        tx.execute("DELETE FROM items WHERE id = ?", (first["id"],))  # its options go with it
        assert tx.scalar("SELECT count(*) FROM options WHERE decision_id = ?", (first["id"],)) == 0
    store.close()


def test_the_findable_migration_sorts_accounts_and_clears_email_names(tmp_path):
    """As on PostgreSQL (test_pg_rls.py): accounts Supabase made (uuid ids) start unfindable, the
    operator's findable; a name holding an e-mail address becomes the handle."""
    import sqlite3

    from navmcp.store.sqlite import _split_sql

    (version,) = [v for v, _, sql in sqlite_migrations() if "ADD COLUMN findable" in sql]
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for earlier, _, sql in sqlite_migrations():
        if earlier < version:
            for statement in _split_sql(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00.000Z')", (earlier,))
    conn.execute("INSERT INTO users (id, handle, name, created_at) VALUES"
                 " ('0b7e7f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'lin', 'lin@example.com', 'now'),"
                 " ('k3f9q2abcd', 'olive', 'Olive <olive@example.org>', 'now'), ('m2n3p4q5r6', 'sam', 'Sam', 'now')")
    conn.close()
    store = SqliteStore(path)
    try:
        with store.read() as tx:
            assert [tuple(r.values()) for r in tx.all("SELECT handle, name, findable FROM users ORDER BY handle")] == [
                ("lin", "lin", 0), ("olive", "olive", 1), ("sam", "Sam", 1)]
    finally:
        store.close()
