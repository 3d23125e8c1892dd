"""Words for people on the web pages: times as they read them, initials and colours, each action's
button label and what a destructive one does, the audit log in words, refusals and messages with
the agents' frame taken off, the help page's text as HTML. Agents read the action table's own
names and descriptions; these are only for the web app.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

from navmcp import actions as action_table
from navmcp.clock import zones
from navmcp.render import plain, spans, utc


def local_time(value: str, zone: str | None = None) -> str:
    """A stored UTC time as a person reads it: in their zone (navmcp.clock.zones), "Fri 4 Dec 2026, 18:00
    Europe/Paris"; with none set, in UTC, which app.js turns into the browser's zone."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zones.zone(zone))
    except ValueError:
        return utc(value)
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} {zone or 'UTC'}"


def person_time(value: str, zone: str | None, seconds: bool = False) -> str:
    """A stored UTC time written as every page writes one ("2026-11-25 06:32 UTC"), in a person's
    zone: "2026-11-25 15:32 Asia/Tokyo" (in UTC for one with none, which app.js turns into the
    browser's). `seconds`: to the second (the audit log)."""
    if zone is None:
        return f"{value[:19 if seconds else 16].replace('T', ' ')} UTC"
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zones.zone(zone))
    except ValueError:
        return utc(value)
    return f"{moment:%Y-%m-%d %H:%M{':%S' if seconds else ''}} {zone}"


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
    "create_studio": "New studio", "add_member": "Invite a person", "remove_member": "Remove a person",
    "create_invitation": "Create an invitation link", "revoke_invitation": "Revoke an invitation",
    "leave_studio": "Leave this studio", "delete_studio": "Delete this studio",
    "create_note": "New note", "create_decision": "New decision",
    "create_commitment": "New commitment", "add_comment": "Comment", "confirm_read": "Mark as read",
    "edit_note": "Edit", "edit_decision": "Edit", "edit_commitment": "Edit", "edit_comment": "Edit a comment of yours",
    "delete_comment": "Delete a comment", "extend_decision": "Extend the deadline", "reopen_decision": "Reopen",
    "set_outcome": "Write the outcome", "delete_item": "Delete", "restore_item": "Restore",
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
    "delete_item": "It leaves every list, search and count at once. Its creator and the studio's admins can "
                   "restore it for 30 days; then it is gone for good, with its comments, votes and files.",
}


# The audit log for people: what each action did, in words ("@ana voted on a decision").
AUDIT_DONE = {
    "create_studio": "created the studio", "add_member": "added or changed a member", "remove_member": "removed a member",
    "leave_studio": "left the studio", "delete_studio": "deleted a studio", "create_note": "wrote a note",
    "create_decision": "asked for a decision", "create_commitment": "proposed a commitment",
    "add_comment": "commented", "confirm_read": "marked as read", "edit_comment": "edited a comment",
    "delete_comment": "deleted a comment", "extend_decision": "extended the deadline", "reopen_decision": "reopened",
    "set_outcome": "wrote the outcome", "delete_item": "deleted", "restore_item": "restored",
    "pin": "pinned", "unpin": "unpinned", "add_option": "added an option",
    "vote": "voted", "close_decision": "closed voting", "join_commitment": "joined", "leave_commitment": "left",
    "close_commitment": "closed", "create_invitation": "made an invitation", "revoke_invitation": "revoked an invitation",
    "consent": "consented", "object": "objected", "amend": "amended the proposal", "allocate": "gave dots",
    "add_time": "added a time", "answer": "answered", "close_poll": "closed the poll",
    "attach": "attached a file", "remove_attachment": "removed a file", "export_studio": "exported the studio",
    "export_person": "exported what they wrote",
    "approve": "approved a held action", "reject": "rejected a held action", "withdraw": "withdrew a held action",
    "set_hold_rule": "set a hold rule", "remove_hold_rule": "removed a hold rule",
}
_AUDIT_WHERE = re.compile(r"^/studios/[^/]+(?:/(?:(?P<kind>[ndc])/[^/?]+|(?P<page>members|audit)))?/?$")
_AUDIT_KINDS = {"n": "a note", "d": "a decision", "c": "a commitment"}
_AUDIT_BARE = {"join_commitment", "leave_commitment", "close_commitment", "pin", "unpin"}  # "joined a commitment"
_CLIENTS = {"web": "in the web app", "navmcp-cli": "from the command line", "http": "through the HTTP API"}


def audit_line(entry: dict[str, Any]) -> dict[str, str]:
    """One audit entry in people's words: what was done (`done`), where (`where`, linked to `url`),
    through which client (`via`), why it was refused (`refused`, "" when it was not), and what became
    of it otherwise (`note`: held for approval at `note_url`, or approved by whom). Timings and
    parameter lists are left to the page's JSON."""
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
    line = {"done": done, "where": where, "url": url, "via": _CLIENTS.get(client) or f"through {client}",
            "refused": "", "note": "", "note_url": ""}
    # The outcomes navmcp writes (workspace.execute, held.approval): "ok" and "unchanged"; a write kept
    # for approval, "held: <its page>"; the line of what an approval ran, "ok, approved by @x (browser)"
    # or "… via <client>"; anything else is a refusal, "<kind>: <message>".
    verdict, _, approval = outcome.partition(", ")
    if outcome.startswith("held: "):
        held = outcome.removeprefix("held: ")
        line["note"], line["note_url"] = "not done yet: held for approval", held if held.startswith("/studios/") else ""
    elif verdict in ("ok", "unchanged") and (approval == "" or approval.startswith("approved by @")):
        if approval:
            by, _, how = approval.removeprefix("approved by ").partition(" ")
            line["note"] = f"approved by {by} " + ("in the web app" if how == "(browser)" else
                                                  f"through {how.removeprefix('via ')}")
    else:
        line["refused"] = _refusal_words(action, outcome.split(": ", 1)[-1])
    return line


def _refusal_words(action: str, message: str) -> str:
    """A refusal the audit kept, as a refused form shows it: its fields by their labels."""
    titles = field_titles(action)
    forms = {action: {"fields": [{"name": n, "label": t} for n, t in titles.items()]}}
    return people_message(message, action, forms, [{"field": n} for n in titles])


def action_label(name: str) -> str:
    return ACTION_LABELS.get(name) or name.replace("_", " ").capitalize()


@functools.cache
def field_titles(name: str) -> dict[str, str]:
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
    ("Invite a person"), not its name (`add_member`). The agents' renditions keep the names."""
    names = _action_names()

    def label(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        return f"“{action_label(name)}”" if name in names else m.group(0)

    return _ACTION_NAMED.sub(label, message)


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
