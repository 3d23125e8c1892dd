"""Watching pages over MCP: resource subscriptions in both eras, on the change feed (`navmcp.feeds.changes`).

- Legacy (2025-11-25 and older), on a transport that sends between replies (stdio):
  `resources/subscribe {uri}` / `resources/unsubscribe {uri}`; every change of a watched page sends
  `notifications/resources/updated {uri}`. A page the watcher loses gets one last such notification
  (reading it then says it does not exist) and is watched no more.
- Modern (2026-07-28, basic/patterns/subscriptions): `subscriptions/listen` with
  `notifications.resourceSubscriptions`. The acknowledgement goes first, then
  `notifications/resources/updated`, each carrying the listen request's id as
  `_meta[SUBSCRIPTION_ID]`. The request itself is answered only when the server ends the
  subscription (the watcher lost one of its pages: a `complete` result whose `_meta` says why); the
  client ends it with `notifications/cancelled` naming the request (stdio) or by closing the stream.
  The tool and prompt lists never change, so their list-changed filters are not honoured.

Every URI is checked as `resources/read` checks it (a page you may not see does not exist), before
anything is sent; a connection watches at most MAX_WATCHES pages. `send` is the transport's: it is
called from the change feed's thread, and hands one JSON-RPC message on without waiting for the client.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from navmcp.mcp.jsonrpc import InvalidParams

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
END_REASON = "io.github.navmcp/reason"  # why the server ended a subscription, in its final result's `_meta`
# The change feed's position (`navmcp.feeds.changes`), in the `_meta` of a listen's acknowledgement, of each
# notification and of its final result: a listen that names it in its own `_meta` (after a stream that
# ended or dropped) is told at once of each page that changed since.
POSITION = "io.github.navmcp/position"
# What changed, in a notification's `_meta`: {"kind": the action's name, "summary": "vote by @bob"}
# (`navmcp.feeds.changes.summary`), so a watcher waiting for one kind of change need not read the page after
# every other. Absent where the feed has no words for it (a catch-up after a reconnection, say).
CHANGE = "io.github.navmcp/change"
MAX_WATCHES = 100

Send = Callable[[dict[str, Any]], None]


class Subscriptions:
    """One connection's watches. `host.watch(uri, notify, end)` starts watching a resource (raising
    InvalidParams for one that does not exist for this user) and returns a handle for `host.unwatch`;
    `host.position()` is where the change feed stands, and `host.missed(position, handle)` whether the
    handle's page changed after it."""

    def __init__(self, host, send: Send):
        self.host = host
        self.send = send
        self._lock = threading.Lock()
        self._legacy: dict[str, Any] = {}  # uri -> handle
        self._listens: dict[Any, list[Any]] = {}  # listen request id -> handles

    def _count(self) -> int:
        return len(self._legacy) + sum(len(handles) for handles in self._listens.values())

    def _room_for(self, more: int) -> None:
        if self._count() + more > MAX_WATCHES:
            raise InvalidParams(f"Invalid params: a connection watches at most {MAX_WATCHES} pages and this one "
                                f"watches {self._count()}; cancel some subscriptions first")

    # --- legacy ---------------------------------------------------------------------------------

    def subscribe(self, uri: Any) -> dict[str, Any]:
        with self._lock:
            if uri in self._legacy:
                return {}
            self._room_for(1)

        def updated(change=None) -> None:
            what = _what(change)
            self.send(_notification("notifications/resources/updated", {"_meta": what, "uri": uri} if what else {"uri": uri}))

        def lost(reason: str) -> None:
            with self._lock:
                self._legacy.pop(uri, None)
            updated()

        handle = self.host.watch(uri, updated, lost)
        with self._lock:
            self._legacy[uri] = handle
        return {}

    def unsubscribe(self, uri: Any) -> dict[str, Any]:
        with self._lock:
            handle = self._legacy.pop(uri, None)
        if handle is not None:
            self.host.unwatch(handle)
        return {}

    # --- modern ---------------------------------------------------------------------------------

    def listen(self, request_id: Any, params: dict[str, Any]) -> None:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise InvalidParams('Invalid params: subscriptions/listen needs "notifications", an object naming what '
                                'to receive (e.g. {"resourceSubscriptions": ["navmcp:///studios/team"]})')
        uris = wanted.get("resourceSubscriptions", [])
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise InvalidParams('Invalid params: "resourceSubscriptions" must be a list of resource URIs')
        uris = list(dict.fromkeys(uris))
        with self._lock:
            if request_id in self._listens:
                raise InvalidParams(f"Invalid params: subscription {request_id!r} is already open")
            self._room_for(len(uris))
            self._listens[request_id] = []
        meta = {SUBSCRIPTION_ID: request_id}
        gate = threading.Event()  # nothing is sent on a subscription before its acknowledgement
        after = (params.get("_meta") or {}).get(POSITION) if isinstance(params.get("_meta"), dict) else None

        def updated(uri: str) -> Callable[[Any], None]:
            def send(change) -> None:
                gate.wait(5)
                if request_id in self._listens:
                    self.send(_notification("notifications/resources/updated",
                                            {"_meta": {**meta, POSITION: change.position, **_what(change)}, "uri": uri}))
            return send

        def lost(reason: str) -> None:
            gate.wait(5)
            self._finish(request_id, reason)

        missed: list[str] = []
        try:
            for uri in uris:
                handle = self.host.watch(uri, updated(uri), lost)
                with self._lock:
                    self._listens[request_id].append(handle)
                if isinstance(after, str) and handle is not None and self.host.missed(after, handle):
                    missed.append(uri)
            position = self.host.position()
        except BaseException:
            self._end(request_id)
            raise
        honored = {"resourceSubscriptions": uris} if uris else {}
        self.send(_notification("notifications/subscriptions/acknowledged",
                                {"_meta": {**meta, POSITION: position}, "notifications": honored}))
        for uri in missed:  # changed while the client was away
            self.send(_notification("notifications/resources/updated",
                                    {"_meta": {**meta, POSITION: position}, "uri": uri}))
        gate.set()

    def cancel(self, request_id: Any) -> None:
        self._end(request_id)

    def finish(self, reason: str) -> None:
        """End every open subscription from the server's side, each with its graceful response."""
        with self._lock:
            open_ids = list(self._listens)
        for request_id in open_ids:
            self._finish(request_id, reason)

    def _finish(self, request_id: Any, reason: str) -> None:
        if self._end(request_id):
            meta = {SUBSCRIPTION_ID: request_id, END_REASON: reason}
            try:
                meta[POSITION] = self.host.position()
            except Exception:  # the database is away: the client listens again without one, and re-reads
                pass
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "_meta": meta}})

    def _end(self, request_id: Any) -> bool:
        with self._lock:
            handles = self._listens.pop(request_id, None)
        for handle in handles or ():
            self.host.unwatch(handle)
        return handles is not None

    def close(self) -> None:
        """The transport closed: stop watching everything."""
        with self._lock:
            handles = list(self._legacy.values()) + [h for hs in self._listens.values() for h in hs]
            self._legacy.clear()
            self._listens.clear()
        for handle in handles:
            self.host.unwatch(handle)


def _what(change: Any) -> dict[str, Any]:
    """A notification's `_meta` saying what changed, or nothing where that is not known."""
    if change is None or getattr(change, "summary", None) is None:
        return {}
    return {CHANGE: {"kind": change.action, "summary": change.summary}}


def _notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
