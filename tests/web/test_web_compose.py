"""What a text box asks while a person writes (navmcp/web/compose.py): the preview is the page's
own rendering of the text, inert for written HTML, and links only members' mentions; the handles
to complete after `@` are a studio's members', for its members only."""

from __future__ import annotations

from nav_helpers import accepts
from webclient import SCRIPT, Client, csrf_of


def _preview(client, text: str, studio: str = "team"):
    return client.post("/preview", data={"text": text, "studio": studio})


def test_the_preview_is_what_the_page_shows(app, browser, api, seeded, make_user):
    make_user("bob")
    api.post("/studios/team/members/actions/add_member", json={"handle": "bob"})
    accepts(app.workspace, "bob")
    text = f"## Goals\n\n**bold** {SCRIPT} <img src=x onerror=alert(1)> [x](javascript:alert(1)) @bob @nobody {seeded['note']}"
    shown = _preview(browser, text)
    assert shown.status_code == 200 and shown.headers["content-type"].startswith("text/html")
    assert "<script>" not in shown.text and "&lt;script&gt;" in shown.text and "<img" not in shown.text
    assert 'href="javascript:' not in shown.text and "<strong>bold</strong>" in shown.text
    assert 'href="/studios/team/members' in shown.text and "@nobody" in shown.text  # bob linked, nobody plain
    assert f'href="{seeded["note"]}"' in shown.text and "<h3" in shown.text  # a heading under the page's outline
    # the page renders the same text to the same HTML
    page = browser.get(seeded["note"]).text
    done = browser.post(seeded["note"] + "/actions/add_comment", data={"csrf_token": csrf_of(page), "body": text})
    assert done.status_code == 303
    page = browser.get(seeded["note"]).text
    assert shown.text.strip() in page


def test_the_preview_and_the_handles_answer_members_only(app, web, browser, api, seeded, make_user):
    _, token = make_user("eve")
    eve = Client(web, {"Authorization": f"Bearer {token}"})
    try:
        # a studio not theirs: rendered, but nobody's mention is linked, and no handles are listed
        make_user("bob")
        api.post("/studios/team/members/actions/add_member", json={"handle": "bob"})
        accepts(app.workspace, "bob")
        assert 'href="/studios/team/members' in _preview(browser, "hi @bob").text
        assert "/studios/team" not in _preview(eve, "hi @bob").text
        assert eve.get("/mentionable?studio=team").status_code == 404
        assert eve.get("/mentionable?studio=nothing-here").status_code == 404  # the same answer
        handles = browser.get("/mentionable?studio=team").json()["handles"]
        assert "bob" in handles and "eve" not in handles and "admins" in handles
    finally:
        eve.close()
    anon = Client(web)
    try:
        assert _preview(anon, "hi").status_code == 401 and anon.get("/mentionable?studio=team").status_code == 401
    finally:
        anon.close()
    assert browser.get("/preview").status_code == 405
    assert _preview(browser, "x" * 100_001).status_code in (413,)
