"""The page table: URL pattern → resolve → view → templates.

`resolve(req)` loads what the page's action rules need (the studio, the item, the user's role and
facts such as "has joined") and raises `NotFound` for anything this user may not see. `view(req)`
loads the rest of what the page shows. Executing an action only resolves, inside the write
transaction, so availability is judged on fresh data; navigating resolves and views.
The URL a request names, parsed and canonicalised (`split_url`), finds its row here (`route`).
The view's data is the page's: the markdown and HTML templates read it, the JSON rendition is it
(`navmcp.page`). A row's name is its templates' name (`{name}.md.j2`, `html/{name}.html.j2`) unless
it gives another, shared with a kind like it. Adding a page is one row here, its resolve and view
functions, and its two templates.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from navmcp.errors import NotFound
from navmcp.held import pages as held
from navmcp.pages import files, home, inbox, items, search, studio
from navmcp.pages.request import PAGE_SIZE, Request, query_text, url_with
from navmcp.store import Row, Tx

__all__ = ["PAGE_SIZE", "ROUTES", "PageSpec", "Request", "costly", "is_costly", "locate", "make_request", "query_text", "route",
           "split_url", "url_with"]

MAX_URL_LENGTH = 2048


@dataclass(frozen=True)
class PageSpec:
    name: str
    pattern: str
    resolve: Callable[[Request], None]
    view: Callable[[Request], dict[str, Any]]
    query_keys: tuple[str, ...] = ("page",)  # query parameters that are part of the page's URL
    # Its cost grows with the data it searches, not with one page of it: served apart (navmcp.web.workers).
    costly: bool = False
    template: str = ""  # its templates' name in every rendition (navmcp.web.renderers): its own name if ""

    def __post_init__(self) -> None:
        if not self.template:
            object.__setattr__(self, "template", self.name)

    @property
    def regex(self) -> re.Pattern[str]:
        return _compile(self.pattern)


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    body = re.sub(r"\{(\w+)\}", r"(?P<\1>[A-Za-z0-9_-]{1,64})", pattern)
    return re.compile(f"^{body}$")


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_LEADING_SLASHES = re.compile(r"^/{2,}")
_SLASH_RUNS = re.compile(r"/{2,}")
# A bare path (what agents send nearly always): urlsplit would give it back as the path, unchanged.
_PLAIN_PATH = re.compile(r"/(?!/)[A-Za-z0-9._~/-]*\Z")


# Full URLs are accepted for this machine (the local web app's links); any other host is refused.
_THIS_MACHINE = frozenset(("localhost", "127.0.0.1", "::1"))


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """A URL-like string as (canonical path, query). Accepts `.md` twins, and full http URLs of
    this machine; a full URL naming another host is a NotFound that gives its path."""
    if not isinstance(url, str) or not url.strip():
        raise NotFound("empty URL: try '/' (your studios) or '/help'")
    if len(url) > MAX_URL_LENGTH:
        raise NotFound(f"URL longer than {MAX_URL_LENGTH} characters")
    raw = url.strip()
    if "\x00" in raw:  # no page's URL holds a NUL; PostgreSQL refuses one in any text it is compared with
        raw = raw.replace("\x00", "")
    if _PLAIN_PATH.match(raw):
        return _canonical_path(raw), {}
    if not _SCHEME.match(raw):
        raw = _LEADING_SLASHES.sub("/", raw)  # '//studios/x' is a path typo, not a host named 'studios'
    try:
        parts = urlsplit(raw)
    except ValueError:  # e.g. an unclosed "[" read as an IPv6 host: a bad URL, not a server fault
        raise NotFound("not a valid URL: try '/' (your studios) or '/help'") from None
    if parts.hostname and parts.hostname not in _THIS_MACHINE:
        # Another server's address is not this one's page under another name: say what to send.
        path = _canonical_path(parts.path or "/") + ("?" + parts.query if parts.query else "")
        raise NotFound(f"{parts.hostname[:100]} is another server: pages here are named by their path alone, "
                       f"e.g. '{path[:200]}'")
    query = dict(parse_qsl(parts.query, keep_blank_values=False))
    if "%00" in parts.query:  # ?comment=%00: dropped as a raw NUL is (and left out if nothing else is left)
        query = {k.replace("\x00", ""): v.replace("\x00", "") for k, v in query.items()}
        query = {k: v for k, v in query.items() if k and v}
    return _canonical_path(parts.path or "/"), query


def _canonical_path(path: str) -> str:
    # Every name in a path is lowercase by construction (handles, tags, ids, cycles, topics), so a
    # path typed with capitals ('/studios/Team/tags/Food') names the same page, not an empty one.
    path = path.lower()
    if not path.startswith("/"):
        path = "/" + path
    if "//" in path:
        path = _SLASH_RUNS.sub("/", path)
    if len(path) > 1:
        path = path.rstrip("/")
    if path.endswith(".md"):
        path = path[:-3] or "/"
    return path


COSTLY_PAGE = 50  # a list page numbered past this skips over more than COSTLY_PAGE * PAGE_SIZE rows


def costly(url: str) -> bool:
    """Whether reading the page at `url` may cost more than one page of data (`is_costly`)."""
    try:
        spec, _, query, _ = _locate(url)
    except NotFound:
        return False
    return is_costly(spec, query)


def is_costly(spec: PageSpec, query: dict[str, str]) -> bool:
    """A costly page kind (search), or a list read at a far page number (an OFFSET skips every row
    before it)."""
    number = query.get("page") or query.get("part") or "0"
    far = number.isascii() and number.isdigit() and (len(number) > 6 or int(number) > COSTLY_PAGE)
    return spec.costly or far


def route(path: str) -> tuple[PageSpec, dict[str, str]]:
    for regex, spec in _COMPILED:
        m = regex.match(path)
        if m:
            return spec, m.groupdict()
    raise NotFound(f"no page at {path}: start at '/' or see '/help' for the URL map")


def locate(url: str) -> tuple[PageSpec, str, dict[str, str], dict[str, str]]:
    """The page at `url`: its row, canonical path, the query parameters it keeps and the path's
    arguments (NotFound when it names none)."""
    return _locate(url)


def make_request(tx: Tx, user: Row, client: str, url: str, acting: bool = False,
                 browser: bool = False, in_client: bool = False) -> tuple[PageSpec, Request]:
    spec, path, query, args = _locate(url) if type(url) is str else _locate.__wrapped__(url)
    return spec, Request(tx=tx, user=user, client=client, path=path, query=dict(query), args=args, acting=acting,
                         browser=browser, in_client=in_client)


@functools.lru_cache(maxsize=256)
def _locate(url: str) -> tuple[PageSpec, str, dict[str, str], dict[str, str]]:
    """The page at `url`, its canonical path, the query parameters it keeps and the path's arguments:
    a pure function of the text (nothing changes `args`), remembered for the URLs seen last, as
    agents come back to the same few. A URL that names no page raises, and is not remembered."""
    path, query = split_url(url)
    spec, args = route(path)
    return spec, path, {k: v[:500] for k, v in query.items() if k in spec.query_keys}, args


ROUTES: list[PageSpec] = [
    PageSpec("home", "/", home.resolve_home, home.view_home),
    PageSpec("help", "/help", home.resolve_help, home.view_help),
    PageSpec("help_topic", "/help/{topic}", home.resolve_help, home.view_help, template="help"),
    PageSpec("whoami", "/whoami", home.resolve_whoami, home.view_whoami),
    PageSpec("awaiting", "/awaiting", home.resolve_list, home.view_awaiting, template="todo"),
    PageSpec("near_mass", "/near-mass", home.resolve_list, home.view_near_mass, ("page", "order"), template="todo"),
    PageSpec("inbox", "/inbox", inbox.resolve_inbox, inbox.view_inbox),
    PageSpec("workspace_search", "/search", home.resolve_home, search.view_workspace_search, ("q", "page"),
             costly=True, template="search"),
    PageSpec("studio", "/studios/{studio}", studio.resolve_studio, studio.view_studio, ("page", "after")),
    PageSpec("members", "/studios/{studio}/members", studio.resolve_members, studio.view_members),
    PageSpec("note", "/studios/{studio}/n/{item}", items.resolve_note, items.view_note,
             ("page", "part", "comment", "full", "from", "history")),
    PageSpec("decision", "/studios/{studio}/d/{item}", items.resolve_decision, items.view_decision,
             ("page", "part", "comment", "full", "from", "history", "tz")),
    PageSpec("commitment", "/studios/{studio}/c/{item}", items.resolve_commitment, items.view_commitment,
             ("page", "part", "comment", "full", "from", "history")),
    PageSpec("file", "/studios/{studio}/{kind}/{item}/files/{file}", files.resolve_file, files.view_file),
    PageSpec("cycle", "/studios/{studio}/cycles/{cycle}", studio.resolve_cycle, studio.view_cycle,
             ("page", "after", "closed"), costly=True),  # its activity counts walk the window's votes and joins
    PageSpec("search", "/studios/{studio}/search", studio.resolve_studio, search.view_studio_search, ("q", "page"),
             costly=True),
    PageSpec("tag", "/studios/{studio}/tags/{tag}", studio.resolve_studio, studio.view_tag, ("page", "after")),
    PageSpec("audit", "/studios/{studio}/audit", studio.resolve_audit, studio.view_audit, ("page", "after")),
    PageSpec("held_queue", "/studios/{studio}/held", held.resolve_queue, held.view_queue, ("page",)),
    PageSpec("held", "/studios/{studio}/held/{held}", held.resolve_held, held.view_held),
]

_COMPILED = [(spec.regex, spec) for spec in ROUTES]  # compiled once, in table order
_names = [spec.name for spec in ROUTES]
assert len(_names) == len(set(_names)), "duplicate page name in ROUTES"
