"""The page inside the chat: navmcp as an MCP App (the `io.modelcontextprotocol/ui` extension).

A host that renders MCP Apps shows a `navigate` result with the one view named on the tool
(`ui://navmcp/page`): a self-contained HTML document (navmcp's stylesheet and the view's script
inlined, no outside domain) that talks to the host over `postMessage`. The page itself travels in
the result's `_meta` (`HTML_META`: the web app's HTML of the page in the embed layout), where the
spec keeps it out of the model's context; `content` stays the markdown the model reads.

- Negotiation: a client renders views when its capabilities (a modern request's `_meta`, a legacy
  connection's `initialize`) list the extension with `VIEW_MIME` (`renders_views`); only then does
  a result carry the HTML. Without it, results are what they always were.
- The tool list is the same for every client (its `public` caching hint stays true): `navigate`
  names the view in its `_meta` (`TOOL_META`), which hosts without the extension ignore.
- The view acts through the host with the same two tools (no app-only tool): `execute_action`
  with an explicit `url`, then `navigate` to refresh. Actions in `BROWSER_ONLY` are never offered
  there: the view acts with the agent's token, so they link to the page in navmcp instead.

Imported at start-up by the protocol core: the templates and the page renderer load on first use.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navmcp.page import Page

UI_EXTENSION = "io.modelcontextprotocol/ui"
VIEW_URI = "ui://navmcp/page"
VIEW_MIME = "text/html;profile=mcp-app"
HTML_META = "io.github.navmcp/html"  # a navigate result's `_meta` key: the page's HTML for the view
# A tools/call's `_meta` key the view sets: a person moving about in the view does not move the
# conversation's current page (a legacy session's), which a later url-less execute_action would use.
VIEW_CALL = "io.github.navmcp/view"
# The tool's `_meta`: the view, in the spec's form and the flat key older hosts read.
TOOL_META: dict[str, Any] = {"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}
# The resource's: no outside domain at all (the default CSP holds), a border around it.
RESOURCE_META: dict[str, Any] = {"ui": {"csp": {}, "prefersBorder": True}}
# Actions a person does in navmcp itself, never in the view (issue 46's held actions: approving one
# with the agent's own token would let the agent approve itself; a file, which the view's JSON
# calls cannot carry from a file input).
BROWSER_ONLY = frozenset({"approve", "reject", "attach"})


def renders_views(capabilities: Any) -> bool:
    """Does a client with these capabilities render MCP Apps views? It declares the extension with
    the view MIME type among its `mimeTypes` (a declaration without `mimeTypes` takes the spec's one)."""
    if not isinstance(capabilities, dict):
        return False
    extensions = capabilities.get("extensions")
    declared = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(declared, dict):
        return False
    mime_types = declared.get("mimeTypes", [VIEW_MIME])
    return isinstance(mime_types, list) and VIEW_MIME in mime_types


def fragment(page: Page) -> str:
    """The page as the view shows it: the web app's HTML in the embed layout (no shell, no CSRF
    token), for the page's own user; user text escaped and rendered as on the web."""
    from navmcp.web import html

    return html.render_page(page, csrf="", alternates={}, layout=html.EMBED_LAYOUT, browser_only=BROWSER_ONLY)


def read() -> dict[str, Any]:
    """`resources/read` of the view: one HTML5 document, the same for everyone."""
    return {"contents": [{"uri": VIEW_URI, "mimeType": VIEW_MIME, "text": document(), "_meta": RESOURCE_META}]}


@functools.cache
def document() -> str:
    from markupsafe import escape

    from navmcp import __version__
    from navmcp.render import templates_dir

    static = templates_dir() / "static"
    # app.js is left out: its live updates fetch, and the view fetches nothing (view.js opens dialogs)
    css, view_css, view_js = (
        (static / name).read_text(encoding="utf-8").replace("</", "<\\/")  # nothing can close its element early
        for name in ("app.css", "view.css", "view.js"))
    return _DOCUMENT.format(version=__version__, css=css, view_css=view_css, view_js=view_js,
                            html_meta=HTML_META, browser_only=",".join(sorted(BROWSER_ONLY)),
                            public=escape(public_url()))


def public_url() -> str:
    """Where people open navmcp in a browser (NAVMCP_PUBLIC_URL, e.g. https://navmcp.example.org):
    the view's "Open in navmcp" links there; without it, it names the page's path instead."""
    import os

    url = os.environ.get("NAVMCP_PUBLIC_URL", "").strip().rstrip("/")
    return url if url.startswith(("https://", "http://")) else ""


_DOCUMENT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>navmcp</title>
<style>{css}</style>
<style>{view_css}</style>
</head>
<body class="view" data-version="{version}" data-html-meta="{html_meta}" data-browser-only="{browser_only}"
 data-public="{public}">
<div class="view-bar" role="toolbar" aria-label="This view">
<button type="button" class="secondary" id="view-back" hidden>Back</button>
<span class="spacer"></span>
<button type="button" class="secondary" id="view-more" hidden aria-expanded="false">Show the whole page</button>
<button type="button" class="secondary" id="view-full" hidden>Full screen</button>
<button type="button" class="secondary" id="view-open" hidden>Open in navmcp</button>
</div>
<main id="view" class="compact"><p class="muted">Opening the page…</p></main>
<p id="view-status" class="vh" role="status" aria-live="polite"></p>
<script>{view_js}</script>
</body>
</html>
"""
