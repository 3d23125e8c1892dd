"""The store: where the workspace's facts are kept, behind one seam with two implementations.

- `seam.py` — what the rest of navmcp may call on a store and a transaction (`Store`, `Tx`, `Row`);
- `sqlite.py` — the embedded store, one SQLite file in `NAVMCP_HOME` (the default);
- `postgres.py` — the hosted store, PostgreSQL or Supabase with row-level security;
- `fulltext.py` — a parsed search (`navmcp.content.search`) in each store's full-text syntax;
- `migrations.py` — each store's schema migrations, found and applied once each.

Both pass the same contract tests (tests/store/test_store_contract.py). `open_store` picks one from the
configuration; the PostgreSQL driver is imported only when the hosted store is.
"""

from __future__ import annotations

from pathlib import Path

from navmcp.store.seam import Row, Store, Tx, row_maker

__all__ = ["Row", "Store", "Tx", "row_maker", "open_store", "check_database_url"]


def open_store(home: Path, database_url: str | None = None) -> Store:
    """The store named by the configuration: a Postgres URL, else the SQLite file in NAVMCP_HOME."""
    if database_url:
        check_database_url(database_url)
        from navmcp.store.postgres import PostgresStore

        return PostgresStore(database_url)
    from navmcp.store.sqlite import SqliteStore

    return SqliteStore(home / "navmcp.db")


def check_database_url(database_url: str) -> None:
    """A set NAVMCP_DATABASE_URL names the hosted store; any other value is refused, not read as
    "embedded" (the rest of the app would take it for a hosted store)."""
    if not database_url.startswith(("postgres://", "postgresql://")):
        from navmcp.errors import NavError

        raise NavError(f"server misconfigured: NAVMCP_DATABASE_URL={database_url[:100]!r} is not a postgresql:// URL;"
                       " unset it to use the embedded SQLite store")
