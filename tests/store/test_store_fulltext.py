"""A parsed search in each store's full-text syntax (`navmcp.store.fulltext`): one parser, two emitters.

- what the emitters write, for the parts of the search language (words, the prefix, phrases, words
  left out, the title alone);
- no query a person can type is a syntax error to either store: typed text full of FTS5 and
  tsquery syntax (quotes, NEAR, column filters, `&|!:*`) runs as a search on real SQLite and real
  PostgreSQL.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from navmcp.clock import now
from navmcp.content.search import parse
from navmcp.errors import InvalidQuery
from navmcp.store.fulltext import fts5_any, fts5_match, tsquery, tsquery_any


def test_what_each_emitter_writes():
    q = parse('pricing "team plan" -draft mo')
    assert fts5_match(q) == '("pricing" "team plan" "mo"*) NOT "draft"'
    assert fts5_match(q, title_only=True) == 'title : (("pricing" "team plan" "mo"*) NOT "draft")'
    assert tsquery(q) == "'pricing' & ('team' <-> 'plan') & 'mo':* & !'draft'"
    assert tsquery(q, title_only=True) == "'pricing':A & ('team':A <-> 'plan':A) & 'mo':*A & !'draft'"
    assert fts5_any(("a", "b")) == '"a" OR "b"' and tsquery_any(("a", "b")) == "'a' | 'b'"
    assert fts5_match(parse("l")) == '"l"' and tsquery(parse("l")) == "'l'"  # one letter alone: a whole word
    assert fts5_match(parse("type:note")) is None and tsquery(parse("type:note")) is None  # filters only


SYNTAX = list('abcé1 "-*:()&|!<>^~\'') + ["NEAR", "NOT", "AND", "OR", "title:", ":*", "<->", "\u0130", "\u200b"]


@pytest.fixture
def searching(any_app, new_user):
    alice, _ = new_user("alice")
    any_app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    any_app.workspace.execute(alice, "/studios/team", "create_note", {"title": "A note (NEAR) & more", "body": '"x" y'})
    with any_app.store.read(user_id=alice["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    return any_app.store, alice, studio


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(SYNTAX), max_size=12).map("".join))
def test_no_typed_query_is_a_syntax_error(searching, text):
    store, alice, studio = searching
    try:
        query = parse(text)
    except InvalidQuery:
        return  # a refusal that teaches, before any store sees it
    if query is None:
        return
    with store.read(user_id=alice["id"]) as tx:
        rows, total, _ = tx.search([studio], query, now(), 20, 0)
    assert len(rows) <= total <= 1
