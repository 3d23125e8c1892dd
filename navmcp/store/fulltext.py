"""A parsed search (`navmcp.content.search.Query`) in each store's full-text syntax.

The user's query is parsed once, by `navmcp.content.search.parse`; these are its two emitters, side by
side so that they stay alike: SQLite's FTS5 `MATCH` expressions and PostgreSQL's `to_tsquery`
text. Every query must match all of its words (a phrase: side by side; the last bare word may be
the start of one) and none it leaves out. User text only ever appears inside quotes, so no query is
a syntax error in either.
"""

from __future__ import annotations

from navmcp.content.search import Query

# --- FTS5 (SQLite) --------------------------------------------------------------------------------


def fts5_match(q: Query, title_only: bool = False) -> str | None:
    """The FTS5 expression for `q`'s words (None if it has none); `title_only` keeps to the title
    column."""
    if not q.terms:
        return None
    groups = [f'"{" ".join(group)}"' for group in q.terms]
    if q.prefix:
        groups[-1] += "*"
    text = " ".join(groups)
    if q.excluded:
        text = f"({text})" + "".join(f' NOT "{w}"' for w in q.excluded)
    return f"title : ({text})" if title_only else text


def fts5_any(words: tuple[str, ...]) -> str:
    """An FTS5 expression matching any of `words`."""
    return " OR ".join(f'"{w}"' for w in words)


# --- tsquery (PostgreSQL) -------------------------------------------------------------------------


def tsquery(q: Query, title_only: bool = False) -> str | None:
    """The `to_tsquery` text for `q`'s words (None if it has none), read by the `navmcp.search_words`
    configuration as the columns were; `title_only` keeps to the title's words (weight A). Words go
    as typed: `to_tsquery` lowercases them with the server's rules, as it did the columns' words
    (Python's `str.lower` has others: "İ" -> "i" + a combining dot, a final "Σ" -> "ς")."""
    if not q.terms:
        return None
    weight = "A" if title_only else ""
    parts = []
    for n, group in enumerate(q.terms):
        last = n == len(q.terms) - 1
        words = [f"'{w}':{'*' if q.prefix and last and len(group) == 1 else ''}{weight}".rstrip(":")
                 for w in group]
        parts.append(words[0] if len(words) == 1 else "(" + " <-> ".join(words) + ")")
    return " & ".join(parts + [f"!'{w}'" for w in q.excluded])


def tsquery_any(words: tuple[str, ...]) -> str:
    """A `to_tsquery` text matching any of `words`."""
    return " | ".join(f"'{w}'" for w in words)
