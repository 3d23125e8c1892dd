"""One look at one page: the `Request` every page function takes (who asks, in which transaction,
for which path and query), the URLs pages build from it, and their pagination. Below the page
modules and the page table, so each of them imports it and none imports another's table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus

from navmcp.store import Row, Tx

PAGE_SIZE = 20


@dataclass
class Request:
    """One look at one page by one user, inside one transaction."""

    tx: Tx
    user: Row
    client: str
    path: str
    query: dict[str, str]
    args: dict[str, str]
    studio: Row | None = None
    role: str | None = None  # the user's role in `studio`: "admin", "member" or None
    item: Row | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    # Resolved to run an action: facts need only hold what the rules and the handler read, not
    # what only the page shows (a decision's options without their tallies).
    acting: bool = False
    # A person in their browser session (cookie + CSRF), not an agent's token: hold rules are
    # changed only there, and rules for agents' writes pass it by (navmcp.held).
    browser: bool = False
    # The person's own answer in their MCP client to a signed elicitation (navmcp.held.elicit): it
    # approves a held action whose rule allows approval in the client, as the browser does.
    in_client: bool = False

    @property
    def url(self) -> str:
        return self.path + ("?" + query_text(self.query) if self.query else "")

    def page_number(self, key: str = "page") -> int:
        value = self.query.get(key)
        if value is None:
            return 1
        try:
            return max(1, min(int(value), 100_000))
        except ValueError:
            return 1

    def url_with(self, **changes: Any) -> str:
        return url_with(self.path, self.query, **changes)


def url_with(path: str, query: dict[str, str], **changes: Any) -> str:
    """`path` with `query` changed by `changes` (None: unchanged); page=1 and part=1 are left out."""
    query = {**query, **{k: str(v) for k, v in changes.items() if v is not None}}
    query = {k: v for k, v in query.items() if not (k in ("page", "part", "closed") and v == "1")}
    return path + ("?" + query_text(query) if query else "")


# ASCII that `quote_plus` escapes, and how: a space becomes '+', the rest %XX.
_QUOTE_PLUS = str.maketrans({c: "+" if c == " " else f"%{ord(c):02X}" for c in map(chr, range(128))
                             if not (c.isascii() and c.isalnum() or c in "_.-~")})


def query_text(query: dict[str, str]) -> str:
    """`urlencode(query)`, text for text: ASCII is escaped by one table, not byte by byte in Python
    (a Next link's `after=` escapes its time's colons on every feed page)."""
    return "&".join(f"{_quoted(k)}={_quoted(v)}" for k, v in query.items())


def _quoted(text: str) -> str:
    return text.translate(_QUOTE_PLUS) if text.isascii() else quote_plus(text)


def paginate(req: Request, total: int, last: str | None = None, drop: tuple[str, ...] = ("after",),
             key: str = "page", at_least: bool = False) -> dict[str, Any]:
    """Page links. `last` is the keyset position of this page's last row: the Next link carries it
    (`after=`), so the next page starts there instead of counting past every earlier row.
    `at_least`: counting stopped at `total` (a word search cut at its window): `capped` says so,
    and the pager reads "or more", so no page calls a lower bound the whole.
    A page number past the end of a list that isn't empty keeps its URL (an agent's link still
    resolves) and gets `past`, the last page's URL: the page says so rather than "nothing here"."""
    page = req.page_number(key)
    pages = max(1, -(-total // PAGE_SIZE))
    plain = {k: v for k, v in req.query.items() if k not in drop}
    past = total > 0 and page > pages

    def at(number: int, **more: Any) -> str:
        return url_with(req.path, {**plain, key: str(number)}, **more)

    return {
        "number": page, "pages": pages, "total": total, "offset": (page - 1) * PAGE_SIZE,
        "next": at(page + 1, after=last) if page < pages else None,
        "prev": at(page - 1) if 1 < page <= pages else None,
        "past": at(pages) if past else None,
        "capped": at_least,  # the list's count stopped at `total` (then the page says "or more")
    }
