"""JSON-RPC 2.0 faults: one exception class per error code, and `error_object`, the one place a
fault becomes a JSON-RPC error on the wire. Below the protocol core and everything it calls
(resources, prompts, completion, subscriptions), so each of them raises these without importing
the core."""

from __future__ import annotations

from typing import Any


class JsonRpcError(Exception):
    code = -32603
    default = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None):
        super().__init__(message or self.default)
        self.message = message or self.default
        self.data = data


class ParseError(JsonRpcError):
    code, default = -32700, "Parse error"


class InvalidRequest(JsonRpcError):
    code, default = -32600, "Invalid Request"


class MethodNotFound(JsonRpcError):
    code, default = -32601, "Method not found"


class InvalidParams(JsonRpcError):
    code, default = -32602, "Invalid params"


class InternalError(JsonRpcError):
    code, default = -32603, "Internal error"


class SessionNotFound(JsonRpcError):
    """Streamable HTTP: the Mcp-Session-Id names no live session of this user (HTTP 404)."""

    code, default = -32001, "Session not found"


class BatchBudgetSpent(JsonRpcError):
    code, default = -32000, "Server error: the batch's time budget was spent before this request"


class ServerBusy(JsonRpcError):
    """The database busy or away (`errors.Busy`): nothing was done, send it again (`data.retryAfter`
    seconds). Never "not found" or "internal error" for a fault that passes."""

    code, default = -32000, "Server error: the database is busy or away; send it again in a moment"


class HeaderMismatch(JsonRpcError):
    """An HTTP header that mirrors a body field is missing, malformed, or says something else."""

    code, default = -32020, "Header mismatch"


class UnsupportedProtocolVersion(JsonRpcError):
    code, default = -32022, "Unsupported protocol version"

    def __init__(self, message: str, requested: Any, supported: tuple[str, ...]):
        super().__init__(message, {"supported": list(supported), "requested": requested})


def error_object(error: JsonRpcError, id_: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": id_, "error": body}
