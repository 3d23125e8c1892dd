"""The store seam: what the rest of navmcp may call on a store (`Store`) and on one transaction (`Tx`).

Pages and actions talk to a `Tx` and never to a driver: SQL is written with `?` placeholders in the
subset SQLite and PostgreSQL share, rows come back as dicts (`Row`, made by `row_maker`), and what
the two stores do differently (full-text search, row locks, the change feed, the audit's pruning)
is a method of the transaction. `navmcp.store.sqlite` and `navmcp.store.postgres` implement it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from navmcp.content.search import Query

Row = dict[str, Any]


class Tx(Protocol):
    """One transaction. Rows come back as dicts."""

    users: dict[str, Row] | None  # users' rows already read in this transaction, by id (or None)
    hosted: bool  # the hosted store's (row-level security), as `Store.hosted`
    inbox_packs: bool  # a large fan-out is one `inbox_packs` row, not an `inbox` row per person (SQLite)

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...
    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...
    def tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Every row's values, in column order: for a page that makes its own dicts from them
        (adding keys of its own), so no dict is made twice."""
        ...
    def record(self, sql: str, params: Sequence[Any] = ()) -> tuple[tuple[str, ...], tuple] | None:
        """The first row as (column names, values): for a join whose tables share column names,
        which a dict would keep only one of."""
        ...
    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any: ...
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    def search(self, studio_ids: Sequence[str], query: Query, at: str, limit: int,
               offset: int) -> tuple[list[Row], int, bool]:
        """One row per item found in these studios (navmcp.content.search), best first: `item_id`, `tier`
        (where it was found best), the first matching `option_id` and `comment_id` and how many
        `options` and `comments` match; the number of items found; and whether that number is a
        lower bound (a source of matches was cut at `search.SEARCH_WINDOW`, or not read to its end
        once the page was known: `navmcp.store.ranked`)."""
        ...
    def cycle_activity(self, studio_id: str, since: str, till: str) -> dict[str, int]:
        """What happened in a studio in a window of whole UTC days (`since` and `till` are the starts
        of days, as `domain.cycle_window` gives them): items `created`, items `closed` by hand (not
        by a deadline), `comments` written, `votes` (ballots: one per voter and decision), commitments
        joined (`joins`). Kept per day by the stores (migration 0200), so never a count of rows."""
        ...
    def find_user(self, handle: str, deleted: bool = False) -> Row | None:
        """A user by handle, whatever studios they are in (adding a member needs it); with
        `deleted`, a deleted account's too (its handle is not reused)."""
        ...
    def member_ids(self, studio_id: str, handles: Sequence[str]) -> list[str]:
        """The ids of the members of `studio_id` (accounts not deleted) who have one of `handles`
        (lowercase), in no order: whom @mentions name (`navmcp.content.mentions`)."""
        ...
    def lock(self, table: str, row_id: str) -> None:
        """Queue writers on one row ("items" or "studios") until this transaction ends."""
        ...
    def hold_membership(self, studio_handle: str) -> None:
        """Keep the acting user's role in a studio from changing until this transaction ends."""
        ...
    def act_as(self, user_id: str, client: str | None = None) -> contextlib.AbstractContextManager[None]:
        """Run what follows in this transaction as `user_id` (row-level security judges that user; its
        audit lines name `client`), then as before: an approved held action runs as the person who
        asked for it (navmcp.held)."""
        ...
    def prune_audit(self, days: int, most: int) -> None:
        """Delete audit lines older than `days` (at least 1), oldest first, at most `most`."""
        ...
    def purge_deleted(self, before: str, most: int) -> int:
        """Delete for good the items deleted before `before` (at most `most`, the oldest first) with
        everything of theirs, their change rows and the held actions on their pages (navmcp.content.deletion)."""
        ...
    def note_change(self, at: str, studio_id: str | None, item_id: str | None, user_id: str,
                    action: str | None = None) -> None:
        """Record in the change feed (`navmcp.feeds.changes`) what this write changed. Watchers hear of
        commits: a change its transaction holds already need not be written again."""
        ...
    def note_inbox(self, at: str, kind: str, studio_id: str, item_id: str | None, actor_id: str, client: str,
                   user_ids: Sequence[str], fold: bool, expired: str, held_id: str | None = None,
                   checked: bool = False, pack: bool = False) -> list[str]:
        """Write an inbox entry (`navmcp.feeds.inbox`) for each of `user_ids` who is a member of
        `studio_id`, the actor left out; with `fold`, count an unread entry of the same item and kind
        once more instead. An entry about a held action names it (`held_id`). `checked`: `user_ids`
        are members, read so in this transaction (the store may trust it). Entries last changed
        before `expired` are deleted. Returns whom it wrote for (folded or new), sorted. Where
        `inbox_packs` is true and the caller allows it (`pack`), a large fan-out is one pack
        (`navmcp.feeds.inbox` reads both)."""
        ...


class Store(Protocol):
    """`user_id` names the acting user: the hosted store enforces row-level security for that user
    (no user: no studio rows at all); the embedded single-user store ignores it."""

    # Row-level security applies, and steps before the user is known go through SECURITY DEFINER
    # functions (PostgreSQL); False: one file, one owner (SQLite).
    hosted: bool

    def read(self, user_id: str | None = None) -> contextlib.AbstractContextManager[Tx]: ...
    # `client`: the client the acting user came through, which the transaction's audit lines name
    # (PostgreSQL stamps it on them from the transaction's claims: navmcp.audit_stamp).
    def write(self, user_id: str | None = None, client: str | None = None) -> contextlib.AbstractContextManager[Tx]: ...
    # One transaction as the database's owner, beyond row-level security (read-only with
    # `readonly`): for an operator's command on the server's machine (`navmcp import`, `navmcp
    # export`), never for a request. On PostgreSQL it needs the owner's URL, as `navmcp migrate` does.
    def owner(self, readonly: bool = False) -> contextlib.AbstractContextManager[Tx]: ...
    # The transactions opened inside share one, committed at its end (pipelined requests; may be a no-op):
    def group(self) -> contextlib.AbstractContextManager[Any]: ...
    # One statement as its own transaction, for a per-request hot path (the /mcp session row):
    def read_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> Row | None: ...
    def write_one(self, sql: str, params: Sequence[Any] = (), user_id: str | None = None) -> int: ...
    def close(self) -> None: ...


@functools.lru_cache(maxsize=1024)
def row_maker(names: tuple[str, ...]) -> Callable[[Sequence[Any]], Row]:
    """A function making a row's values into a dict with these keys, built once per set of column
    names: a dict display with constant keys costs a fraction of `dict(zip(names, values))`.
    As with `dict(zip(...))`, a name that comes twice keeps its last value."""
    items = ", ".join(f"{name!r}: v[{i}]" for i, name in enumerate(names))  # repr: always a plain literal
    return eval(f"lambda v: {{{items}}}")  # noqa: S307 — the text is made here from column names only
