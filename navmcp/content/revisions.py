"""Revisions: every edit of an item or a comment, kept.

An item or a comment carries the number of its latest revision (`revision`, 1 as written); each
edit stores one row (`revisions`) with who made it, when, through which client, and the old and
new value of each field it changed, and raises the number by one in the same statement as the
change. An edit may name the revision it read (`base`): one that is not the latest is refused
with what changed since and by whom, so no edit silently undoes another. `?history=1` on an item's
page (with `comment=ID`, a comment's) lists the revisions newest first with their diffs: compact
ones in markdown (`compact_diff`), line by line for the web app (`diff_lines`).
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from navmcp.clock import now
from navmcp.content import domain
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.pages.request import PAGE_SIZE, Request, paginate
from navmcp.render import utc
from navmcp.store import Row

DIFF_LINES = 60  # a revision's diff of one field shows this many changed lines at most
DIFF_CHARS = 4000  # ...and this many characters (the rest: the whole text at the revision's page)

Changes = dict[str, tuple[Any, Any]]


def check_base(req: Request, base: int | None, comment: Row | None = None) -> None:
    """Refuse an edit whose `base` is not the latest revision of the item (or `comment`), naming
    what changed since and by whom. No base: the edit applies to the latest, whatever it is."""
    if base is None:
        return
    latest = (comment or req.item)["revision"]
    what = "comment" if comment else req.item["kind"]
    if base > latest:
        raise InvalidActionParams(f"'base': this {what} has no revision {base}; its latest is {latest}",
                                  fields=(FieldError("base", f"no such revision; the latest is {latest}"),))
    if base == latest:
        return
    since = req.tx.all(
        "SELECT r.number, r.created_at, r.client, r.changes, u.handle FROM revisions r"
        " JOIN users u ON u.id = r.created_by WHERE r.item_id = ? AND "
        + ("r.comment_id = ?" if comment else "r.comment_id IS NULL") + " AND r.number > ? ORDER BY r.number",
        (req.item["id"], *((comment["id"],) if comment else ()), base))
    said = "; ".join(f"revision {r['number']} by @{r['handle']} via {r['client']} at {utc(r['created_at'])} changed "
                     + ", ".join(json.loads(r["changes"])) for r in since)
    raise ActionFailed(
        f"this {what} changed since revision {base}, which you read: {said or f'it is at revision {latest}'}. "
        f"Read it again (`?history=1` shows the changes) and edit with base {latest}",
        fields=(FieldError("base", f"not the latest revision ({latest})"),))


def save(req: Request, changes: Changes, comment: Row | None = None, **columns: Any) -> int:
    """Write an edit: `columns` of the item (or `comment`) with its revision number one more, and
    the revision row with `changes` ({field: (old, new)}). Returns the new revision's number."""
    target = comment or req.item
    number = target["revision"] + 1
    if comment is None:
        domain.update_item(req.tx, req.item["id"], **columns, revision=number)
    else:
        sets = ", ".join(f"{name} = ?" for name in columns)
        if not req.tx.execute(f"UPDATE comments SET {sets}, revision = ? WHERE id = ? AND revision = ?",
                              (*columns.values(), number, comment["id"], comment["revision"])):
            raise ActionFailed("the database refused the change (the comment may have just changed): reload the page")
    req.tx.execute("INSERT INTO revisions (item_id, comment_id, studio_id, number, created_by, client, created_at,"
                   " changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (req.item["id"], comment["id"] if comment else None, req.studio["id"], number, req.user["id"],
                    req.client[:100], now(), json.dumps({k: list(v) for k, v in changes.items()}, ensure_ascii=False)))
    target["revision"] = number
    return number


def history(req: Request, comment_id: str | None = None) -> dict[str, Any]:
    """The history an item page shows with `?history=1`: its revisions (or one comment's), newest
    first, a page at a time, each with its changes as diffs."""
    where = "r.comment_id = ?" if comment_id else "r.comment_id IS NULL"
    args: tuple[Any, ...] = (req.item["id"], *((comment_id,) if comment_id else ()))
    total = req.tx.scalar(f"SELECT count(*) FROM revisions r WHERE r.item_id = ? AND {where}", args)
    pager = paginate(req, total, drop=("after", "part", "full"))
    rows = req.tx.all(f"""SELECT r.number, r.created_at, r.client, r.changes, u.handle AS author
                            FROM revisions r JOIN users u ON u.id = r.created_by
                           WHERE r.item_id = ? AND {where} ORDER BY r.number DESC LIMIT ? OFFSET ?""",
                      (*args, PAGE_SIZE, pager["offset"]))
    revisions = []
    for r in rows:
        fields = []
        for name, (old, new) in json.loads(r.pop("changes")).items():
            fields.append({"name": name, "old": _shown(old), "new": _shown(new),
                           "compact": compact_diff(_shown(old), _shown(new)),
                           "lines": diff_lines(_shown(old), _shown(new)),
                           "multiline": "\n" in _shown(old) + _shown(new)})
        revisions.append({**r, "fields": fields})
    return {"revisions": revisions, "pager": pager, "comment": comment_id}


def _shown(value: Any) -> str:
    """A field's value as its diff reads it: a list (tags) as its items, one per line; none as ''."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def compact_diff(old: str, new: str) -> str:
    """The changed lines of a text, `-` old and `+` new, without context: what markdown shows."""
    out: list[str] = []
    size = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        out.append(line)
        size += len(line) + 1
        if len(out) >= DIFF_LINES or size >= DIFF_CHARS:
            out.append("… (diff cut)")
            break
    return "\n".join(out)


def diff_lines(old: str, new: str) -> list[dict[str, str]]:
    """A text's diff for people: every line of the new text with the removed ones where they were,
    each marked `del`, `ins` or `same` (long unchanged runs folded to one `gap` line)."""
    out: list[dict[str, str]] = []
    a, b = old.splitlines(), new.splitlines()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            same = a[i1:i2]
            if len(same) > 6:
                same = [*same[:2], f"… {len(same) - 4} unchanged lines …", *same[-2:]]
                out += [{"op": "gap" if line.startswith("… ") and i == 2 else "same", "text": line}
                        for i, line in enumerate(same)]
            else:
                out += [{"op": "same", "text": line} for line in same]
            continue
        out += [{"op": "del", "text": line} for line in a[i1:i2]]
        out += [{"op": "ins", "text": line} for line in b[j1:j2]]
        if len(out) > 4 * DIFF_LINES:
            out.append({"op": "gap", "text": "… (diff cut)"})
            break
    return out
