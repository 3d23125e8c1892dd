"""Client ID Metadata Documents, fetched off the serving path.

A client id that is a URL names a JSON document anyone can point at anything, so fetching it must
never hold what serves everyone else. The fetch happens here, on the event loop, before the
request is handed to its handler (`Documents.prepare`, from the OAuth endpoints' prepare step):
the request waits without holding a thread, the loop goes on serving others, and the handler
(on the loop or in a worker thread) only reads what was prepared for it, never the network.

- One deadline for the whole fetch (name resolution, connection, TLS, head and body together:
  `DEADLINE`), a size cap on the head and the body (`MAX_BYTES`), no redirects.
- Name resolution runs in a few threads of its own (`FETCHES_AT_ONCE`), so a slow DNS server
  ties up those threads and nothing else.
- A cache that believes a document as long as HTTP caching says (`Cache-Control`, `Expires`,
  `Age`; 5 minutes when it says nothing, a day at most) and remembers a failure for
  `FAILURE_SECONDS`; the same URL asked for by many at once is fetched once.
- Bounds: `FETCHES_AT_ONCE` different documents in flight, `WAITING_PER_ADDRESS` requests of one
  client address waiting on fetches, `WAITING_AT_ONCE` waiting in all. Past any of them a request
  is refused at once (`Busy`), never queued.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import socket
import ssl
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import h11

from navmcp.oauth import clients, metadata

DEADLINE = 5.0  # seconds for the whole fetch: resolution, connection, head and body
MAX_BYTES = 5 * 1024  # a document's body; its head is held to 4 KiB
HEAD_MAX_BYTES = 4 * 1024
DEFAULT_SECONDS = 300.0  # a document believed this long when its response says nothing of caching
MAX_SECONDS = 86400.0
FAILURE_SECONDS = 60.0  # a failed fetch (or a document refused) is remembered this long
FETCHES_AT_ONCE = 8
WAITING_PER_ADDRESS = 2
WAITING_AT_ONCE = 64
CACHED_MAX = 1024
log = logging.getLogger("navmcp.oauth")


class FetchFailed(Exception):
    """Why a document could not be used (the `invalid_client` description)."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = metadata.header_text(description, 300)  # it becomes an OAuth error description


@dataclass(frozen=True)
class Busy:
    """A request refused because fetches are at their bound: try again in `retry_after` seconds."""

    reason: str
    retry_after: int = 5


class Documents:
    """The process's metadata documents: cached outcomes, fetches in flight, who waits on them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the cache is read from worker threads too
        self._cached: OrderedDict[str, tuple[clients.Client | FetchFailed, float]] = OrderedDict()
        self._flying: dict[str, asyncio.Future[clients.Client | FetchFailed]] = {}
        self._waiting: dict[str, int] = {}  # client address → its requests waiting on a fetch
        self._resolver: ThreadPoolExecutor | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.fetches = 0  # fetches begun (tests and figures read it)

    # --- what a handler reads ------------------------------------------------------------------

    def cached(self, url: str) -> clients.Client | FetchFailed | None:
        with self._lock:
            known = self._cached.get(url)
            if known is None or known[1] <= time.monotonic():
                return None
            self._cached.move_to_end(url)
            return known[0]

    def _remember(self, url: str, outcome: clients.Client | FetchFailed, seconds: float) -> None:
        with self._lock:
            self._cached.pop(url, None)
            if seconds > 0:
                self._cached[url] = (outcome, time.monotonic() + seconds)
                while len(self._cached) > CACHED_MAX:
                    self._cached.popitem(last=False)

    # --- the prepare step, on the loop ------------------------------------------------------------

    async def prepare(self, url: str, address: str, server_metadata: dict[str, Any]) -> clients.Client | FetchFailed | Busy:
        """The outcome for `url`: cached, joined to a fetch in flight, or fetched now; Busy past a bound."""
        known = self.cached(url)
        if known is not None:
            return known
        waiting = self._waiting.get(address, 0)
        if waiting >= WAITING_PER_ADDRESS:
            return Busy(f"this address already waits on {waiting} client metadata documents")
        if sum(self._waiting.values()) >= WAITING_AT_ONCE:
            return Busy("too many requests are waiting on client metadata documents")
        loop = asyncio.get_running_loop()
        flying = self._flying.get(url)
        if flying is None or flying.get_loop() is not loop:
            if len(self._flying) >= FETCHES_AT_ONCE:
                return Busy("too many client metadata documents are being fetched")
            flying = loop.create_future()
            self._flying[url] = flying
            self.fetches += 1
            task = loop.create_task(self._fetch(url, server_metadata, flying))
            self._tasks.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self._tasks.discard)
        self._waiting[address] = waiting + 1
        try:
            return await asyncio.shield(flying)
        finally:
            left = self._waiting[address] - 1
            if left:
                self._waiting[address] = left
            else:
                del self._waiting[address]

    async def _fetch(self, url: str, server_metadata: dict[str, Any],
                     flying: asyncio.Future[clients.Client | FetchFailed]) -> None:
        try:
            try:
                async with asyncio.timeout(DEADLINE):
                    data, seconds = await self._get(url)
                outcome: clients.Client | FetchFailed = document_client(url, data, server_metadata)
            except TimeoutError:
                outcome, seconds = FetchFailed(f"the client metadata document was not received within "
                                               f"{DEADLINE:g} seconds"), FAILURE_SECONDS
            except FetchFailed as failed:
                outcome, seconds = failed, FAILURE_SECONDS
            except (OSError, ssl.SSLError, h11.ProtocolError) as e:
                outcome, seconds = FetchFailed(f"the client metadata document could not be fetched "
                                               f"({type(e).__name__})"), FAILURE_SECONDS
            except Exception:  # a fault of ours: the waiters still get an answer, the log the details
                log.exception("fetching the client metadata document %s", url)
                outcome, seconds = FetchFailed("the client metadata document could not be read"), FAILURE_SECONDS
            if isinstance(outcome, FetchFailed):
                seconds = FAILURE_SECONDS
            self._remember(url, outcome, seconds)
            if not flying.done():
                flying.set_result(outcome)
        finally:
            if self._flying.get(url) is flying:
                del self._flying[url]
            if not flying.done():  # cancelled (the loop is closing)
                flying.cancel()

    async def _get(self, url: str) -> tuple[dict[str, Any], float]:
        """GET the document: (the JSON object, seconds to believe it)."""
        try:
            scheme, host, port = clients.check_document_url(url)
        except clients.InvalidClientError as e:
            raise FetchFailed(e.description or "the client id is not an acceptable URL") from None
        address = await self._resolve(host, port)
        parts = urlsplit(url)
        context = ssl.create_default_context() if scheme == "https" else None
        reader, writer = await asyncio.open_connection(address, port, ssl=context,
                                                       server_hostname=host if context else None,
                                                       limit=HEAD_MAX_BYTES)
        try:
            conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_MAX_BYTES)
            target = parts.path + ("?" + parts.query if parts.query else "")
            writer.write(conn.send(h11.Request(method="GET", target=target, headers=[
                ("Host", parts.netloc), ("Accept", "application/json"), ("User-Agent", "navmcp-oauth"),
                ("Connection", "close")])) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            response: h11.Response | None = None
            body = bytearray()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(4096))
                    continue
                if isinstance(event, h11.Response):
                    response = event
                    if event.status_code != 200:
                        raise FetchFailed(f"the client metadata document answered HTTP {event.status_code}")
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_BYTES:
                        raise FetchFailed(f"the client metadata document is larger than {MAX_BYTES} bytes")
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
        finally:
            writer.close()
        if response is None:
            raise FetchFailed("the client metadata document's server closed the connection without an answer")
        try:
            data = json.loads(bytes(body))
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
            raise FetchFailed("the client metadata document is not JSON") from None
        if not isinstance(data, dict):
            raise FetchFailed("the client metadata document is not a JSON object")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
        return data, freshness(headers, time.time())

    async def _resolve(self, host: str, port: int) -> str:
        """The one address to connect to, resolved in threads of our own (a slow DNS server holds
        those, not the loop's default executor nor a worker thread)."""
        if self._resolver is None:
            self._resolver = ThreadPoolExecutor(max_workers=FETCHES_AT_ONCE, thread_name_prefix="navmcp-resolve")
        try:
            infos = await asyncio.get_running_loop().run_in_executor(
                self._resolver, lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (socket.gaierror, UnicodeError):
            raise FetchFailed(f"the client metadata document's host {host!r} does not resolve") from None
        address = clients.connectable_address([str(info[4][0]) for info in infos])
        if address is None:
            raise FetchFailed("the client metadata document's host is not a public address")
        return address


def document_client(url: str, data: dict[str, Any], server_metadata: dict[str, Any]) -> clients.Client:
    """The client a fetched document describes; FetchFailed saying why it can't be used."""
    if data.get("client_id") != url:
        raise FetchFailed("the client metadata document's client_id is not its own URL")
    if not data.get("client_name"):
        raise FetchFailed("the client metadata document has no client_name")
    method = data.get("token_endpoint_auth_method") or "none"
    if method != "none":
        raise FetchFailed(f"token_endpoint_auth_method {method!r} is not supported for metadata-document "
                          "clients (only 'none')")
    try:
        metadata = clients.validate_metadata({**data, "token_endpoint_auth_method": "none"}, server_metadata)
    except ValueError as e:
        raise FetchFailed(f"the client metadata document is invalid: {e}") from None
    return clients.Client(url, metadata)


def freshness(headers: dict[str, str], now: float) -> float:
    """Seconds a response may be believed (RFC 9111 §4.2, for a private cache): `no-store` and
    `no-cache` none, else `max-age` less `Age`, else `Expires` less `Date`, else DEFAULT_SECONDS;
    at most MAX_SECONDS."""
    directives: dict[str, str] = {}
    for part in (headers.get("cache-control") or "").lower().split(","):
        name, _, value = part.strip().partition("=")
        if name:
            directives[name] = value.strip().strip('"')
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    age_text = headers.get("age", "").strip()
    age = float(age_text) if age_text.isascii() and age_text.isdigit() else 0.0
    if "max-age" in directives:
        value = directives["max-age"]
        lifetime = float(value) if value.isascii() and value.isdigit() else 0.0
    elif "expires" in headers:
        expires = _http_date(headers["expires"])
        if expires is None:
            return 0.0  # an invalid Expires means already expired
        date = _http_date(headers.get("date", "")) or now
        lifetime = expires - date
    else:
        lifetime = DEFAULT_SECONDS
    return max(0.0, min(lifetime - age, MAX_SECONDS))


def _http_date(value: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed.timestamp() if parsed is not None and parsed.tzinfo is not None else None


DOCUMENTS = Documents()  # documents are public: one cache for the process
