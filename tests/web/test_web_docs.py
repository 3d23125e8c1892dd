"""docs/web.md and the people's guide (/help) say what the app does: the examples they give are read
from their text and run against the app (the docs said the search box searched the current studio;
it searched all of them). A claim changed in the docs or in the app without the other fails here."""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

from navmcp.web import words

ROOT = Path(__file__).resolve().parent.parent.parent
WEB_MD = " ".join((ROOT / "docs" / "web.md").read_text().split())  # one line: sentences wrap anywhere


def _between(text: str, start: str, end: str) -> str:
    assert start in text, f"the docs no longer say {start!r}: update this test with them"
    return text.split(start, 1)[1].split(end, 1)[0]


def _words(page: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", page)).split())


def _guide(browser) -> str:
    page = browser.get("/help")
    assert page.status_code == 200
    return _words(page.text)


def test_the_deadline_phrases_the_docs_give_are_taken(api, seeded):
    phrases = re.findall(r'"([^"]+)"', _between(WEB_MD, "for the day in words (", "; the words win"))
    assert len(phrases) >= 6, phrases
    for phrase in phrases:
        reply = api.post("/studios/team/actions/create_decision",
                         json={"question": f"When? ({phrase})", "options": ["a", "b"], "deadline": phrase})
        assert reply.status_code == 200, (phrase, reply.text)


def test_what_the_docs_say_of_user_markdown_holds(api, browser, seeded):
    said = _between(WEB_MD, "**What people write**", "- **Decisions**")
    schemes = re.findall(r"`([a-z]+):`", said)
    path = re.search(r"navmcp paths \(`(/studios/[^`]+)`\)", said).group(1)
    assert set(schemes) == {"javascript", "vbscript", "file", "data"} and "<script>" in said and "onerror=" in said
    body = "\n\n".join([*(f"[{s} link]({s}:alert(1))" for s in schemes), f"see {path}",
                        "<script>alert(1)</script> <img src=x onerror=alert(1)>", "![a picture](https://example.com/a.png)",
                        "[out](https://example.com/x)"])
    note = api.post("/studios/team/actions/create_note", json={"title": "Docs", "body": body}).json()["url"]
    text = browser.get(note).text
    md = text.split('class="md', 1)[1]
    for scheme in schemes:
        assert f'href="{scheme}:' not in md and f"{scheme} link" in md
    assert f'href="{path}"' in md  # a navmcp path is a link inside the app
    assert "<script>alert" not in md and "&lt;script&gt;" in md and "<img" not in md.split("</div>", 1)[0]
    assert 'href="https://example.com/a.png"' in md  # an image is a link, never fetched
    assert 'rel="nofollow noopener noreferrer"' in md


def test_the_action_lists_of_the_docs_are_the_apps(browser, seeded):
    named = re.search(r"“([^”]+)” for `([a-z_]+)`", WEB_MD)
    assert words.ACTION_LABELS[named.group(2)] == named.group(1)
    destructive = re.findall(r"`([a-z_]+)`", _between(WEB_MD, "Destructive actions (", ")"))
    assert set(destructive) == set(words.DESTRUCTIVE), "docs/web.md names other destructive actions than the app"
    # "nothing to fill in and nothing to confirm (pin, unpin, …) runs at once": its button sends it
    at_once = _between(WEB_MD, "nothing to fill in and nothing to confirm (", ")").split(", ")
    assert "pin" in at_once
    page = browser.get(seeded["note"]).text
    assert '<form class="action" id="action-pin"' in page and 'id="dlg-pin"' not in page
    assert f">{words.ACTION_LABELS['pin']}</button></form>" in page


def test_the_guide_names_buttons_and_places_that_exist(api, browser, seeded):
    guide = _guide(browser)
    studio = browser.get("/studios/team").text
    for button in ("New note", "New decision", "New commitment"):
        assert f"<strong>{button}</strong>" in browser.get("/help").text and button in studio, button
    assert 'href="/studios/team/members"' in studio and "Members" in guide
    for place in ("cycles/today", "cycles/this-week"):
        assert f'href="/studios/team/{place}"' in studio and browser.get(f"/studios/team/{place}").status_code == 200
    decision = browser.get(seeded["decision"]).text
    for word in ("Accept", "Prefer", "Save my vote"):
        assert f"<strong>{word}</strong>" in browser.get("/help").text and word in decision, word
    commitment = browser.get(seeded["commitment"]).text
    assert ">Leave<" in commitment  # the owner joined it: one button, Leave
    assert "Mark as read" in guide and words.ACTION_LABELS["confirm_read"] == "Mark as read"
    assert "Appearance" in guide and "Appearance" in browser.get("/whoami").text
    # Pasting another item's address links the two: "Links to" and "Linked from"
    linking = api.post("/studios/team/actions/create_note",
                       json={"title": "Follow-up", "body": f"After {seeded['decision']}"}).json()["url"]
    assert "Links to" in guide and "Links to" in browser.get(linking).text
    assert "Linked from" in guide and "Linked from" in browser.get(seeded["decision"]).text


def test_search_searches_what_the_guide_says(api, browser, seeded):
    """The search box at the top searches all your studios and each result names its studio; a
    studio's own search page (`/studios/NAME/search`) searches that studio alone."""
    guide = _guide(browser)
    assert "The search box at the top searches all your studios" in guide
    assert api.post("/actions/create_studio", json={"handle": "other", "name": "Other"}).status_code == 200
    assert api.post("/studios/other/actions/create_note", json={"title": "Lisbon hotels", "body": "x"}).status_code == 200
    top = browser.get("/").text
    box = re.search(r'<form[^>]*role="search"[^>]*action="([^"]+)"', top) or re.search(
        r'<form[^>]*action="([^"]+)"[^>]*role="search"', top)
    assert box and box.group(1) == "/search", "the box at the top searches /search"
    everywhere = browser.get("/search?q=Lisbon").text
    assert "Lisbon hotels" in _words(everywhere) and "Where is the offsite" in everywhere
    assert "/studios/other" in everywhere and "/studios/team" in everywhere  # each result names its studio
    one = re.search(r"<code>(/studios/NAME/search)</code>", browser.get("/help").text).group(1)
    alone = browser.get(one.replace("NAME", "team") + "?q=Lisbon").text
    assert "Where is the offsite" in alone and "hotels" not in alone


def test_assets_are_cached_as_the_docs_say(browser):
    page = browser.get("/").text
    css = re.search(r'href="(/static/app\.[0-9a-f]{12}\.css)"', page).group(1)
    reply = browser.get(css)
    assert reply.status_code == 200 and reply.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "`Cache-Control: public, max-age=31536000, immutable`" in WEB_MD
    assert browser.get("/static/app.000000000000.css").status_code == 404  # "an old hash is a 404"
