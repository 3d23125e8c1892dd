"""`attach` and `remove_attachment` on item pages (navmcp/content/attachments.py holds the files and limits)."""

from __future__ import annotations

import base64
import binascii

from pydantic import Field

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.content import attachments, domain
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.pages import Request

ITEM_PAGES = ("note", "decision", "commitment")
# The largest file's base64 (a browser's upload is the larger), with slack for padding; the file's
# own limit, by where it came from, is the handler's.
_BASE64_CHARS = -(-max(attachments.MCP_MAX_BYTES, attachments.WEB_MAX_BYTES) // 3) * 4 + 4


class Attach(Params):
    filename: str = Field(min_length=1, max_length=255, title="File name", description="e.g. budget.csv")
    content_type: str = Field(min_length=1, max_length=100, title="Type",
                              description=f"one of: {attachments.ACCEPTED}")
    data: str = Field(min_length=1, max_length=_BASE64_CHARS, title="Content",
                      description=f"the file, base64-encoded (at most {attachments.MCP_MAX_BYTES:,} bytes of file)")
    comment: str | None = Field(None, min_length=1, max_length=64, title="On comment",
                                description="a comment's id, to attach the file to it rather than to the item")


def attach(req: Request, p: Attach) -> Outcome:
    try:
        data = base64.b64decode(p.data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidActionParams("'data': not base64 (RFC 4648, with padding)",
                                  fields=(FieldError("data", "is not base64"),)) from None
    if p.comment:
        found = req.tx.one("SELECT id, deleted_at FROM comments WHERE id = ? AND item_id = ?", (p.comment, req.item["id"]))
        if found is None or found["deleted_at"]:
            raise InvalidActionParams(f"'comment': no comment {p.comment!r} on this {req.item['kind']}",
                                      fields=(FieldError("comment", "no such comment here"),))
    try:
        file_id = attachments.add(req.tx, req.studio, req.item, req.user["id"], p.filename, p.content_type, data,
                                  p.comment, attachments.WEB_MAX_BYTES if req.browser else attachments.MCP_MAX_BYTES)
    except attachments.Refused as e:
        raise InvalidActionParams(f"'{e.field}': {e}", fields=(FieldError(e.field, str(e)),)) from None
    domain.touch(req.tx, req.item["id"])
    url = attachments.url_of(req.studio["handle"], req.item, file_id)
    return Outcome(f"Attached {attachments.safe_filename(p.filename)} ({len(data):,} bytes) at {url}.", url)


class RemoveAttachment(Params):
    file: str = Field(min_length=1, max_length=64, title="Which file", description="the file's id")


def remove_attachment(req: Request, p: RemoveAttachment) -> Outcome:
    found = attachments.find(req.tx, req.item, p.file.lower())
    if found is None:
        raise InvalidActionParams(f"'file': no file {p.file!r} on this {req.item['kind']}",
                                  fields=(FieldError("file", "no such file here"),))
    if found["created_by"] != req.user["id"] and req.role != "admin":
        raise InvalidActionParams("'file': only its uploader or a studio admin may remove a file",
                                  fields=(FieldError("file", "is not yours: only its uploader or an admin may remove it"),))
    if not req.tx.execute("DELETE FROM attachments WHERE id = ?", (found["id"],)):
        raise ActionFailed("the database refused the change (your role here may have just changed): reload the page")
    domain.touch(req.tx, req.item["id"])
    return Outcome(f"Removed {found['filename']}.", domain.item_url(req.studio["handle"], req.item))


def may_remove_a_file(req: Request) -> str | None:
    """A member with a file of their own here; an admin, where there is any file."""
    if reason := rules.member(req):
        return reason
    if req.role == "admin":
        found = req.tx.one("SELECT 1 FROM attachments WHERE item_id = ? LIMIT 1", (req.item["id"],))
    else:
        found = req.tx.one("SELECT 1 FROM attachments WHERE item_id = ? AND created_by = ? LIMIT 1",
                           (req.item["id"], req.user["id"]))
    return None if found else "there is no file here you may remove"


ACTIONS = [
    Action("attach", ITEM_PAGES, "Attach a file (base64) to this item or one of its comments.", attach, Attach,
           who=rules.member),
    Action("remove_attachment", (*ITEM_PAGES, "file"), "Remove a file (yours; an admin: any).", remove_attachment,
           RemoveAttachment, who=may_remove_a_file),
]
