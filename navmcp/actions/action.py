"""One action: its parameters model (`Params`), who/when rules, handler and outcome, how its
parameters are parsed and refused, and how they are listed on a page. The action modules build
their rows from it; the table in `navmcp.actions` gathers them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from navmcp.lean import skip_pydantic_plugin_discovery

skip_pydantic_plugin_discovery()  # before the first model is built (see navmcp/lean.py)

from pydantic import BaseModel, ConfigDict, ValidationError  # noqa: E402

from navmcp.clock import zones  # noqa: E402
from navmcp.errors import FieldError, InvalidActionParams, echo  # noqa: E402
from navmcp.pages import Request  # noqa: E402

Rule = Callable[[Request], "str | None"]


class Params(BaseModel):
    """Base of every params model: unknown parameters are an error, not silently dropped.
    Each model's validator is built when it is first used, not at import: a server process that
    lists or runs a few actions does not pay for all of them before its first page."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, defer_build=True)


class NoParams(Params):
    pass


@dataclass(frozen=True)
class Outcome:
    message: str
    url: str
    # False: the action found nothing to change (an edit to what is there already). Nobody watching
    # is told of it, and its audit line says `unchanged`: no write stands behind it (on PostgreSQL
    # an `ok` line needs one, migration 20261129000210).
    changed: bool = True
    # Run once the action's write is done, never inside its transaction (an e-mail: no network wait
    # while the write holds its locks); what it returns is added to the message.
    after: Callable[[], str | None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Action:
    name: str
    on: tuple[str, ...]
    description: str
    run: Callable[[Request, Any], Outcome]
    params: type[Params] = NoParams
    who: Rule | None = None
    when: Rule | None = None
    # False for an action that writes nothing its page's rules read (a vote changes tallies, not
    # the number of options): what is valid after it is then judged on the facts its own
    # transaction read, instead of resolving the page again (tests/test_write_path.py checks it).
    changes_facts: bool = True
    # Valid on a deleted item's page (restore_item): every other action is refused there (navmcp.content.deletion).
    on_deleted: bool = False

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return schema

    def refusal(self, req: Request) -> tuple[str, bool] | None:
        """(reason, forbidden) when the action is not valid here, else None."""
        if req.facts.get("deleted") and not self.on_deleted:
            return f"the {req.item['kind']} is deleted (restore_item brings it back)", False
        if self.who and (reason := self.who(req)):
            return reason, True
        if self.when and (reason := self.when(req)):
            return reason, False
        return None

    def parse(self, raw: dict[str, Any] | None, req: Request, available: list[str]) -> Params:
        # Agents often send optional parameters as null: null means "not given", never a value.
        given = {k: v for k, v in (raw or {}).items() if v is not None}
        nul = _nul_in(given) if _may_hold_nul(given) else None
        if nul is not None:
            shown = "a parameter name" if nul == "" else f"'{nul}'"
            raise InvalidActionParams(f"invalid parameters for {self.name}: {shown} must not contain NUL (U+0000)",
                                      url=req.url, available=available,
                                      fields=(FieldError(nul or "params", "must not contain NUL (U+0000)"),))
        try:
            # A deadline that names no zone is read in the acting person's (navmcp.clock.zones), else in
            # their browser's (a web form's), else in UTC.
            return self.params.model_validate(given, context={"zone": zones.of(req.user) or req.zone})
        except ValidationError as e:
            message, fields = describe_validation(self, e)
            raise InvalidActionParams(message, url=req.url, available=available, fields=fields) from None


def _may_hold_nul(value: Any) -> bool:
    """False when no text in `value` (decoded JSON) holds a NUL: its repr, made in C at a fraction
    of `_nul_in`'s walk, writes a NUL as `\\x00` (a text holding a backslash and "x00" is walked too)."""
    try:
        return "\\x00" in repr(value)
    except RecursionError:  # nested too deeply for repr: the walk decides
        return True


def _nul_in(value: Any, where: str = "", depth: int = 0) -> str | None:
    """Where a NUL is in parameters: the path of a text holding one, "" for a parameter name, else None.
    Refused before the models run, for every action alike: PostgreSQL refuses NUL in any text, and a refusal quoting an unknown
    option or parameter name would carry it into the audit log. No parameter nests deeper than a
    few levels: deeper values are left to the model, which refuses their shape."""
    if type(value) is str:
        return where if "\x00" in value else None
    if depth > 8:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is str and "\x00" in key:
                return ""  # a parameter name
            found = _nul_in(item, f"{where}.{key}" if where else str(key), depth + 1)
            if found is not None:  # "" (a parameter name) too, however deep
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_in(item, f"{where}.{i}", depth + 1)
            if found is not None:
                return found
    return None


def describe_validation(action: Action, error: ValidationError) -> tuple[str, tuple[FieldError, ...]]:
    """Pydantic's errors as one teaching sentence per field, with the parameters that exist; and
    the same as `FieldError`s."""
    fields = action.input_schema.get("properties", {})
    lines, refused = [], []
    for err in error.errors(include_url=False):
        loc = echo(".".join(str(p) for p in err["loc"]) or "params")
        if err["type"] == "extra_forbidden":
            lines.append(f"unknown parameter '{loc}'")
            refused.append(FieldError(loc, "is no parameter of " + action.name))
        elif err["type"] == "missing":
            lines.append(f"'{loc}' is required")
            refused.append(FieldError(loc, "is required"))
        else:
            problem = _in_words(err)
            shape = _entry_shape(action, err["loc"]) if err["type"] in ("list_type", "model_type") else None
            if shape:
                problem = f"must be a list of {shape}" if len(err["loc"]) == 1 else f"must be an object {shape}"
            lines.append(f"'{loc}': {problem}")
            refused.append(FieldError(loc, problem))
    names = ", ".join(f"{n}{'' if n in action.input_schema.get('required', []) else '?'}"
                      + (f" (list of {shape})" if (shape := _entry_shape(action, (n,))) and shape not in "".join(lines)
                         else "") for n in fields) or "none"
    message = f"invalid parameters for {action.name}: " + "; ".join(lines) + f". Parameters of {action.name}: {names}."
    return message, tuple(refused)


# Pydantic's error types in words a person or a model acts on (no regex, no parser's jargon).
_WORDS = {
    "int_parsing": "must be a whole number, e.g. 3", "int_type": "must be a whole number, e.g. 3",
    "int_from_float": "must be a whole number, e.g. 3", "bool_parsing": "must be true or false",
    "bool_type": "must be true or false", "string_type": "must be text (a string)",
    "list_type": "must be a list, e.g. [\"a\", \"b\"]", "dict_type": "must be an object",
    "model_type": "must be an object", "model_attributes_type": "must be an object",
    "string_pattern_mismatch": "must be lowercase letters, digits and '-' (at most 32, starting with a letter or digit)",
}


def _in_words(err: Mapping[str, Any]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _WORDS:
        return _WORDS[kind]
    if kind == "string_too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else f"must be at least {ctx.get('min_length')} characters"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length')} entr{'y' if ctx.get('min_length') == 1 else 'ies'}"
    if kind == "too_long":
        return f"must have at most {ctx.get('max_length')} entries"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most",
                 "less_than": "less than"}[kind]
        return f"must be {words} {next(iter(ctx.values()), '')}"
    if kind in ("literal_error", "enum"):
        return f"must be one of: {ctx.get('expected', '')}"
    # a validator's own message, without pydantic's "Value error, " in front of it
    return err["msg"].removeprefix("Value error, ")


def param_docs(action: Action) -> list[dict[str, Any]]:
    """The parameters as the page lists them: name, type, required, allowed values, description."""
    schema = action.input_schema
    defs = schema.get("$defs", {})
    docs = []
    for name, prop in schema.get("properties", {}).items():
        docs.append({
            "name": name,
            "type": _type_name(prop, defs),
            "required": name in schema.get("required", []),
            "allowed": _allowed(prop),
            "description": prop.get("description") or next(
                (p["description"] for p in prop.get("anyOf", []) if "description" in p), ""),
        })
    return docs


def _type_name(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return _shape(defs[prop["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in prop:
        kinds = [_type_name(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds)
    if prop.get("type") == "array":
        return f"list of {_type_name(prop.get('items', {}), defs)}"
    if "enum" in prop or "const" in prop:
        return "string"
    return prop.get("type", "any")


def _shape(target: dict[str, Any], defs: dict[str, Any]) -> str:
    """An entry's shape spelled out, as a model writes it: `{option: number | title | id, accept?:
    true/false}` (`?`: may be left out). A field may name its values in words (`x-shape`)."""
    required = target.get("required", [])
    fields = []
    for name, prop in target.get("properties", {}).items():
        allowed = _allowed(prop)
        kind = prop.get("x-shape") or (" | ".join(map(str, allowed)) if allowed else
                                       "true/false" if prop.get("type") == "boolean" else _type_name(prop, defs))
        fields.append(f"{name}{'' if name in required else '?'}: {kind}")
    return "{" + ", ".join(fields) + "}"


def _entry_shape(action: Action, loc: tuple[Any, ...]) -> str | None:
    """The shape of the entries of the list parameter an error is about (`votes`, `votes.0`), if it
    is a list of objects: a flat or mistyped entry is answered with what an entry looks like."""
    schema = action.input_schema
    prop = schema.get("properties", {}).get(loc[0]) if loc else None
    if not prop or prop.get("type") != "array" or "$ref" not in prop.get("items", {}):
        return None
    return _type_name(prop["items"], schema.get("$defs", {}))


def _allowed(prop: dict[str, Any]) -> list[Any] | None:
    for candidate in [prop, *prop.get("anyOf", [])]:
        if "enum" in candidate:
            return candidate["enum"]
    return None
