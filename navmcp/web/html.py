"""The human's rendition: HTML pages from the same page data as the markdown, and actions as forms.

`render_page` is the `html` entry of the renderers table (`navmcp.web.renderers`): the page's
template (`html/{template}.html.j2`) reads the same context as its markdown one, plus the forms.

Templates live in `navmcp/templates/html/` with autoescape on: every value is
escaped unless a template says otherwise, and none of them does for user text. An action's form is
generated from its parameter JSON schema (`form_fields`), and a submitted form is turned back into
the action's params (`params_from_form`) with the same schema, so a new action needs no HTML work:
strings become text inputs or text areas, integers number inputs, booleans checkboxes, enums
selects, lists of strings one-per-line text areas (chips, with app.js), and a vote's ballots one row per option of the
decision (accept / prefer checkboxes).
"""

from __future__ import annotations

import functools
import hashlib
import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

from navmcp import actions as action_table, zones
from navmcp.errors import ActionFailed, FieldError
from navmcp.page import ActionInfo, Page
from navmcp.render import excerpt, filesize, plain, spans, templates_dir, utc
from navmcp.web import uploads
from navmcp.web.markdown import NO_HOSTS, NO_MENTIONS, Mentions, OwnHosts, to_html

PAGE_TEMPLATE = "{}.html.j2"  # a page kind's HTML template (in templates/html/), from its templates' name
LAYOUT, EMBED_LAYOUT = "_layout.html.j2", "_embed.html.j2"  # what a page template extends: the web app's, the chat view's
# This instance's hosts while a page renders (`render_page`): the markdown filter links their full
# URLs inside the app. A context variable, as the filter runs inside macros that see no page context.
_OWN_HOSTS: ContextVar[OwnHosts] = ContextVar("own_hosts", default=NO_HOSTS)
_MENTIONS: ContextVar[Mentions] = ContextVar("mentions", default=NO_MENTIONS)  # the page's (`render_page`)
LONG_TEXT = 500  # strings allowed to be longer than this get a text area
# Deadlines take a bare date (the end of that day, UTC): what a date input sends. Its hint for people.
# A second input beside the date picker takes the day in words ("next friday": navmcp.dates, read
# by the params model itself); the form sends both under one name and the words win (`_date_and_words`).
DATE_FIELDS = {"deadline": "Pick a date, or write it in words: tomorrow, next friday, in 3 days, end of month. "
                           "It ends at the end of that day (UTC). Leave it empty for no deadline."}
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date_and_words(values: list[str]) -> tuple[str, str]:
    """A date field's submitted values as (the picked date, the words typed beside it)."""
    picked = words = ""
    for value in values:
        value = value.strip()
        if _ISO_DAY.fullmatch(value):
            picked = value
        elif value:
            words = value
    return picked, words


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


# --- static assets: fingerprinted, cached for a year ------------------------------------------

ASSET_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@functools.cache
def _assets() -> dict[str, tuple[str, bytes, str]]:
    """name ('app.css') → (its fingerprinted URL, its bytes, its content type), read once."""
    found = {}
    for path in sorted((templates_dir() / "static").iterdir()):
        if path.suffix in ASSET_TYPES:
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()[:12]
            found[path.name] = (f"/static/{path.stem}.{digest}{path.suffix}", data, ASSET_TYPES[path.suffix])
    return found


def asset_url(name: str) -> str:
    return _assets()[name][0]


def asset(path: str) -> tuple[bytes, str] | None:
    """The bytes and type of the asset at a fingerprinted `path`; None for any other path (an old
    fingerprint too: what a year-long cache holds must never change under its URL)."""
    for url, data, kind in _assets().values():
        if url == path:
            return data, kind
    return None


# --- small words for people -------------------------------------------------------------------


def local_time(value: str, zone: str | None = None) -> str:
    """A stored UTC time as a person reads it: in their zone (navmcp.zones), "Fri 4 Dec 2026, 18:00
    Europe/Paris"; with none set, in UTC, which app.js turns into the browser's zone."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zones.zone(zone))
    except ValueError:
        return utc(value)
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} {zone or 'UTC'}"


def ago(value: str | None, now: datetime | None = None) -> str:
    """A stored UTC time relative to now, as people say it: "just now", "5 min ago", "in 3 days",
    "12 Nov 2025" when far. The exact time goes beside it, in the <time> element's title."""
    if not value:
        return ""
    try:
        then = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return utc(value)
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = ((now or datetime.now(UTC)) - then).total_seconds()
    future, span = seconds < 0, abs(seconds)
    if span < 60:
        return "just now" if not future else "in a minute"
    for limit, unit, size in ((3600, "min", 60), (86400, "h", 3600), (86400 * 14, "day", 86400)):
        if span < limit:
            n = int(span // size)
            word = f"{n} {unit}{'s' if unit == 'day' and n != 1 else ''}"
            return f"in {word}" if future else f"{word} ago"
    return f"{then.day} {then.strftime('%b %Y')}"


def marked(text: str, query: str) -> Markup:
    """`text` escaped, with the words of a search `query` in it marked (<mark>), whole or as a prefix."""
    words = [w for w in re.findall(r"\w+", query or "") if len(w) > 1][:10]
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\w*", re.IGNORECASE)
    out, pos = [], 0
    for m in pattern.finditer(text):
        out += [escape(text[pos:m.start()]), Markup("<mark>%s</mark>") % m.group(0)]
        pos = m.end()
    out.append(escape(text[pos:]))
    return Markup("").join(out)


# A link (or image) as its text: whole, cut at the snippet's end, or cut at its start ("…text](url)").
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\](?:\([^)\s]*\)?|$)|\]\([^)\s]*\)|!?\[(?=[^\]\n]*$)")
_MD_MARKS = re.compile(r"\*\*|__|~~|`+|(?:(?<=\s)|^)(?:#{1,6}|[-*+]|>)\s"
                       r"|(?<![\w*_])[*_](?=[^\s*_])|(?<=[^\s*_])[*_](?![\w*_])"  # *slanted*, _slanted_
                       r"|\|?(?:\s*:?-{3,}:?\s*\|)+(?:\s*:?-{3,}:?)?|\s\|(?=\s)|^\|\s|\s\|$")  # a table's rules and bars


def unmarked(text: str) -> str:
    """A snippet of markdown as plain words for a list of results: links as their text (also when
    the snippet cuts them), and emphasis, code ticks, heading and list marks and table bars taken
    off (the item's page renders the markdown)."""
    words = _MD_LINK.sub(lambda m: m.group(1) or "", text)
    return " ".join(_MD_MARKS.sub(lambda m: " " if m.group(0)[-1:].isspace() or m.group(0)[:1].isspace() else "", words).split())


def initials(name: str | None, handle: str = "") -> str:
    """Up to two letters for an avatar: a name's first two words, else the handle's start."""
    words = [w for w in re.split(r"[\s._-]+", (name or "").strip()) if w and w[0].isalnum()]
    if len(words) >= 2:
        return (words[0][0] + words[1][0]).upper()
    source = words[0] if words else handle.lstrip("@")
    return source[:2].upper() or "?"


def hue(handle: str) -> str:
    """An avatar's colour class, the same for a handle on every page (white text passes AA on each)."""
    return f"hue{int(hashlib.md5(handle.encode('utf-8', 'surrogatepass')).hexdigest()[:4], 16) % 8}"


# The people's words for each action: its button, and for the destructive ones what happens.
# Agents read the action table's names and descriptions; these are only for the web page.
ACTION_LABELS = {
    "create_studio": "New studio", "add_member": "Add a person", "remove_member": "Remove a person",
    "leave_studio": "Leave this studio", "delete_studio": "Delete this studio",
    "create_note": "New note", "create_decision": "New decision",
    "create_commitment": "New commitment", "add_comment": "Comment", "confirm_read": "Mark as read",
    "edit_note": "Edit", "edit_decision": "Edit", "edit_commitment": "Edit", "edit_comment": "Edit a comment of yours",
    "delete_comment": "Delete a comment", "extend_decision": "Extend the deadline", "reopen_decision": "Reopen",
    "set_outcome": "Write the outcome",
    "pin": "Pin to the studio", "unpin": "Unpin", "add_option": "Add an option",
    "vote": "Save my vote", "close_decision": "Close voting", "join_commitment": "Join",
    "leave_commitment": "Leave", "close_commitment": "Close this commitment",
    "make_findable": "Let studio admins add me", "make_unfindable": "Stop studio admins adding me",
    # decision kinds (navmcp/kinds)
    "consent": "I consent", "object": "I object", "amend": "Amend the proposal", "allocate": "Save my dots",
    "add_time": "Add a time", "answer": "Save my answers", "close_poll": "Close the poll",
}
DESTRUCTIVE = {
    "leave_studio": "You will no longer see this studio, its notes, decisions or commitments. "
                    "To come back, one of its admins has to add you again.",
    "delete_studio": "The studio and everything in it (notes, decisions, commitments, comments) are deleted for "
                     "good, for everyone, and its short name is free again.",
    "remove_member": "They will no longer see this studio or anything in it. What they wrote stays.",
    "close_decision": "Voting ends for everyone and the result is fixed. Nobody can vote or add options after this.",
    "close_commitment": "Nobody can join or leave after this.",
    "close_poll": "Answering ends for everyone and the time is fixed; with a commitment, those who said yes are joined to it.",
    "delete_comment": "Its text is gone for good, its history too; replies to it stay, under “[deleted]”.",
}


# The audit log for people: what each action did, in words ("@ana voted on a decision").
AUDIT_DONE = {
    "create_studio": "created the studio", "add_member": "added or changed a member", "remove_member": "removed a member",
    "leave_studio": "left the studio", "delete_studio": "deleted a studio", "create_note": "wrote a note",
    "create_decision": "asked for a decision", "create_commitment": "proposed a commitment",
    "add_comment": "commented", "confirm_read": "marked as read", "edit_comment": "edited a comment",
    "delete_comment": "deleted a comment", "extend_decision": "extended the deadline", "reopen_decision": "reopened",
    "set_outcome": "wrote the outcome", "pin": "pinned", "unpin": "unpinned", "add_option": "added an option",
    "vote": "voted", "close_decision": "closed voting", "join_commitment": "joined", "leave_commitment": "left",
    "close_commitment": "closed", "create_invitation": "made an invitation", "revoke_invitation": "revoked an invitation",
    "consent": "consented", "object": "objected", "amend": "amended the proposal", "allocate": "gave dots",
    "add_time": "added a time", "answer": "answered", "close_poll": "closed the poll",
    "attach": "attached a file", "remove_attachment": "removed a file", "export_studio": "exported the studio",
}
_AUDIT_WHERE = re.compile(r"^/studios/[^/]+(?:/(?:(?P<kind>[ndc])/[^/?]+|(?P<page>members|audit)))?/?$")
_AUDIT_KINDS = {"n": "a note", "d": "a decision", "c": "a commitment"}
_AUDIT_BARE = {"join_commitment", "leave_commitment", "close_commitment", "pin", "unpin"}  # "joined a commitment"
_CLIENTS = {"web": "in the web app", "navmcp-cli": "from the command line", "http": "through the HTTP API"}


def audit_line(entry: dict[str, Any]) -> dict[str, str]:
    """One audit entry in people's words: what was done (`done`), where (`where`, linked to `url`),
    through which client (`via`), and why it was refused (`refused`, "" when it was done). Timings
    and parameter lists are left to the page's JSON."""
    action, url = entry["action"], entry["url"].split("?", 1)[0]
    if action.startswith("edit_"):
        done = "edited"
    else:
        done = AUDIT_DONE.get(action) or f"used “{action_label(action)}”"
    m = _AUDIT_WHERE.match(url)
    on = "" if action in _AUDIT_BARE else "on "
    where = (on + _AUDIT_KINDS[m.group("kind")] if m.group("kind") else
             "on the members page" if m.group("page") == "members" else "in the studio") if m else f"at {url}"
    client = entry["client"]
    outcome = entry["outcome"] or ""
    return {"done": done, "where": where, "url": url,
            "via": _CLIENTS.get(client) or f"through {client}",
            "refused": "" if outcome == "ok" else _refusal_words(action, outcome.split(": ", 1)[-1])}


def _refusal_words(action: str, message: str) -> str:
    """A refusal the audit kept, as a refused form shows it: its fields by their labels."""
    titles = _field_titles(action)
    forms = {action: {"fields": [{"name": n, "label": t} for n, t in titles.items()]}}
    return people_message(message, action, forms, [{"field": n} for n in titles])


def action_label(name: str) -> str:
    return ACTION_LABELS.get(name) or name.replace("_", " ").capitalize()


@functools.cache
def _field_titles(name: str) -> dict[str, str]:
    """The titles the params model gives its fields (`Field(title=...)`, else pydantic's own from
    the field's name): the page's labels. The agents' schema leaves titles out."""
    for by_name in action_table.BY_PAGE.values():
        if name in by_name:
            schema = by_name[name].params.model_json_schema()
            return {k: v.get("title", k) for k, v in schema.get("properties", {}).items()}
    return {}


def message_html(message: str, links: bool = False) -> Markup:
    """A reply or refusal (markdown: our code spans, user text made inert by `render.inline`) as
    HTML: the code spans as <code>, the rest as plain text, all of it escaped. With `links` (an
    error page), the paths it suggests ("see /studios/team", "start at '/'") are links; the path
    asked for ("no page at /x") is not."""
    def part(text: str, code: bool) -> Markup:
        if code:
            return Markup("<code>%s</code>") % text
        return _linked_paths(plain(text)) if links else escape(plain(text))

    return Markup("").join(part(text, code) for text, code in spans(message))


_ASKED = re.compile(r"^no page at \S+")  # the path a 404 names as asked for, in its first words
# A site path suggested in a message, quoted ('/help') or bare (/studios/team), ending before
# sentence punctuation. Only this site's paths: a path starts with one "/", never "//".
_SUGGESTED_PATH = re.compile(r"'(/(?!/)[\w\-./]*)'|(?<![\w/.'])(/(?!/)(?:[\w\-./]*[\w\-/])?)(?![\w])")


def _linked_paths(text: str) -> Markup:
    asked = _ASKED.match(text)
    start = asked.end() if asked else 0
    out, last = [escape(text[:start])], start
    for m in _SUGGESTED_PATH.finditer(text, start):
        path = m.group(1) or m.group(2)
        out += [escape(text[last:m.start()]), Markup('<a href="%s">%s</a>') % (path, path)]
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


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
    `layout`: the web app's (`LAYOUT`), or the chat view's fragment (`EMBED_LAYOUT`, navmcp.views),
    where the actions in `browser_only` are links to the page in navmcp instead of forms."""
    refused = (error or {}).get("action")
    forms = {}
    for a in page.actions:
        fields = uploads.form_fields(a.name, form_fields(a, page, submitted if a.name == refused else None))
        if a.name == refused:
            _mark_invalid(fields, (error or {}).get("fields", []), submitted or {})
        _pick_people(a.name, fields, page, people or [])
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


_AVAILABLE = re.compile(r"\s*(?:Available here: [^\n]*|No actions are available here for you\.)\s*$")


def people_message(message: str, action: str | None, forms: dict[str, Any],
                   fields: list[dict[str, str]] | None = None) -> str:
    """A refusal as a person reads it beside the form: the agents' frame taken off (which actions
    are valid instead, the parameter list) and each field it refuses (`fields`, `FieldError.public`)
    named by its label, not its key."""
    text = _AVAILABLE.sub("", message)
    if action:
        text = re.sub(rf"^{re.escape(action)} failed: ", "", text)
        text = re.sub(rf"^invalid parameters for {re.escape(action)}: ", "", text)
        text = re.sub(rf"\.? ?Parameters of {re.escape(action)}: [^\n]*$", ".", text)
        text = re.sub(rf"^{re.escape(action)} is not available: ", "", text)
        labels = {f["name"]: f["label"] for f in forms.get(action, {}).get("fields", [])}
        for refused in fields or []:
            name = refused["field"]
            label = labels.get(name.split(".")[0], name)
            text = text.replace(f"'{name}':", f"{label}:").replace(f"'{name}' is required", f"{label} is required")
    text = people_words(text).strip()
    return text[:1].upper() + text[1:]


def _action_names() -> frozenset[str]:
    return frozenset(name for by_name in action_table.BY_PAGE.values() for name in by_name)


# An action named in a message: in a code span (`vote`), or bare when it can't be a word (add_member).
_ACTION_NAMED = re.compile(r"(?<!\\)`([a-z_]+)`|\b([a-z]+(?:_[a-z]+)+)\b")


def people_words(message: str) -> str:
    """A message for agents as people read it: each action it names by its button's label
    ("Add a person"), not its name (`add_member`). The agents' renditions keep the names."""
    names = _action_names()

    def label(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        return f"“{action_label(name)}”" if name in names else m.group(0)

    return _ACTION_NAMED.sub(label, message)


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


def _pick_people(action: str, fields: list[dict[str, Any]], page: Page, people: list[dict[str, Any]]) -> None:
    """Members are picked, not typed: removing one is a choice among the members listed, adding one
    suggests the people you share another studio with (any handle can still be typed)."""
    for f in fields:
        if f["name"] != "handle":
            continue
        if action == "remove_member":
            shown = [m for m in page.data.get("members", []) if m["handle"] != page.user["handle"]]
            f.update(kind="select", choices=[m["handle"] for m in shown], default=f["value"] or None,
                     labels={m["handle"]: f"{m['name']} (@{m['handle']})" for m in shown}, required=True,
                     description="")
        elif action == "add_member":
            f.update(suggest=[{"handle": p["handle"], "label": f"{p['name']} (@{p['handle']})"} for p in people],
                     description="Pick someone you work with in another studio, or type the handle of anyone "
                                 "on this navmcp.")


def help_text(markdown: str) -> str:
    """The body of the help page's markdown (our own text, between the header and the actions)."""
    lines = markdown.splitlines()
    body = lines[3:] if len(lines) > 3 and lines[2].startswith("URL:") else lines
    text = "\n".join(body).split("\n## Available actions", 1)[0]
    return text.strip()


_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\((/[^)\s]*)\)")
_EMPH = re.compile(r"\*([^*\s][^*]*)\*")


def _inline_help(line: str) -> str:
    line = _CODE.sub(r"<code>\1</code>", str(escape(line)))
    line = _LINK.sub(r'<a href="\2">\1</a>', line)
    return _EMPH.sub(r"<em>\1</em>", line)


def help_html(markdown: str):
    """Our help text (never user text) from its markdown to HTML: paragraphs, lists, tables, code,
    emphasis and site-local links. Everything is escaped first; only those few forms become tags."""
    from markupsafe import Markup

    out: list[str] = []
    for block in re.split(r"\n\s*\n", help_text(markdown)):
        lines = [ln.rstrip() for ln in block.strip().splitlines()]
        if not lines or not lines[0]:
            continue
        if all(ln.startswith("|") for ln in lines):
            rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines if not re.match(r"^\|[\s|:-]+\|$", ln)]
            head, *rest = rows
            out.append("<table><tr>" + "".join(f"<th>{_inline_help(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_inline_help(c)}</td>" for c in r) + "</tr>" for r in rest)
                       + "</table>")
        elif re.match(r"^(- |\d+\. )", lines[0]):
            tag = "ol" if lines[0][0].isdigit() else "ul"
            items: list[str] = []
            for ln in lines:
                if re.match(r"^(- |\d+\. )", ln):
                    items.append(re.sub(r"^(- |\d+\. )", "", ln))
                else:
                    items[-1] += " " + ln.strip()
            out.append(f"<{tag}>" + "".join(f"<li>{_inline_help(i)}</li>" for i in items) + f"</{tag}>")
        else:
            out.append("<p>" + _inline_help(" ".join(ln.strip() for ln in lines)) + "</p>")
    return Markup("\n".join(out))


# --- forms from schemas -----------------------------------------------------------------------


def _non_null(prop: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, null]` (an optional field) as X, keeping the outer description and default."""
    if "anyOf" in prop:
        choices = [p for p in prop["anyOf"] if p.get("type") != "null"]
        if len(choices) == 1:
            return {**choices[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
    return prop


def _deref(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        return defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
    return prop


def form_fields(action: ActionInfo, page: Page, submitted: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """The inputs of `action`'s form, one per parameter, in schema order; filled from `submitted`
    (a refused form, sent again) when given."""
    schema = action.input_schema
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    titles = _field_titles(action.name)
    fields = []
    for name, raw in schema.get("properties", {}).items():
        if name == "base" and action.name.startswith("edit_"):
            continue  # an agent's guard against lost updates; a form has its own (`check_fresh`)
        if name == "reply_to":
            continue  # a reply is written in its thread's own form (the comments' `Reply`)
        prop = _non_null(raw)
        field: dict[str, Any] = {"name": name, "required": name in required, "invalid": False,
                                 "label": titles.get(name, name), "description": prop.get("description", ""),
                                 "default": prop.get("default")}
        kind = prop.get("type")
        if name in DATE_FIELDS:
            field.update(kind="date", description=DATE_FIELDS[name], words="",
                         min=datetime.now(UTC).date().isoformat())  # today ends in the future
        elif "enum" in prop:
            field.update(kind="select", choices=prop["enum"])
        elif kind == "boolean":
            field.update(kind="checkbox", checked=bool(prop.get("default")))
        elif kind == "integer" or kind == "number":
            field.update(kind="number", min=prop.get("minimum"), max=prop.get("maximum"))
        elif kind == "array":
            items = _deref(prop.get("items", {}), defs)
            if items.get("type") == "object" and "option" in items.get("properties", {}):
                field.update(kind="ballot", items=items, rows=_ballot_rows(items, page))
            else:
                commas = _commas_split(items)
                field.update(kind="lines", commas=commas, description=_lines_hint(field["description"], commas))
        elif (prop.get("maxLength") or 0) > LONG_TEXT:
            field.update(kind="textarea")
        else:
            field.update(kind="text", maxlength=prop.get("maxLength"), pattern=_html_pattern(prop.get("pattern")))
        field["value"] = _current(action, name, page)
        # an edit form also carries a digest of what it was filled with, so the fields left as they
        # were are left out of the params (`params_from_form`): "unchanged", not "replaced by itself"
        field["was"] = _digest(field["value"]) if action.name.startswith("edit_") and field["kind"] in (
            "text", "textarea", "lines") else None
        if submitted is not None:
            _refill(field, submitted)
        fields.append(field)
    # a hint naming another parameter ("at least critical_mass") names it by its label
    named = {n: t.lower() for n, t in titles.items() if "_" in n}
    for field in fields:
        for name, label in named.items():
            field["description"] = re.sub(rf"\b{name}\b", label, field["description"])
    return fields


# An edit's parameter → the item's column it edits, where their names differ (actions/edits.py).
EDITED_COLUMN = {"question": "title", "description": "body", "limit": "participant_limit"}


def _current(action: ActionInfo, name: str, page: Page) -> str:
    """An edit form starts from what it edits (the item's title, body, tags)."""
    if not action.name.startswith("edit_"):
        return ""
    if name == "tags":
        return "\n".join(page.data.get("tags", []))
    if action.name == "edit_comment":  # which comment is the person's to pick
        return ""
    item = page.data.get("item") or {}
    value = item.get(EDITED_COLUMN.get(name, name))
    if name in DATE_FIELDS and isinstance(value, str):
        return value[:10]  # the day, as a date input holds it
    return value if isinstance(value, str) else str(value) if isinstance(value, int) and name == "limit" else ""


def _refill(field: dict[str, Any], submitted: dict[str, list[str]]) -> None:
    """Put what the user submitted back into a field of the form. An edit form's field the user
    left as it was filled shows what is stored now (with its new `.was` digest): sent again, it
    must not put back what someone else has changed since."""
    name, kind = field["name"], field["kind"]
    values = submitted.get(name, [])
    if field["was"] and _untouched(submitted, name, _typed(kind, values, field.get("commas", False))):
        return
    if kind == "checkbox":
        field["checked"] = bool(values) and values[0] not in ("", "0", "false", "off")
    elif kind == "ballot":
        for o in field["rows"]["options"]:
            o["checked"] = {f["name"]: o["id"] in submitted.get(f"{name}.{f['name']}", [])
                            for f in field["rows"]["flags"]}
    elif kind == "select":
        if values and values[0] in field["choices"]:
            field["default"] = values[0]
    elif kind == "lines":
        field["value"] = "\n".join(v.replace("\r\n", "\n") for v in values)
    elif kind == "date":
        field["value"], field["words"] = _date_and_words(values)
    else:
        field["value"] = _typed(kind, values)


def _typed(kind: str, values: list[str], commas: bool = False) -> str:
    """What a text input, text area or one-per-line list was submitted with, as its `.was` digest
    reads it: a list's items one per line, blank lines dropped."""
    if kind == "lines":
        return "\n".join(_items(values, commas))
    return values[0].replace("\r\n", "\n") if values else ""


def _items(values: list[str], commas: bool) -> list[str]:
    lines = (line for v in values for line in v.splitlines())
    parts = (part for line in lines for part in (line.split(",") if commas else (line,)))
    return [part.strip() for part in parts if part.strip()]


def _untouched(form: dict[str, list[str]], name: str, typed: str) -> bool:
    """The input still holds what the form was filled with (its `NAME.was` digest)."""
    was = form.get(f"{name}.was")
    return bool(was and was[0] == _digest(typed))


def _digest(value: str) -> str:
    # Line breaks as a browser sends them back from a text area: a body stored with CRLF (an agent
    # on Windows) still reads as unchanged when only the title was edited.
    value = value.replace("\r\n", "\n")
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _ballot_rows(items: dict[str, Any], page: Page) -> dict[str, Any]:
    """A ballot per option of the decision: the boolean fields of a ballot as checkboxes. Once you
    have voted, the form shows your stored vote. An option you have not voted on (all of them, on a
    first vote; one added since) starts unticked and `unvoted`: left so, it stays out of your vote
    (`_ballot_choices`), never a vote you did not make (`added`: one added since your vote)."""
    flags = _flags(items)
    mine = {v["title"]: v for v in page.data.get("your_votes", [])}
    options = []
    for o in page.data.get("options", []):
        vote = mine.get(o["title"])
        checked = {f: bool(vote[f]) if vote else False for f in flags}
        options.append({"id": o["id"], "title": o["title"], "checked": checked,
                        "unvoted": not vote, "added": bool(mine) and not vote, "invalid": False})
    return {"flags": [{"name": f, "description": items["properties"][f].get("description", "")} for f in flags],
            "options": options}


def params_from_form(action: ActionInfo, form: dict[str, list[str]]) -> dict[str, Any]:
    """A submitted form as the action's params, read with the schema that generated the form.

    Empty optional inputs are left out (the model's default applies); anything malformed is passed
    on as text, so the action's own model refuses it with its usual teaching message. An edit form
    (edit_*) differs: a list input present but emptied is an empty list (clear the tags), and an
    input still holding what the form was filled with (its `NAME.was` digest) is left out.
    """
    edit = action.name.startswith("edit_")

    def unchanged(name: str, value: str) -> bool:
        return edit and _untouched(form, name, value)

    schema = action.input_schema
    defs = schema.get("$defs", {})
    params: dict[str, Any] = {}
    for name, raw in schema.get("properties", {}).items():
        prop = _non_null(raw)
        kind = prop.get("type")
        values = form.get(name, [])
        value = values[0] if values else ""
        if kind == "boolean":
            params[name] = bool(values) and value not in ("", "0", "false", "off")
        elif kind == "array":
            items = _deref(prop.get("items", {}), defs)
            if items.get("type") == "object" and "option" in items.get("properties", {}):
                ballots = _ballot_choices(name, items, form)
                if ballots:
                    params[name] = ballots
            else:
                lines = _items(values, _commas_split(items))
                if unchanged(name, "\n".join(lines)):
                    continue
                if lines or (edit and name in form):
                    params[name] = lines
        elif name in DATE_FIELDS:
            picked, words = _date_and_words(values)
            if words or picked:
                params[name] = words or picked
        elif value.strip() == "":
            continue
        elif kind == "integer":
            try:
                params[name] = int(value.strip())
            except ValueError:
                params[name] = value
        else:
            value = value.replace("\r\n", "\n")
            if not unchanged(name, value):
                params[name] = value
    return params


def _flags(items: dict[str, Any]) -> list[str]:
    """A ballot's boolean fields (accept, prefer): its checkboxes."""
    return [n for n, p in items.get("properties", {}).items() if p.get("type") == "boolean"]


def _ballot_choices(name: str, items: dict[str, Any], form: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The ballots of a submitted vote form, in its rows' order: a row marked `unvoted` (an option
    you had not voted on) with nothing ticked is left out. The form's "Accept all" button
    (`NAME.all` = accept) accepts every option, with the prefers as ticked."""
    flags = _flags(items)
    chosen = {f: set(form.get(f"{name}.{f}", [])) for f in flags}
    if "accept" in flags and form.get(f"{name}.all") == ["accept"]:
        chosen["accept"] = set(form.get(f"{name}.option", []))
    unvoted = set(form.get(f"{name}.unvoted", []))
    # A ballot's other fields (a dot vote's dots, a time poll's answer) come one input per option
    # (`NAME.FIELD.OPTION`): a row left empty, or at 0, is no part of the ballot.
    props = items.get("properties", {})
    values = [n for n, p in props.items() if n != "option" and n not in flags]
    ballots = []
    for option in form.get(f"{name}.option", []):
        ballot: dict[str, Any] = {"option": option, **{f: option in chosen[f] for f in flags}}
        given = {v: (form.get(f"{name}.{v}.{option}") or [""])[0].strip() for v in values}
        if any(value in ("", "0") for value in given.values()):
            continue
        ballot.update({v: int(t) if props[v].get("type") == "integer" and t.isdigit() else t for v, t in given.items()})
        ballots.append(ballot)
    # (A form with no checkboxes, edit_decision's renames, has only rows given a value: none unvoted.)
    return [b for b in ballots if not flags or b["option"] not in unvoted or any(b[f] for f in flags)]


def check_fresh(action: ActionInfo, form: dict[str, list[str]], load_page) -> None:
    """Refuse (409) an edit form that would overwrite a field changed by someone else since the form
    was filled: its `.was` digest no longer matches what is stored, and the user changed it too (a
    lost update otherwise). `load_page()` gives the page as it stands; it is read only when needed."""
    if not action.name.startswith("edit_") or not any(key.endswith(".was") for key in form):
        return
    page = load_page()
    stale = []
    for field in form_fields(action, page):  # `was`: the digest of what is stored now
        name, sent = field["name"], form.get(f"{field['name']}.was")
        if not field["was"] or not sent or sent[0] == field["was"]:
            continue
        typed = _digest(_typed(field["kind"], form.get(name, []), field.get("commas", False)))
        if typed not in (sent[0], field["was"]):  # changed by this user, to other than what is stored
            stale.append((name, field["label"]))
    if stale:
        kind, names = action.name.removeprefix("edit_"), " and ".join(label.lower() for _, label in stale)
        raise ActionFailed(f"this {kind}'s {names} {'was' if len(stale) == 1 else 'were'} changed by someone else "
                           f"since you opened the form: your text is kept below; compare with the current {names} "
                           f"and save again", url=page.url,
                           fields=tuple(FieldError(n, "changed by someone else since the form was opened") for n, _ in stale))


_JSON_LIST = re.compile(r'\[\s*"[^"\]]*"(?:\s*,\s*"[^"\]]*")*\s*\]')


def _lines_hint(description: str, commas: bool) -> str:
    """A list's description as a form's hint: its example written as typed (the schema's is a JSON
    list, for agents), and how to separate the items."""
    text = _JSON_LIST.sub(lambda m: ", ".join(re.findall(r'"([^"]*)"', m.group(0))), description)
    how = "one per line or separated by commas" if commas else "one per line"
    return f"{text}; {how}" if text else how


def _commas_split(items: dict[str, Any]) -> bool:
    """Whether a list's input may separate its items with commas too: items held to a pattern that
    rejects a comma (tags, handles), so a comma can only be a separator."""
    pattern = items.get("pattern")
    return items.get("type") == "string" and isinstance(pattern, str) and bool(pattern) and re.search(pattern, ",") is None


def _html_pattern(pattern: str | None) -> str | None:
    """A schema's pattern as an HTML `pattern` attribute, which browsers anchor themselves and read
    with the `v` flag: anchors dropped, a literal '-' at either end of a class escaped (a syntax
    error under `v`, which would make the browser ignore the attribute)."""
    if not pattern:
        return None
    pattern = re.sub(r"^\^|(?<!\\)\$$", "", pattern)
    return re.sub(r"(?<!\\)-\]", r"\\-]", re.sub(r"(?<!\\)\[-", r"[\\-", pattern))


def _mark_invalid(fields: list[dict[str, Any]], refused: list[dict[str, str]], submitted: dict[str, list[str]]) -> None:
    """Mark the inputs of a refused form that its refusal names (`aria-invalid`): `refused` is its
    `FieldError`s (`public()`); a ballot's 'votes.N' is the row of the Nth ballot sent."""
    named = [f["field"].split(".") for f in refused]
    for field in fields:
        paths = [rest for head, *rest in named if head == field["name"]]
        if not paths:
            continue
        if field["kind"] != "ballot":
            field["invalid"] = True
            continue
        sent = [b["option"] for b in _ballot_choices(field["name"], field["items"], submitted)]
        rows = {sent[int(rest[0])] for rest in paths if rest and rest[0].isdigit() and int(rest[0]) < len(sent)}
        for o in field["rows"]["options"]:
            o["invalid"] = o["id"] in rows
        field["invalid"] = not rows  # the whole ballot, when no row can be told
