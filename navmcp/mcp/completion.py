"""Argument completion (`completion/complete`) for prompt arguments and resource-template variables.

Values come from what this user may see, as `navigate` would show it: studio handles of their
studios, ids of items in a studio they belong to (matched by id or title), tags used there, and
the fixed names of cycles and help topics. At most `MAX_VALUES` values, with `total` and `hasMore`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from navmcp.errors import echo
from navmcp.mcp.jsonrpc import InvalidParams

if TYPE_CHECKING:
    from navmcp.mcp.resources import Reader

MAX_VALUES = 100  # the spec's bound per response
_ITEM_KINDS = {"/n/": "note", "/d/": "decision", "/c/": "commitment"}


def complete(session: Reader, ref: Any, argument: Any, context: Any) -> dict[str, Any]:
    if not isinstance(argument, dict) or not isinstance(argument.get("name"), str) \
            or not isinstance(argument.get("value", ""), str):
        raise InvalidParams("Invalid params: argument needs a 'name' and a 'value' (strings)")
    name, value = argument["name"], argument.get("value", "")
    arguments = context.get("arguments") if isinstance(context, dict) else None
    arguments = arguments if isinstance(arguments, dict) else {}
    if not isinstance(ref, dict):
        raise InvalidParams("Invalid params: ref must be an object ('ref/prompt' or 'ref/resource')")
    head, _, word = value.rpartition(" ")
    if word.startswith("@") and ref.get("type") in ("ref/prompt", "ref/resource"):  # a mention, being typed
        values = _mentions(session, arguments.get("studio"), head, word[1:].lower())
    elif ref.get("type") == "ref/prompt":
        values = _prompt_values(session, ref.get("name"), name, value)
    elif ref.get("type") == "ref/resource":
        values = _template_values(session, ref.get("uri"), name, value, arguments)
    else:
        raise InvalidParams(f"Invalid params: ref.type {echo(ref.get('type'))!r} is neither 'ref/prompt' nor "
                            "'ref/resource'")
    return {"completion": {"values": values[:MAX_VALUES], "total": len(values),
                           "hasMore": len(values) > MAX_VALUES}}


def _mentions(session: Reader, studio: Any, head: str, prefix: str) -> list[str]:
    """After '@': the handles of the members of the studio named in the context (yours only), and
    the groups (`@admins`, `@everyone`), each as the whole value with that word completed."""
    from navmcp.content.mentions import member_handles

    if not isinstance(studio, str) or not studio:
        return []
    uid = session.user_id()
    with session.app.store.read(user_id=uid) as tx:
        studio_id = tx.scalar("SELECT s.id FROM studios s JOIN memberships m ON m.studio_id = s.id AND m.user_id = ?"
                              " WHERE s.handle = ?", (uid, studio.strip().lower()))
        names = member_handles(tx, studio_id) if studio_id else []
    lead = head + " " if head else ""
    return [f"{lead}@{h}" for h in names if h.startswith(prefix)]


def _prompt_values(session: Reader, prompt: Any, name: str, value: str) -> list[str]:
    from navmcp.mcp.prompts import BY_NAME

    spec = BY_NAME.get(prompt) if isinstance(prompt, str) else None
    if spec is None:
        raise InvalidParams(f"Invalid params: no prompt {echo(prompt)!r}; prompts are {', '.join(BY_NAME)}")
    if name not in {a["name"] for a in spec["arguments"]}:
        raise InvalidParams(f"Invalid params: prompt {prompt} has no argument {echo(name)!r}")
    if name == "studio":
        return _studios(session, value)
    return []  # a topic is free text


def _template_values(session: Reader, uri: Any, name: str, value: str, arguments: dict[str, Any]) -> list[str]:
    from navmcp.mcp.resources import list_templates

    templates = {t["uriTemplate"] for t in list_templates()["resourceTemplates"]}
    if uri not in templates:
        raise InvalidParams(f"Invalid params: {echo(uri)!r} is none of this server's resource templates "
                            "(resources/templates/list)")
    if "{" + name + "}" not in uri and "{?" + name + "}" not in uri:
        raise InvalidParams(f"Invalid params: the template {uri} has no variable {echo(name)!r}")
    if name == "studio":
        return _studios(session, value)
    if name == "item":
        kind = next(k for letter, k in _ITEM_KINDS.items() if letter in uri)
        return _items(session, arguments.get("studio"), kind, value)
    if name == "tag":
        return _tags(session, arguments.get("studio"), value)
    if name == "cycle":
        from navmcp.content.domain import CYCLES

        return [c for c in CYCLES if c.startswith(value.lower())]
    if name == "topic":
        from navmcp.pages.home import HELP_TOPICS

        return [t for t in HELP_TOPICS if t.startswith(value.lower())]
    return []  # a search query is free text


def _studios(session: Reader, value: str) -> list[str]:
    prefix = value.strip().lower()
    return [s["handle"] for s in session.page("/").data["studios"] if s["handle"].startswith(prefix)]


# Items and tags of one studio, and only of a studio the user belongs to (as its pages are), the same
# SQL on both stores. Items: newest first, read up to SCAN rows and matched here.
SCAN = 1000
_ITEMS = ("SELECT i.id, i.title FROM items i JOIN studios s ON s.id = i.studio_id"
          " JOIN memberships m ON m.studio_id = s.id AND m.user_id = ?"
          " WHERE s.handle = ? AND i.kind = ? ORDER BY i.created_at DESC, i.id LIMIT ?")
_YOUR_STUDIO = ("SELECT s.id FROM studios s JOIN memberships m ON m.studio_id = s.id AND m.user_id = ?"
                " WHERE s.handle = ?")
# Tags: the studio's distinct tags from the prefix on, in order, one seek down the index on
# (studio_id, tag) each (a loose index scan), so the cost is the tags returned, at most MAX_VALUES
# + 1, not the studio's tag rows (a SELECT DISTINCT read every one: 100k items, 133 ms).
_TAGS = """WITH RECURSIVE found(tag, n) AS (
    SELECT (SELECT min(t.tag) FROM item_tags t WHERE t.studio_id = ? AND t.tag >= ?), 1
    UNION ALL
    SELECT (SELECT min(t.tag) FROM item_tags t WHERE t.studio_id = ? AND t.tag > found.tag), found.n + 1
      FROM found WHERE found.tag IS NOT NULL AND found.n <= ? AND substr(found.tag, 1, ?) = ?)
  SELECT tag FROM found WHERE tag IS NOT NULL"""


def _items(session: Reader, studio: Any, kind: str, value: str) -> list[str]:
    """Ids of the studio's items of `kind` whose id starts with `value` or whose title holds it."""
    if not isinstance(studio, str):
        return []  # the studio comes first: context.arguments.studio
    user_id = session.user_id()
    with session.app.store.read(user_id=user_id) as tx:
        rows = tx.tuples(_ITEMS, (user_id, studio.lower(), kind, SCAN))
    needle = value.strip().lower()
    return [id_ for id_, title in rows if id_.startswith(needle) or needle in title.lower()]


def _tags(session: Reader, studio: Any, value: str) -> list[str]:
    """The studio's tags that start with `value`, at most MAX_VALUES + 1 (then `hasMore`)."""
    if not isinstance(studio, str):
        return []
    user_id = session.user_id()
    prefix = value.strip().lower()
    with session.app.store.read(user_id=user_id) as tx:
        studio_id = tx.scalar(_YOUR_STUDIO, (user_id, studio.lower()))
        if studio_id is None:
            return []
        rows = tx.tuples(_TAGS, (studio_id, prefix, studio_id, MAX_VALUES, len(prefix), prefix))
    return [tag for (tag,) in rows if tag.startswith(prefix)]
