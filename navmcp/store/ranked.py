"""Ranked search that stops when the page is full (early termination), for a store that can read
each source of matches newest first (`Sources`).

What a search finds is defined in `navmcp.content.search`: each source (title, tag, text, option,
comment: `TIERS`) gives its newest `SEARCH_WINDOW` matches by insertion order; an item is listed once,
at its best tier, and a tier lists its items by (updated_at DESC, id). Reading every window whole
costs the same whether the word is rare or in a third of a million items, and most of it ranks rows
no page shows. Here the tiers are read in order, each source in growing chunks, and a tier stops
being read once its best `need` items are known:

- within a tier, the items found so far are ranked; an item not yet read sits at an older position
  of the source (its match was inserted earlier). For item sources (title, tag, text), a position
  is the item's own, so an unread item can rank above the `need`-th found only if it was updated
  since that one: the store names the oldest position of an item updated since (`oldest_since`, a
  walk of the index of recent updates), the source is read down to it in one read, and the tier's
  best `need` are known;
- a source read to its end or to the window is whole: its tier is listed in full, its items are
  kept out of later tiers, and the next tier is read for what the page still needs;
- options and comments (no such bound: an option's position says nothing of its decision's
  `updated_at`) are read whole when the page reaches their tier; otherwise only the listed items'
  own are tested, for the counts each row shows.

The page is the one the whole windows give (tests/content/test_search_ranked.py compares them over
many queries); the number found is exact when every source was read to its end (as at small sizes),
else a lower bound, which the page shows as "N or more".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from navmcp.content import search

ITEM_TIERS = (0, 1, 2)  # sources whose position is their item's (an item's insertion order)
FIRST_CHUNK = 64  # matches read from a source at first; each further read takes as many as were read


class Hit(NamedTuple):
    position: Any  # ordered within its source: a rowid or seq (PostgreSQL's options: (created_at, id))
    item: Any  # the item's key in the store
    part: str | None  # the matching option or comment, else None
    updated_at: str
    item_id: str
    passes: bool  # the item passes the query's filters


class Sources(Protocol):
    """A store's reads for one search (its studios, words and filters fixed)."""

    def tiers(self) -> Sequence[int]:
        """The tiers this query has sources for, best first."""

    def scan(self, tier: int, below: int | None, n: int, floor: int | None) -> list[Hit]:
        """Up to `n` matches of a tier's source at positions below `below` (None: from the newest)
        and from `floor` on (None: to the oldest), newest first."""

    def oldest_since(self, updated_at: str) -> int | None:
        """The lowest position of an item of the studios updated at `updated_at` or later."""

    def parts(self, tier: int, ids: Sequence[str]) -> list[tuple[int, str, str]]:
        """The options (tier 3) or comments (4) of these items, as (position, part id, item id)."""

    def matching(self, tier: int, floor: int, n: int) -> list[int]:
        """The positions of up to `n` matches of a tier's source from `floor` on, in any studio."""


class _Source:
    __slots__ = ("tier", "hits", "done", "reached")

    def __init__(self, tier: int):
        self.tier = tier
        self.hits: list[Hit] = []
        self.done = False
        self.reached: int | None = None  # every match at this position or above has been read

    def read(self, sources: Sources, window: int, floor: int | None = None) -> list[Hit]:
        """The next chunk (as many as were read, at least FIRST_CHUNK; with `floor`, every match down
        to it), within the window; marks the source whole when it ends or fills the window."""
        room = window - len(self.hits)
        n = room if floor is not None else min(room, max(FIRST_CHUNK, len(self.hits)))
        chunk = sources.scan(self.tier, self.reached, n, floor) if n > 0 else []
        self.hits += chunk
        self.done = len(self.hits) >= window or (floor is None and len(chunk) < n)
        self.reached = floor if floor is not None and len(chunk) < n else chunk[-1].position if chunk else self.reached
        return chunk

    def read_to(self, position: int | None) -> bool:
        """Whether every match from `position` on has been read (None: the source's end)."""
        return self.done or (position is not None and self.reached is not None and self.reached <= position)


def ranked(sources: Sources, limit: int, offset: int) -> tuple[list[dict[str, Any]], int, bool]:
    """The page [offset, offset + limit) of a word search, the number found and whether that number
    is a lower bound (a source was cut at the window, or not read to its end)."""
    window = search.SEARCH_WINDOW  # read per call: a test narrows it
    claimed: set[Any] = set()  # items in the whole window of a better tier: listed there or filtered out
    listed: list[tuple[int, tuple[str, str]]] = []  # (tier, (updated_at, id)) in page order
    want = offset + limit + 1  # one past the page: whether a next page exists
    read = {tier: _Source(tier) for tier in sources.tiers()}
    for source in read.values():
        found: dict[Any, tuple[str, str]] = {}  # this tier's items that pass the filters
        need = want - len(listed)
        floor = None
        while True:
            _take(source.read(sources, window, floor), claimed, found)
            if source.done:
                break
            if len(found) < need or source.tier not in ITEM_TIERS:
                floor = None
                continue
            # An unread item ranks above the `need`-th found only if updated since: read down to the
            # oldest position of such an item (one read), then the tier's best `need` are known.
            floor = sources.oldest_since(found[_order(found)[need - 1]][0])
            if floor is None or source.read_to(floor):
                break
        if len(found) >= need:  # the page is full: later tiers are read only to count them, if small
            total = len(listed) + len(found)
            listed += [(source.tier, found[key]) for key in _order(found)[:need]]
            rest = _count_rest(sources, read, source, window, claimed) if source.done and len(source.hits) < window else None
            lower_bound = rest is None or any(len(s.hits) >= window for s in read.values())
            total += rest or 0
            break
        listed += [(source.tier, found[key]) for key in _order(found)]
        claimed.update(hit.item for hit in source.hits)
    else:
        total, lower_bound = len(listed), any(len(s.hits) >= window for s in read.values())
    return _rows(sources, read, listed[offset:offset + limit], window), total, lower_bound


def _take(chunk: list[Hit], claimed: set[Any], found: dict[Any, tuple[str, str]]) -> None:
    """A chunk's items that the tier lists (not claimed by a better one, passing the filters) into `found`."""
    for hit in chunk:
        if hit.passes and hit.item not in claimed:
            found.setdefault(hit.item, (hit.updated_at, hit.item_id))


def _count_rest(sources: Sources, read: dict[int, _Source], full: _Source, window: int, claimed: set[Any]) -> int | None:
    """The items of the tiers after `full` (read whole), when each of their sources ends within its
    first chunk; None when one does not (the count is then a lower bound)."""
    claimed = claimed | {hit.item for hit in full.hits}
    count = 0
    for source in read.values():
        if source.tier <= full.tier:
            continue
        found: dict[Any, tuple[str, str]] = {}
        _take(source.read(sources, window), claimed, found)
        if not source.done:
            return None
        count += len(found)
        claimed.update(hit.item for hit in source.hits)
    return count


def _order(found: dict[Any, tuple[str, str]]) -> list[Any]:
    """Item keys by (updated_at DESC, id): a tier's order."""
    by_id = sorted(found, key=lambda k: found[k][1])
    return sorted(by_id, key=lambda k: found[k][0], reverse=True)


def _rows(sources: Sources, read: dict[int, _Source], page: list[tuple[int, tuple[str, str]]],
          window: int) -> list[dict[str, Any]]:
    """The page's rows, each with its matching options and comments within their windows counted
    (and the first of each by id, to show). Unless its source was read whole, the listed items'
    options and comments are tested against the matches from the oldest of them on: when those are
    fewer than the window in every studio, each is within the window of the searched ones; else that
    source is read down to the oldest."""
    ids = [item_id for _, (_, item_id) in page]
    parts: dict[int, dict[str, list[str]]] = {3: {}, 4: {}}
    for tier in (3, 4):
        source = read.get(tier)
        if source is None or not page:
            continue
        hits = [(hit.part, hit.item_id) for hit in source.hits]
        if not source.done:
            theirs = sources.parts(tier, ids)
            oldest = min((position for position, _, _ in theirs), default=None)
            if oldest is None:
                continue
            if not source.read_to(oldest):
                matching = set(sources.matching(tier, oldest, window))
                if len(matching) < window:
                    hits = [(part, item_id) for position, part, item_id in theirs if position in matching]
                else:
                    source.read(sources, window, oldest)
                    hits = [(hit.part, hit.item_id) for hit in source.hits]
        wanted = set(ids)
        for part, item_id in hits:
            if item_id in wanted and part is not None:
                parts[tier].setdefault(item_id, []).append(part)
    rows = []
    for tier, (_, item_id) in page:
        options, comments = parts[3].get(item_id, []), parts[4].get(item_id, [])
        rows.append({"item_id": item_id, "tier": tier, "option_id": min(options, default=None),
                     "comment_id": min(comments, default=None), "options": len(options), "comments": len(comments)})
    return rows
