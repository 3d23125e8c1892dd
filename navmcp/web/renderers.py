"""The renderers table: every rendition of a page, its media type, its template and its renderer.

One page-data object (`navmcp.page.Page`), three renditions: the markdown agents read (the same
text `navigate` returns), the HTML page for people (`navmcp.web.html`: the same context, plus
forms built from the actions' schemas), and JSON, the page's data itself. A page kind's row in the
page table names its templates; each entry here says how a rendition's is named from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from navmcp.page import MARKDOWN_TEMPLATE, Page
from navmcp.web import html


@dataclass(frozen=True)
class Renderer:
    media_type: str
    template: str  # a page kind's template in this rendition, from its templates' name (`{}`); "" for none
    render: Callable[..., str]  # (page, **what the rendition's caller adds) → the page as text


def _markdown(page: Page, **extra: Any) -> str:
    return page.render(**extra) if extra else page.markdown


def _json(page: Page, **_: Any) -> str:
    return json.dumps(page.as_json(), ensure_ascii=False)


RENDERERS: dict[str, Renderer] = {
    "markdown": Renderer("text/markdown; charset=utf-8", MARKDOWN_TEMPLATE, _markdown),
    "html": Renderer("text/html; charset=utf-8", html.PAGE_TEMPLATE, html.render_page),  # in templates/html/
    "json": Renderer("application/json", "", _json),
}


def render(rendition: str, page: Page, **extra: Any) -> str:
    """`page` in `rendition` (a key of RENDERERS); `extra`: what that rendition's caller adds (the
    HTML page's CSRF token, app shell and refused form)."""
    return RENDERERS[rendition].render(page, **extra)
