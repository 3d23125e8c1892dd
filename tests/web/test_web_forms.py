"""Actions as HTML forms: generated from the params schema, run through Workspace.execute, then PRG."""

from __future__ import annotations

import html as htmllib
import re

from test_web_renditions import visible_text
from webclient import csrf_of


def form_of(page_html: str, action: str) -> str:
    return re.search(rf'<form class="action"[^>]*data-action="{action}">(.*?)</form>', page_html, re.S).group(1)


def test_forms_follow_the_schema(seeded, browser):
    studio = browser.get("/studios/team").text
    decision_form = form_of(studio, "create_decision")
    assert 'name="question"' in decision_form and 'type="text"' in decision_form
    assert re.search(r'<textarea[^>]*name="options"[^>]*placeholder="one per line"', decision_form)  # list of strings
    assert re.search(r'<textarea[^>]*name="description"', decision_form)  # long text
    assert re.search(r'<input type="number"[^>]*name="critical_mass"[^>]*min="1"', form_of(studio, "create_commitment"))
    members = browser.get("/studios/team/members").text
    # an optional choice with no default starts blank, which leaves it out (add_member: never a demotion)
    assert re.search(r'<select[^>]*name="role"><option value="" selected>—</option><option value="member">member</option>'
                     r'<option value="admin">admin</option></select>', form_of(members, "add_member"))
    # a vote's ballots are real choices: one row per option of this decision, accept/prefer checkboxes
    vote = form_of(browser.get(seeded["decision"]).text, "vote")
    assert len(re.findall(r'name="votes.option"', vote)) == 3
    assert len(re.findall(r'type="checkbox" name="votes.accept"', vote)) == 3
    assert len(re.findall(r'type="checkbox" name="votes.prefer"', vote)) == 3
    assert "Lisbon" in vote and "Berlin" in vote
    # the owner's vote (Lisbon: accept + prefer) is pre-checked
    assert re.search(r'name="votes.prefer" value="[a-z0-9]+" aria-label="prefer Lisbon" checked', vote)


def test_vote_through_the_form_then_redirect(seeded, browser, api):
    page = browser.get(seeded["decision"]).text
    ids = dict((title, oid) for oid, title in
               re.findall(r'name="votes.accept" value="([a-z0-9]+)" aria-label="accept ([^"]+)"', page))
    form = {"csrf_token": csrf_of(page), "votes.option": list(ids.values()),
            "votes.accept": [ids["Berlin"], ids["Lisbon"]], "votes.prefer": [ids["Berlin"]]}
    reply = browser.post(seeded["decision"] + "/actions/vote", data=form)
    assert reply.status_code == 303 and reply.headers["location"] == seeded["decision"]
    shown = browser.get(seeded["decision"]).text
    assert "✓ Vote replaced:" in shown  # the outcome is shown once, after the redirect
    assert "✓ Vote" not in browser.get(seeded["decision"]).text
    md = api.get(seeded["decision"] + ".md").text
    assert "Your vote: Lisbon: accept; Berlin: accept + prefer" in md


def test_create_through_form_redirects_to_the_new_page(browser, seeded, api):
    page = browser.get("/studios/team").text
    reply = browser.post("/studios/team/actions/create_decision", data={
        "csrf_token": csrf_of(page), "question": "Lunch?", "description": "", "options": "Pizza\r\n\r\nSushi\r\n",
        "deadline": "", "tags": ""})
    assert reply.status_code == 303 and re.fullmatch(r"/studios/team/d/[a-z0-9]+", reply.headers["location"])
    md = api.get(reply.headers["location"] + ".md").text
    assert "Pizza" in md and "Sushi" in md and "Lunch?" in md


def test_refused_form_shows_the_reason_on_the_page(browser, seeded):
    page = browser.get(seeded["decision"]).text
    token = csrf_of(page)
    assert browser.post(seeded["decision"] + "/actions/close_decision", data={"csrf_token": token}).status_code == 303
    # the page no longer offers vote; a stale form posting it is refused with the reason, on the page
    refused = browser.post(seeded["decision"] + "/actions/vote",
                           data={"csrf_token": token, "votes.option": ["x"], "votes.accept": ["x"]})
    assert refused.status_code == 409
    seen = visible_text(refused.text)
    assert "vote was refused (409): vote is not available" in seen
    assert "Available here: add_comment" in seen
    unknown = browser.post("/studios/team/members/actions/add_member", data={"csrf_token": token, "handle": "nobody"})
    shown = re.search(r'<div class="error" role="alert">(.*?)</div>', unknown.text, re.S).group(1)
    assert "<code>navmcp user add nobody</code>" in shown and "`" not in shown  # code spans, not raw backticks
    # bad params: 422 naming the field, still on the page
    bad = browser.post("/studios/team/actions/create_commitment",
                       data={"csrf_token": token, "title": "x", "critical_mass": "lots"})
    assert bad.status_code == 422
    assert "critical_mass" in visible_text(bad.text) and "create_commitment was refused (422)" in visible_text(bad.text)


def test_edit_form_starts_from_what_it_edits(seeded, browser, api):
    page = browser.get(seeded["note"]).text
    edit = form_of(page, "edit_note")
    assert 'value="Standup &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"' in edit
    assert re.search(r'<textarea id="edit_note-tags" name="tags"[^>]*>meetings</textarea>', edit)
    reply = browser.post(seeded["note"] + "/actions/edit_note",
                         data={"csrf_token": csrf_of(page), "title": "Standup, renamed", "body": "New body",
                               "tags": "meetings\nweekly"})
    assert reply.status_code == 303
    md = api.get(seeded["note"] + ".md").text
    assert md.startswith("# Standup, renamed") and "New body" in md and "#weekly" in md


def test_get_of_an_action_url_from_a_browser_goes_to_its_page(seeded, browser, api):
    """A refused form leaves the browser on …/actions/NAME; a reload GETs it: the page, not JSON."""
    for url, action in ((seeded["decision"], "vote"), ("/studios/team", "create_note")):
        reply = browser.get(f"{url}/actions/{action}")
        assert reply.status_code == 303 and reply.headers["location"] == url
        assert browser.request("HEAD", f"{url}/actions/{action}").status_code == 303
    # the action API keeps its JSON answers
    assert api.get(seeded["decision"] + "/actions/vote", headers={"Accept": "application/json"}).status_code == 405
    assert api.get(seeded["decision"] + "/actions").status_code == 200


def _submit(form_html: str) -> dict[str, str]:
    """What a browser sends for a form as it stands: its inputs and text areas, pre-filled values kept."""
    fields = {}
    for name, value in re.findall(r'<input type="(?:hidden|text)"[^>]*name="([^"]+)" value="([^"]*)"', form_html):
        fields[name] = value
    for name, value in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form_html, re.S):
        fields[name] = value.replace("\n", "\r\n")
    return {k: htmllib.unescape(v) for k, v in fields.items()}


def test_edit_form_sends_only_what_changed_and_can_clear_tags(seeded, browser, api):
    page = browser.get(seeded["note"]).text
    form = _submit(form_of(page, "edit_note"))
    assert form["tags"] == "meetings" and "tags.was" in form and "body.was" in form
    reply = browser.post(seeded["note"] + "/actions/edit_note", data={**form, "title": "Renamed only"})
    assert reply.status_code == 303
    assert "✓ Updated the note's title." in visible_text(browser.get(seeded["note"]).text)
    md = api.get(seeded["note"] + ".md").text
    assert md.startswith("# Renamed only") and "#meetings" in md and "Body <script>" in md
    # emptying the tags clears them (an empty list, not "unchanged")
    form = _submit(form_of(browser.get(seeded["note"]).text, "edit_note"))
    reply = browser.post(seeded["note"] + "/actions/edit_note", data={**form, "tags": ""})
    assert reply.status_code == 303
    assert "✓ Updated the note's tags." in visible_text(browser.get(seeded["note"]).text)
    md = api.get(seeded["note"] + ".md").text
    assert "#meetings" not in md and md.startswith("# Renamed only")


def test_refused_form_keeps_what_was_typed(browser, seeded):
    token = csrf_of(browser.get("/studios/team").text)
    bad = browser.post("/studios/team/actions/create_commitment",
                       data={"csrf_token": token, "title": "Keep <me>", "description": "typed\r\ntext",
                             "critical_mass": "0", "limit": "", "tags": "a\r\nb"})
    assert bad.status_code == 422
    refused = form_of(bad.text, "create_commitment")
    assert 'value="Keep &lt;me&gt;"' in refused
    assert re.search(r'name="critical_mass" value="0"', refused)
    assert re.search(r'<textarea[^>]*name="description"[^>]*>typed\ntext</textarea>', refused)
    assert re.search(r'<textarea[^>]*name="tags"[^>]*>a\nb</textarea>', refused)
    # the other forms on the page stay empty
    assert "Keep" not in form_of(bad.text, "create_note")


def test_refused_ballot_keeps_what_was_ticked(browser, seeded):
    """A refused vote comes back with the boxes as the user left them, not as the last vote stood."""
    page = browser.get(seeded["decision"]).text
    ids = dict((title, oid) for oid, title in
               re.findall(r'name="votes.accept" value="([a-z0-9]+)" aria-label="accept ([^"]+)"', page))
    # the owner's standing vote is Lisbon: accept + prefer; this ballot ticks Berlin alone, and names
    # an option that is not there, so it is refused
    bad = browser.post(seeded["decision"] + "/actions/vote", data={
        "csrf_token": csrf_of(page), "votes.option": [*ids.values(), "nosuchopt"],
        "votes.accept": [ids["Berlin"]], "votes.prefer": [ids["Berlin"]]})
    assert bad.status_code in (409, 422) and "no option 'nosuchopt'" in visible_text(bad.text)
    ballot = form_of(bad.text, "vote")
    checked = set(re.findall(r'name="votes\.(accept|prefer)" value="[a-z0-9]+" aria-label="\w+ ([^"]+)" checked',
                             ballot))
    assert checked == {("accept", "Berlin"), ("prefer", "Berlin")}
    # and the standing vote is untouched
    assert re.search(r'aria-label="prefer Lisbon" checked', form_of(browser.get(seeded["decision"]).text, "vote"))


def test_quoted_titles_read_plainly_in_html(browser, seeded, api):
    """Replies escape user text for markdown (`render.quoted`); the JSON API carries them as they
    are (as MCP does), and HTML shows the text as written."""
    title = "a_b [x](http://evil.example)"
    page = browser.get("/studios/team").text
    reply = browser.post("/studios/team/actions/create_note",
                         data={"csrf_token": csrf_of(page), "title": title, "body": "b", "tags": ""})
    assert reply.status_code == 303
    assert f"✓ Created note '{title}'." in visible_text(browser.get(reply.headers["location"]).text)
    # the option's title in a refusal, on each surface
    api.post(seeded["decision"] + "/actions/add_option", json={"title": title})
    again = dict(json={"title": title})
    js = api.post(seeded["decision"] + "/actions/add_option", **again).json()["message"]
    assert "an option titled 'a\\_b \\[x\\](http://evil.example)' already exists" in js
    page = browser.get(seeded["decision"]).text
    shown = browser.post(seeded["decision"] + "/actions/add_option", data={"csrf_token": csrf_of(page), "title": title})
    assert f"an option titled '{title}' already exists" in visible_text(shown.text)


def test_editing_the_title_leaves_a_crlf_body_as_it_was(seeded, browser, api):
    note = api.post("/studios/team/actions/create_note",
                    json={"title": "Windows", "body": "line one\r\nline two"}).json()["url"]
    form = _submit(form_of(browser.get(note).text, "edit_note"))
    # a browser sends a text area's lines back with CRLF, whatever the page held
    form["body"] = "line one\r\nline two"
    reply = browser.post(note + "/actions/edit_note", data={**form, "title": "Renamed"})
    assert reply.status_code == 303
    assert "✓ Updated the note's title." in visible_text(browser.get(note).text)


def test_favicon_is_no_content_not_a_404(anon):
    reply = anon.get("/favicon.ico")  # browsers ask on every first visit: no error in their console
    assert reply.status_code == 204 and reply.content == b""


def test_a_flash_shows_user_text_as_written_and_inert(browser):
    """Replies are markdown: our code spans show as code in HTML, while a backtick or a tag in a
    name the user wrote is shown as typed, never as a span or markup."""
    page = browser.get("/").text
    reply = browser.post("/actions/create_studio", data={
        "csrf_token": csrf_of(page), "handle": "ops", "name": "Ops `rm -rf` <b>team</b> \\ end"})
    assert reply.status_code == 303
    shown = re.search(r'<p class="flash" role="status">(.*?)</p>', browser.get(reply.headers["location"]).text,
                      re.S).group(1)
    assert "<code>" not in shown and "<b>" not in shown
    assert htmllib.unescape(shown) == "✓ Created studio 'Ops `rm -rf` <b>team</b> \\ end'; you are its admin."
