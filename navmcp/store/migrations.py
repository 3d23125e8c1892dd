"""Schema migrations of both stores: found in their folders, and applied once each, in order.

- SQLite: `navmcp/migrations/NNNN_<name>.sql` (package data), applied whenever a store opens
  (`SqliteStore.migrate`); the version is the number.
- PostgreSQL: `supabase/migrations/<timestamp>_<name>.sql`, the Supabase CLI layout, so that
  `supabase db push` applies the same files; shipped in the wheel as `navmcp/pg_migrations`, and
  applied by `navmcp migrate` (`navmcp.store.postgres.migrate`); the version is the timestamp.

Each store records the versions it applied in its own `schema_migrations` table; `run` applies the
others in version order, each in a transaction of its own with its record. A version must be unique
(tests/store/test_store.py): two files with one version would be one migration, and the second would
never run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import NamedTuple

_NAME = re.compile(r"^(\d+)_(\w+)\.sql$")  # NNNN_<name>.sql (SQLite), <timestamp>_<name>.sql (Supabase CLI)


class Migration(NamedTuple):
    version: int | str  # int for SQLite, the timestamp text for PostgreSQL: what its table records
    name: str
    sql: str


def _read(entries: Iterable[Traversable], pattern: re.Pattern[str], version: type) -> list[Migration]:
    found = []
    for entry in entries:
        m = pattern.match(entry.name)
        if m:
            found.append(Migration(version(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    return sorted(found)


def sqlite_migrations() -> list[Migration]:
    """SQLite's migrations, shipped as package data (a plain folder in a checkout and in the wheel;
    read through importlib.resources when the package is zipped)."""
    here = Path(__file__).resolve().parent.parent / "migrations"
    entries = here.iterdir() if here.is_dir() else resources.files("navmcp.migrations").iterdir()
    return _read(entries, _NAME, int)


def postgres_folder() -> Path:
    """The copy shipped in the wheel (`navmcp/pg_migrations`), else the checkout's `supabase/migrations`."""
    shipped = Path(str(resources.files("navmcp") / "pg_migrations"))
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parent.parent.parent / "supabase" / "migrations"


def postgres_migrations() -> list[Migration]:
    """PostgreSQL's migrations, in the Supabase CLI layout."""
    return _read(postgres_folder().iterdir(), _NAME, str)


def run(migrations: Iterable[Migration], applied: Collection[int | str],
        apply: Callable[[Migration], bool]) -> list[int | str]:
    """Apply, in order, each migration whose version is not in `applied`; `apply` runs one in its own
    transaction with its record, and says whether it did (a racing process may have been first).
    Returns the versions applied here."""
    done = []
    for migration in migrations:
        if migration.version not in applied and apply(migration):
            done.append(migration.version)
    return done
