"""Text that looks alike is the same text (issue 24, item 9): titles, names and options are stored
without invisible characters, options that look alike (zero-width characters, soft hyphens, a BOM,
fullwidth or Cyrillic and Greek look-alikes) are not distinct, and handles are read as they look."""

from __future__ import annotations

import pytest

from nav_helpers import add_member
from navmcp.content.text import look_alike_key, normalized
from navmcp.errors import ActionFailed, InvalidActionParams

SPOOFS_OF_PIZZA = ["Pi\u200bzza", "Pizza\u00ad", "\ufeffPizza", "Piz\u2060za", "Pi\u200dzza", "\u0420izz\u0430",
                   "\u03a1izza", "\uff30\uff49\uff5a\uff5a\uff41", "\U0001d40f\U0001d422\U0001d433\U0001d433\U0001d41a",
                   "Pizza\ufe0f", "Pi zza".replace(" ", "\u3164")]


@pytest.mark.parametrize("spoof", SPOOFS_OF_PIZZA)
def test_a_look_alike_has_the_same_key(spoof):
    assert look_alike_key(spoof) == look_alike_key("Pizza")


@pytest.mark.parametrize("a,b", [("Pizza", "pizza"), ("Pizza", "Piza"), ("Lisbon", "Berlin"), ("caf\u00e9", "cafe"),
                                 ("\u043c\u0438\u0440", "mnp"), ("Option 1", "Option 2")])
def test_texts_that_look_different_have_different_keys(a, b):
    assert look_alike_key(a) != look_alike_key(b)


def test_stored_text_keeps_what_is_seen_and_what_scripts_need():
    assert normalized("Stand\u00adup\u200b meeting\ufeff") == "Standup meeting"
    assert normalized("cafe\u0301") == "caf\u00e9"  # NFC
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # an emoji sequence: its joiners stay
    assert normalized(family) == family
    assert normalized("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645") == "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # ZWNJ in Persian
    assert normalized("\uff30izza") == "\uff30izza"  # fullwidth is kept as written; only compared as P


def test_options_that_look_alike_are_not_distinct_on_both_stores(any_app, new_user):
    alice, _ = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for spoof in SPOOFS_OF_PIZZA:
        with pytest.raises(InvalidActionParams, match="'options': options must be distinct"):
            ws.execute(alice, "/studios/team", "create_decision", {"question": "Lunch?", "options": ["Pizza", spoof]})
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Lunch?", "options": ["Pizza", "Pizza Hut", "Sushi"]}).url
    for spoof in SPOOFS_OF_PIZZA:
        with pytest.raises(ActionFailed, match="an option titled 'Pizza' already exists"):
            ws.execute(alice, decision, "add_option", {"title": spoof})
    ws.execute(alice, decision, "add_option", {"title": "Pasta"})
    page = ws.page(alice, decision).markdown
    assert page.count("Pizza") == 2 and "Pasta" in page  # Pizza and Pizza Hut, nothing that looks like them


def test_titles_names_and_handles_are_read_as_they_look_on_both_stores(any_app, new_user):
    alice, _ = new_user("alice")
    new_user("bob")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "te\u200bam", "name": "\ufeffTe\u00adam"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Stand\u00adup\u200b", "body": "b"}).url
    page = ws.page(alice, note)
    assert page.title == "Standup" and "[Team](/studios/team)" in page.markdown
    with pytest.raises(InvalidActionParams, match="must contain a visible character"):
        ws.execute(alice, "/studios/team", "create_note", {"title": "\u200b\u00ad\ufeff", "body": "b"})
    add_member(ws, alice, "/studios/team/members", {"handle": "@\uff42\uff4f\uff42"})  # fullwidth bob
    assert "@bob" in ws.page(alice, "/studios/team/members").markdown
