"""The structure a markdown reader sees in a page: headings, the action bullets, links, raw HTML and
an unclosed fence, as a CommonMark parser nobody here wrote (markdown-it-py, raw HTML on, GFM
tables) reads them, so a test can say "this page has exactly these headings and these actions"
whatever users wrote into it.

The page is parsed twice — as it is (CommonMark's line ends) and split with `str.splitlines` (what
a reader splitting on any Unicode line break sees) — with invisible characters (zero-width, bidi
controls) removed, so text that only looks like structure to a sloppier reader is caught too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")
_PARSER.validateLink = lambda url: True  # see every link a laxer renderer would make (javascript: too)
_ACTION = re.compile(r"^`([A-Za-z0-9_]+)` — ")
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")

# Headings the templates write; anything else outside a fence came from user text.
TEMPLATE_H2 = re.compile(
    r"^(Available actions|Comments \(\d+\)|Options|Links to|Linked from|Participants|Your studios|"
    r"(Awaiting your vote|Commitments that need you)( \((more than )?\d+\))?|Pinned|Recent|(Created|Closed)( \(\d+\))?|"
    r"\[Inbox\]\(/inbox\) \((more than )?\d+ unread\))$")


@dataclass
class Structure:
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, raw text)
    actions: list[str] = field(default_factory=list)  # bullets under "## Available actions"
    links: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)
    unclosed_fence: bool = False


def structure(markdown: str, splitter: str = "commonmark") -> Structure:
    text = INVISIBLE.sub("", markdown)
    lines = text.split("\n") if splitter == "commonmark" else text.splitlines()
    tokens = _PARSER.parse("\n".join(lines))
    out = Structure()
    in_actions, depth = False, 0
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            level, heading = int(token.tag[1]), tokens[i + 1].content.strip()
            out.headings.append((level, heading))
            in_actions = level == 2 and heading == "Available actions"
        elif token.type == "fence":
            end = lines[token.map[1] - 1].strip() if token.map[1] - 1 > token.map[0] else ""
            closed = end and set(end) == {token.markup[0]} and len(end) >= len(token.markup)
            out.unclosed_fence = out.unclosed_fence or not closed
        elif token.type == "html_block":
            out.html.append(token.content.strip()[:20])
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "inline":
            if in_actions and depth == 1 and tokens[i - 1].type == "paragraph_open" and (a := _ACTION.match(token.content)):
                out.actions.append(a.group(1))
            for child in token.children or ():
                if child.type == "link_open":
                    out.links.append(str(child.attrs.get("href", "")))
                elif child.type == "image":
                    out.links.append(str(child.attrs.get("src", "")))
                elif child.type == "html_inline":
                    out.html.append(child.content[:20])
    return out


def check_page(markdown: str, actions: list[str], title_h1: bool = True) -> None:
    """Assert the page's structure is only the template's: one h1 first, one actions heading,
    the action bullets equal to `actions`, internal links only, no raw HTML, no open fence."""
    for splitter in ("commonmark", "splitlines"):
        s = structure(markdown, splitter)
        assert not s.unclosed_fence, f"a fence is left open ({splitter})"
        h1 = [h for h in s.headings if h[0] == 1]
        assert len(h1) == 1 and s.headings[0][0] == 1, f"h1 headings {h1} ({splitter})"
        h2 = [text for level, text in s.headings if level == 2]
        assert h2.count("Available actions") == 1 and h2[-1] == "Available actions", f"h2 {h2} ({splitter})"
        assert all(level in (1, 2) for level, _ in s.headings), f"user text made a heading: {s.headings}"
        assert all(TEMPLATE_H2.match(text) for text in h2), f"a heading no template writes: {h2} ({splitter})"
        assert s.actions == actions, f"actions in the text {s.actions} != structured {actions} ({splitter})"
        for href in s.links:
            assert href.startswith("/") and not href.startswith("//") and ":" not in href, f"link to {href!r}"
        assert not s.html, f"raw HTML outside fences: {s.html}"
