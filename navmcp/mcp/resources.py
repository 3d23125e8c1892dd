"""Pages as MCP resources: every page URL has a resource URI, one-to-one.

The URI of the page at `/studios/team/d/abc123` is `navmcp:///studios/team/d/abc123`: the scheme
`navmcp:`, an empty authority, then the page's URL as it is (path and query). Reading it is
navigating without moving anyone's current page: the same page, the same visibility rules — a
resource you may not see does not exist (-32602 with `data.uri`, as for a URI that names no page).

- `resources/templates/list`: one URI template per page kind, made from the page table's patterns;
- `resources/list`: Home, then your studios, then what awaits you (decisions awaiting your vote,
  commitments near critical mass), as the home page lists them, in pages of `LIST_PAGE` with a
  cursor (no `nextCursor` on the last page);
- `resources/read`: the page's markdown (`text/markdown`), exactly what `navigate` returns.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Protocol

from navmcp.errors import Busy, NavError
from navmcp.mcp.jsonrpc import InvalidParams, ServerBusy
from navmcp.mcp.views import VIEW_URI

if TYPE_CHECKING:
    from navmcp.app import App
    from navmcp.page import Page


class Reader(Protocol):
    """Who reads resources, prompts and completions: pages as the caller's user sees them (a tool
    session, `navmcp.mcp.tools.Session`, is one), moving no navigation state."""

    app: App

    def page(self, url: str) -> Page: ...
    def file(self, url: str) -> tuple[dict[str, Any], bytes]: ...
    def user_id(self) -> str: ...

SCHEME = "navmcp://"
MIME = "text/markdown"
LIST_PAGE = 50  # resources per resources/list page

# What each page kind is, for a person picking a resource (the page table names the kinds).
KINDS = {
    "home": ("Home", "Your studios and what awaits you"),
    "awaiting": ("Awaiting your vote", "Every open decision that awaits your vote, closing soonest first"),
    "near_mass": ("Near critical mass", "Every open commitment you could join, fewest joins short of critical mass first"),
    "workspace_search": ("Search", "Items of all your studios matching a query"),
    "help": ("Help", "How navigation works, the URL map, examples"),
    "help_topic": ("Help topic", "One topic of the help"),
    "inbox": ("Inbox", "What concerns you: mentions, comments on your items, decisions and commitments you took part in; "
                       "watch it to be told when an entry arrives"),
    "whoami": ("Who am I", "Your user, your studios, the client you are connected with"),
    "studio": ("Studio", "A studio's feed: pinned and recent items, counts"),
    "members": ("Members", "A studio's members and their roles"),
    "note": ("Note", "A note, its comments, who confirmed reading it, its links"),
    "decision": ("Decision", "A decision: question, options, votes, status, result when closed"),
    "commitment": ("Commitment", "A commitment: critical mass, limit, participants, status"),
    "file": ("File", "A file attached to a note, decision or commitment: text reads as text, images and PDFs as "
                     "blobs with their type"),
    "cycle": ("Cycle", "What happened in a studio today, yesterday, this week, last week or this month"),
    "search": ("Search in a studio", "Items of a studio matching a query"),
    "tag": ("Tag", "A studio's items with one tag"),
    "audit": ("Audit log", "Who did what in a studio, via which client (admins)"),
    "held_queue": ("Held actions", "A studio's writes waiting for a person's approval, pending first, and its hold rules"),
    "held": ("Held action", "One held write: what will run, what it would do, who must approve, its status; "
                            "watch it to be told when it is approved, rejected, withdrawn, expired or failed"),
}


def uri_of(url: str) -> str:
    return SCHEME + url


def url_of(uri: Any) -> str:
    """The page URL a resource URI names; -32602 naming the URI when it names none."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME + "/"):
        raise not_found(uri, f"{uri!r} is no navmcp resource: resource URIs are {SCHEME} followed by a page's "
                             f"URL, e.g. {SCHEME}/studios/team")
    return uri[len(SCHEME):]


def not_found(uri: Any, message: str | None = None) -> InvalidParams:
    shown = uri[:300] if isinstance(uri, str) else None
    return InvalidParams(message or f"Resource not found: {shown}", {"uri": shown})


def templates() -> list[dict[str, Any]]:
    from navmcp.pages import ROUTES

    listed = []
    for spec in ROUTES:
        title, description = KINDS[spec.name]
        query = "{?q}" if "q" in spec.query_keys else ""
        listed.append({"uriTemplate": SCHEME + spec.pattern + query, "name": spec.name, "title": title,
                       "description": description, "mimeType": MIME})
    return listed


TEMPLATES = None  # made on first use: the page table is not imported at start-up


def list_templates() -> dict[str, Any]:
    global TEMPLATES
    if TEMPLATES is None:
        TEMPLATES = templates()
    return {"resourceTemplates": TEMPLATES}


def list_resources(session: Reader, cursor: Any) -> dict[str, Any]:
    start = _offset(cursor)
    home = session.page("/")
    data = home.data
    listed = [_resource("/", "Home", "Your studios and what awaits you")]
    for studio in data["studios"]:
        listed.append(_resource(f"/studios/{studio['handle']}", studio["name"],
                                f"Studio @{studio['handle']} (you are {studio['role']})"))
    for item in data["awaiting_votes"]:
        listed.append(_resource(f"/studios/{item['studio']}/d/{item['id']}", item["title"],
                                f"Decision in {item['studio']} awaiting your vote"))
    for item in data["near_mass"]:
        listed.append(_resource(f"/studios/{item['studio']}/c/{item['id']}", item["title"],
                                f"Commitment in {item['studio']}: {item['joined']} of critical mass "
                                f"{item['critical_mass']}"))
    if start > len(listed):
        raise InvalidParams("Invalid params: that cursor is past the end of the list; list again without one")
    result: dict[str, Any] = {"resources": listed[start:start + LIST_PAGE]}
    if start + LIST_PAGE < len(listed):
        result["nextCursor"] = base64.urlsafe_b64encode(str(start + LIST_PAGE).encode()).decode()
    return result


def read(session: Reader, uri: Any) -> dict[str, Any]:
    if uri == VIEW_URI:  # MCP Apps: the view `navigate` names (navmcp.mcp.views); no user's data in it
        session.user_id()  # still, only for who may read pages
        from navmcp.mcp import views

        return views.read()
    if _names_a_file(url_of(uri)):
        return read_file(session, uri)
    return {"contents": [{"uri": uri, "mimeType": MIME, "text": page_of(session, uri).markdown}]}


def _names_a_file(url: str) -> bool:
    from navmcp.pages import locate

    try:
        return locate(url)[0].name == "file"
    except NavError:
        return False


def read_file(session: Reader, uri: Any) -> dict[str, Any]:
    """A file's resource is the file (navmcp.content.attachments): a text file as text, an image or a PDF
    as a base64 blob, each with its type."""
    from navmcp.content.attachments import kind_of

    try:
        file, data = session.file(url_of(uri))
    except Busy as e:
        raise ServerBusy(f"Server error: {e.message}", {"retryAfter": e.retry_after}) from None
    except NavError as e:
        raise not_found(uri, f"Resource not found: {uri[:300]} ({e.message})") from None
    one: dict[str, Any] = {"uri": uri, "mimeType": file["content_type"]}
    if kind_of(file["content_type"]) == "text":
        one["text"] = data.decode("utf-8")
    else:
        one["blob"] = base64.b64encode(data).decode("ascii")
    return {"contents": [one]}


def page_of(session: Reader, uri: Any):
    """The page a resource URI names, as the session's user sees it; -32602 when there is none for them."""
    url = url_of(uri)
    try:
        return session.page(url)
    except Busy as e:
        raise ServerBusy(f"Server error: {e.message}", {"retryAfter": e.retry_after}) from None
    except NavError as e:
        raise not_found(uri, f"Resource not found: {uri[:300]} ({e.message})") from None


def _resource(url: str, name: str, description: str) -> dict[str, Any]:
    return {"uri": uri_of(url), "name": name, "description": description, "mimeType": MIME}


def _offset(cursor: Any) -> int:
    if cursor is None:
        return 0
    try:
        value = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii"))
        if value < 0:
            raise ValueError
        return value
    except (AttributeError, UnicodeError, ValueError, binascii.Error):
        raise InvalidParams("Invalid params: not a cursor this server gave out; list again without one") from None
