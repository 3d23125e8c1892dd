"""One page, built once: the page-data object every rendition of a page is made from.

A page kind's view (`navmcp.pages`) builds the page's data once; `Page` holds it with what every
page has (URL, title, breadcrumb, the user, the actions valid there), and gives it in the forms
the renditions read (`navmcp.web.renderers` is the table of them):

- `context()` — what its templates read, the markdown one (`markdown`, what `navigate` returns) and
  the HTML one for people (`navmcp.web.html`) alike;
- `as_json()` — the page's data itself (`.json`): its facts, user text as written;
- `structured()` — what a `navigate` result carries beside the markdown: its URL, title, actions.

A page kind's row in the page table names its templates (`PageSpec.template`: its name unless
several kinds share one), and each rendition adds its suffix (`MARKDOWN_TEMPLATE` here).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from navmcp.mcp.codec import Preencoded, encode
from navmcp.render import plain, render_markdown
from navmcp.store import Row

MARKDOWN_TEMPLATE = "{}.md.j2"  # a page kind's markdown template, from its templates' name


@dataclass
class ActionInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    params: list[dict[str, Any]]

    def public(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @functools.cached_property
    def json(self) -> bytes:
        """`public()` as JSON, encoded once per process (schemas are most of a page's structured content)."""
        return encode(self.public())

    @functools.cached_property
    def param_lines(self) -> tuple[tuple[str, str, str], ...]:
        """Each parameter as the listing shows it: its name, its head (name, type, "optional" unless
        required, allowed values) and what it is. Static per action, so made once per process."""
        lines = []
        for p in self.params:
            head = f"`{p['name']}` ({p['type']}{'' if p['required'] else ', optional'}"
            if p["allowed"]:
                head += ", one of: " + ", ".join(str(v) for v in p["allowed"])
            lines.append((p["name"], head + ")", p["description"]))
        return tuple(lines)


@dataclass
class Page:
    url: str
    name: str  # the page kind: its row in the page table
    title: str
    breadcrumb: list[tuple[str, str]]
    data: dict[str, Any]  # what the kind's view built: the facts every rendition shows
    actions: list[ActionInfo]
    template: str  # its templates' name, without a rendition's suffix
    user: Row
    _markdown: str | None = field(default=None, repr=False)

    def context(self, **extra: Any) -> dict[str, Any]:
        """What the page's templates read, in every rendition: its data and what every page has;
        `extra` adds a rendition's own (the HTML page's forms, `navmcp get`'s shell=True)."""
        return {**self.data, "url": self.url, "title": self.title, "breadcrumb": self.breadcrumb,
                "user": self.user, "actions": self.actions, "page_name": self.name, **extra}

    @property
    def markdown(self) -> str:
        if self._markdown is None:
            self._markdown = self.render()
        return self._markdown

    def render(self, **extra: Any) -> str:
        """The markdown page, with `extra` values for its templates (`navmcp get` passes shell=True)."""
        return render_markdown(MARKDOWN_TEMPLATE.format(self.template), self.context(**extra))

    def structured(self) -> dict[str, Any]:
        """What a `navigate` result carries beside the markdown: the page's handle and its actions
        (not its data, which the markdown already gives an agent)."""
        return {"url": self.url, "title": self.title, "actions": [a.public() for a in self.actions]}

    def structured_preencoded(self) -> Preencoded:
        """`structured()`, carrying its JSON made from the actions' once-encoded parts."""
        value = Preencoded(self.structured())
        value.json = (b'{"url":' + encode(self.url) + b',"title":' + encode(self.title) + b',"actions":['
                      + b",".join(a.json for a in self.actions) + b"]}")
        return value

    def as_json(self) -> dict[str, Any]:
        """The JSON rendition's value: `structured()`, the page kind, the breadcrumb and the page's
        data (`public_data`)."""
        return {"url": self.url, "title": self.title, "page": self.name,
                "breadcrumb": [{"label": label, "url": href} for label, href in self.breadcrumb],
                "data": public_data(self.data), "actions": [a.public() for a in self.actions]}


# What the JSON leaves out of a page's data, at any depth: the store's ids of people and studios (a
# page names them by their handles), its order of rows (the pager's links carry positions) and the
# hosted store's search index of an item (`fts`, a column of its row there).
LEFT_OUT = frozenset({"created_by", "user_id", "studio_id", "seq", "fts"})
# Rows whose own `id` is the store's id of a studio or a person (an item's id is in its URL: kept).
ID_LEFT_OUT = frozenset({"studio", "studios", "user", "users", "member", "members", "person", "people", "voters",
                         "participants", "author"})
# Texts kept as a page shows them, escaped for markdown (the audit's stored outcomes): plain in JSON.
AS_PLAIN = frozenset({"outcome"})


def public_data(data: dict[str, Any]) -> dict[str, Any]:
    """A page's data as JSON values: rows and dicts as objects, tuples as lists, user text as it
    was written (the markdown escapes it in its templates, never in the data). The title and the
    breadcrumb are left to the page's own keys."""
    return {k: _public(k, v) for k, v in data.items() if k not in LEFT_OUT and k not in ("title", "breadcrumb")}


def _public(key: str, value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _public(k, v) for k, v in value.items()
                if k not in LEFT_OUT and not (k == "id" and key in ID_LEFT_OUT)}
    if isinstance(value, (list, tuple)):
        return [_public(key, v) for v in value]
    if key in AS_PLAIN and isinstance(value, str):
        return plain(value)
    return value
