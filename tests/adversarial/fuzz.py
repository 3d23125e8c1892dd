"""Frame generators and the oracle every transport's answers must satisfy.

The oracle states the protocol's promises independently of the server's code: a frame that is
not strict JSON gets one -32700 error; a valid notification gets nothing; a request with a valid
id gets exactly one answer with that id; anything else gets one error with id null; a batch gets
a list of such answers (or nothing when it held only notifications). No answer is ever an
internal error (-32603): on bad input that would be a bug, not a verdict.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from navmcp.actions import ACTIONS as ALL_ACTIONS

ERROR_CODES = {-32700, -32600, -32601, -32602}
MISSING = object()
# leave_studio takes no params to fuzz, and it would take the fuzzing user out of the shared world
# (every later call a "no page"); tests/store/test_store_contract.py and the authz matrix cover it.
ACTIONS = [a for a in ALL_ACTIONS if a.name != "leave_studio"]
ACTION_NAMES = sorted({a.name for a in ACTIONS})
PARAM_NAMES = sorted({n for a in ACTIONS for n in a.params.model_fields})
METHODS = ["initialize", "ping", "tools/list", "tools/call", "notifications/initialized",
           "notifications/cancelled", "resources/list", "prompts/get", "logging/setLevel", "", "tools/call ",
           "TOOLS/CALL", "rpc.discover"]
# "@NOTE", "@DECISION", "@COMMITMENT" stand for real item ids of the world under test (see `bind`).
URLS = ["/studios/adv/n/@NOTE", "/studios/adv/d/@DECISION", "/studios/adv/c/@COMMITMENT",
        "/studios/adv/n/@NOTE?part=2&page=3", "/studios/other/n/@NOTE", "/", "/help", "/help/urls", "/help/nope", "/whoami", "/studios/adv", "/studios/adv/members",
        "/studios/adv/search?q=x", "/studios/adv/search?q=NEAR(a b)", "/studios/adv/cycles/today",
        "/studios/adv/tags/x", "/studios/adv/audit", "/studios/nope/n/abc", "http://[::1", "http://evil.example/",
        "", "   ", "/" + "a" * 3000, "/studios/adv/n/" + "x" * 70, "/studios/adv?page=99999999999999999999",
        "/studios/adv/n/abc?part=-1", "//studios//adv//", "/studios/adv.md", "javascript:alert(1)",
        "/studios/adv/d/abc?page=1e9", "/%00", "/studios/%2e%2e/secret",
        # forged cursors and NUL in query values (issue 24 items 7 and 8): a clear refusal, never a fault
        "/studios/adv?after=x~%C2%B2", "/studios/adv/audit?after=9223372036854775808~1", "/studios/adv/tags/x?after=%00~1",
        "/studios/adv/cycles/this-week?after=1~", "/studios/adv/n/@NOTE?comment=%00", "/search?q=%00", "/awaiting?after=-1~x"]

scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
junk = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def field(good: st.SearchStrategy) -> st.SearchStrategy:
    """A field's value: absent, a plausible value, or a value of any wrong type."""
    return st.one_of(st.just(MISSING), good, good, junk)


def _obj(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not MISSING}


# Values that have broken parsers elsewhere: edge dates, huge and odd numbers, odd strings.
NASTY_VALUES = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "9999-12-31", "2099-02-30", "2099-01-01T25:00",
                "2099-01-01T00:00:00+25:00", "tomorrow", "", " ", "\u0000", "\x00", 10**400, -(10**30), 1e308, -0.0,
                True, [], {}, [{"option": None}], [{"option": "Red", "accept": "yes"}], "Red", "a" * 5000]
action_params = st.one_of(
    st.just(MISSING), st.none(), junk,
    st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=8),
                    junk | st.text(max_size=300) | st.sampled_from(NASTY_VALUES), max_size=5),
)


@st.composite
def tool_arguments(draw) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(junk)
    args = _obj(url=draw(field(st.sampled_from(URLS) | st.text(max_size=60))),
                action=draw(field(st.sampled_from(ACTION_NAMES) | st.sampled_from(["", "delete_studio"]))),
                params=draw(action_params))
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=8))] = draw(junk)
    return args


@st.composite
def frame_objects(draw) -> Any:
    """One JSON-RPC-like object with every field possibly absent or of a wrong type."""
    method = draw(field(st.sampled_from(METHODS)))
    if method == "tools/call":
        params = draw(field(st.builds(lambda name, args: _obj(name=name, arguments=args),
                                      field(st.sampled_from(["navigate", "execute_action", "delete"])),
                                      tool_arguments())))
    elif method == "initialize":
        params = draw(field(st.builds(lambda v, ci: _obj(protocolVersion=v, capabilities={}, clientInfo=ci),
                                      field(st.sampled_from(["2025-11-25", "2024-11-05", "1999-01-01"])),
                                      field(st.fixed_dictionaries({"name": junk | st.text(max_size=200)})))))
    else:
        params = draw(field(st.dictionaries(st.text(max_size=8), junk, max_size=3)))
    return _obj(jsonrpc=draw(field(st.sampled_from(["2.0", "2.0", "2.0", "1.0", "2"]))),
                id=draw(field(st.integers(-(10**30), 10**30) | st.text(max_size=20))),
                method=method, params=params)


PAGE_URLS = {"home": "/", "whoami": "/whoami", "inbox": "/inbox", "members": "/studios/adv/members", "studio": "/studios/adv", "note": "/studios/adv/n/@NOTE",
             "decision": "/studios/adv/d/@DECISION", "commitment": "/studios/adv/c/@COMMITMENT",
             "held": "/studios/adv/held/x", "held_queue": "/studios/adv/held", "deleted": "/studios/adv/deleted"}
param_value = st.sampled_from(NASTY_VALUES) | junk | st.text(max_size=300)


_OFFSETS = [None, UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-14)),
            timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-23, minutes=-59))]
edge_datetimes = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59),
                              timezones=st.sampled_from(_OFFSETS)).map(lambda d: d.isoformat())


def values_for(name: str) -> st.SearchStrategy:
    """Hostile values, plus edge values of the field's own kind (dates for deadlines, big ints...)."""
    if name == "deadline":
        return edge_datetimes | st.dates().map(str) | param_value
    if name in ("critical_mass", "limit"):
        return st.integers(-(2**63), 2**63) | st.sampled_from([0, 1, 100_000, 100_001]) | param_value
    return param_value


@st.composite
def targeted_calls(draw) -> dict[str, Any]:
    """A well-formed execute_action of a real action on its real page, with hostile parameter values:
    this is where parsing bugs hide, behind every check of the frame's shape."""
    action = draw(st.sampled_from(ACTIONS))
    fields = list(action.params.model_fields)
    params = {name: draw(values_for(name)) for name in draw(st.lists(st.sampled_from(fields), unique=True))} if fields else {}
    if draw(st.integers(0, 4)) == 0:
        params[draw(st.text(max_size=8))] = draw(param_value)
    return {"jsonrpc": "2.0", "id": draw(st.integers(0, 10**6)), "method": "tools/call",
            "params": {"name": "execute_action", "arguments": {"action": action.name, "url": PAGE_URLS[action.on[0]],
                                                               "params": params}}}


json_frames = st.one_of(targeted_calls(), targeted_calls(),frame_objects(), frame_objects(), frame_objects(),
                        st.lists(frame_objects(), max_size=6), junk)


def bind(frame: bytes, urls: dict[str, str]) -> bytes:
    """Put the world's real item ids where the generators wrote placeholders."""
    for key in ("note", "decision", "commitment"):
        frame = frame.replace(b"@" + key.upper().encode(), urls[key].rsplit("/", 1)[1].encode())
    return frame


def serialize(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")


NASTY_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00",
               b"\\ud800", b"\\udfff", b"NaN", b"Infinity", b"-Infinity", b"1e999999", b"9" * 5000, b"\x1b[2J",
               b'"', b"{", b"]", b",", b"\\", b"\t", b"\r"]


@st.composite
def raw_frames(draw) -> bytes:
    """Bytes on the wire: serialized frames, mutated ones, and hand-made nasties."""
    kind = draw(st.integers(0, 7))
    base = serialize(draw(json_frames), draw(st.booleans()))
    if kind <= 2:
        return base
    if kind == 3:  # truncated
        return base[: draw(st.integers(0, max(0, len(base) - 1)))] or b"{"
    if kind == 4:  # something nasty spliced in
        at = draw(st.integers(0, len(base)))
        return base[:at] + draw(st.sampled_from(NASTY_BYTES)) + base[at:]
    if kind == 5:  # deep nesting, alone or inside a real request
        depth = draw(st.sampled_from([50, 500, 5000, 100_000]))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        inner = opener * depth + b"1" + closer * depth
        if draw(st.booleans()):
            return inner
        return (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_action",'
                b'"arguments":{"action":"create_note","url":"/studios/adv","params":{"title":' + inner + b"}}}}")
    if kind == 6:  # huge numbers and strings in fields
        big = draw(st.sampled_from([b"9" * 4000, b"-" + b"9" * 4300, b"1e308", b"1e-400", b"1.5", b"-0", b"true",
                                    b'"' + b"x" * 200_000 + b'"', b'"' + "é".encode() * 50_000 + b'"']))
        slot = draw(st.sampled_from([b'{"jsonrpc":"2.0","id":%s,"method":"ping"}',
                                     b'{"jsonrpc":"2.0","id":1,"method":%s}',
                                     b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"navigate","arguments":{"url":%s}}}',
                                     b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_action","arguments":{"action":"vote","url":"/studios/adv/d/x","params":{"votes":%s}}}}']))
        return slot % big
    return bytes(draw(st.lists(st.integers(0, 255), min_size=1, max_size=64)))


# --- the oracle ---------------------------------------------------------------------------------


class _Invalid(Exception):
    pass


def _strict_loads(frame: bytes) -> Any:
    def constant(name):
        raise _Invalid(name)
    try:
        value = json.loads(frame.decode("utf-8"), parse_constant=constant)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates
        return value
    except (UnicodeError, ValueError, RecursionError, _Invalid):
        raise _Invalid() from None


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _notification(msg: Any) -> bool:
    return (isinstance(msg, dict) and "id" not in msg and msg.get("jsonrpc") == "2.0"
            and isinstance(msg.get("method"), str) and (msg.get("params") is None or isinstance(msg["params"], (dict, list))))


def check_reply_shape(reply: Any) -> None:
    assert isinstance(reply, dict), reply
    assert reply.get("jsonrpc") == "2.0", reply
    assert set(reply) <= {"jsonrpc", "id", "result", "error"}, reply
    assert ("result" in reply) != ("error" in reply), reply
    assert _valid_id(reply.get("id", MISSING)), reply
    if "error" in reply:
        err = reply["error"]
        assert isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"], reply
        assert err.get("code") in ERROR_CODES, f"unexpected error code (internal error on bad input?): {reply}"
    else:
        result = reply["result"]
        assert isinstance(result, dict), reply
        if "content" in result:  # a tool result
            assert isinstance(result.get("isError"), bool), reply
            assert all(c.get("type") == "text" and isinstance(c.get("text"), str) for c in result["content"]), reply
            assert isinstance(result.get("structuredContent", {}), dict), reply


def _response(msg: Any) -> bool:
    """A client's response to a server request: it is not answered."""
    return (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and "id" in msg and _valid_id(msg["id"])
            and not isinstance(msg.get("method"), str) and ("result" in msg or "error" in msg))


def silent(msg: Any) -> bool:
    return _notification(msg) or _response(msg)


def _output_schemas() -> dict[str, dict]:
    from navmcp.mcp.tools import TOOLS

    return {tool["name"]: tool["outputSchema"] for tool in TOOLS}


def check_structured(tool: Any, result: dict[str, Any]) -> None:
    """A successful tool result's structuredContent conforms to the tool's declared outputSchema
    (clients such as the official SDK validate it)."""
    import jsonschema  # a dependency of the mcp test extra

    schemas = _output_schemas()
    if tool in schemas and not result.get("isError") and "structuredContent" in result:
        jsonschema.validate(result["structuredContent"], schemas[tool])


def _check_one(msg: Any, reply: Any) -> None:
    if silent(msg):
        assert reply is None, f"a notification got an answer: {reply}"
        return
    assert reply is not None, f"no answer to {str(msg)[:300]}"
    check_reply_shape(reply)
    if isinstance(msg, dict) and msg.get("method") == "tools/call" and isinstance(reply.get("result"), dict):
        params = msg.get("params")
        check_structured(params.get("name") if isinstance(params, dict) else None, reply["result"])
    if isinstance(msg, dict) and "id" in msg and _valid_id(msg["id"]):
        assert reply["id"] == msg["id"], (msg, reply)
        if msg["id"] is None:  # MCP forbids a null request id: Invalid Request, whatever the method
            assert reply.get("error", {}).get("code") == -32600, reply
        elif msg.get("method") == "ping" and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("params"), (dict, type(None))):
            assert reply.get("result") == {}, reply
    else:
        assert "error" in reply and reply["id"] is None, (msg, reply)


def check(frame: bytes, outputs: list[bytes], blank_is_silent: bool = False) -> Any:
    """Assert the outputs for `frame` keep every promise; return the decoded reply (or None)."""
    decoded = []
    for out in outputs:
        text = out.decode("utf-8")  # stdout is UTF-8 JSON and nothing else
        decoded.append(json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name))))
    assert len(decoded) <= 1, f"{len(decoded)} answers to one frame: {decoded}"
    reply = decoded[0] if decoded else None
    if blank_is_silent and not frame.strip():
        assert reply is None
        return None
    try:
        value = _strict_loads(frame)
    except _Invalid:
        assert reply is not None, f"no answer to a malformed frame {frame[:200]!r}"
        check_reply_shape(reply)
        assert reply["error"]["code"] == -32700 and reply["id"] is None, reply
        return reply
    if isinstance(value, list):
        if not value or len(value) > 100 or any(isinstance(v, dict) and v.get("method") == "initialize" for v in value):
            check_reply_shape(reply)
            assert reply["error"]["code"] == -32600, reply
            return reply
        expected = [v for v in value if not silent(v)]
        if not expected:
            assert reply is None, reply
            return None
        assert isinstance(reply, list) and len(reply) == len(expected), (value, reply)
        for msg, one in zip(expected, reply):
            _check_one(msg, one)
        return reply
    _check_one(value, reply)
    return reply


def is_finite_json(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(is_finite_json(v) for v in value.values())
    if isinstance(value, list):
        return all(is_finite_json(v) for v in value)
    return True
