"""Helpers shared by the page, action and walkthrough tests (plain functions, no fixtures)."""

from __future__ import annotations

import re
from typing import Any

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def outside_fences(markdown: str) -> str:
    """The markdown with every fenced code block removed (CommonMark rules for fence closing)."""
    kept, fence = [], None
    for line in markdown.split("\n"):  # CommonMark line ends only (not \u2028, \x85, ...)
        if fence is None:
            m = _FENCE_OPEN.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                continue
            kept.append(line)
        else:
            stripped = line.strip()
            if (len(line) - len(line.lstrip(" ")) <= 3 and stripped and set(stripped) == {fence[0]}
                    and len(stripped) >= len(fence)):
                fence = None
    assert fence is None, "a fence was left open: the rest of the page would be swallowed"
    return "\n".join(kept)


def listed_actions(markdown: str) -> list[str]:
    """Action names under `## Available actions`, read as a markdown reader would (fences skipped)."""
    text = outside_fences(markdown)
    headings = [m.start() for m in re.finditer(r"^## Available actions\s*$", text, re.M)]
    assert len(headings) == 1, f"expected exactly one actions heading, found {len(headings)}"
    section = text[headings[0]:]
    nxt = re.search(r"^#{1,2} ", section[3:], re.M)
    if nxt:
        section = section[: nxt.start() + 3]
    return re.findall(r"^- `([a-z_]+)`", section, re.M)


def header_lines(markdown: str) -> tuple[str, str]:
    lines = markdown.splitlines()
    return lines[0], next(line for line in lines[1:] if line.startswith("URL:"))


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


def role_listed(markdown: str, handle: str) -> str | None:
    """The role under which a members page lists @handle ("admin" or "member"), or None."""
    role = None
    for line in markdown.splitlines():
        if line in ("Admins:", "Members:"):
            role = line[:-2].lower()
        elif line.startswith(f"| @{handle} |"):
            return role
    return None
