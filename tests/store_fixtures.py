"""Fixtures that run one test body on both stores: a temporary SQLite file, and a throwaway
PostgreSQL database (`navmcp_test_<random>`, migrated once per test session, emptied before each
test, dropped at the end). Loaded from conftest.py as a pytest plugin.

PostgreSQL is the local server (NAVMCP_TEST_PG, default postgresql://postgres@127.0.0.1:5432/postgres,
trust auth). Without it the Postgres half is skipped — unless NAVMCP_REQUIRE_POSTGRES=1 (CI sets it),
where a missing server fails the run instead of passing it quietly.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user, mint_token

# Every item's participant count as kept on it (migration 0007) beside a fresh count of its
# participants: the tests of the column compare the two.
PARTICIPANT_COUNTS = """SELECT i.id, i.participant_count AS kept,
                               (SELECT count(*) FROM participants p WHERE p.commitment_id = i.id) AS counted
                          FROM items i"""
# Every tag row's copies of its item's studio, time and seq (migration 0008) beside the item's own.
TAG_COPIES = """SELECT t.studio_id, t.updated_at, t.seq, i.studio_id AS s, i.updated_at AS u, i.seq AS q
                  FROM item_tags t JOIN items i ON i.id = t.item_id"""


def tag_copies_exact(rows) -> bool:
    """Rows of TAG_COPIES (dicts), some, and each carrying its item's values."""
    return bool(rows) and all((r["studio_id"], r["updated_at"], r["seq"]) == (r["s"], r["u"], r["q"]) for r in rows)


PG_ADMIN_URL = os.environ.get("NAVMCP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


@dataclass(frozen=True)
class PgDatabase:
    name: str
    admin_url: str  # the owner (migrations, truncation, checks behind RLS)
    app_url: str    # navmcp_app: what the server connects as


def _url(base: str, user: str, dbname: str) -> str:
    parts = urlsplit(base)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 5432
    return f"postgresql://{user}@{host}:{port}/{dbname}"


@pytest.fixture(scope="session")
def pg_database():
    psycopg = pytest.importorskip("psycopg")
    from navmcp.store.postgres import migrate

    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        if os.environ.get("NAVMCP_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required (NAVMCP_REQUIRE_POSTGRES) but unreachable: {e}")
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {e}")
    name = f"navmcp_test_{secrets.token_hex(4)}"
    user = urlsplit(PG_ADMIN_URL).username or "postgres"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            db = PgDatabase(name, _url(PG_ADMIN_URL, user, name), _url(PG_ADMIN_URL, "navmcp_app", name))
            migrate(db.admin_url)
            yield db
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def waiting_for_locks(db: PgDatabase, count: int = 1) -> bool:
    """Whether `count` sessions on `db` are waiting for a lock another holds (an event to wait
    for, in place of sleeping and hoping they got there)."""
    import psycopg

    with psycopg.connect(db.admin_url, autocommit=True) as conn:
        waiting = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                               (db.name,)).fetchone()[0]
    return waiting >= count


TABLES = ("held_approvals", "held_actions", "hold_rules", "inbox", "idempotency_keys", "oauth_refresh_tokens", "oauth_codes", "oauth_grants", "oauth_clients", "changes",
          "login_links", "web_sessions", "mcp_sessions", "audit", "revisions", "links", "reads", "comments", "participants",
          "votes", "options",
          "item_tags", "items", "studio_people", "memberships", "studios", "settings", "users")


@pytest.fixture
def pg_url(pg_database: PgDatabase) -> str:
    """The app URL of an empty migrated database."""
    import psycopg

    with psycopg.connect(pg_database.admin_url, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    return pg_database.app_url


@pytest.fixture(params=["sqlite", "postgres"])
def store_kind(request) -> str:
    return request.param


@pytest.fixture
def any_app(store_kind: str, tmp_path: Path, request):
    """An App over the store named by `store_kind`, on a fresh home and fresh data."""
    url = request.getfixturevalue("pg_url") if store_kind == "postgres" else None
    app = App(Config(home=tmp_path / f"home-{store_kind}", database_url=url, token=None))
    yield app
    if "store" in app.__dict__:
        app.store.close()


@pytest.fixture
def new_user(any_app: App):
    """make(handle) -> (user_row, token) on `any_app`'s store."""
    def make(handle: str):
        user = add_user(any_app.store, handle)
        return user, mint_token(any_app.secret, user["id"])
    return make
