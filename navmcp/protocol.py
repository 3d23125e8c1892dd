"""The MCP protocol core: JSON-RPC 2.0 and both eras of MCP, sans-IO.

`Connection.receive(value)` takes one decoded JSON value and returns the JSON value to send back,
or None when nothing is owed (a notification, or a batch of them); HTTP (`navmcp.web.mcp_http`)
calls it with the body it decoded and the request's headers. `Connection.receive_bytes` adds
decoding and encoding for a transport that moves framed bytes (stdio's lines).
No sockets, no stdin, nothing heavy imported: the same core serves stdio and HTTP, and the cold
start stays small because the workspace is only loaded by the first tool call.

Two eras (MCP 2026-07-28, basic/versioning):
- LEGACY (2025-11-25 and older): `initialize` opens a session; later requests rely on it.
- MODERN (2026-07-28): no handshake; every request carries its version, capabilities and client
  in `params._meta`, every result carries `resultType` and the server's identity.

Rules of this module:
- a connection's era is fixed by its first request (a modern `_meta` envelope on anything but
  `initialize` makes it modern, anything else legacy) and a request of the other era is refused:
  `initialize` on a modern connection with -32022 naming the versions served, an enveloped request
  on a legacy one with -32600. HTTP makes a connection per request and fixes its era up front;
- a modern request passes the ladder in `_modern_call` (envelope -32602, headers -32020, version
  -32022) before its method is looked up (-32601);
- every fault is a `navmcp.mcp.jsonrpc` exception (one class per code) and becomes exactly one
  JSON-RPC error, made by `jsonrpc.error_object` only, carrying the request's id whenever the id
  was readable;
- a request (it has an "id") gets exactly one response; a notification never gets one;
- tool failures are tool results with isError (the model reads them), not protocol errors.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from navmcp.errors import Busy, echo
from navmcp.idempotency import META_KEY
from navmcp.mcp.codec import Preencoded, decode, encode, preencoded
from navmcp.mcp.jsonrpc import (
    BatchBudgetSpent,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    ParseError,
    ServerBusy,
    UnsupportedProtocolVersion,
    error_object,
)
from navmcp.mcp.views import UI_EXTENSION, VIEW_CALL, renders_views

log = logging.getLogger("navmcp.protocol")

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # legacy: initialize
LATEST_VERSION = SUPPORTED_VERSIONS[0]
MODERN_VERSIONS = ("2026-07-28",)  # stateless: per-request `_meta`
MAX_BATCH = 100
# Seconds of work one batch may take (NAVMCP_BATCH_SECONDS): the requests of a batch not begun by
# then are answered `BatchBudgetSpent`, so one frame can't hold the server for MAX_BATCH costly calls.
BATCH_SECONDS = float(os.environ.get("NAVMCP_BATCH_SECONDS") or 10)

LEGACY, MODERN = "legacy", "modern"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"
IDEMPOTENCY_KEY = META_KEY  # a tools/call's `_meta` key: a write applied at most once (navmcp.idempotency)
# Streamable HTTP mirrors these body fields in headers (keys lower-case, as the web app keeps them).
VERSION_HEADER, METHOD_HEADER, NAME_HEADER = "mcp-protocol-version", "mcp-method", "mcp-name"
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",  # what Mcp-Name mirrors
              "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # a held write is a task where the client declares it (navmcp.held.tasks)
# Caching hints (server/utilities/caching) of the modern results that take them: milliseconds fresh,
# and whether one user's answer may serve another ("public": the same for everyone).
CACHE_HINTS: dict[str, tuple[int, str]] = {
    "server/discover": (300_000, "public"),
    "tools/list": (300_000, "public"),  # the tool list never changes
    "prompts/list": (300_000, "public"),
    "resources/templates/list": (300_000, "public"),
    "resources/list": (0, "private"),  # this user's studios and what awaits them, as of now
    "resources/read": (0, "private"),  # a page, as this user sees it now
}
# One fact: what both eras declare (discover's `capabilities`, initialize's): MCP Apps views among
# the extensions (navmcp.mcp.views; a client gets them where it declares the extension too).
CAPABILITIES: dict[str, dict[str, Any]] = {"tools": {}, "resources": {}, "prompts": {}, "completions": {},
                                           "extensions": {UI_EXTENSION: {}}}
# Where the transport can send between replies (`Connection.outbound`), pages can be watched too.
WATCHING_CAPABILITIES = {**CAPABILITIES, "resources": {"subscribe": True}}
NO_REPLY = object()  # a request answered later, or never (a subscription the client cancels)


class ToolHost(Protocol):
    """What the protocol needs from the application (`navmcp.mcp.tools.Session` is it): the static
    tool list and a way to call one, the pages as resources and their watching, the prompts and
    completion. Methods raise `navmcp.mcp.jsonrpc` faults for the protocol faults they find (an
    unknown resource is `InvalidParams` with `data.uri`)."""

    def tool_definitions(self) -> list[dict[str, Any]]: ...
    def call_tool(self, name: str, arguments: dict[str, Any], idempotency_key: Any = None, *,
                  views: bool = False, from_view: bool = False, elicit: bool = False, tasks: bool = False,
                  answer: tuple[Any, Any] | None = None) -> dict[str, Any]:
        """`idempotency_key`: the call's `_meta["io.github.navmcp/idempotencyKey"]`, if any.
        `views`: the client renders MCP Apps views (navmcp.mcp.views), so a result may carry one's data;
        `from_view`: the view made the call (a person in it), not the model. Modern era only, and
        passed only when set: `elicit` (the client takes form elicitations), `tasks` (it declares the
        Tasks extension), `answer` (a retry's inputResponses and requestState)."""
    def tool_names(self) -> frozenset[str]: ...
    def list_resources(self, cursor: Any) -> dict[str, Any]: ...
    def list_resource_templates(self) -> dict[str, Any]: ...
    def read_resource(self, uri: Any) -> dict[str, Any]: ...
    def list_prompts(self) -> dict[str, Any]: ...
    def get_prompt(self, name: Any, arguments: Any) -> dict[str, Any]: ...
    def complete(self, ref: Any, argument: Any, context: Any) -> dict[str, Any]: ...
    def get_task(self, task_id: Any) -> dict[str, Any]: ...
    def cancel_task(self, task_id: Any) -> None: ...
    def identify(self, client_info: dict[str, Any], protocol_version: str) -> None:
        """Who the client says it is: once per legacy session, with every modern request."""
    def group(self) -> AbstractContextManager[Any]:
        """A context in which the calls share one unit of work (see `Connection.group`)."""
    def watch(self, uri: Any, notify: Callable[[Any], None], end: Callable[[str], None]) -> Any:
        """Watch the page a resource URI names (`navmcp.mcp.subscriptions`): `notify` on each change,
        `end` when it can no longer be watched. A handle for `unwatch` (None: nothing to watch)."""
    def unwatch(self, handle: Any) -> None: ...
    def position(self) -> str:
        """Where the change feed stands now, as a token."""
    def missed(self, position: str, handle: Any) -> bool:
        """Whether a change after `position` may concern the watched page `handle`."""


def negotiate(requested: Any) -> str:
    return requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION


def declares_tasks(capabilities: Any) -> bool:
    """Whether a request's client capabilities declare the Tasks extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def takes_forms(capabilities: Any) -> bool:
    """Whether a client's capabilities declare form elicitation (an empty `elicitation` object
    means form, as the spec reads it for clients that predate the modes)."""
    declared = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(declared, dict) and (not declared or isinstance(declared.get("form"), dict))


@functools.lru_cache(maxsize=8)
def _server_meta(name: str, version: str) -> Preencoded:
    """A modern result's `_meta`, the server's identity: encoded once per process, not once per
    request (over HTTP every modern request has a `Connection` of its own)."""
    return preencoded({META_SERVER: {"name": name, "title": "navmcp", "version": version}})


class Connection:
    """One MCP connection's protocol state: its era, and in the legacy era the negotiated version,
    client info, initialized or not. Over HTTP a legacy session is rebuilt from its stored record
    per request, and a modern request gets a connection of its own (`era=MODERN`)."""

    def __init__(self, host: ToolHost, *, name: str, version: str, instructions: str, era: str | None = None,
                 resume: tuple[str, dict[str, Any]] | None = None, views: bool = False,
                 outbound: Callable[[dict[str, Any]], None] | None = None, watchable: bool = False):
        """`era`: fixed up front (HTTP), else by the first request. `resume`: a legacy session
        initialized before, as (protocol version, client info): it is served as after its
        `initialize`; `views`: whether its `initialize` declared MCP Apps views. `outbound`: how a
        transport that can send between replies (stdio, an HTTP listen stream) sends a message; then
        pages can be watched, and their notifications are handed to it from the change feed's
        thread. `watchable`: the transport serves watching (an HTTP request that could be a listen),
        though this connection has no `outbound`."""
        self.host = host
        self._server_meta = _server_meta(name, version)  # every modern result's `_meta`
        self.server_info = self._server_meta[META_SERVER]
        self.instructions = instructions
        self.era = era  # None until the first request fixes it
        self.protocol_version: str | None = resume[0] if resume else None
        self.client_info: dict[str, Any] = resume[1] if resume else {}
        self.initialized = resume is not None  # set by the initialize request; the notification only confirms
        # Whether the client renders MCP Apps views: a legacy connection's from its initialize, a
        # modern one's from each request's capabilities.
        self.views = views
        self.outbound = outbound
        self.watchable = watchable
        self._subscriptions: Any = None
        self._request_id: Any = None  # the id of the request being handled (a subscription is named by it)

    def close(self) -> None:
        """The transport is closing: whatever this connection watches is watched no more."""
        if self._subscriptions is not None:
            self._subscriptions.close()

    def end_subscriptions(self, reason: str) -> None:
        """End the open subscriptions from the server's side, each answered gracefully with `reason`."""
        if self._subscriptions is not None:
            self._subscriptions.finish(reason)

    # --- entry points ---------------------------------------------------------------------------

    def receive_bytes(self, data: bytes) -> bytes | None:
        try:
            value = decode(data)
        except ParseError as e:
            return encode(error_object(e))
        response = self.receive(value)
        if response is None:
            return None
        try:
            return encode(response)
        except (ValueError, RecursionError):  # last line of defence: stdout carries only valid JSON-RPC
            log.exception("could not encode a response")
            id_ = response.get("id") if isinstance(response, dict) else None
            return encode(error_object(InternalError("Internal error (details are in the server log)"),
                                       id_ if _valid_id(id_) and not isinstance(id_, str) else None))

    def group(self) -> AbstractContextManager[Any]:
        """For messages that arrived together (a client that pipelines): received inside this
        context, their writes may be one unit that is committed when it exits (or before a read
        that follows them), so their replies must be held until then. The context's value, if
        any, counts the commits that held (`commits`); if it raises, send `rolled_back(reply)`
        instead of each reply made after the last of those."""
        return self.host.group()

    def receive(self, value: Any, headers: Mapping[str, str] | None = None) -> Any:
        """The answer to one decoded message. `headers` (lower-case names) are the HTTP request's,
        checked against a modern request's body; None where there are none (stdio)."""
        if isinstance(value, list):
            return self._batch(value)
        return self._one(value, headers)

    # --- dispatch -------------------------------------------------------------------------------

    def _batch(self, values: list[Any]) -> Any:
        # JSON-RPC 2.0 batches are answered element by element (MCP 2025-06-18 dropped them, but
        # older clients may send them, and an odd frame must never break the connection).
        if self.era == MODERN:
            return error_object(InvalidRequest("Invalid Request: MCP 2026-07-28 takes one message at a time, "
                                               "not a batch"))
        if not values:
            return error_object(InvalidRequest("Invalid Request: empty batch"))
        if len(values) > MAX_BATCH:
            return error_object(InvalidRequest(f"Invalid Request: batch of {len(values)} exceeds {MAX_BATCH}"))
        if any(isinstance(v, dict) and v.get("method") == "initialize" for v in values):
            return error_object(InvalidRequest("Invalid Request: initialize must not be part of a batch"))
        deadline = time.monotonic() + BATCH_SECONDS
        responses = [self._one(values[0], None)]  # the first runs whatever it costs, as it would alone
        for value in values[1:]:
            responses.append(self._one(value, None) if time.monotonic() < deadline else _not_begun(value))
        responses = [r for r in responses if r is not None]
        return responses or None

    def _one(self, msg: Any, headers: Mapping[str, str] | None) -> dict[str, Any] | None:
        if not isinstance(msg, dict):
            return error_object(InvalidRequest("Invalid Request: expected a JSON object"))
        if "method" not in msg and ("result" in msg or "error" in msg):
            return None  # a response to a request we never send; nothing to answer
        id_ = msg.get("id")
        is_request = "id" in msg
        if is_request and not _valid_id(id_):
            # MCP: "Unlike base JSON-RPC, the ID MUST NOT be null."
            return error_object(InvalidRequest("Invalid Request: id must be a string or an integer (not null)"))
        try:
            if msg.get("jsonrpc") != "2.0":
                raise InvalidRequest('Invalid Request: "jsonrpc" must be "2.0"')
            method = msg.get("method")
            if not isinstance(method, str):
                raise InvalidRequest('Invalid Request: "method" must be a string')
            params = msg.get("params", {})
            if params is None:
                params = {}
            if isinstance(params, list):
                raise InvalidParams("Invalid params: MCP params must be an object, not an array")
            if not isinstance(params, dict):
                raise InvalidRequest("Invalid Request: params must be a structured value")
            if not is_request:
                self._notify(method, params)
                return None
            self._request_id = id_
            era = self.era
            if era is None:  # the first request decides, once
                era = self.era = MODERN if method != "initialize" and _enveloped(params) else LEGACY
            if era == MODERN:
                result = self._modern_call(method, params, headers)
                return None if result is NO_REPLY else {"jsonrpc": "2.0", "id": id_, "result": result}
            if method != "initialize" and _enveloped(params):
                raise InvalidRequest("Invalid Request: this connection speaks the legacy era of MCP (it opened with "
                                     "initialize); a request with the 2026-07-28 `_meta` envelope needs a new "
                                     "connection that opens with it")
            return {"jsonrpc": "2.0", "id": id_, "result": self._call(method, params)}
        except InvalidRequest as e:  # answered even without an id: the frame was no valid notification
            return error_object(e, id_ if is_request else None)
        except JsonRpcError as e:
            return error_object(e, id_) if is_request else None
        except Busy as e:  # the database busy or away, outside a tool call (whose result says it itself)
            busy = ServerBusy(f"Server error: {e.message}", {"retryAfter": e.retry_after})
            return error_object(busy, id_) if is_request else None
        except Exception:
            log.exception("internal error handling %r", msg.get("method"))
            return error_object(InternalError("Internal error (details are in the server log)"), id_) if is_request else None

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        handler = self._notifications.get(method)
        if handler is None:
            log.debug("ignoring unknown notification %s", method)
            return
        handler(self, params)

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        handler = self._legacy_methods.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {echo(method)}")
        if not self.initialized and method not in ("initialize", "ping"):
            raise InvalidRequest(f"Invalid Request: {method} before initialize; send initialize first")
        return handler(self, params)

    def _modern_call(self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None) -> Any:
        """A 2026-07-28 request: its `_meta` envelope, the HTTP headers that mirror it, its version,
        then its method. The result gets `resultType`, the server's identity, and caching hints."""
        meta = params.get("_meta")
        if method == "initialize" and headers is None and not _enveloped(params):
            # a legacy client on a modern stdio connection: name the versions it could use instead
            raise UnsupportedProtocolVersion(
                "this connection speaks MCP 2026-07-28 (it opened with a request carrying `_meta`); the initialize "
                "handshake is not accepted on it", params.get("protocolVersion"), MODERN_VERSIONS)
        if type(meta) is not dict:
            raise InvalidParams(f"Invalid params: params._meta must be an object with {META_VERSION!r} and "
                                f"{META_CAPABILITIES!r} (MCP 2026-07-28 sends them with every request)")
        if META_VERSION not in meta or META_CAPABILITIES not in meta:
            missing = [k for k in (META_VERSION, META_CAPABILITIES) if k not in meta]
            raise InvalidParams(f"Invalid params: params._meta lacks {' and '.join(map(repr, missing))}, "
                                "required on every MCP 2026-07-28 request")
        version = meta[META_VERSION]
        if headers is not None:
            _check_headers(method, params, version, headers)
        if type(version) is not str:
            raise InvalidParams(f"Invalid params: {META_VERSION!r} must be a string such as {MODERN_VERSIONS[0]!r}")
        if version not in MODERN_VERSIONS:
            raise UnsupportedProtocolVersion(f"Unsupported protocol version {echo(version)!r}: this server speaks "
                                             f"{', '.join(MODERN_VERSIONS)} per request, and "
                                             f"{', '.join(SUPPORTED_VERSIONS)} after initialize", version, MODERN_VERSIONS)
        if type(meta[META_CAPABILITIES]) is not dict:
            raise InvalidParams(f"Invalid params: {META_CAPABILITIES!r} must be an object")
        client_info = meta.get(META_CLIENT)
        if client_info is not None and type(client_info) is not dict:
            raise InvalidParams(f"Invalid params: {META_CLIENT!r} must be an object")
        handler = self._modern_methods.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {echo(method)} (not part of MCP {version})")
        self.host.identify(client_info or {}, version)
        self.views = renders_views(meta[META_CAPABILITIES])
        result = handler(self, params)
        if result is NO_REPLY:
            return result
        hint = CACHE_HINTS.get(method)
        if hint is not None:
            result["ttlMs"], result["cacheScope"] = hint
        result.setdefault("resultType", "complete")  # a held write asking the person: "input_required"
        own = result.get("_meta")  # a tool result's own (an MCP Apps view's page) goes beside the server's identity
        result["_meta"] = self._server_meta if own is None else {**self._server_meta, **own}
        return result

    # --- methods --------------------------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        client_info = params.get("clientInfo")
        if client_info is not None and not isinstance(client_info, dict):
            raise InvalidParams("Invalid params: clientInfo must be an object")
        self.protocol_version = negotiate(params.get("protocolVersion"))
        self.client_info = client_info or {}
        self.views = renders_views(params.get("capabilities"))
        self.initialized = True
        self.host.identify(self.client_info, self.protocol_version)
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {**self._capabilities(), "tools": {"listChanged": False}},
            "serverInfo": self.server_info,
            "instructions": self.instructions,
        }

    def _discover(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = self._capabilities()
        capabilities = {**capabilities, "extensions": {**capabilities["extensions"], TASKS_EXTENSION: {}}}
        return {"supportedVersions": list(MODERN_VERSIONS), "capabilities": capabilities,
                "instructions": self.instructions}

    def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _capabilities(self) -> dict[str, Any]:
        return WATCHING_CAPABILITIES if self.outbound is not None or self.watchable else CAPABILITIES

    def _watching(self, method: str):
        if self.outbound is None:
            raise MethodNotFound(f"Method not found: {method} (this transport sends nothing between replies, so "
                                 "pages can't be watched on it)")
        if self._subscriptions is None:
            from navmcp.mcp.subscriptions import Subscriptions

            self._subscriptions = Subscriptions(self.host, self.outbound)
        return self._subscriptions

    def _subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._watching("resources/subscribe").subscribe(params.get("uri"))

    def _unsubscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._watching("resources/unsubscribe").unsubscribe(params.get("uri"))

    def _listen(self, params: dict[str, Any]) -> Any:
        self._watching("subscriptions/listen").listen(self._request_id, params)
        return NO_REPLY

    def _cancelled(self, params: dict[str, Any]) -> None:
        if self._subscriptions is not None:
            self._subscriptions.cancel(params.get("requestId"))

    def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": self.host.tool_definitions()}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams('Invalid params: tools/call needs "name" (a string)')
        if name not in self.host.tool_names():
            raise InvalidParams(f"Unknown tool: {echo(name)}. Tools: {', '.join(sorted(self.host.tool_names()))}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams('Invalid params: "arguments" must be an object')
        meta = params.get("_meta")
        key = meta.get(IDEMPOTENCY_KEY) if isinstance(meta, dict) else None
        options: dict[str, Any] = {"views": True} if self.views else {}
        if self.views and isinstance(meta, dict) and meta.get(VIEW_CALL) is True:
            options["from_view"] = True
        if self.era == MODERN:  # a held write may ask the client's person (multi round-trip), or be a task
            capabilities = meta[META_CAPABILITIES] if isinstance(meta, dict) else None
            if takes_forms(capabilities):
                options["elicit"] = True
            if declares_tasks(capabilities):
                options["tasks"] = True
            if params.get("inputResponses") is not None or params.get("requestState") is not None:
                options["answer"] = (params.get("inputResponses"), params.get("requestState"))
        if key is None:
            return self.host.call_tool(name, arguments, **options)
        return self.host.call_tool(name, arguments, key, **options)

    def _resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.list_resources(params.get("cursor"))

    def _resource_templates_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.list_resource_templates()

    def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.read_resource(params.get("uri"))

    def _prompts_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.list_prompts()

    def _prompts_get(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.get_prompt(params.get("name"), params.get("arguments"))

    def _complete(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.complete(params.get("ref"), params.get("argument"), params.get("context"))

    # The Tasks extension (modern era): a held write's task, read and withdrawn (navmcp.held.tasks).
    def _tasks_get(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.host.get_task(params.get("taskId"))

    def _tasks_update(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}  # a held write's task never asks for input: an answer is acknowledged and ignored

    def _tasks_cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        self.host.cancel_task(params.get("taskId"))
        return {}  # acknowledged whatever the id (SEP-2663)

    # The method tables, one per era: a method missing from an era's table is -32601 in it.
    _shared_methods: dict[str, Callable[[Connection, dict[str, Any]], Any]] = {
        "tools/list": _tools_list,
        "tools/call": _tools_call,
        "resources/list": _resources_list,
        "resources/templates/list": _resource_templates_list,
        "resources/read": _resources_read,
        "prompts/list": _prompts_list,
        "prompts/get": _prompts_get,
        "completion/complete": _complete,
    }
    _legacy_methods = {"initialize": _initialize, "ping": _ping, "resources/subscribe": _subscribe,
                       "resources/unsubscribe": _unsubscribe, **_shared_methods}
    _modern_methods = {"server/discover": _discover, "subscriptions/listen": _listen, "tasks/get": _tasks_get,
                       "tasks/update": _tasks_update, "tasks/cancel": _tasks_cancel, **_shared_methods}
    _notifications: dict[str, Callable[[Connection, dict[str, Any]], None]] = {
        "notifications/initialized": lambda self, params: None,
        # Calls run to completion, so only a subscription (a request that stays open) can be cancelled.
        "notifications/cancelled": _cancelled,
    }


def _enveloped(params: dict[str, Any]) -> bool:
    """Does the request carry the modern era's `_meta` envelope? Its version key is the sign: legacy
    clients never send it (their `_meta` holds e.g. a progressToken)."""
    meta = params.get("_meta")
    return type(meta) is dict and META_VERSION in meta


def _check_headers(method: str, params: dict[str, Any], version: Any, headers: Mapping[str, str]) -> None:
    """Streamable HTTP's server validation: the headers that mirror the body must be there and agree
    (a field value's surrounding spaces and tabs are not part of it, RFC 9110 5.5)."""
    sent = _field(headers, VERSION_HEADER)
    if sent is None:
        raise HeaderMismatch("Header mismatch: the MCP-Protocol-Version header is missing (it must repeat "
                             f"params._meta[{META_VERSION!r}])")
    if sent != version:
        raise HeaderMismatch(f"Header mismatch: MCP-Protocol-Version {echo(sent)!r} does not match the body's "
                             f"protocol version {echo(version)!r}")
    sent = _field(headers, METHOD_HEADER)
    if sent != method:
        raise HeaderMismatch("Header mismatch: the Mcp-Method header is missing" if sent is None else
                             f"Header mismatch: Mcp-Method {echo(sent)!r} does not match the body's method "
                             f"{echo(method)!r}")
    key = NAME_PARAM.get(method)
    if key is not None and params.get(key) is not None:
        sent = _field(headers, NAME_HEADER)
        if sent is None:
            raise HeaderMismatch(f"Header mismatch: the Mcp-Name header is missing (it must repeat params.{key})")
        if header_value(sent) != params[key]:
            raise HeaderMismatch(f"Header mismatch: Mcp-Name {echo(sent)!r} does not match the body's "
                                 f"params.{key} {echo(params[key])!r}")


def _field(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return value.strip(" \t") if value is not None else None


_BASE64_VALUE = re.compile(r"=\?base64\?(.*)\?=")


def header_value(raw: str) -> str | None:
    """A mirrored header's value: itself, or the UTF-8 text of its `=?base64?...?=` form (None when
    that form is malformed, so it never matches a body value)."""
    match = _BASE64_VALUE.fullmatch(raw)
    if match is None:
        return raw
    import base64
    import binascii

    try:
        data = base64.b64decode(match.group(1), validate=True)
        return data.decode("utf-8") if base64.b64encode(data).decode("ascii") == match.group(1) else None
    except (binascii.Error, UnicodeDecodeError):
        return None


def rolled_back(reply: bytes | None, results_stand: bool = False) -> bytes | None:
    """What to send instead of `reply` when the work behind it was rolled back (its group failed to
    commit): each result (unless `results_stand`: the request only read), and each internal error
    (the failed commit itself may have caused it), becomes the internal error saying so, with the
    same id; other errors stay as they were."""
    if reply is None:
        return None
    value = decode(reply)
    error = InternalError("Internal error: the work of this request could not be committed, nothing of it "
                          "was applied (details are in the server log); send it again")

    def one(response: Any) -> Any:
        failed = response.get("error", {}).get("code") == InternalError.code
        if failed or ("result" in response and not results_stand):
            return error_object(error, response.get("id"))
        return response

    return encode([one(r) for r in value] if isinstance(value, list) else one(value))


def _not_begun(msg: Any) -> dict[str, Any] | None:
    """The answer to a request of a batch whose time budget was spent before it (nothing of it ran)."""
    if not (isinstance(msg, dict) and "method" in msg and _valid_id(msg.get("id"))):
        return None
    return error_object(BatchBudgetSpent(f"Server error: this batch's time budget ({BATCH_SECONDS:g} s) was spent "
                                         "before this request began; nothing of it ran: send it again, alone or "
                                         "in a smaller batch"), msg["id"])


def _valid_id(id_: Any) -> bool:
    return isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool))
