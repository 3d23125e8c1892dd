"""Actions as HTML forms, generated from their parameter JSON schemas, and a submitted form turned
back into the action's params with the same schema (`form_fields`, `params_from_form`), so a new
action needs no HTML work: strings become text inputs or text areas, integers number inputs,
booleans checkboxes, enums selects, lists of strings one-per-line text areas (chips, with app.js),
and a vote's ballots one row per option of the decision (accept / prefer checkboxes).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from navmcp.errors import ActionFailed, FieldError
from navmcp.page import ActionInfo, Page
from navmcp.web.words import field_titles

LONG_TEXT = 500  # strings allowed to be longer than this get a text area
# Deadlines take a bare date (the end of that day, UTC): what a date input sends. Its hint for people.
# A second input beside the date picker takes the day in words ("next friday": navmcp.clock.dates, read
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


def pick_people(action: str, fields: list[dict[str, Any]], page: Page, people: list[dict[str, Any]]) -> None:
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
    titles = field_titles(action.name)
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


def mark_invalid(fields: list[dict[str, Any]], refused: list[dict[str, str]], submitted: dict[str, list[str]]) -> None:
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
