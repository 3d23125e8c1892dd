"""A file sent from a person's browser: the `attach` form as `multipart/form-data`, one file input in
place of the agents' filename, type and base64 fields.

- The form (`form_fields`): the action's own fields, with `filename`, `content_type` and `data`
  replaced by one file input that accepts the types navmcp takes, saying the web's limit.
- The request (`body_limit`): such a form may be larger than any other request, up to the web's
  per-file limit (`attachments.WEB_MAX_BYTES`) and a little for its other fields; anything else
  keeps the app's bound.
- The body (`parse`): its text fields as a urlencoded form would give them, and its files, each
  part's headers read strictly (at most `MAX_PARTS` parts); a body that is not one is `BadUpload`.
- The params (`with_file`): the file as the action takes it, its type the part's if navmcp accepts
  it, else the one its name's extension says; the action checks it as it checks an agent's.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from navmcp.content import attachments
from navmcp.errors import FieldError, InvalidActionParams

MULTIPART = "multipart/form-data"
UPLOAD_ACTION = "attach"
REPLACED = ("filename", "content_type", "data")  # the agents' fields, one file input in the browser
FILE_FIELD = "file"
MAX_PARTS = 20
SLACK = 64 * 1024  # the form's other fields (CSRF token, comment) and the parts' headers


class BadUpload(ValueError):
    """A body that is not a multipart form, in words."""


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    content_type: str
    data: bytes


def body_limit(path: str, content_type: str, default: int) -> int:
    """The body bound of a request: an upload to `…/actions/attach` may carry a file of the web's size."""
    if content_type.startswith(MULTIPART) and path.endswith(f"/actions/{UPLOAD_ACTION}"):
        return max(default, attachments.WEB_MAX_BYTES + SLACK)
    return default


def form_fields(action: str, fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fields of `action`'s form in the browser: for `attach`, a file input first."""
    if action != UPLOAD_ACTION:
        return fields
    kept = [f for f in fields if f["name"] not in REPLACED]
    limit = attachments.WEB_MAX_BYTES // attachments.MIB
    chosen = {"name": FILE_FIELD, "kind": "file", "label": "File", "required": True, "invalid": False,
              "accept": ",".join(attachments.TYPES), "value": "", "was": None,
              "description": f"an image (PNG, JPEG, GIF, WebP), a PDF, or text, Markdown or CSV; at most {limit} MB"}
    return [chosen, *kept]


_PARAM = re.compile(r';\s*([\w*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def _params(header: str) -> dict[str, str]:
    found = {}
    for key, value in _PARAM.findall(header):
        value = value.strip()
        if value.startswith('"') and value.endswith('"') and len(value) >= 2:
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found[key.lower()] = value
    return found


def parse(body: bytes, content_type: str) -> tuple[dict[str, list[str]], dict[str, Upload]]:
    """The text fields and the files of a `multipart/form-data` body (RFC 7578)."""
    boundary = _params(content_type).get("boundary", "")
    if not 1 <= len(boundary) <= 70:
        raise BadUpload("a multipart form needs its boundary (1 to 70 characters) in Content-Type")
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    pieces = (b"\r\n" + body).split(delimiter)
    if len(pieces) < 2 or not pieces[-1].startswith(b"--"):
        raise BadUpload("the multipart form is cut short: its closing boundary is missing")
    if len(pieces) - 2 > MAX_PARTS:
        raise BadUpload(f"a form of more than {MAX_PARTS} parts")
    fields: dict[str, list[str]] = {}
    files: dict[str, Upload] = {}
    for piece in pieces[1:-1]:
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep or not head.startswith(b"\r\n"):
            raise BadUpload("a part of the multipart form has no headers")
        headers = {}
        for line in head[2:].decode("utf-8", "replace").split("\r\n"):
            key, colon, value = line.partition(":")
            if colon:
                headers[key.strip().lower()] = value.strip()
        disposition = headers.get("content-disposition", "")
        if not disposition.lower().startswith("form-data"):
            raise BadUpload("a part of the multipart form is not form-data")
        params = _params(disposition)
        name = params.get("name")
        if not name:
            raise BadUpload("a part of the multipart form has no name")
        if "filename" in params:
            if params["filename"] or content:  # an empty file input sends a nameless, empty part
                files[name] = Upload(params["filename"], headers.get("content-type", ""), content)
        else:
            fields.setdefault(name, []).append(content.decode("utf-8", "replace"))
    return fields, files


def with_file(action: str, params: dict[str, Any], files: dict[str, Upload] | None) -> dict[str, Any]:
    """The action's params with the uploaded file in the agents' fields. `files`: a multipart
    form's (None: not one, left to the action)."""
    if action != UPLOAD_ACTION or files is None:
        return params
    upload = files.get(FILE_FIELD)
    if upload is None:
        raise InvalidActionParams("'file': choose a file to attach", fields=(FieldError(FILE_FIELD, "choose a file"),))
    declared = upload.content_type.split(";", 1)[0].strip().lower()
    if declared not in attachments.TYPES:  # browsers send application/octet-stream for what they don't know
        declared = attachments.EXTENSIONS.get(upload.filename.rsplit(".", 1)[-1].lower(),
                                              declared or "application/octet-stream")
    return {**params, "filename": upload.filename or "file", "content_type": declared,
            "data": base64.b64encode(upload.data).decode("ascii")}

