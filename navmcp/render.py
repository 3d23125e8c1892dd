"""Markdown rendering: the Jinja environment and the filters that keep user text inert.

Two rules make user-written text unable to pass for page structure, and both show it as typed:
- text on one line (titles, names, option titles) goes through `inline`, which folds newlines and,
  when the text holds anything markdown could read (`*`, `_`, `[`, `#`, a list opener...), puts it
  in a code span, inside which nothing is markdown: it can't open a heading, list, link or fence;
- multi-line text (bodies, comments) goes through `fenced`, a code fence longer than any run of
  backticks inside it, so nothing in it is markdown at all.
No backslash escapes: a model reads the raw markdown, and copies what it reads (a title, to vote).
Templates are compiled once per process; they live in the top-level `templates/`, which the wheel ships inside the package.
They lay out every blank line of a page themselves (see _layout.md.j2): nothing cleans a page up after.
"""

from __future__ import annotations

import functools
import operator
import re
from pathlib import Path
from typing import Any

from navmcp.clock import moment, now, zones
from navmcp.content.text import INVISIBLE

BODY_PART_CHARS = 6000  # one page shows at most this much of a body; the rest is at ?part=N
FULL_BODY_CHARS = 60_000  # ?full=1 shows a body whole up to this length (about 15k tokens)

_LINE_START = re.compile(r"^(\d*)([-+=>.)])")  # would open a list, rule or quote at a line start
_BLANK_RUNS = re.compile(r"\n{3,}")


# What makes one-line text need a code span: a character markdown reads anywhere in a line...
_MARKUP = frozenset("\\`*_[]<>#|~")
# ...or, at its start, what would open a list, a rule, a quote or a setext heading.
_LINE_OPENERS = frozenset("-+=>.)")
_LINE_START = re.compile(r"^(\d*)([-+=>.)])")


# Text-direction controls (embeddings, overrides, isolates): one left open in a title reverses how
# the rest of its line reads ("— note, closed" after it). Titles and names refuse them (fields,
# identity.check_name); one-line text drops them, for rows written before that.
DIRECTION_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# ...and characters that render as nothing, which titles and names drop as they are stored
# (text.normalized): dropped from one-line text too, for rows written before that.
_NO_DIRECTION = dict.fromkeys(map(ord, DIRECTION_CONTROLS + "".join(sorted(INVISIBLE))))


def _one_line(text: str) -> str:
    """`text` with every run of whitespace made one space, none at either end, and no control of
    text direction."""
    # Whitespace but the space, and format characters, are unprintable: most titles pass as they are.
    if text.isprintable() and "  " not in text and text.strip() == text:
        return text
    return " ".join(text.translate(_NO_DIRECTION).split())


# `inline` of the texts seen last: a page inlines dozens of titles and names, and the same ones come
# back on every page. Bounded in entries and in text length (cleared when full), so memory stays small.
_INLINED: dict[str, str] = {}
INLINED_ENTRIES, INLINED_CHARS = 2048, 256


def inline(value: Any) -> str:
    """User text on one line, as typed: as it is when markdown would read nothing in it, else in a
    code span, so it renders literally and can't start any structure."""
    if type(value) is str:
        known = _INLINED.get(value)
        if known is None:
            known = _inline(value)
            if len(value) <= INLINED_CHARS:
                if len(_INLINED) >= INLINED_ENTRIES:
                    _INLINED.clear()
                _INLINED[value] = known
        return known
    return _inline(str(value if value is not None else ""))


def quoted(value: Any) -> str:
    """User text inside a message (an action's reply, a refusal): on one line and inert, as on a
    page, in quotes unless it went into a code span. A reply is read as markdown too: a title must
    not become a link or an image there."""
    text = inline(value)
    return text if text[:1] == "`" else f"'{text}'"


def code_span(text: str) -> str:
    """`text` (one line) as a code span: delimited by a run of backticks longer than any inside it,
    padded with a space where it starts or ends with a backtick (CommonMark takes one off each side)."""
    longest = max(map(len, _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_BACKTICKS = re.compile(r"`+")
# A code span in a message: a run of backticks, the text, the same run (CommonMark's rule).
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Backslash escapes in messages stored before user text went into code spans (the audit's outcomes).
_ESCAPED = re.compile(r"\\([\\`*_\[\]<>#|~+=.)-])")


def spans(message: str) -> list[tuple[str, bool]]:
    """A message (markdown: our code spans, user text put inert by `inline`) cut into pieces of plain
    text and code spans: (text, is_code), the spans' text as CommonMark reads it."""
    pieces, pos = [], 0
    for span in _SPAN.finditer(message):
        if span.start() > pos:
            pieces.append((message[pos:span.start()], False))
        text = span.group(2)
        if text[:1] == " " and text[-1:] == " " and text.strip(" "):
            text = text[1:-1]
        pieces.append((text, True))
        pos = span.end()
    if pos < len(message):
        pieces.append((message[pos:], False))
    return pieces


def plain(message: str) -> str:
    """A message as plain text, for a surface that escapes in its own way (HTML, an audit row):
    code spans as their text, and the backslash escapes of older messages taken out."""
    if "`" in message:
        message = "".join(text for text, _ in spans(message))
    return _ESCAPED.sub(r"\1", message) if "\\" in message else message


def _inline(text: str) -> str:
    # Set operations rather than regexes: this filter runs dozens of times per page, and most titles
    # and names have nothing markdown reads and start with a letter.
    text = _one_line(text)
    first = text[:1]
    if (not first or _MARKUP.isdisjoint(text) and ";" not in text.partition("&")[2]  # &amp; an entity
            and (first.isalpha() or first not in _LINE_OPENERS and not first.isdigit() or not _LINE_START.match(text))):
        return text
    return code_span(text)


def cell(value: Any) -> str:
    """`inline` for a table cell, where GFM splits cells at a `|` even inside a code span unless it
    is escaped (and then shows it as `|`)."""
    text = inline(value)
    return text.replace("|", "\\|") if "|" in text else text


def filesize(size: int) -> str:
    """A file's size for people: bytes, KiB or MiB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def fenced(value: Any, info: str = "text") -> str:
    """User text as a fenced block whose fence no line inside can close. Runs of blank lines in it
    are cut to one, as everywhere on a page."""
    text = str(value if value is not None else "").replace("\r\n", "\n").replace("\r", "\n")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0) if "```" in text else 0
    fence = "`" * max(3, longest + 1)
    block = f"{fence}{info}\n{text}\n{fence}"
    return _BLANK_RUNS.sub("\n\n", block) if "\n\n\n" in block else block


def crumbs(breadcrumb: list[tuple[str, str]]) -> str:
    """The header's breadcrumb: `[label](href)` links joined by ' › '."""
    return " › ".join(f"[{inline(label)}]({href})" for label, href in breadcrumb)


def page_links(pager: dict[str, Any] | None) -> str:
    """A paged list's place and links ("Page 2 of 5 (93 in all). Previous: `…`. Next page: `…`.") as a
    paragraph, or nothing when the list fits on one page; for a page number past the end of a list
    that isn't empty, where the list ends instead (the page shows no rows, and no "empty" text).
    A filter, not a macro: nearly every page has a pager, and a macro call costs more than this text.
    The URLs are made by the page."""
    if not pager:
        return ""
    in_all = f"{pager['total']}{' or more' if pager.get('capped') else ''} in all"  # a count that stopped
    if pager.get("past"):  # an empty page, but not an empty list: say where the list ends
        pages = pager["pages"]
        return (f"Page {pager['number']} is past the end: there {'is 1 page' if pages == 1 else f'are {pages} pages'}"
                f" ({in_all}). Last page: `{pager['past']}`.\n\n")
    if pager["pages"] <= 1:
        return ""
    text = f"Page {pager['number']} of {pager['pages']}{' or more' if pager.get('capped') else ''} ({in_all})."
    if pager["prev"]:
        text += f" Previous: `{pager['prev']}`."
    if pager["next"]:
        text += f" Next page: `{pager['next']}`."
    return text + "\n\n"


def utc(value: str) -> str:
    """A stored time (ISO text in UTC) as every page shows one: "2026-11-25 06:32 UTC"."""
    return f"{value[:10]} {value[11:16]} UTC"


# How far off a deadline is, in the largest unit that reads naturally: (unit, its seconds, below what).
_DUE_UNITS = (("minute", 60, 3600), ("hour", 3600, 2 * 86400), ("day", 86400, 60 * 86400),
              ("month", 30 * 86400, 730 * 86400), ("year", 365 * 86400, float("inf")))


def in_zone(value: str, zone: str | None = None) -> str:
    """A stored time as shown to someone: in their zone (`navmcp.clock.zones`) as ISO 8601 with its offset
    and the zone's name, "2026-12-04T18:00+01:00 Europe/Paris"; with none set, `utc`."""
    if not zone:
        return utc(value)
    try:
        return zones.local_iso(value, zone)
    except ValueError:
        return utc(value)


def due(value: str, at: str | None = None, zone: str | None = None) -> str:
    """A deadline as an item page shows it: its time (`in_zone`) and how far off it is, in plain words:
    "2026-12-04 17:00 UTC (in 6 days)", "… (2 hours ago)"."""
    try:
        seconds = (moment(value) - moment(at or now())).total_seconds()
    except ValueError:
        return in_zone(value, zone)
    far = abs(seconds)
    unit, size = next((u, s) for u, s, below in _DUE_UNITS if far < below)
    n = max(1, int(far // size))
    words = f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{in_zone(value, zone)} ({'in ' + words if seconds >= 0 else words + ' ago'})"


def body_cuts(text: str) -> list[int]:
    """Where a long body is cut into parts of at most BODY_PART_CHARS: after a line's end, else after
    a sentence's, else between words, in the second half of each part's room; never mid-word unless
    a word fills half a part. The first offset is 0 and the last the text's length."""
    cuts, start, end = [0], 0, len(text)
    while end - start > BODY_PART_CHARS:
        room = start + BODY_PART_CHARS
        half = start + BODY_PART_CHARS // 2
        cut = text.rfind("\n", half, room) + 1
        if not cut:
            m = None
            for m in _SENTENCE_END.finditer(text, half, room):  # noqa: B007 — the last match is wanted
                pass
            cut = m.end() if m else text.rfind(" ", half, room) + 1 or room
        cuts.append(cut)
        start = cut
    cuts.append(end)
    return cuts


_SENTENCE_END = re.compile(r"[.!?…][\"')\]]* ")


def body_part(text: str, part: int) -> tuple[str, int]:
    """The `part`-th part (1-based) of a long body (`body_cuts`), and how many parts there are. A
    part cut after a line's end is given without that last newline: the parts, joined by the
    newlines they end with, are the text."""
    cuts = body_cuts(text)
    parts = len(cuts) - 1
    part = min(max(part, 1), parts)
    piece = text[cuts[part - 1]:cuts[part]]
    return (piece[:-1] if part < parts and piece.endswith("\n") else piece), parts


def excerpt(text: str, length: int = 160) -> str:
    flat = _one_line(text)
    return flat if len(flat) <= length else flat[: length - 1].rstrip() + "…"


def templates_dir() -> Path:
    """The templates: markdown pages at the top, `html/` for people, `static/` for their assets. The wheel
    ships the checkout's top-level `templates/` inside the package (`navmcp/templates`, pyproject.toml)."""
    here = Path(__file__).resolve().parent
    shipped = here / "templates"
    return shipped if shipped.is_dir() else here.parent / "templates"


# A parameter's description this long (the deadline's phrases) is printed once per page; a later
# parameter with the same one points back to it.
LONG_DESCRIPTION = 120


# Pages offer few distinct sets of actions, and an action's lines are static per process
# (`navmcp.workspace.action_info`): each set's listing is made once.
_LISTED: dict[tuple[tuple[str, str], ...], str] = {}


def listings(actions: list[Any]) -> str:
    """The lines under '## Available actions' (the layout's filter): per action its name and
    description, then its parameters on one line (`navmcp.page.ActionInfo.param_lines`)."""
    # By name and description: one name may be two actions on two pages (restore_item on an item's
    # page and, with its `item` parameter, on the Deleted list).
    key = tuple([(a.name, a.description) for a in actions])
    text = _LISTED.get(key)
    if text is None:
        text = _listing(actions)
        if len(_LISTED) < 4096:
            _LISTED[key] = text
    return text


def _listing(actions: list[Any]) -> str:
    said: dict[str, str] = {}  # a long description -> where on this page it was printed
    out = []
    for a in actions:
        params = []
        for name, head, description in a.param_lines:
            if len(description) >= LONG_DESCRIPTION:
                if description in said:
                    description = f"as {said[description]} above"
                else:
                    said[description] = f"`{name}` of `{a.name}`"
            params.append(f"{head} {description}" if description else head)
        out.append(f"- `{a.name}` — {a.description}" + ("\n  " + " · ".join(params) if params else ""))
    return "\n".join(out)


@functools.cache
def environment():
    import jinja2
    from jinja2.compiler import CodeGenerator, optimizeconst
    from jinja2.nodes import Slice

    class _CodeGenerator(CodeGenerator):
        # `row["key"]` compiles to a plain subscript, as Jinja compiles a slice, rather than to a
        # call of `environment.getitem` (an attribute lookup and a call per key, hundreds a page).
        @optimizeconst
        def visit_Getitem(self, node, frame) -> None:
            if isinstance(node.arg, Slice):
                super().visit_Getitem(node, frame)
                return
            self.visit(node.node, frame)
            self.write("[")
            self.visit(node.arg, frame)
            self.write("]")

    class _Environment(jinja2.Environment):
        # Pages hand templates dicts, which templates read as `row["key"]`: a subscript, where Jinja's
        # getitem (and `row.key`, through getattr) is Python that tries an attribute too. A missing
        # key raises, as StrictUndefined would have on use (constant folding calls `getitem`).
        code_generator_class = _CodeGenerator
        getitem = staticmethod(operator.getitem)  # type: ignore[assignment]

    env = _Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        auto_reload=False,  # templates are compiled once per process, never stat()ed again
        cache_size=-1,  # a plain dict: the few templates all stay, looked up without the LRU's lock
        autoescape=False,  # markdown: safety comes from the filters above, applied in the templates
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["inline"] = inline
    env.filters["fenced"] = fenced
    env.filters["cell"] = cell
    env.filters["excerpt"] = excerpt
    env.filters["crumbs"] = crumbs
    env.filters["page_links"] = page_links
    env.filters["utc"] = utc
    env.filters["listings"] = listings
    env.filters["due"] = due  # a deadline: its time and how far off it is
    env.filters["filesize"] = filesize
    env.filters["in_zone"] = in_zone  # a time in the reader's zone (utc when none is set)
    env.filters["plain"] = plain  # a stored message (the audit's outcomes) is escaped once, as a whole
    return env


def render_markdown(template: str, data: dict[str, Any]) -> str:
    # Template.render, less what it costs beyond the templates' own code: a copy of `data` merged
    # with Jinja's globals (range, dict...; no template uses them), which every {% import %} then
    # walks again. The context reads `data` as it is. No pass over the page follows either: the
    # templates lay out every blank line themselves.
    page = environment().get_template(template)
    context = page.environment.context_class(page.environment, data, page.name, page.blocks)
    try:
        return "".join(page.root_render_func(context))
    except Exception:
        page.environment.handle_exception()  # errors point at template lines, as with render()
        raise  # (handle_exception raises)
