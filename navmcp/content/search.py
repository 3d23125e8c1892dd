"""Search: what a query asks for, and what a result shows.

A query is words and filters, typed as a person types them:

- `pricing model` — items with every word (the last may be the start of a word);
- `"pricing model"` — the words side by side; `-draft` — leave out what says "draft";
- `type:decision` (note, decision, commitment), `status:open` (or closed), `tag:q4`;
- `kind:consent` — decisions of one kind (`navmcp.kinds.NAMES`; it implies `type:decision`).

An item is found by its own text, its tags, its options or its comments; it is listed once, at the
best place it was found: its title first, then a tag named by the words, then its text, then an
option, then a comment (`TIERS`); within one, the most recently updated first. Both stores match
words alike (tests/content/test_search_parity.py) and order by these same keys, so they give the same pages;
`navmcp.store.fulltext` writes a parsed query in each one's full-text syntax.
A filter this module does not know is an `InvalidQuery` that names the ones it does: never a
silent "no results".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from navmcp.errors import InvalidQuery
from navmcp.kinds.names import NAMES as DECISION_KINDS

KINDS = ("note", "decision", "commitment")
STATUSES = ("open", "closed")
FILTERS = {"type": KINDS, "status": STATUSES, "tag": None, "kind": DECISION_KINDS}
# Where an item was found, best first: the number is what both stores sort by.
TIERS = {0: "title", 1: "tag", 2: "text", 3: "option", 4: "comment"}
MAX_TERMS = 16
# Search is bounded, so that its cost does not grow with the studio: the last word matches as a
# prefix only from MIN_PREFIX characters on (a one-letter prefix names most of the vocabulary, and
# every posting of each of its words is read; `parse` applies it), and only the newest SEARCH_WINDOW
# matches of each kind (items, comments, options) are ranked and counted (both stores apply it;
# SQLite reads them only as far as the page needs, `navmcp.store.ranked`, and then counts a lower bound).
MIN_PREFIX = 2
SEARCH_WINDOW = 1000

_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_FILTER = re.compile(r"([A-Za-z]+):([\w-]+)")
_TAG = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")

HELP = ('Search words find items by title, text, tags, options and comments. Narrow with `type:note`, '
        '`type:decision` or `type:commitment`, `status:open` or `status:closed`, `tag:NAME`, '
        f'`kind:` a decision\'s kind ({", ".join(DECISION_KINDS)}), `"exact words"`, '
        'and `-word` to leave out what contains a word.')


@dataclass(frozen=True)
class Query:
    """A parsed query. `terms` are the groups every one of which must match: a group of one word is
    a word (`prefix`: the last, typed bare, may be the start of a word), of several a phrase."""

    terms: tuple[tuple[str, ...], ...] = ()
    prefix: bool = False
    excluded: tuple[str, ...] = ()
    kind: str | None = None
    status: str | None = None
    tag: str | None = None
    decision_kind: str | None = None  # `kind:`; an acceptance decision's item has none stored

    @property
    def tag_word(self) -> str | None:
        """The tag the words themselves name ("q4 planning" names #q4-planning), if they can."""
        word = "-".join(w for group in self.terms for w in group).lower()
        return word if word and _TAG.fullmatch(word) else None


def parse(text: str) -> Query | None:
    """`text` as a query; None when it asks for nothing (blank). Raises InvalidQuery."""
    terms: list[tuple[str, ...]] = []
    excluded: list[str] = []
    filters: dict[str, str] = {}
    prefix = False
    for m in _TOKEN.finditer(text):
        negated, phrase, bare = m.group(1), m.group(2), m.group(3)
        if bare is not None:
            negated = bare.startswith("-") and len(bare) > 1
            bare = bare[1:] if negated else bare
            f = _FILTER.fullmatch(bare)
            if f and not negated and f.group(2):
                name, value = f.group(1).lower(), f.group(2)
                if name not in FILTERS:
                    raise InvalidQuery(f"search has no filter '{name}:'. {HELP}")
                allowed = FILTERS[name]
                value = value.lower()
                if allowed is not None and value not in allowed:
                    raise InvalidQuery(f"'{name}:' takes {', '.join(allowed)}, not '{value[:40]}'. {HELP}")
                if name == "tag" and not _TAG.fullmatch(value):
                    raise InvalidQuery(f"'tag:' takes a tag (lowercase letters, digits, '-' and '_'), not "
                                       f"'{value[:40]}'. {HELP}")
                if name in filters and filters[name] != value:
                    raise InvalidQuery(f"'{name}:' given twice ({filters[name]}, {value}): an item has one. {HELP}")
                filters[name] = value
                continue
            words = _WORD.findall(bare)
            if negated:
                excluded += words
            elif words:
                terms += [(w,) for w in words]
                prefix = bool(re.search(r"\w$", bare))
            continue
        phrase_words = tuple(_WORD.findall(phrase))
        if not phrase_words:
            continue
        if negated == "-":
            excluded += phrase_words
        else:
            terms.append(phrase_words)
            prefix = False
    if prefix and len(terms[-1][0]) < MIN_PREFIX:
        # A one-letter prefix names most of the vocabulary: after other words it is left out (what
        # is being typed: the others find a superset of what it will), alone it is a whole word.
        if len(terms) > 1:
            terms.pop()
            prefix = len(terms[-1]) == 1
        else:
            prefix = False
    if not terms and not filters:
        if excluded:
            raise InvalidQuery(f"a search needs a word to look for (or a filter) besides the words it leaves out. {HELP}")
        return None
    if "kind" in filters:  # a decision's kind: only decisions have one
        if filters.setdefault("type", "decision") != "decision":
            raise InvalidQuery(f"'kind:' is a decision's kind: type:{filters['type']} has none. {HELP}")
    return Query(tuple(terms[:MAX_TERMS]), prefix, tuple(excluded[:MAX_TERMS]),
                 filters.get("type"), filters.get("status"), filters.get("tag"), filters.get("kind"))


# --- what a result shows -------------------------------------------------------------------------

SNIPPET_CHARS = 100


def snippet(text: str, q: Query, length: int = SNIPPET_CHARS) -> str:
    """A window of `text` around the first of the query's words it contains, cut at word ends, on one
    line; the start of the text when no word is found as typed (a stem or an accent differs)."""
    flat = " ".join(text.split())
    if len(flat) <= length:
        return flat
    at = -1
    lowered = flat.lower()
    for group in q.terms:
        m = re.search(r"(?<!\w)" + re.escape(" ".join(group).lower()), lowered)
        if m and (at < 0 or m.start() < at):
            at = m.start()
    start = 0 if at < length // 3 else flat.rfind(" ", 0, at - length // 3) + 1
    end = start + length
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
