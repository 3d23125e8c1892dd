"""The per-call shortcuts taken for speed give exactly what the plain way gives.

- an action's parameter lines under '## Available actions' are made once per process in Python
  (`ActionInfo.param_lines`, joined by the `listings` filter) instead of a Jinja loop per page: same
  text as that loop, but for a long description said again (printed once per page);
- a tool result's structuredContent is spliced in from bytes encoded once per action
  (`codec.Preencoded`), and a page's text from bytes escaped by `codec.json_text`: the
  same JSON value as encoding the whole result (and the text, the very same bytes);
- `inline` remembers what it gave for the texts seen last: the same text as computing it again;
- templates compile `row["key"]` to a subscript, not to Jinja's `environment.getitem` call: every
  page renders as Jinja's own compiler renders it;
- a list's pager is the `page_links` filter, not a macro: the same text as the macro made;
- a frame is decoded by the JSON decoder's C scanner alone when it is one value and nothing else:
  the same value, or the same refusal, as the whole decoder.
"""

from __future__ import annotations

import json

import jinja2
import pytest
from hypothesis import given, settings, strategies as st

from navmcp import actions as action_table
from navmcp.demo import seed
from navmcp.mcp.codec import _DECODER, Preencoded, _dumps, decode, encode, json_text
from navmcp.mcp.jsonrpc import ParseError
from navmcp.mcp.tools import connect
from navmcp.page import MARKDOWN_TEMPLATE
from navmcp.render import LONG_DESCRIPTION, environment, inline, listings, page_links
from navmcp.workspace import action_info

# The listing as a template loop would render it (kept here as the reference): the action's line,
# then its parameters on one line.
_JINJA_LOOP = """{% for a in actions %}
- `{{ a.name }}` — {{ a.description }}
{% if a.params %}{{ "  " }}{% for p in a.params %}`{{ p.name }}` ({{ p.type }}{% if not p.required %}, optional{% endif %}{% if p.allowed %}, one of: {{ p.allowed|join(", ") }}{% endif %}){% if p.description %} {{ p.description }}{% endif %}{% if not loop.last %} · {% endif %}{% endfor %}{{ "\n" }}{% endif %}
{% endfor %}"""


def test_every_action_listing_is_what_the_template_loop_rendered():
    template = environment().from_string(_JINJA_LOOP)
    infos = [action_info(a) for a in action_table.ACTIONS]
    assert any(p["allowed"] for info in infos for p in info.params)  # the "one of:" branch is covered
    for info in infos:
        assert template.render(actions=[info]) == listings([info]) + "\n", info.name
    # Together, a long description said again points back to where it was printed first.
    expected, said = [], {}
    for info in infos:
        text = template.render(actions=[info])
        for p in info.params:
            if len(p["description"]) >= LONG_DESCRIPTION:
                if p["description"] in said:
                    text = text.replace(p["description"], f"as {said[p['description']]} above", 1)
                else:
                    said[p["description"]] = f"`{p['name']}` of `{info.name}`"
        expected.append(text)
    assert len(said) >= 1 and template.render(actions=infos) != "".join(expected)  # the case is covered
    assert listings(infos) + "\n" == "".join(expected)


# The pager macro the templates called before `page_links` (kept here as the reference).
_PAGER_MACRO = """{% macro pager(p) -%}
{% if p and p["pages"] > 1 %}
Page {{ p["number"] }} of {{ p["pages"] }} ({{ p["total"] }} in all).{% if p["prev"] %} Previous: `{{ p["prev"] }}`.{% endif %}{% if p["next"] %} Next page: `{{ p["next"] }}`.{% endif +%}

{% endif %}
{% endmacro %}
{{ pager(p) -}}"""


@settings(max_examples=500, deadline=None)
@given(st.none() | st.fixed_dictionaries({
    "number": st.integers(1, 100_000), "pages": st.integers(1, 100_000), "total": st.integers(0, 10**7),
    "prev": st.none() | st.text(max_size=40), "next": st.none() | st.text(max_size=40)}))
def test_page_links_is_the_text_the_pager_macro_made(pager):
    assert page_links(pager) == environment().from_string(_PAGER_MACRO).render(p=pager)


def test_spliced_tool_results_decode_to_the_plain_encoding(app, owner):
    urls = seed.seed(app.store, 60)["urls"]
    conn = connect(app, None)
    conn.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "t"}}})
    pages = ["/", "/help", "/whoami", "/studios/bench", "/studios/bench/members", "/studios/bench/audit",
             "/studios/bench/cycles/this-week", "/studios/bench/search?q=benchmark", *urls.values()]
    spliced = 0
    for url in pages:
        response = conn.receive({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                 "params": {"name": "navigate", "arguments": {"url": url}}})
        structured = response["result"]["structuredContent"]
        assert type(structured) is Preencoded
        assert json.loads(structured.json) == dict(structured)
        assert json.loads(encode(response)) == json.loads(_dumps(response)), url
        spliced += bool(structured["actions"])
    assert spliced >= 4  # pages with action schemas were among them
    # Inside a batch, and as a bare value, the same dict encodes the ordinary way.
    assert json.loads(encode([response])) == [json.loads(_dumps(response))]
    assert json.loads(encode(structured)) == dict(structured)


LINE_SEPARATORS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from('ab "\\/\n\t\r\x00\x1f\x7f\x85\u00e9\u2028\u2029\u203a\ud800\U0001f600')))
def test_a_page_text_is_escaped_as_json_dumps_writes_it_in_utf8(text):
    """As `json.dumps(text, ensure_ascii=False)`, with the line separators JSON leaves raw escaped
    (issue 24, item 16): whoever splits the frame on any line boundary still reads one line."""
    data = json_text(text)
    assert json.loads(data) == text
    assert len(data.decode("utf-8").splitlines()) == 1
    expected = json.dumps(text, ensure_ascii=False)
    try:
        assert data == expected.translate(str.maketrans(LINE_SEPARATORS)).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, as everything `_dumps` writes
        assert data == _dumps(text)


def test_replies_are_ascii_except_a_pages_text():
    reply = _dumps({"text": "\u2713 caf\u00e9 \U0001f600", "lone": "\ud800"})
    assert reply.isascii() and json.loads(reply) == {"text": "\u2713 caf\u00e9 \U0001f600", "lone": "\ud800"}
    assert json_text("\u2713 caf\u00e9") == '"\u2713 caf\u00e9"'.encode("utf-8")


def test_a_spliced_page_reply_decodes_to_its_plain_encoding_whatever_its_text():
    structured = Preencoded({"url": "/", "title": "T", "actions": []})
    structured.json = b'{"url":"/","title":"T","actions":[]}'
    for text in ["plain", 'a "quoted" \\ line\nand more', "tab\there", "lone \ud800", ""]:
        for is_error in (False, True):
            value = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}],
                                                            "structuredContent": structured, "isError": is_error}}
            assert json.loads(encode(value)) == json.loads(_dumps(value)), (text, is_error)


def test_every_page_renders_as_jinjas_own_compiler_renders_it(app, owner):
    ours = environment()
    plain = jinja2.Environment(loader=ours.loader, autoescape=False, trim_blocks=True, lstrip_blocks=True,
                               keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    plain.filters.update(ours.filters)
    assert ours.code_generator_class is not plain.code_generator_class
    source = ours.loader.get_source(ours, "home.md.j2")[0]
    assert "environment.getitem(" in plain.compile(source, raw=True)
    assert "environment.getitem(" not in ours.compile(source, raw=True)

    ws = app.workspace
    urls = seed.seed(app.store, 60)["urls"]
    ws.execute(owner, urls["decision"], "vote", {"votes": [{"option": "March 3", "accept": True, "prefer": True}]})
    pages = ["/", "/help", "/help/decisions", "/whoami", "/studios/bench", "/studios/bench?page=2",
             "/studios/bench/members", "/studios/bench/audit", "/studios/bench/cycles/today", "/studios/bench/search?q=benchmark",
             "/studios/bench/tags/planning", *urls.values()]
    for url in pages:
        page = ws.page(owner, url)
        assert page.markdown == plain.get_template(MARKDOWN_TEMPLATE.format(page.template)).render(page.context()), url
    assert "Your vote: March 3: accept + prefer" in ws.page(owner, urls["decision"]).markdown
    # A key a row lacks is an error either way, never an empty string on the page.
    for env in (ours, plain):
        with pytest.raises((KeyError, jinja2.UndefinedError)):
            env.from_string('{{ row["missing"] }}').render(row={"title": "x"})
    assert ours.from_string('{{ row["title"]|inline }} {{ row["title"][:2] }}').render(row={"title": "#x y"}) \
        == f"{inline('#x y')} #x"


def test_inline_skips_the_code_span_only_when_markdown_would_read_nothing():
    import random
    import re

    from navmcp.render import _INLINED, INLINED_CHARS, INLINED_ENTRIES, code_span, inline

    def reference(value):  # one regex over the text, as the plain way would ask
        text = " ".join(str(value if value is not None else "").split())
        needs = re.search(r"[\\`*_\[\]<>#|~]|^\d*[-+=>.)]|&.*;", text)
        return code_span(text) if text and needs else text

    rng = random.Random(5)
    alphabet = "ab c\\`*_[]<>#|~-+=>.)1&;\n\t\u00e9\u2028\x00"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert inline(text) == reference(text), repr(text)
        assert inline(text) == reference(text), repr(text)  # now from the memo
        assert len(_INLINED) <= INLINED_ENTRIES
    for value in (None, 12, "Plain title", "# not a heading", "[x](y)"):
        assert inline(value) == reference(value)
    long = "- " + "x" * INLINED_CHARS
    assert inline(long) == reference(long) and long not in _INLINED  # long texts are not kept


def test_excerpt_folds_whitespace_as_the_regex_did():
    import random
    import re

    from navmcp.render import excerpt

    rng = random.Random(7)
    alphabet = "ab c\n\t\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000é…"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        flat = re.sub(r"\s+", " ", text).strip()
        assert excerpt(text, 8) == (flat if len(flat) <= 8 else flat[:7].rstrip() + "…"), repr(text)


def test_stdio_flushes_whenever_it_would_wait_for_input(app):
    """Replies to pipelined lines may be written together, but never held while the server waits:
    after each line with nothing more buffered, everything answered so far is on stdout — also when
    the last line was a notification (no reply of its own) or blank."""
    import io

    from navmcp.mcp.stdio import _TOO_LONG, _Lines, serve

    class Recorder(io.BytesIO):
        flushed: list[int]

        def flush(self):
            self.flushed.append(len(self.getvalue()))

    def msg(n, method="ping"):
        return json.dumps({"jsonrpc": "2.0", "id": n, "method": method}).encode() + b"\n"

    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}}).encode() + b"\n"
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'

    class Chunked(io.BytesIO):  # arrives in the pieces a pipe would deliver
        def __init__(self, pieces):
            super().__init__()
            self.pieces = list(pieces)

        def read1(self, n=-1):
            return self.pieces.pop(0) if self.pieces else b""

    out = Recorder()
    out.flushed = []
    pieces = [init + note + msg(1) + msg(2), msg(3) + note, b"\n", msg(4)[:10], msg(4)[10:]]
    assert serve(connect(app, None), Chunked(pieces), out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2, 3, 4]
    ends = [len(b"".join(line + b"\n" for line in out.getvalue().splitlines()[:k])) for k in (3, 4, 5)]
    # Flushed with all of 0-2 once the first piece was used up, with 3 after its trailing
    # notification, and with 4 at the end; never in the middle of a piece.
    assert ends[0] in out.flushed and ends[1] in out.flushed and out.flushed[-1] == ends[2]
    assert all(size in (0, *ends) for size in out.flushed)

    lines = _Lines(Chunked([b"x" * 20 + b"\nok\n"]), max_line=10)
    assert lines.next() is _TOO_LONG and lines.next() == b"ok\n" and lines.next() is None


def test_a_remembered_url_locates_as_it_did_and_each_request_gets_its_own_query():
    import pytest

    from navmcp.errors import NotFound
    from navmcp.pages import _locate, make_request, route, split_url

    for url in ["/studios/team/d/abc?page=2&x=1", "/studios/team/d/abc?page=2&x=1", "studios/team//n/q.md",
                "http://localhost/studios/team/search?q=a%20b"]:
        path, query = split_url(url)
        spec, args = route(path)
        first, second = make_request(None, {}, "t", url)[1], make_request(None, {}, "t", url)[1]
        assert (first.path, first.args) == (path, args) and first.query == second.query
        assert first.query == {k: v for k, v in query.items() if k in spec.query_keys}
        assert first.query is not second.query  # a request may not change another's
    assert _locate.cache_info().hits >= 1
    for _ in range(2):  # a URL naming no page is refused every time, not remembered as a page
        with pytest.raises(NotFound):
            make_request(None, {}, "t", "/studios/team/zz/abc")


@settings(max_examples=2000, deadline=None)
@given(st.dictionaries(st.text(), st.text(), max_size=4) | st.dictionaries(
    st.text(st.characters(max_codepoint=127)), st.text(st.characters(max_codepoint=127)), max_size=4))
def test_query_text_is_urlencode(query):
    """The table of `query_text` against `urlencode`, on any text and on ASCII alone (its fast path)."""
    from urllib.parse import urlencode

    from navmcp.pages import query_text

    assert query_text(query) == urlencode(query)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.sampled_from(["", " ", "\n", "\t\r\n "]), st.sampled_from(["", " ", "\r\n", "x", "{}", " 1", "]"]),
       st.integers(min_value=0, max_value=3))
def test_a_frame_decodes_as_the_whole_decoder_decodes_it(value, before, after, cut):
    text = before + json.dumps(value, indent=None if cut % 2 else 1) + after
    text = text[:len(text) - cut] if cut > 1 else text  # sometimes cut short: no valid JSON at all
    try:
        expected = _DECODER.decode(text)
    except ValueError:
        with pytest.raises(ParseError):
            decode(text.encode())
    else:
        assert decode(text.encode()) == expected
