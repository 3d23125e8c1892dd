"""An upgrade of a PostgreSQL database from the oldest schema a user may have (issue 48): a
database of the first migration alone, with a studio, a decision, a vote and a comment written in
it as that schema had them, then `navmcp migrate` (forward-only: every later migration, in order),
read back by today's navmcp as the app role under row-level security. The SQLite twin is
tests/archive/test_backup.py's oldest-schema test."""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

import pytest

psycopg = pytest.importorskip("psycopg")

from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.store import postgres  # noqa: E402
from navmcp.store.migrations import postgres_migrations  # noqa: E402
from store_fixtures import PG_ADMIN_URL, _url  # noqa: E402

AT = "2026-11-22T10:00:00.000000Z"


@pytest.fixture
def fresh_database():
    """An empty database of its own (no migration applied), dropped after."""
    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {e}")
    name = f"navmcp_test_{secrets.token_hex(4)}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_database_of_the_first_schema_upgrades_and_reads_as_before(fresh_database, monkeypatch, tmp_path):
    owner_url = _url(PG_ADMIN_URL, urlsplit(PG_ADMIN_URL).username or "postgres", fresh_database)
    every = postgres_migrations()
    monkeypatch.setattr(postgres, "postgres_migrations", lambda: every[:1])
    assert postgres.migrate(owner_url) == [str(every[0].version)]  # the oldest schema, alone
    with psycopg.connect(owner_url, autocommit=True) as conn:  # written as it had them
        conn.execute("INSERT INTO users VALUES ('u1', 'alice', 'Alice', %s, NULL)", (AT,))
        conn.execute("INSERT INTO studios VALUES ('s1', 'team', 'Team', 'old', 'u1', %s)", (AT,))
        conn.execute("INSERT INTO memberships VALUES ('s1', 'u1', 'admin', %s)", (AT,))
        conn.execute("INSERT INTO items (id, studio_id, kind, title, body, created_by, created_at, updated_at)"
                     " VALUES ('d1', 's1', 'decision', 'Where to meet', 'old body', 'u1', %s, %s)", (AT, AT))
        conn.execute("INSERT INTO options VALUES ('o1', 'd1', 'Lisbon', 'u1', %s)", (AT,))
        conn.execute("INSERT INTO votes VALUES ('d1', 'o1', 'u1', 1, 1, %s)", (AT,))
        conn.execute("INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at)"
                     " VALUES ('c1', 'd1', 's1', 'an old comment', 'u1', %s)", (AT,))
    monkeypatch.undo()
    applied = postgres.migrate(owner_url)  # today's navmcp: every later migration, in order
    assert applied == [str(m.version) for m in every[1:]]
    with psycopg.connect(owner_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM navmcp.schema_migrations ORDER BY version")]
    assert versions == [str(m.version) for m in every]
    app = App(Config(home=tmp_path / "home", database_url=_url(PG_ADMIN_URL, "navmcp_app", fresh_database),
                     token=None))
    try:
        with app.store.read("u1") as tx:  # as alice, under row-level security
            alice = tx.one("SELECT * FROM users WHERE id = 'u1'")
        page = app.workspace.page(alice, "/studios/team/d/d1")
        assert "Where to meet" in page.markdown and "an old comment" in page.markdown and "Lisbon" in page.markdown
        found = app.workspace.page(alice, "/studios/team/search?q=old").data["results"]  # today's index holds it
        assert [r["url"] for r in found] == ["/studios/team/d/d1"]
        app.workspace.execute(alice, "/studios/team/d/d1", "attach",
                              {"filename": "a.csv", "content_type": "text/csv", "data": "YSxi"})  # today's tables
        app.workspace.execute(alice, "/studios/team/d/d1", "add_comment", {"body": "a new comment"})
        assert "a new comment" in app.workspace.page(alice, "/studios/team/d/d1").markdown
    finally:
        app.store.close()
