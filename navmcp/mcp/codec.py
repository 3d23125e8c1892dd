"""The JSON of the wire: one frame decoded strictly, a reply encoded fast.

Apart from the connection (`protocol.Connection`) that uses it: no JSON-RPC or MCP rule lives
here, only what makes bytes into values and back — strict UTF-8 and no NaN or lone surrogate on
the way in; on the way out ASCII escapes, a page's text kept as UTF-8 bytes, and structured content
encoded once per action (`Preencoded`) spliced into each reply that carries it.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from navmcp.mcp.jsonrpc import ParseError


class Preencoded(dict):
    """A dict that also carries its JSON encoding (`json`, bytes), made from parts encoded once —
    e.g. a page's structured content, whose action schemas never change. `encode` splices these
    bytes into a tool result instead of encoding the same schemas again on every call; to
    everything else it is the plain dict it holds."""

    __slots__ = ("json",)
    json: bytes


def preencoded(value: dict[str, Any]) -> Preencoded:
    """`value` with its JSON encoding made once (see `Preencoded`)."""
    done = Preencoded(value)
    done.json = _dumps(value)
    return done


def encode(value: Any) -> bytes:
    if type(value) is dict:
        result = value.get("result")
        if type(result) is dict and type(result.get("structuredContent")) is Preencoded:
            return _encode_spliced(value, result)
    return _dumps(value)


# Made once: json.dumps/json.loads with any option build a new encoder/decoder on every call.
# Non-ASCII is written as \u escapes (as json.dumps does by default): one "✓" in an action's reply
# made the whole reply a wide string, and encoding it to UTF-8 took 8.6 µs where ASCII takes 3.8.
# A page's text, the bulk of its reply, keeps its UTF-8 bytes (`json_text`).
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# `_ENCODER.encode`'s own C encoder, made once instead of on every call: without the circular-
# reference check (our values are trees: decoded JSON and dicts built here) it keeps no state.
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator, where there is one
_C_ENCODE = (_C_MAKE_ENCODER(None, _not_json, encode_basestring_ascii, None, ":", ",", False, False, False)
             if _C_MAKE_ENCODER is not None else None)


def _dumps(value: Any) -> bytes:
    if _C_ENCODE is None:
        return _ENCODER.encode(value).encode("ascii")
    return "".join(_C_ENCODE(value, 0)).encode("ascii")


def _encode_spliced(value: dict[str, Any], result: dict[str, Any]) -> bytes:
    """`value` encoded with its result's structuredContent last, from that content's own bytes."""
    rest = {k: v for k, v in result.items() if k != "structuredContent"}
    if not rest:
        return _dumps(value)
    structured = b',"structuredContent":' + result["structuredContent"].json + b"}}"
    content, is_error = rest.get("content"), rest.get("isError")
    if (type(is_error) is bool and type(content) is list and len(content) == 1
            and type(content[0]) is dict and content[0].keys() == {"type", "text"} and content[0]["type"] == "text"
            and type(content[0]["text"]) is str):  # a page: its text, the bulk of the reply, spliced too
        head = _dumps({**{k: v for k, v in value.items() if k != "result"}, "result": {}})
        if len(rest) == 2:
            extra = b""
        elif len(rest) == 4 and rest.get("resultType") == "complete" and type(rest.get("_meta")) is Preencoded:
            extra = b',"resultType":"complete","_meta":' + rest["_meta"].json  # a modern result's, made once
        else:
            extra = b"," + _dumps({k: v for k, v in rest.items() if k != "content" and k != "isError"})[1:-1]
        return (head[:-2] + b'"content":[{"type":"text","text":' + json_text(content[0]["text"])
                + (b'}],"isError":true' if is_error else b'}],"isError":false') + extra + structured)
    head = _dumps({**{k: v for k, v in value.items() if k != "result"}, "result": rest})
    return head[:-2] + structured


_RARE_CONTROLS = bytes(range(0x20)).replace(b"\n", b"")  # what JSON escapes besides newlines, quotes, backslashes
# Line boundaries that JSON leaves raw but some clients split lines on (Python's str.splitlines,
# JavaScript's line terminators), in UTF-8: escaped too, so a frame stays one line for them. The
# others (VT, FF, FS, GS, RS) are control characters, escaped already.
_LINE_SEPARATORS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def json_text(text: str) -> bytes:
    """`text` as a JSON string in UTF-8, as `json.dumps(text, ensure_ascii=False)` writes it, but
    with a lone surrogate and U+0085, U+2028 and U+2029 \\u-escaped. A page (newlines, quotes,
    backslashes, no other control character) is escaped by bytes methods that scan in C at memory
    speed, where the encoder's per-character loop took ~15 µs for a 4 KiB page; any other text is
    left to the encoder."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return encode_basestring_ascii(text).encode("ascii")
    if len(data.translate(None, _RARE_CONTROLS)) != len(data):
        data = encode_basestring(text).encode("utf-8")
    else:
        if b"\\" in data:
            data = data.replace(b"\\", b"\\\\")
        if b'"' in data:
            data = data.replace(b'"', b'\\"')
        data = b'"' + data.replace(b"\n", b"\\n") + b'"'
    # Looked for in the text, not the bytes: a search for one character of a str runs at memory speed.
    if "\u2028" in text or "\u2029" in text or "\x85" in text:
        for raw, escaped in _LINE_SEPARATORS:
            data = data.replace(raw, escaped)
    return data


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
# The decoder's C scanner, called directly: `JSONDecoder.decode` wraps it in two Python frames and
# two whitespace regexes, which a frame that starts with its value and ends with it never needs.
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]


def decode(data: bytes) -> Any:
    """One frame as a JSON value: strict UTF-8, no NaN/Infinity, no lone surrogate escapes.

    Each of those would otherwise be accepted by `json.loads` and later break a response or a
    database write; here they are a parse error like any other malformed frame.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    except UnicodeDecodeError:
        raise ParseError("Parse error: invalid UTF-8") from None
    try:
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:  # no value at the first character: leading whitespace, or not JSON
            end = -1
        if end != len(text):  # whitespace around the value, or more after it: the decoder's full rules
            value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        raise ParseError("Parse error: not valid JSON") from None
    if _SURROGATE_ESCAPE.search(data if isinstance(data, (bytes, bytearray)) else text.encode("utf-8", "replace")):
        try:  # only frames that escape a surrogate pay for this check
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("Parse error: a string holds a lone surrogate (\\uD800-\\uDFFF)") from None
        except RecursionError:
            raise ParseError("Parse error: nested too deeply") from None
    return value
