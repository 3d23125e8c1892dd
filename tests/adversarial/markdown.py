"""A small markdown structure checker: which lines are structure (outside code fences) and which
are quoted text, following CommonMark's fence rules, so a test can say "this page has exactly
these headings and these actions" whatever users wrote into it.

Lines are split twice — on "\\n" (CommonMark) and with `str.splitlines` (what a reader splitting on
any Unicode line break sees) — and invisible characters (zero-width, bidi controls) are removed,
so text that only looks like structure to a sloppier reader is caught too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_ACTION = re.compile(r"^- `([A-Za-z0-9_]+)` — ")
_LINK = re.compile(r"(?<!\\)\]\(([^)\s]*)\)")
_HTML = re.compile(r"(?<!\\)<\s*[A-Za-z!/?]")
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")

# Headings the templates write; anything else outside a fence came from user text.
TEMPLATE_H2 = re.compile(
    r"^(Available actions|Comments \(\d+\)|Options|Links to|Linked from|Participants|Your studios|"
    r"(Awaiting your vote|Commitments that need you)( \((more than )?\d+\))?|Pinned|Recent|(Created|Closed)( \(\d+\))?)$")


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
    out = Structure()
    fence: tuple[str, int] | None = None
    in_actions = False
    for line in lines:
        m = _FENCE.match(line)
        if fence is not None:
            char, length = fence
            if m and m.group(1)[0] == char and len(m.group(1)) >= length and not m.group(2).strip():
                fence = None
            continue
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            continue
        h = _HEADING.match(line)
        if h:
            out.headings.append((len(h.group(1)), (h.group(2) or "").strip()))
            in_actions = h.group(2) == "Available actions" and len(h.group(1)) == 2
            continue
        if in_actions and (a := _ACTION.match(line)):
            out.actions.append(a.group(1))
        out.links.extend(_LINK.findall(line))
        out.html.extend(_HTML.findall(line))
    out.unclosed_fence = fence is not None
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
