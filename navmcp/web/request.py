"""One HTTP request as the handlers see it: method, path, headers, and its body read once, bounded
in size (413) and in time (408). The body deadline is kept by one timer per event loop
(`BodyDeadlines`), not one per read."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from navmcp.mcp.codec import decode
from navmcp.mcp.jsonrpc import ParseError
from navmcp.web import uploads

# Bytes. The biggest valid request: a 100,000-character body of 4-byte characters, form-encoded
# (%F0%9F%99%82) or JSON-escaped (\ud83d\ude42), is 12 bytes a character: 1.2 MB with its title.
MAX_BODY = 2 * 1024 * 1024
BODY_TIMEOUT = float(os.environ.get("NAVMCP_WEB_BODY_TIMEOUT") or 30)  # seconds for a whole request body (408)

_UNREAD = object()


class BodyTooLarge(Exception):
    pass


class BodyTimeout(Exception):
    pass


class BodyDeadlines:
    """The request-body deadline (408), kept by one timer per event loop rather than one per read:
    a timer per request (asyncio.timeout) cost more than the rest of a /mcp request's HTTP handling.
    While any body is being read, every TICK seconds the reads past their deadline are cancelled
    and answer BodyTimeout; a deadline is thus kept to within TICK."""

    TICK = 0.25

    def __init__(self) -> None:
        self._reading: dict[asyncio.Task, float] = {}  # task awaiting a body message → its deadline
        self._expired: set[asyncio.Task] = set()
        self._timer: asyncio.TimerHandle | None = None  # the sweep, armed while bodies are read
        self._loop: asyncio.AbstractEventLoop | None = None

    async def receive(self, receive: Callable[[], Awaitable[dict[str, Any]]], deadline: float) -> dict[str, Any]:
        task = asyncio.current_task()
        if task is None:  # answered at once inside the read that brought it whole (at_once.AtOnce)
            return await receive()
        self._reading[task] = deadline
        loop = asyncio.get_running_loop()
        if self._timer is None or self._loop is not loop:  # (tests may run the app on several loops)
            self._timer, self._loop = loop.call_later(self.TICK, self._sweep), loop
        try:
            return await receive()
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()  # our cancellation, not the server's: answer 408
            raise BodyTimeout() from None
        finally:
            del self._reading[task]

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for task, deadline in self._reading.items():
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(self.TICK, self._sweep) if self._reading else None


def declared_length(value: str) -> int | None:
    """A Content-Length's number, or None when it is not one (ASCII digits only: str.isdigit takes
    "²"). Past 18 digits, leading zeros aside, it is 10**18, more than any body taken: Python makes
    no int of 4,301 digits."""
    if not (value.isascii() and value.isdigit()):
        return None
    digits = value.lstrip("0")
    return int(digits or 0) if len(digits) <= 18 else 10**18


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query_string: str
    headers: dict[str, str]
    scheme: str
    receive: Callable[[], Awaitable[dict[str, Any]]]
    max_body: int = MAX_BODY
    _body: bytes | None = None
    client_ip: str = ""
    body_timeout: float = BODY_TIMEOUT
    deadlines: BodyDeadlines | None = None  # the app's; None: a timer for this request's body alone
    _message: Any = _UNREAD
    unproven_link: bool = False  # a login link from an address over its bad-token limit (WebLimits.before)
    target: Any = None  # what the request names and in which rendition it is answered (renditions.target)
    prepared: Any = None  # what its route's prepare step fetched on the loop for the handler (routing.PREPARE)
    files: dict[str, Any] | None = None  # a multipart form's files, once `form` has read it (web.uploads)
    _form: dict[str, list[str]] | None = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    @property
    def url(self) -> str:
        return self.path + ("?" + self.query_string if self.query_string else "")

    async def body(self) -> bytes:
        """The whole request body, refusing (413) anything over `max_body` before reading it all."""
        if self._body is None:
            declared = declared_length(self.header("content-length") or "")
            if declared is not None and declared > self.max_body:
                raise BodyTooLarge()
            chunks, size = [], 0
            deadline = asyncio.get_running_loop().time() + self.body_timeout
            deadlines = self.deadlines or BodyDeadlines()
            while True:  # a client sending its body byte by byte (or not at all) can't hold a request
                message = await deadlines.receive(self.receive, deadline)
                if message["type"] == "http.disconnect":
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    raise BodyTooLarge()
                chunks.append(chunk)
                if not message.get("more_body"):
                    break
            self._body = b"".join(chunks)
        return self._body

    async def message(self) -> Any:
        """The body decoded as JSON (strictly, as on stdio), decoded once: ParseError if it is not."""
        if self._message is _UNREAD:
            try:
                self._message = decode(await self.body())
            except ParseError as e:
                self._message = e
        if isinstance(self._message, ParseError):
            raise self._message
        return self._message

    async def form(self) -> dict[str, list[str]]:
        """A form's fields, urlencoded or multipart (its files then in `files`); a multipart body
        that is not one gives no fields."""
        if self._form is None:
            content_type = self.header("content-type") or ""
            if content_type.startswith(uploads.MULTIPART):
                try:
                    self._form, self.files = uploads.parse(await self.body(), content_type)
                except uploads.BadUpload:
                    self._form, self.files = {}, {}
            else:
                self._form = parse_qs((await self.body()).decode("utf-8", "replace"), keep_blank_values=True)
        return self._form
