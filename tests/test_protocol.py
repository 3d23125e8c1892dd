"""The protocol core with no I/O: decoded (or raw) messages in, response values out.

Most tests drive `Connection` over a tiny fake ToolHost, so they test the protocol alone; a few use
the real `Session` over a temporary app to check the tool list and SEP-1303 argument errors.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from navmcp import protocol
from navmcp.mcp import codec
from navmcp.protocol import SUPPORTED_VERSIONS, Connection

SECRET_WORD = "kaboom-secret-detail"


class FakeHost:
    """The smallest ToolHost: one tool `echo`, one tool `explode` that raises."""

    def __init__(self):
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.initialized_with: tuple[dict[str, Any], str] | None = None

    def tool_definitions(self):
        return [{"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "explode", "inputSchema": {"type": "object"}}]

    def tool_names(self):
        return frozenset({"echo", "explode"})

    def identify(self, client_info, protocol_version):
        self.initialized_with = (client_info, protocol_version)

    def call_tool(self, name, arguments):
        self.calls.append((name, arguments))
        if name == "explode":
            raise RuntimeError(SECRET_WORD + " in /some/secret/path.py")
        return {"content": [{"type": "text", "text": json.dumps(arguments)}], "isError": False}


def new_conn(host=None) -> Connection:
    return Connection(host or FakeHost(), name="navmcp", version="9.9", instructions="start at /")


def req(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def init_params(version: str = "2025-11-25") -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}


@pytest.fixture
def conn() -> Connection:
    c = new_conn()
    c.receive(req("initialize", init_params(), id_=0))
    assert c.receive({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    return c


def error_code(response: dict[str, Any]) -> int:
    assert "result" not in response, response
    return response["error"]["code"]


# --- initialize and versions ------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_supported_version_is_echoed(version):
    host = FakeHost()
    reply = new_conn(host).receive(req("initialize", init_params(version)))
    assert reply["id"] == 1 and reply["jsonrpc"] == "2.0"
    result = reply["result"]
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "navmcp" and result["serverInfo"]["version"] == "9.9"
    assert "tools" in result["capabilities"]
    assert result["instructions"] == "start at /"
    assert host.initialized_with == ({"name": "pytest", "version": "1"}, version)


def test_supported_versions_are_the_four_named():
    assert set(SUPPORTED_VERSIONS) == {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "", None, 42])
def test_unknown_version_gets_the_newest(version):
    params = init_params()
    params["protocolVersion"] = version
    reply = new_conn().receive(req("initialize", params))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_with_bad_client_info_is_invalid_params():
    params = init_params()
    params["clientInfo"] = "not an object"
    assert error_code(new_conn().receive(req("initialize", params))) == -32602


def test_requests_before_initialize_are_refused_but_ping_works():
    host = FakeHost()
    c = new_conn(host)
    reply = c.receive(req("tools/list"))
    assert error_code(reply) == -32600 and "initialize" in reply["error"]["message"]
    reply = c.receive(req("tools/call", {"name": "echo", "arguments": {}}, id_=2))
    assert error_code(reply) == -32600
    assert host.calls == []
    assert c.receive(req("ping", id_=3)) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    c.receive(req("initialize", init_params(), id_=4))
    assert "tools" in c.receive(req("tools/list", id_=5))["result"]


# --- the plain methods ------------------------------------------------------------------------


def test_ping_answers_empty_object(conn):
    assert conn.receive(req("ping", id_="abc")) == {"jsonrpc": "2.0", "id": "abc", "result": {}}


def test_tools_call_reaches_the_host(conn):
    reply = conn.receive(req("tools/call", {"name": "echo", "arguments": {"x": 1}}, id_=7))
    assert reply["id"] == 7
    assert json.loads(reply["result"]["content"][0]["text"]) == {"x": 1}


def test_tools_call_without_arguments_passes_empty_object(conn):
    conn.receive(req("tools/call", {"name": "echo"}, id_=7))
    assert conn.host.calls == [("echo", {})]


@pytest.mark.parametrize("note", ["notifications/initialized", "notifications/cancelled",
                                  "notifications/unknown-thing", "ping", "tools/list", "no/such/method"])
def test_notifications_are_never_answered(conn, note):
    assert conn.receive({"jsonrpc": "2.0", "method": note, "params": {"requestId": 1}}) is None
    assert conn.receive_bytes(json.dumps({"jsonrpc": "2.0", "method": note}).encode()) is None


def test_notification_that_calls_a_tool_is_not_answered(conn):
    # A tools/call without id is a notification: it may run, but it never gets a response.
    assert conn.receive({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "explode"}}) is None


def test_responses_sent_to_the_server_are_ignored(conn):
    assert conn.receive({"jsonrpc": "2.0", "id": 5, "result": {}}) is None
    assert conn.receive({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}) is None
    assert conn.receive({"jsonrpc": "2.0", "id": 5, "error": {"code": 1, "message": "x"}}) is None


# --- every error code ---------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"",
                                 b"[1, 2", b"\"unterminated", b"{\"a\":" + b"[" * 100_000,
                                 b'{"jsonrpc": "2.0", "id": 1, "method": "ping"} {}', b'{"jsonrpc": "2.0"} x',
                                 b'  {"a": 1} ]', b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', b"  ", b"\x0c{}"])
def test_parse_error_has_null_id(conn, raw):
    reply = json.loads(conn.receive_bytes(raw))
    assert reply == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": reply["error"]["message"]}}


@pytest.mark.parametrize("raw", [b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "\xff\xfe"}',
                                 b'{"jsonrpc": "2.0", "id": 1, "method": "p\xc3"}',
                                 b"\xed\xa0\x80"])
def test_invalid_utf8_is_a_parse_error(conn, raw):
    reply = json.loads(conn.receive_bytes(raw))
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert "UTF-8" in reply["error"]["message"]


@pytest.mark.parametrize("raw", [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b' \t{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
                                 b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\r\n ', b'\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n'])
def test_json_whitespace_around_a_frame_is_fine(conn, raw):
    assert json.loads(conn.receive_bytes(raw)) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_utf16_json_is_not_accepted_as_utf8(conn):
    # MCP's stdio and HTTP messages are UTF-8; a UTF-16 frame is not valid UTF-8 JSON.
    raw = json.dumps(req("ping")).encode("utf-16")
    reply = json.loads(conn.receive_bytes(raw))
    assert reply["error"]["code"] == -32700


@pytest.mark.parametrize("raw", [rb'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"u":"\ud800"}}}',
                                 rb'{"jsonrpc":"2.0","id":"\udc00x","method":"ping"}',
                                 rb'{"jsonrpc":"2.0","id":1,"method":"no\uDBFF"}'])
def test_lone_surrogate_escapes_are_a_parse_error(conn, raw):
    # Valid JSON syntax, but no Unicode text: it could not be stored, nor echoed back as UTF-8.
    reply = json.loads(conn.receive_bytes(raw))
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    assert conn.host.calls == []


def test_surrogate_pairs_are_fine(conn):
    reply = conn.receive_bytes(rb'{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}')
    assert json.loads(reply)["id"] == "\U0001F600"


def test_a_decoded_lone_surrogate_still_gets_an_answer(conn):
    # Transports that decode JSON themselves call receive(); encoding the answer must not fail.
    reply = conn.receive({"jsonrpc": "2.0", "id": "\ud800", "method": "ping"})
    assert json.loads(codec.encode(reply))["result"] == {}


def test_non_ascii_round_trips_as_utf8(conn):
    raw = json.dumps(req("tools/call", {"name": "echo", "arguments": {"t": "héllo ✓ 日本"}}, id_="é"),
                     ensure_ascii=False).encode("utf-8")
    reply = conn.receive_bytes(raw)
    decoded = json.loads(reply.decode("utf-8"))
    assert decoded["id"] == "é"
    assert json.loads(decoded["result"]["content"][0]["text"]) == {"t": "héllo ✓ 日本"}


@pytest.mark.parametrize("message", [
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": 2.0, "id": 1, "method": "ping"},
    {"id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "string params"},
    {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3},
])
def test_invalid_request_keeps_a_valid_id(conn, message):
    reply = conn.receive(message)
    assert error_code(reply) == -32600
    assert reply["id"] == 1


@pytest.mark.parametrize("value", [1, "string", None, True, 3.5])
def test_non_object_is_invalid_request(conn, value):
    reply = conn.receive(value)
    assert error_code(reply) == -32600 and reply["id"] is None
    assert json.loads(conn.receive_bytes(json.dumps(value).encode()))["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", [None, 1.5, True, False, [1], {"a": 1}])
def test_bad_id_type_is_invalid_request_with_null_id(conn, bad_id):
    reply = conn.receive({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert error_code(reply) == -32600
    assert reply["id"] is None


def test_string_and_integer_ids_are_echoed_exactly(conn):
    for id_ in ["x", "", 0, -1, 2**53 + 1]:
        assert conn.receive(req("ping", id_=id_))["id"] == id_


def test_wrong_jsonrpc_on_a_notification_is_answered_with_null_id(conn):
    reply = conn.receive({"jsonrpc": "1.0", "method": "notifications/initialized"})
    assert error_code(reply) == -32600 and reply["id"] is None


def test_unknown_method(conn):
    reply = conn.receive(req("resources/subscribe", id_=9))  # no live pages yet
    assert error_code(reply) == -32601 and reply["id"] == 9
    assert "resources/subscribe" in reply["error"]["message"]


def test_unknown_method_before_initialize_is_still_method_not_found():
    assert error_code(new_conn().receive(req("no/such"))) == -32601


def test_unknown_tool_is_invalid_params(conn):
    reply = conn.receive(req("tools/call", {"name": "delete_everything", "arguments": {}}, id_=3))
    assert error_code(reply) == -32602 and reply["id"] == 3
    assert "delete_everything" in reply["error"]["message"]
    assert conn.host.calls == []


@pytest.mark.parametrize("params", [
    {"arguments": {}},  # no name
    {"name": 5},
    {"name": "echo", "arguments": [1, 2]},
    {"name": "echo", "arguments": "x"},
])
def test_bad_tools_call_params_shape_is_invalid_params(conn, params):
    assert error_code(conn.receive(req("tools/call", params))) == -32602
    assert conn.host.calls == []


def test_array_params_is_invalid_params(conn):
    assert error_code(conn.receive(req("tools/call", ["echo", {}]))) == -32602


def test_internal_error_has_no_traceback_on_the_wire(conn, caplog):
    reply = conn.receive(req("tools/call", {"name": "explode", "arguments": {}}, id_=11))
    assert error_code(reply) == -32603 and reply["id"] == 11
    wire = json.dumps(reply)
    assert SECRET_WORD not in wire and "Traceback" not in wire and ".py" not in wire
    assert SECRET_WORD in caplog.text  # the details go to the server log instead
    assert conn.receive(req("ping", id_=12))["result"] == {}


def test_internal_error_in_a_notification_is_silent(conn):
    assert conn.receive({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "explode"}}) is None


# --- batches ----------------------------------------------------------------------------------


def test_empty_batch_is_invalid_request(conn):
    reply = conn.receive([])
    assert isinstance(reply, dict) and error_code(reply) == -32600 and reply["id"] is None
    assert json.loads(conn.receive_bytes(b"[]"))["error"]["code"] == -32600


def test_oversized_batch_is_one_invalid_request(conn):
    batch = [req("ping", id_=i) for i in range(protocol.MAX_BATCH + 1)]
    reply = conn.receive(batch)
    assert isinstance(reply, dict) and error_code(reply) == -32600


def test_batch_at_the_limit_is_answered(conn):
    batch = [req("ping", id_=i) for i in range(protocol.MAX_BATCH)]
    assert [r["id"] for r in conn.receive(batch)] == list(range(protocol.MAX_BATCH))


def test_mixed_batch_answers_only_requests_in_order(conn):
    batch = [
        req("ping", id_=1),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        req("no/such", id_=2),
        5,
        req("tools/call", {"name": "echo", "arguments": {"a": 1}}, id_="three"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    replies = conn.receive(batch)
    assert [r["id"] for r in replies] == [1, 2, None, "three"]
    assert replies[0]["result"] == {}
    assert replies[1]["error"]["code"] == -32601
    assert replies[2]["error"]["code"] == -32600
    assert "result" in replies[3]


def test_all_notification_batch_gets_no_response(conn):
    batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}]
    assert conn.receive(batch) is None
    assert conn.receive_bytes(json.dumps(batch).encode()) is None


def test_batch_with_initialize_is_refused():
    reply = new_conn().receive([req("initialize", init_params()), req("ping", id_=2)])
    assert isinstance(reply, dict) and error_code(reply) == -32600


def test_nested_batch_element_is_invalid_request(conn):
    replies = conn.receive([[req("ping")], req("ping", id_=2)])
    assert replies[0]["error"]["code"] == -32600 and replies[1]["result"] == {}


# --- the real tools, over a real Session ----------------------------------------------------------


@pytest.fixture
def real(app, owner):
    c = connect(app, None)
    c.receive(req("initialize", init_params(), id_=0))
    return c


def tool_list(c) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in c.receive(req("tools/list", id_=1))["result"]["tools"]}


def test_tools_list_shape(real):
    tools = tool_list(real)
    assert set(tools) == {"navigate", "execute_action"}
    for tool in tools.values():
        assert tool["title"] and len(tool["description"]) > 80
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
    nav, act = tools["navigate"], tools["execute_action"]
    assert nav["inputSchema"]["required"] == ["url"]
    assert act["inputSchema"]["required"] == ["action"]
    assert set(act["inputSchema"]["properties"]) == {"action", "params", "url"}
    assert nav["annotations"]["readOnlyHint"] is True and nav["annotations"]["idempotentHint"] is True
    assert nav["annotations"].get("destructiveHint") is False
    assert act["annotations"]["destructiveHint"] is True and act["annotations"]["readOnlyHint"] is False
    assert "/studios/" in nav["description"] and "'/'" in nav["description"]
    assert set(nav["outputSchema"]["required"]) == {"url", "title", "actions"}
    assert set(act["outputSchema"]["required"]) == {"ok", "message", "url", "actions"}


def test_tools_list_is_the_same_every_time(real):
    assert tool_list(real) == tool_list(real)
    real.receive(req("tools/call", {"name": "navigate", "arguments": {"url": "/"}}, id_=2))
    assert tool_list(real) == tool_list(real)


def test_instructions_point_to_home_and_help(app):
    result = connect(app, None).receive(req("initialize", init_params()))["result"]
    assert "navigate('/')" in result["instructions"] and "/help" in result["instructions"]


def test_output_schemas_accept_the_structured_content(real):
    jsonschema = pytest.importorskip("jsonschema")
    tools = tool_list(real)
    nav = real.receive(req("tools/call", {"name": "navigate", "arguments": {"url": "/"}}, id_=2))["result"]
    jsonschema.validate(nav["structuredContent"], tools["navigate"]["outputSchema"])
    act = real.receive(req("tools/call", {"name": "execute_action", "arguments": {
        "action": "create_studio", "url": "/", "params": {"handle": "s", "name": "S"}}}, id_=3))["result"]
    assert act["isError"] is False
    jsonschema.validate(act["structuredContent"], tools["execute_action"]["outputSchema"])


@pytest.mark.parametrize("tool,arguments,field", [
    ("navigate", {}, "url"),
    ("navigate", {"url": None}, "url"),
    ("navigate", {"url": 5}, "url"),
    ("navigate", {"url": "/", "extra": 1}, "extra"),
    ("execute_action", {}, "action"),
    ("execute_action", {"action": 3}, "action"),
    ("execute_action", {"action": "vote", "params": [1]}, "params"),
    ("execute_action", {"action": "vote", "url": 7}, "url"),
])
def test_schema_failing_arguments_are_tool_errors_naming_the_field(real, tool, arguments, field):
    reply = real.receive(req("tools/call", {"name": tool, "arguments": arguments}, id_=4))
    assert "error" not in reply, reply  # SEP-1303: a tool execution error, not a protocol error
    result = reply["result"]
    assert result["isError"] is True
    assert f"'{field}'" in result["content"][0]["text"]


# --- fuzz: whatever arrives, the core answers well-formed and never with an internal error -------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from navmcp import actions as action_table  # noqa: E402
from navmcp.mcp.tools import connect  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)
_urls = st.sampled_from(["/", "/help", "/whoami", "/studios/fz", "/studios/fz/members", "/studios/fz/search?q=a",
                         "/studios/fz/cycles/today", "/studios/fz/tags/x", "/studios/fz/audit", "/studios/zz",
                         "/studios/fz/n/x", "//", "?q=1", "http://h/studios/fz"]) | st.text(max_size=30)
_names = st.sampled_from(sorted({a.name for a in action_table.ACTIONS})) | st.text(max_size=12)
_ballots = st.lists(st.fixed_dictionaries({"option": st.text(max_size=10)}, optional={
    "accept": _json, "prefer": st.booleans()}), max_size=3)
_params = st.dictionaries(st.sampled_from(["title", "body", "handle", "name", "role", "question", "options",
                                           "critical_mass", "limit", "deadline", "tags", "votes", "description"]),
                          _json | _ballots | st.text(max_size=30), max_size=5) | _json
_arguments = st.fixed_dictionaries({}, optional={"url": _urls | _json, "action": _names | _json, "params": _params})
_messages = st.one_of(
    st.builds(lambda a, i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "execute_action", "arguments": a}}, _arguments, st.integers(0, 9)),
    st.builds(lambda a, i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "navigate", "arguments": a}}, _arguments, st.integers(0, 9)),
    st.builds(lambda m, p, i: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
              st.sampled_from(["ping", "tools/list", "tools/call", "initialize", "x"]), _json, _json),
    _json,
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(_messages, min_size=1, max_size=4))
def test_fuzzed_messages_get_well_formed_answers(real, messages):
    real.receive(req("tools/call", {"name": "execute_action", "arguments": {
        "url": "/", "action": "create_studio", "params": {"handle": "fz", "name": "Fuzz"}}}))
    for message in messages:
        reply = real.receive(message)
        if reply is None:
            continue
        for r in reply if isinstance(reply, list) else [reply]:
            assert r["jsonrpc"] == "2.0" and "id" in r and (("result" in r) != ("error" in r))
            if "error" in r:
                assert r["error"]["code"] in (-32700, -32600, -32601, -32602), r
            else:
                json.dumps(r)
        assert isinstance(codec.encode(reply), bytes)


# --- the modern era (MCP 2026-07-28): per-request _meta, no handshake -----------------------------------

MODERN = "2026-07-28"


def envelope(version: Any = MODERN, **extra: Any) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "1"}, **extra}


def modern(method: str, params: dict[str, Any] | None = None, id_: Any = 1, **meta: Any) -> dict[str, Any]:
    return req(method, {**(params or {}), "_meta": envelope(**meta)}, id_)


def test_a_modern_request_needs_no_handshake_and_is_complete():
    host = FakeHost()
    reply = new_conn(host).receive(modern("tools/call", {"name": "echo", "arguments": {"a": 1}}, id_="x"))
    assert reply["id"] == "x"
    result = reply["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == '{"a": 1}'
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "navmcp"
    assert host.initialized_with == ({"name": "modern-test", "version": "1"}, MODERN)  # the audit's client name


def test_the_audit_names_the_client_each_modern_request_names(app, owner):
    """A modern client names itself in every request (a stdio process may serve several in turn):
    each action's audit line takes the name its own request gave, or "unknown" without one."""
    from navmcp.mcp.tools import connect

    conn = connect(app, None)
    conn.receive(modern("tools/call", {"name": "execute_action", "arguments": {
        "action": "create_studio", "url": "/", "params": {"handle": "named", "name": "Named"}}}))
    for n, name in enumerate(["first", "first", "second", None], 1):
        meta = envelope(**{"io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}})
        if name is None:
            del meta["io.modelcontextprotocol/clientInfo"]
        reply = conn.receive(req("tools/call", {"name": "execute_action", "_meta": meta, "arguments": {
            "action": "create_note", "url": "/studios/named", "params": {"title": f"n{n}", "body": "b"}}}, n))
        assert reply["result"]["isError"] is False, reply
    with app.store.read() as tx:
        clients = [r["client"] for r in tx.all("SELECT client FROM audit WHERE action = 'create_note' ORDER BY id")]
    assert clients == ["first", "first", "second", "unknown"]


def test_server_discover_advertises_versions_capabilities_and_identity():
    result = new_conn().receive(modern("server/discover"))["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"]["tools"] == {} and result["instructions"] == "start at /"
    assert result["resultType"] == "complete" and result["ttlMs"] > 0 and result["cacheScope"] == "public"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "navmcp", "title": "navmcp",
                                                                     "version": "9.9"}


def test_modern_tools_list_carries_caching_hints_legacy_does_not(conn):
    modern_list = new_conn().receive(modern("tools/list"))["result"]
    assert modern_list["ttlMs"] == 300_000 and modern_list["cacheScope"] == "public"
    legacy_list = conn.receive(req("tools/list"))["result"]
    assert set(legacy_list) == {"tools"} and legacy_list["tools"] == modern_list["tools"]


def test_client_info_is_optional():
    host = FakeHost()
    meta = envelope()
    del meta["io.modelcontextprotocol/clientInfo"]
    reply = new_conn(host).receive(req("tools/list", {"_meta": meta}))
    assert reply["result"]["resultType"] == "complete" and host.initialized_with == ({}, MODERN)


def test_an_unsupported_version_is_32022_naming_what_is_supported():
    reply = new_conn().receive(modern("tools/list", id_=7, version="1900-01-01"))
    assert reply["id"] == 7 and reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": "1900-01-01"}


@pytest.mark.parametrize("meta", [
    {"io.modelcontextprotocol/protocolVersion": MODERN},  # no clientCapabilities
    {"io.modelcontextprotocol/protocolVersion": 2026, "io.modelcontextprotocol/clientCapabilities": {}},
    {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []},
    {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
     "io.modelcontextprotocol/clientInfo": "me"},
], ids=["no-capabilities", "version-not-a-string", "capabilities-not-an-object", "client-info-not-an-object"])
def test_a_malformed_envelope_is_invalid_params(meta):
    reply = new_conn().receive(req("tools/list", {"_meta": meta}, id_=3))
    assert reply["id"] == 3 and reply["error"]["code"] == -32602, reply


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "initialize", "no/such"])
def test_removed_and_unknown_methods_are_32601_in_the_modern_era(method):
    conn = new_conn()
    conn.receive(modern("server/discover", id_=0))
    reply = conn.receive(modern(method, id_=5))
    assert reply["id"] == 5 and reply["error"]["code"] == -32601, reply


def test_era_rules_a_modern_connection_refuses_the_handshake_with_32022():
    conn = new_conn()
    assert "result" in conn.receive(modern("tools/list", id_=0))
    reply = conn.receive(req("initialize", init_params(), id_=1))
    assert reply["error"]["code"] == -32022 and reply["error"]["data"]["supported"] == ["2026-07-28"]
    assert reply["error"]["data"]["requested"] == "2025-11-25"
    # and a request without the envelope is malformed there, not legacy
    assert conn.receive(req("tools/list", id_=2))["error"]["code"] == -32602
    assert conn.receive(req("ping", id_=3))["error"]["code"] == -32602


def test_era_rules_a_legacy_connection_refuses_enveloped_requests(conn):
    reply = conn.receive(modern("tools/list", id_=9))
    assert reply["id"] == 9 and reply["error"]["code"] == -32600 and "legacy" in reply["error"]["message"]
    assert "result" in conn.receive(req("tools/list", id_=10))  # and goes on serving its own era


def test_era_rules_the_first_request_decides_even_before_initialize():
    conn = new_conn()
    assert conn.receive(req("tools/list", id_=1))["error"]["code"] == -32600  # legacy: initialize first
    assert conn.receive(modern("tools/list", id_=2))["error"]["code"] == -32600  # and stays legacy
    assert "result" in conn.receive(req("initialize", init_params(), id_=3))


def test_an_enveloped_initialize_opens_the_legacy_era():
    conn = new_conn()
    reply = conn.receive(req("initialize", {**init_params(), "_meta": envelope()}))
    assert reply["result"]["protocolVersion"] == "2025-11-25" and conn.era == "legacy"


def test_notifications_do_not_decide_the_era():
    conn = new_conn()
    assert conn.receive({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert conn.era is None
    assert "result" in conn.receive(modern("tools/list"))


def test_a_modern_connection_takes_no_batches():
    conn = new_conn()
    conn.receive(modern("tools/list", id_=0))
    assert conn.receive([modern("tools/list", id_=1)])["error"]["code"] == -32600


HEADERS = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}


@pytest.mark.parametrize("headers", [
    {k: v for k, v in HEADERS.items() if k != "mcp-protocol-version"},
    {**HEADERS, "mcp-protocol-version": "2025-11-25"},
    {k: v for k, v in HEADERS.items() if k != "mcp-method"},
    {**HEADERS, "mcp-method": "tools/list"},
    {k: v for k, v in HEADERS.items() if k != "mcp-name"},
    {**HEADERS, "mcp-name": "explode"},
    {**HEADERS, "mcp-name": "=?base64?ZXhwbG9kZQ==?="},  # "explode"
    {**HEADERS, "mcp-name": "=?base64?not base64?="},
], ids=["no-version", "other-version", "no-method", "other-method", "no-name", "other-name", "other-name-base64",
        "bad-base64"])
def test_http_headers_that_disagree_with_the_body_are_32020(headers):
    host = FakeHost()
    reply = new_conn(host).receive(modern("tools/call", {"name": "echo", "arguments": {}}, id_=4), headers)
    assert reply["id"] == 4 and reply["error"]["code"] == -32020, reply
    assert host.calls == []


def test_http_headers_that_agree_pass_in_plain_and_base64_form():
    message = modern("tools/call", {"name": "echo", "arguments": {}})
    assert "result" in new_conn().receive(message, HEADERS)
    assert "result" in new_conn().receive(message, {**HEADERS, "mcp-name": "=?base64?ZWNobw==?="})


def test_header_mismatch_comes_before_the_version_check():
    reply = new_conn().receive(modern("tools/list", version="1900-01-01"),
                               {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"})
    assert reply["error"]["code"] == -32020


def test_a_database_away_is_a_server_error_to_send_again_not_not_found(app, owner, monkeypatch):
    """resources/read (and any method but a tool call, whose result says it itself) while the
    database is busy or away: -32000 with `retryAfter`, never "Resource not found" or -32603."""
    from navmcp.errors import Unavailable
    from navmcp.mcp.tools import Session as ToolSession

    def away(self, url):
        raise Unavailable("the database can't be reached right now; nothing of this call was applied")

    monkeypatch.setattr(ToolSession, "page", away)
    connection = Connection(ToolSession(app, None), name="navmcp", version="0", instructions="")
    connection.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    reply = connection.receive({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "navmcp:///"}})
    assert reply["error"]["code"] == -32000 and reply["error"]["data"] == {"retryAfter": 2}
    assert "can't be reached" in reply["error"]["message"]
