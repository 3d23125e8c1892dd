"""Markdown that people wrote (note bodies, descriptions, comments) as HTML, for the web pages.

markdown-it-py (CommonMark) with raw HTML off: a `<script>` or an `onerror=` in the text is shown
as text, never parsed as markup. Links go through the library's own check (no `javascript:`,
`vbscript:`, `file:` or `data:` targets), URLs in running text are linkified, and a navmcp path in
the text (`/studios/team/n/k3f9q2`) becomes a link inside the app. External links open with
`rel="nofollow noopener noreferrer"`. A full URL of this very instance (`http://HOST/studios/team/n/k3f9q2`,
HOST being the host the page was asked for, or one it is served under by `--allow-host`) is a link
inside the app too, written as its path. Headings are placed under the page's own outline: the
text sits under a heading of the page's (`under`, the level of that heading), and the levels the
text uses, in order, become the levels below it (with `under=2`, a note's lone `## Goals` is an
<h3>, and `#`/`###` are <h3>/<h4>), so no level is skipped and the page's own headings stay its
outline. Images are not fetched (they would let a
writer see who reads): `![alt](url)` is shown as a link to the image.

The result is cached by text: a busy page shows the same comments again and again.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple
from urllib.parse import urlsplit

from markupsafe import Markup

from navmcp.content.mentions import MENTION

# A navmcp page path written in running text (not already a link): a studio, its pages and items.
_APP_PATH = re.compile(r"(?<![\w/.:-])(/studios/[a-z0-9][a-z0-9-]{0,31}(?:/(?:[ndc]/[A-Za-z0-9_-]{1,64}|members|search|"
                       r"audit|cycles/[a-z-]{1,20}|tags/[a-z0-9][a-z0-9-]{0,31}))?)(?![\w/-])")
UNDER = 2  # text sits under a heading of the page's at this level, unless the page says otherwise


@functools.cache
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "typographer": False})
    md.enable(["linkify", "table", "strikethrough"])
    md.core.ruler.push("app_paths", _link_app_paths)
    md.core.ruler.push("heading_levels", _place_headings)

    def link_open(self, tokens, idx, options, env):
        token = tokens[idx]
        href = token.attrGet("href") or ""
        if not href.startswith("/") or href.startswith("//"):  # another site: no referrer, no endorsement
            token.attrSet("rel", "nofollow noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens, idx, options, env):
        token = tokens[idx]
        src = token.attrGet("src") or ""
        alt = self.renderInlineAsText(token.children or [], options, env) or src
        if not md.validateLink(src):
            return _escape(alt)
        return f'<a href="{_escape(src)}" rel="nofollow noopener noreferrer">{_escape(alt)}</a>'

    for name, rule in (("link_open", link_open), ("image", image)):
        md.add_render_rule(name, rule)
    return md


def _place_headings(state) -> None:
    """The text's heading levels, in order, as the levels below the page's heading it sits under."""
    headings = [t for t in state.tokens if t.type in ("heading_open", "heading_close")]
    if not headings:
        return
    under = state.env.get("under", UNDER)
    placed = {level: min(6, under + 1 + rank) for rank, level in enumerate(sorted({t.tag for t in headings}))}
    for token in headings:
        token.tag = f"h{placed[token.tag]}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class OwnHosts(NamedTuple):
    """This instance's hosts: `exact`, Host header values as asked for ('127.0.0.1:8765'), whose URLs
    must name that very host and port; `names`, host names it is served under at any port."""

    exact: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()


NO_HOSTS = OwnHosts()
Mentions = tuple[str, frozenset[str]]  # a studio's handle, and the handles of its members a page mentions
NO_MENTIONS: Mentions = ("", frozenset())


def in_app(href: str, hosts: OwnHosts) -> str | None:
    """The path of `href` when it is a URL of this instance (see `OwnHosts`), else None."""
    if hosts == NO_HOSTS or not href.lower().startswith(("http://", "https://")):
        return None
    try:
        parts = urlsplit(href)
        name = parts.hostname
    except ValueError:
        return None
    if parts.username is not None or (parts.netloc.lower() not in hosts.exact and name not in hosts.names):
        return None
    path = parts.path or "/"
    if not path.startswith("/") or path.startswith("//"):
        return None
    return path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def _link_app_paths(state) -> None:
    """Text tokens outside links: each navmcp path in them becomes a link to it. Links to a full URL
    of this instance become links to its path (and, when the link's text is that URL, so does the text)."""
    from markdown_it.token import Token

    hosts = state.env.get("hosts") or NO_HOSTS
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        if hosts != NO_HOSTS:
            _own_urls_to_paths(block.children, hosts)
        mentioned = state.env.get("mentions") or NO_MENTIONS
        if "/studios/" not in block.content and not (mentioned[1] and "@" in block.content):
            continue
        out, depth = [], 0
        for token in block.children:
            if token.type == "link_open":
                depth += 1
            elif token.type == "link_close":
                depth -= 1
            if token.type != "text" or depth or ("/studios/" not in token.content and "@" not in token.content):
                out.append(token)
                continue
            pos = 0
            for href, start, end in _links_in(token.content, mentioned):
                if start > pos:
                    out.append(_text(Token, token.content[pos:start]))
                opening = Token("link_open", "a", 1)
                opening.attrs = {"href": href}
                out += [opening, _text(Token, token.content[start:end]), Token("link_close", "a", -1)]
                pos = end
            if pos < len(token.content):
                out.append(_text(Token, token.content[pos:]))
        block.children = out


def _links_in(text: str, mentioned: Mentions) -> list[tuple[str, int, int]]:
    """(href, start, end) of each navmcp path in `text`, and of each @handle of a member the page
    mentions (to the studio's members page), in order."""
    found = [(m.group(1), m.start(), m.end()) for m in _APP_PATH.finditer(text)] if "/studios/" in text else []
    studio, members = mentioned
    if members and "@" in text:
        for m in MENTION.finditer(text):
            handle = m.group(1).lower().rstrip("-")
            if handle in members and not any(s <= m.start() < e for _, s, e in found):
                found.append((f"/studios/{studio}/members", m.start(), m.start() + 1 + len(handle)))
    return sorted(found, key=lambda link: link[1])


def _own_urls_to_paths(children, hosts: OwnHosts) -> None:
    for i, token in enumerate(children):
        if token.type != "link_open":
            continue
        href = token.attrGet("href") or ""
        path = in_app(href, hosts)
        if path is None:
            continue
        token.attrSet("href", path)
        text = children[i + 1] if i + 1 < len(children) else None
        if text is not None and text.type == "text" and token.markup in ("linkify", "autolink"):
            text.content = path


def _text(Token, content: str):
    token = Token("text", "", 0)
    token.content = content
    return token


@functools.lru_cache(maxsize=2048)
def to_html(text: str, hosts: OwnHosts = NO_HOSTS, mentions: Mentions = NO_MENTIONS,
            under: int = UNDER) -> Markup:
    """User-written markdown as safe HTML (see the module's docstring); `hosts`: this instance's,
    whose full URLs are links inside the app; `mentions`: a studio's handle and the handles of its
    members the page mentions, whose @handle links to its members page; `under`: the level of the
    page's heading the text sits under."""
    if not text:
        return Markup("")
    return Markup(_parser().render(text, {"hosts": hosts, "mentions": mentions, "under": under}))
