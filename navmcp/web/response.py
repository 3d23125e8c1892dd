"""One HTTP answer (`Response`) and the few ways handlers make one; the headers every answer carries."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

SECURITY_HEADERS = [  # on every response, already encoded for the ASGI message
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" would make browsers send `Origin: null` on our own forms
    (b"x-frame-options", b"DENY"),
]
# Styles and the one script come from our own fingerprinted files; a style attribute carries only a
# bar's width, a number the template computes (never user text). The script connects only here (a
# page's own URL as an event stream, then the page itself).
HTML_CSP = ("default-src 'none'; style-src 'self'; style-src-attr 'unsafe-inline'; script-src 'self'; "
            "connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HTML = "text/html; charset=utf-8"


@dataclass(slots=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)

    def length(self) -> int:
        return len(self.body)

    def header_list(self) -> list[tuple[bytes, bytes]]:
        """The ASGI header list: ours, the content type and length, and the security headers.
        ValueError for a value that can't be sent: not Latin-1 (UnicodeEncodeError), or holding a
        line break, which the server would refuse only once the answer is on its way."""
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]
        if any(b"\r" in v or b"\n" in v or b"\0" in v for _, v in headers):
            raise ValueError(f"a header value holds a line break or NUL: {self.headers!r:.300}")
        if self.content_type:
            headers.append((b"content-type", self.content_type.encode("latin-1")))
        headers.append((b"content-length", b"%d" % self.length()))
        headers += SECURITY_HEADERS
        return headers


@dataclass(slots=True)
class Download(Response):
    """An answer whose body is the file at `path`, sent a part at a time (an export: up to a
    studio's 500 MiB of files, never read into memory whole); the file is deleted once sent, or
    once the client is gone."""

    path: Path | None = None
    CHUNK: ClassVar[int] = 1024 * 1024

    def length(self) -> int:
        assert self.path is not None
        return self.path.stat().st_size

    async def send_body(self, send: Any, head_only: bool) -> None:
        assert self.path is not None
        try:
            with self.path.open("rb") as f:
                while not head_only and (part := f.read(self.CHUNK)):
                    await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            self.path.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class Refusal:
    """The verdict of a check that refuses a request before its handler runs (its host, origin,
    size, time, or a limit). The app puts it in the rendition the request was to be answered in."""

    status: int
    message: str
    headers: tuple[tuple[str, str], ...] = ()


def text(status: int, body: str, content_type: str = "text/plain; charset=utf-8", **kw: Any) -> Response:
    return Response(status, body.encode("utf-8"), content_type, **kw)


def json_response(status: int, value: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json",
                    headers or [])


def redirect(location: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(303, b"", None, [("location", location), *(headers or [])])


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
