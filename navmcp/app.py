"""The application object: configuration, and the store, secret and workspace it opens lazily.

Nothing is opened at construction, so a server answers `initialize` before touching the disk.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import TYPE_CHECKING

from navmcp.config import Config
from navmcp.errors import AuthError

if TYPE_CHECKING:
    from navmcp.identity import Principal
    from navmcp.store import Row, Store
    from navmcp.workspace import Workspace

class App:
    def __init__(self, config: Config | None = None):
        self.config = config or Config.from_env()
        self._lock = threading.Lock()

    @functools.cached_property
    def store(self) -> Store:
        from navmcp.store import open_store

        return open_store(self.config.home, self.config.database_url)

    @functools.cached_property
    def secret(self) -> bytes:
        from navmcp.identity import load_secret

        return load_secret(self.config.home)

    @functools.cached_property
    def workspace(self) -> Workspace:
        from navmcp.workspace import Workspace

        return Workspace(self.store, self.config.audit_retention_days)

    @functools.cached_property
    def feed(self):
        """Changes to watched pages (`navmcp.feeds.changes`), made by this process or any other."""
        from navmcp.feeds.changes import Feed, PostgresSource, SqliteSource

        url = self.config.database_url
        if not url:  # embedded
            self.store  # noqa: B018 — the file and its schema exist before the feed opens it
            return Feed(SqliteSource(self.config.home / "navmcp.db"))
        if self.config.feed_database_url is None and getattr(self.store, "pooled", False):
            logging.getLogger("navmcp.feeds.changes").warning(
                "NAVMCP_PG_PREPARE=off names a transaction pooler, where LISTEN hears nothing: set "
                "NAVMCP_FEED_DATABASE_URL to a direct or session-mode URL, or live pages will not update")
        return Feed(PostgresSource(self.config.feed_database_url or url, self.store))

    @functools.cached_property
    def supabase(self):
        """Verifier of Supabase Auth tokens when SUPABASE_JWT_SECRET or SUPABASE_URL is set, else None."""
        if not (self.config.supabase_jwt_secret or self.config.supabase_url):
            return None
        from navmcp.identity.supabase_auth import SupabaseAuth

        return SupabaseAuth(self.config.supabase_jwt_secret, self.config.supabase_url)

    @functools.cached_property
    def rate_limiter(self):
        """The per-token limiter from NAVMCP_RATE_LIMIT, or None (no limit, the default)."""
        from navmcp.ratelimit import parse

        return parse(self.config.rate_limit)

    @property
    def embedded(self) -> bool:
        return not self.config.database_url

    def authenticate(self, token: str | None) -> Row:
        """The user a call acts as. No token means the local owner, and only on the embedded store."""
        from navmcp.identity import resolve_user

        self._check_tokenless(token)
        return resolve_user(self.store, self.secret, token, self.supabase)

    def principal(self, token: str | None) -> Principal:
        """`authenticate` short of reading the user's row, which the call's own transaction reads."""
        self._check_tokenless(token)
        secret = self.secret  # as `authenticate`: a broken secret refuses every call, with a token or not
        if token is None:
            return self._owner_principal
        from navmcp.identity import token_principal

        return token_principal(self.store, secret, token, self.supabase)

    @functools.cached_property
    def _owner_principal(self) -> Principal:
        from navmcp.identity import Principal

        return Principal(self.owner_id)

    @functools.cached_property
    def owner_id(self) -> str:
        """The local owner's id: made on the first run, never changed (a setting written once)."""
        from navmcp.identity import ensure_owner

        return ensure_owner(self.store)["id"]

    def _check_tokenless(self, token: str | None) -> None:
        url = self.config.database_url
        if token is None and url:  # hosted
            from navmcp.store import check_database_url

            check_database_url(url)
            raise AuthError("a token is required with a hosted store: set NAVMCP_TOKEN")
