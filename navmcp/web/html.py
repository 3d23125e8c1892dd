"""The human's rendition: HTML pages from the same page data as the markdown, and actions as forms.

`render_page` is the `html` entry of the renderers table (`navmcp.web.renderers`): the page's
template (`html/{template}.html.j2`) reads the same context as its markdown one, plus the forms
(`navmcp.web.forms`) and the words for people (`navmcp.web.words`).

Templates live in `templates/html/` with autoescape on: every value is escaped unless a template
says otherwise, and none of them does for user text.
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

from navmcp.page import Page
from navmcp.render import excerpt, filesize, plain, templates_dir, utc
from navmcp.web import uploads
from navmcp.web.assets import asset_url
from navmcp.web.forms import form_fields, mark_invalid, pick_people
from navmcp.web.markdown import NO_HOSTS, NO_MENTIONS, Mentions, OwnHosts, to_html
from navmcp.web.words import (
    DESTRUCTIVE,
    action_label,
    ago,
    audit_line,
    help_html,
    hue,
    initials,
    local_time,
    marked,
    message_html,
    people_message,
    unmarked,
)

PAGE_TEMPLATE = "{}.html.j2"  # a page kind's HTML template (in templates/html/), from its templates' name
LAYOUT, EMBED_LAYOUT = "_layout.html.j2", "_embed.html.j2"  # what a page template extends: the web app's, the chat view's
# This instance's hosts while a page renders (`render_page`): the markdown filter links their full
# URLs inside the app. A context variable, as the filter runs inside macros that see no page context.
_OWN_HOSTS: ContextVar[OwnHosts] = ContextVar("own_hosts", default=NO_HOSTS)
_MENTIONS: ContextVar[Mentions] = ContextVar("mentions", default=NO_MENTIONS)  # the page's (`render_page`)


@functools.cache
def environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "html")),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["excerpt"] = excerpt
    env.filters["when"] = lambda v, n=16: (v or "")[:n].replace("T", " ")  # the audit log's, with seconds
    env.filters["utc"] = utc
    env.filters["plain"] = plain
    env.filters["filesize"] = filesize
    env.filters["message"] = message_html
    env.filters["md"] = lambda text: to_html(text, _OWN_HOSTS.get(), _MENTIONS.get())
    env.tests["headed"] = lambda html: "<h3>" in html  # user text with headings (placed from <h3> down)
    env.filters["ago"] = ago
    env.filters["local_time"] = local_time
    env.filters["initials"] = initials
    env.filters["hue"] = hue
    env.filters["marked"] = marked
    env.filters["unmarked"] = unmarked
    env.globals["asset"] = asset_url
    env.globals["audit_line"] = audit_line
    return env


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def render_page(page: Page, *, csrf: str, alternates: dict[str, str], flash: str | None = None,
                error: dict[str, Any] | None = None, submitted: dict[str, list[str]] | None = None,
                shell: dict[str, Any] | None = None, people: list[dict[str, Any]] | None = None,
                own_hosts: OwnHosts = NO_HOSTS, layout: str = LAYOUT,
                browser_only: frozenset[str] = frozenset()) -> str:
    """`submitted`: the form of the refused action (`error["action"]`), whose inputs are filled
    from it again, so what the user typed is not lost. `shell`: the app shell's facts (`shell_facts`).
    `own_hosts`: this instance's hosts, whose full URLs in people's text link inside the app.
    `layout`: the web app's (`LAYOUT`), or the chat view's fragment (`EMBED_LAYOUT`, navmcp.mcp.views),
    where the actions in `browser_only` are links to the page in navmcp instead of forms."""
    refused = (error or {}).get("action")
    forms = {}
    for a in page.actions:
        fields = uploads.form_fields(a.name, form_fields(a, page, submitted if a.name == refused else None))
        if a.name == refused:
            mark_invalid(fields, (error or {}).get("fields", []), submitted or {})
        pick_people(a.name, fields, page, people or [])
        forms[a.name] = {"action": a, "fields": fields, "label": action_label(a.name),
                         "confirm": DESTRUCTIVE.get(a.name), "refused": a.name == refused,
                         "refused_message": ""}
    if error is not None:  # the refusal goes beside its form when that form is on the page
        error = {**error, "form": refused in forms,
                 "message": people_message(error["message"], refused, forms, error.get("fields", []))}
        if refused in forms:
            forms[refused]["refused_message"] = error["message"]
    # the help pages' text is ours, written once in their markdown
    extra = {"help_html": help_html(page.markdown)} if page.template == "help" else {}
    hosts = _OWN_HOSTS.set(own_hosts)
    named = page.data.get("mentions")
    mentioned = _MENTIONS.set((page.data["studio"]["handle"], frozenset(named)) if named else NO_MENTIONS)
    try:
        return render(PAGE_TEMPLATE.format(page.template), page.context(
            **extra, forms=forms, csrf=csrf, alternates=alternates, flash=flash, error=error,
            action_base=page.url.split("?", 1)[0].rstrip("/") or "", shell=shell or NO_SHELL, layout=layout,
            browser_only=browser_only))
    finally:
        _OWN_HOSTS.reset(hosts)
        _MENTIONS.reset(mentioned)


NO_SHELL: dict[str, Any] = {"studios": [], "current": None, "search": None, "search_scope": ""}


def shell_facts(page: Page, home: Page | None) -> dict[str, Any]:
    """What the app shell shows around a page: your studios, the one you are in, what awaits you
    (home's counts: "100+" past its cap) and where the search box searches."""
    from navmcp.errors import NotFound
    from navmcp.pages import route

    data = home.data if home is not None else {}
    studios = data.get("studios", [])
    current = (page.data.get("studio") or {}).get("handle")
    search: str | None
    try:
        route("/search")
        search, scope = "/search", "everything"
    except NotFound:  # no search across studios: the studio you are in, else your first one
        handle = current or (studios[0]["handle"] if studios else None)
        search = f"/studios/{handle}/search" if handle else None
        scope = next((s["name"] for s in studios if s["handle"] == handle), "")
    return {"studios": studios, "current": current, "search": search, "search_scope": scope,
            **({"awaiting": data["awaiting_count"] + data["near_count"], "awaiting_more": data["counts_capped"],
                "unread": data.get("unread", 0), "unread_more": data.get("unread_capped", False),
                "approvals": data.get("approvals_count", 0)}
               if home is not None else {})}
