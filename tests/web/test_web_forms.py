"""Actions as HTML forms: generated from the params schema, run through Workspace.execute, then PRG."""

from __future__ import annotations

import html as htmllib
import re
from datetime import UTC
from pathlib import Path

import pytest

from test_web_renditions import visible_text
from webclient import SCRIPT, csrf_of


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
    assert re.search(r'<select[^>]*name="role"[^>]*><option value="" selected>—</option><option value="member">member</option>'
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
    # in people's words: the reason, without the agents' frame (action names, what else is valid)
    assert "Not done: The decision is closed" in seen, seen
    assert "Available here" not in seen.split("For agents")[0] and "vote is not available" not in seen
    unknown = browser.post("/studios/team/members/actions/add_member", data={"csrf_token": token, "handle": "nobody"})
    shown = re.search(r'<div class="alert refusal" role="alert"[^>]*>(.*?)</div>', unknown.text, re.S).group(1)
    assert "“Let studio admins add me”" in shown and "make_findable" not in shown and "`" not in shown
    # bad params: 422 naming the field by its label, beside the form
    bad = browser.post("/studios/team/actions/create_commitment",
                       data={"csrf_token": token, "title": "x", "critical_mass": "lots"})
    assert bad.status_code == 422
    refusal = visible_text(re.search(r'<div class="alert refusal"[^>]*>(.*?)</div>', bad.text, re.S).group(1))
    assert refusal.startswith("Not done: People needed:") and "critical_mass" not in refusal, refusal


def test_a_refusal_names_actions_by_their_labels_for_people_only(browser, api):
    """People read the buttons' labels where a refusal names an action; agents keep the names."""
    page = browser.get("/").text
    assert browser.post("/actions/create_studio", data={"csrf_token": csrf_of(page), "handle": "solo",
                                                         "name": "Solo"}).status_code == 303
    members = browser.get("/studios/solo/members").text
    refused = browser.post("/studios/solo/members/actions/delete_studio", data={"csrf_token": csrf_of(members),
                                                                               "confirm": "Solo"})
    assert refused.status_code == 422, refused.status_code
    shown = visible_text(re.search(r'<div class="alert refusal"[^>]*>(.*?)</div>', refused.text, re.S).group(1))
    assert shown.startswith("Not done: Type the studio's short name to confirm: type the studio's handle, 'solo'"), shown
    agents = api.post("/studios/solo/members/actions/leave_studio", json={}).json()["message"]
    assert "delete_studio deletes it" in agents and "(add_member)" in agents
    shown = visible_text(browser.post("/studios/solo/members/actions/leave_studio",
                                      data={"csrf_token": csrf_of(members)}).text)
    assert "“Delete this studio” deletes it" in shown and "(“Invite a person”)" in shown, shown
    assert not re.search(r"\b(leave_studio|add_member|delete_studio)\b", shown.split("For agents")[0]), shown
    # an error page names no raw action either
    missing = browser.post("/studios/solo/actions/close_decision", data={"csrf_token": csrf_of(page)})
    assert missing.status_code == 404 and "close_decision" not in visible_text(missing.text).split("For agents")[0]


def test_a_deadline_is_picked_or_written_in_words(browser, api):
    """The deadline's date picker has a text input beside it for a day in words (navmcp.clock.dates); the
    words win when both are given; words it can't read are refused beside the field, in people's words."""
    from datetime import datetime, timedelta

    api.post("/actions/create_studio", json={"handle": "dates", "name": "Dates"})
    page = browser.get("/studios/dates").text
    form = form_of(page, "create_decision")
    assert re.search(r'<input type="date" id="create_decision-deadline" name="deadline"', form)
    assert re.search(r'<label class="or" for="create_decision-deadline-words">or in words</label>\s*'
                     r'<input type="text" id="create_decision-deadline-words" name="deadline"', form)
    today = datetime.now(UTC).date()
    for picked, words, day in (("", "in 3 days", today + timedelta(days=3)),
                               ((today + timedelta(days=9)).isoformat(), "", today + timedelta(days=9)),
                               ((today + timedelta(days=9)).isoformat(), "tomorrow", today + timedelta(days=1))):
        reply = browser.post("/studios/dates/actions/create_decision", data={
            "csrf_token": csrf_of(page), "question": f"When {words or picked}?", "deadline": [picked, words]})
        assert reply.status_code == 303, reply.text
        assert f"{day.isoformat()} 23:59 UTC" in api.get(reply.headers["location"] + ".md").text
    refused = browser.post("/studios/dates/actions/create_decision", data={
        "csrf_token": csrf_of(page), "question": "When?", "deadline": ["", "whenever suits"]})
    assert refused.status_code == 422
    form = form_of(refused.text, "create_decision")
    shown = visible_text(re.search(r'<div class="alert refusal"[^>]*>(.*?)</div>', form, re.S).group(1))
    assert shown.startswith("Not done: Deadline: ") and "or a day in words (today, tomorrow" in shown, shown
    assert "deadline" not in shown and "create_decision" not in shown and "Value error" not in shown, shown
    assert re.search(r'<input type="text" id="create_decision-deadline-words" name="deadline" value="whenever suits"'
                     r'[^>]*aria-invalid="true"', form)


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
    assert "✓ Updated the note's title: revision 2." in visible_text(browser.get(seeded["note"]).text)
    md = api.get(seeded["note"] + ".md").text
    assert md.startswith("# Renamed only") and "#meetings" in md and "Body <script>" in md
    # emptying the tags clears them (an empty list, not "unchanged")
    form = _submit(form_of(browser.get(seeded["note"]).text, "edit_note"))
    reply = browser.post(seeded["note"] + "/actions/edit_note", data={**form, "tags": ""})
    assert reply.status_code == 303
    assert "✓ Updated the note's tags: revision 3." in visible_text(browser.get(seeded["note"]).text)
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
    """Replies put user text that markdown would read in a code span (`render.quoted`); the JSON API
    carries them as they are (as MCP does), and HTML shows the text as written, as code."""
    title = "a_b [x](http://evil.example)"
    page = browser.get("/studios/team").text
    reply = browser.post("/studios/team/actions/create_note",
                         data={"csrf_token": csrf_of(page), "title": title, "body": "b", "tags": ""})
    assert reply.status_code == 303
    shown = browser.get(reply.headers["location"]).text
    assert f"✓ Created note {title}." in visible_text(shown) and f"<code>{title}</code>" in shown
    # the option's title in a refusal, on each surface
    api.post(seeded["decision"] + "/actions/add_option", json={"title": title})
    again = dict(json={"title": title})
    js = api.post(seeded["decision"] + "/actions/add_option", **again).json()["message"]
    assert "an option titled `a_b [x](http://evil.example)` already exists" in js
    page = browser.get(seeded["decision"]).text
    shown = browser.post(seeded["decision"] + "/actions/add_option", data={"csrf_token": csrf_of(page), "title": title})
    assert f"Not done: An option titled {title} already exists" in visible_text(shown.text)


def test_editing_the_title_leaves_a_crlf_body_as_it_was(seeded, browser, api):
    note = api.post("/studios/team/actions/create_note",
                    json={"title": "Windows", "body": "line one\r\nline two"}).json()["url"]
    form = _submit(form_of(browser.get(note).text, "edit_note"))
    # a browser sends a text area's lines back with CRLF, whatever the page held
    form["body"] = "line one\r\nline two"
    reply = browser.post(note + "/actions/edit_note", data={**form, "title": "Renamed"})
    assert reply.status_code == 303
    assert "✓ Updated the note's title: revision" in visible_text(browser.get(note).text)


def test_favicon_is_no_content_not_a_404(anon):
    reply = anon.get("/favicon.ico")  # browsers ask on every first visit: no error in their console
    assert reply.status_code == 204 and reply.content == b""


def test_a_flash_shows_user_text_as_written_and_inert(browser):
    """Replies are markdown: code spans show as code in HTML, and a name the user wrote with a backtick
    or a tag in it is shown as typed, in one code span, never as markup."""
    page = browser.get("/").text
    name = "Ops `rm -rf` <b>team</b> \\ end"
    reply = browser.post("/actions/create_studio", data={"csrf_token": csrf_of(page), "handle": "ops", "name": name})
    assert reply.status_code == 303
    shown = re.search(r'<p class="alert flash" role="status">(.*?)</p>', browser.get(reply.headers["location"]).text,
                      re.S).group(1)
    assert "<b>" not in shown and shown.count("<code>") == 1
    assert htmllib.unescape(shown) == f"✓ Created studio <code>{name}</code>; you are its admin."


def _as_sent(form_html: str) -> dict[str, list[str]]:
    """What a browser sends for a form as it stands, every value of a repeated name kept: hidden
    and text inputs, text areas, and the checkboxes that are ticked."""
    sent: dict[str, list[str]] = {}
    for tag in re.findall(r"<input [^>]*>", form_html):
        attrs = dict(re.findall(r'(\w[\w-]*)="([^"]*)"', tag))
        if "name" in attrs and (attrs.get("type") != "checkbox" or re.search(r"\schecked\b", tag)):
            sent.setdefault(attrs["name"], []).append(htmllib.unescape(attrs.get("value", "")))
    for name, value in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form_html, re.S):
        sent.setdefault(name, []).append(htmllib.unescape(value).replace("\n", "\r\n"))
    return sent


def _option_ids(page_html: str) -> dict[str, str]:
    return {htmllib.unescape(title): oid for oid, title in
            re.findall(r'name="votes.accept" value="([a-z0-9]+)" aria-label="accept ([^"]+)"', page_html)}


def test_vote_form_shows_the_stored_vote_not_defaults(seeded, browser, api):
    """Once you have voted, an option added since (or left out) starts unticked and, left so, stays
    out of your vote: sending the form back changes only what you changed."""
    api.post(seeded["decision"] + "/actions/vote", json={"votes": [
        {"option": "Lisbon", "accept": True, "prefer": True}, {"option": "Berlin", "accept": False}]})
    assert api.post(seeded["decision"] + "/actions/add_option", json={"title": "Newcomer"}).status_code == 200
    page = browser.get(seeded["decision"]).text
    assert "Your vote: Lisbon: accept + prefer; Berlin: reject." in visible_text(page)
    ids, vote = _option_ids(page), form_of(page, "vote")
    ticked = set(re.findall(r'aria-label="(\w+ [^"]+)" checked', vote))
    assert ticked == {"accept Lisbon", "prefer Lisbon"}  # what the form shows is the stored vote
    sent = _as_sent(vote)
    assert set(sent["votes.unvoted"]) == {ids["Newcomer"], ids[f"Opt {SCRIPT}"]}
    sent["votes.accept"].append(ids["Berlin"])  # change Berlin only
    assert browser.post(seeded["decision"] + "/actions/vote", data=sent).status_code == 303
    md = api.get(seeded["decision"] + ".md").text
    assert "Your vote: Lisbon: accept + prefer; Berlin: accept.\n" in md  # no vote on Newcomer made up
    # ticking an option not voted on yet votes on it
    sent = _as_sent(form_of(browser.get(seeded["decision"]).text, "vote"))
    sent["votes.accept"].append(ids["Newcomer"])
    assert browser.post(seeded["decision"] + "/actions/vote", data=sent).status_code == 303
    assert "Your vote: Lisbon: accept + prefer; Berlin: accept; Newcomer: accept.\n" in api.get(seeded["decision"] + ".md").text
    # a first vote starts empty: nothing ticked, every row unvoted (left so, it is no vote), and
    # nothing says "not voted on yet", which is news only beside a vote of yours
    fresh = api.post("/studios/team/actions/create_decision", json={"question": "Q", "options": ["A", "B"]}).json()["url"]
    first = form_of(browser.get(fresh).text, "vote")
    assert re.findall(r'aria-label="(\w+ [^"]+)" checked', first) == []
    assert len(_as_sent(first)["votes.unvoted"]) == 2 and "not voted on yet" not in first
    only_b = _as_sent(first)
    only_b["votes.accept"] = [_option_ids(first)["B"]]
    assert browser.post(fresh + "/actions/vote", data=only_b).status_code == 303
    assert "Your vote: B: accept.\n" in api.get(fresh + ".md").text  # no reject of A made up
    # sent with nothing ticked, the form casts nothing and says so
    other = api.post("/studios/team/actions/create_decision", json={"question": "R", "options": ["A", "B"]}).json()["url"]
    empty = browser.post(other + "/actions/vote", data=_as_sent(form_of(browser.get(other).text, "vote")))
    assert empty.status_code == 422 and "You have not voted." in api.get(other + ".md").text
    # "Accept all and save": every option accepted, with the prefer ticked kept
    page = browser.get(other).text
    sent = {**_as_sent(form_of(page, "vote")), "votes.all": "accept", "votes.prefer": [_option_ids(page)["B"]]}
    assert browser.post(other + "/actions/vote", data=sent).status_code == 303
    assert "Your vote: A: accept; B: accept + prefer.\n" in api.get(other + ".md").text


def test_edit_refuses_to_overwrite_a_change_made_since_the_form_was_filled(seeded, browser, api):
    """Two tabs edit the same note: the second save would silently drop the first one's text."""
    page = browser.get(seeded["note"]).text
    tab1, tab2 = _submit(form_of(page, "edit_note")), _submit(form_of(page, "edit_note"))
    assert browser.post(seeded["note"] + "/actions/edit_note", data={**tab1, "body": "Tab one's text"}).status_code == 303
    stale = browser.post(seeded["note"] + "/actions/edit_note", data={**tab2, "body": "Tab two's text"})
    assert stale.status_code == 409
    seen = visible_text(stale.text)
    assert ("This note's text was changed by someone else since you opened the form: your text is kept below; "
            "compare with the current text and save again") in seen  # the field as its form names it
    assert "Tab one's text" in seen  # the current body, on the page to compare
    assert "Tab one's text" in api.get(seeded["note"] + ".md").text
    refilled = form_of(stale.text, "edit_note")
    assert re.search(r"<textarea[^>]*name=\"body\"[^>]*>Tab two&#39;s text</textarea>", refilled)
    # saved again from the refilled form (it now carries the current body's digest), it goes through
    assert browser.post(seeded["note"] + "/actions/edit_note", data=_submit(refilled)).status_code == 303
    assert "Tab two's text" in api.get(seeded["note"] + ".md").text
    # a change elsewhere conflicts with nothing: a title edited in a stale tab keeps the new body
    old = _submit(form_of(browser.get(seeded["note"]).text, "edit_note"))
    api.post(seeded["note"] + "/actions/edit_note", json={"body": "An agent's body"})
    assert browser.post(seeded["note"] + "/actions/edit_note", data={**old, "title": "Retitled"}).status_code == 303
    md = api.get(seeded["note"] + ".md").text
    assert md.startswith("# Retitled") and "An agent's body" in md
    # a refused form shows what is stored now in the fields the user left alone (sent again, they
    # must not put back the old title)
    old = _submit(form_of(browser.get(seeded["note"]).text, "edit_note"))
    api.post(seeded["note"] + "/actions/edit_note", json={"title": "Agent's title", "body": "Agent's body"})
    refused = browser.post(seeded["note"] + "/actions/edit_note", data={**old, "body": "Mine"})
    assert refused.status_code == 409
    assert 'name="title" value="Agent&#39;s title"' in form_of(refused.text, "edit_note")


def test_a_refusal_points_at_its_form_and_fields(seeded, browser):
    token = csrf_of(browser.get("/studios/team").text)
    bad = browser.post("/studios/team/actions/create_commitment",
                       data={"csrf_token": token, "title": "x", "critical_mass": "lots", "tags": "ok\r\nNot OK"})
    assert bad.status_code == 422
    assert re.search(r"<title>Refused: ", bad.text)
    # the refused form is open in the page, its refusal at its top
    form = re.search(r'<dialog class="inline" open[^>]*><form class="action" id="action-create_commitment"[^>]*>(.*?)'
                     r'</form>', bad.text, re.S).group(1)
    assert re.search(r'<div class="alert refusal" role="alert" id="refusal">', form)
    assert re.search(r'<input type="number" id="create_commitment-critical_mass"[^>]*'
                     r'aria-invalid="true" aria-describedby="refusal">', form)
    assert re.search(r'<textarea id="create_commitment-tags"[^>]*aria-invalid="true" aria-describedby="refusal">', form)
    assert not re.search(r'name="title"[^>]*aria-invalid', form)
    assert "aria-invalid" not in form_of(bad.text, "create_note")
    # a ballot's 'votes.N' marks the row of the Nth ballot sent
    page = browser.get(seeded["decision"]).text
    ids = _option_ids(page)
    bad = browser.post(seeded["decision"] + "/actions/vote", data={
        "csrf_token": csrf_of(page), "votes.option": [ids["Lisbon"], ids["Berlin"]], "votes.prefer": [ids["Berlin"]]})
    assert bad.status_code == 422 and "Your vote: prefer needs accept" in visible_text(bad.text)
    assert re.findall(r'aria-label="(\w+ \w+)"[^>]*aria-invalid="true"', form_of(bad.text, "vote")) == [
        "accept Berlin", "prefer Berlin"]
    # an unrefused page keeps its plain title and no alert
    assert not re.search(r"<title>Refused", browser.get(seeded["decision"]).text)


def test_ballot_labels_its_rows_by_option_title(seeded, browser):
    """Tapping an option's title ticks its accept box: the title is that box's <label>."""
    vote = form_of(browser.get(seeded["decision"]).text, "vote")
    labels = dict(re.findall(r'<label class="opt-title" for="(vote-votes-[a-z0-9]+)">([^<]+)</label>', vote))
    boxes = re.findall(r'<input id="([^"]+)" type="checkbox" name="votes.accept" value="[a-z0-9]+" '
                       r'aria-label="accept ([^"]+)"', vote)
    assert len(boxes) == 3 and all(labels[box] == title for box, title in boxes)


def test_list_fields_take_commas_and_say_one_per_line(seeded, browser, api):
    page = browser.get("/studios/team").text
    note_form = form_of(page, "create_note")
    assert "one per line or separated by commas" in visible_text(note_form)
    assert '["planning"' not in htmllib.unescape(note_form)
    assert "initial option titles (at most 20); one per line" in visible_text(form_of(page, "create_decision"))
    reply = browser.post("/studios/team/actions/create_note", data={
        "csrf_token": csrf_of(page), "title": "Tagged", "body": "b", "tags": "planning, q4\r\nops"})
    assert reply.status_code == 303
    md = api.get(reply.headers["location"] + ".md").text
    assert "#planning" in md and "#q4" in md and "#ops" in md
    # option titles may hold commas: one per line only
    reply = browser.post("/studios/team/actions/create_decision", data={
        "csrf_token": csrf_of(page), "question": "Food?", "options": "Pizza, with cheese\r\nSushi"})
    assert reply.status_code == 303
    assert "Pizza, with cheese" in api.get(reply.headers["location"] + ".md").text
    # the schema's pattern is checked by the browser too (written as the browser's `v` flag reads it)
    assert 'pattern="[a-z0-9][a-z0-9\\-]{0,31}"' in form_of(browser.get("/").text, "create_studio")


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")
def test_ballot_and_patterns_in_a_phone_browser(seeded, browser):
    """At 360 px: the ballot's choices keep their words whole and are a finger's size, a tap on an
    option's title ticks it; the handle's pattern is one the browser can use."""
    from playwright.sync_api import sync_playwright

    pages = {"/d": browser.get(seeded["decision"]).text, "/h": browser.get("/").text}
    pages.update({url: browser.get(url).text for url in re.findall(r'(?:href|src)="(/static/[^"]+)"', pages["/d"])})
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = chromium.new_page(viewport={"width": 360, "height": 800})
            page.route("http://navmcp.test/**", lambda route: route.fulfill(  # others (the inbox's stream): 404
                status=200 if route.request.url.removeprefix("http://navmcp.test") in pages else 404,
                body=pages.get(route.request.url.removeprefix("http://navmcp.test"), ""),
                content_type="text/css" if route.request.url.endswith(".css") else
                "text/javascript" if route.request.url.endswith(".js") else "text/html"))
            page.goto("http://navmcp.test/d")
            ballot = page.locator('form[data-action="vote"] .ballot')
            for label in ballot.locator("label.check").all():
                box = label.bounding_box()
                assert box["height"] >= 40, box  # a finger's target
                assert box["height"] < 60, label.inner_text()  # "Accept" on one line, never "Acc/ept"
            box = ballot.get_by_label("accept Berlin")
            assert not box.is_checked()
            ballot.locator("label.opt-title", has_text="Berlin").click()
            assert box.is_checked()
            page.goto("http://navmcp.test/h")
            page.get_by_role("button", name="New studio").click()
            handle = page.locator("#create_studio-handle")
            handle.fill("Not a handle")
            assert handle.evaluate("e => e.validity.patternMismatch")
            handle.fill("team-2")
            assert handle.evaluate("e => e.validity.valid")
        finally:
            chromium.close()


def test_a_handle_field_lets_the_at_sign_through(seeded, browser):
    """Forms now carry their schema's pattern: the handle's refused '@carol', which the action
    takes, so the browser stopped what the server accepts. The schema says '@' is optional."""
    page = browser.get("/studios/team/members").text
    assert 'pattern="@?[a-z0-9][a-z0-9\\-]{0,31}"' in form_of(page, "add_member")
    reply = browser.post("/studios/team/members/actions/add_member",
                         data={"csrf_token": csrf_of(page), "handle": "@nobody-here"})
    assert reply.status_code == 422 and "no such person you can add: @nobody-here" in htmllib.unescape(reply.text)


def test_a_refusal_names_fields_in_peoples_words_and_its_form_has_cancel(browser, api):
    """"must be at least critical_mass" was the one refusal still in the agents' words; a refused
    form shown in the page had no way back but the browser's."""
    api.post("/actions/create_studio", json={"handle": "crew", "name": "Crew"})
    page = browser.get("/studios/crew").text
    refused = browser.post("/studios/crew/actions/create_commitment", data={
        "csrf_token": csrf_of(page), "title": "Night watch", "critical_mass": "3", "limit": "2"})
    assert refused.status_code == 422
    form = form_of(refused.text, "create_commitment")
    shown = visible_text(re.search(r'<div class="alert refusal"[^>]*>(.*?)</div>', form, re.S).group(1))
    assert shown == "Not done: At most: must be at least the number of people needed (3).", shown
    assert '<a class="button secondary" href="/studios/crew">Cancel</a>' in form


def test_deleting_a_studio_is_its_own_named_action_for_its_last_member(browser, api):
    """Deleting a studio was a consequence discovered after "Leave": it is its own red button,
    offered to the last member only, saying what goes, and it asks for the studio's name."""
    api.post("/actions/create_studio", json={"handle": "solo", "name": "Solo"})
    members = browser.get("/studios/solo/members").text
    assert 'commandfor="dlg-delete_studio"' in members and ">Delete this studio</button>" in members
    assert 'commandfor="dlg-leave_studio"' not in members  # the last member does not "leave"
    dialog = re.search(r'<dialog id="dlg-delete_studio".*?</dialog>', members, re.S).group(0)
    assert "deleted for good, for everyone" in dialog and 'name="confirm"' in dialog
    done = browser.post("/studios/solo/members/actions/delete_studio",
                        data={"csrf_token": csrf_of(members), "confirm": "solo"})
    assert done.status_code == 303 and done.headers["location"].startswith("/")
    assert browser.get("/studios/solo").status_code == 404


def test_an_action_with_nothing_to_fill_or_confirm_runs_at_once(seeded, browser):
    """Pin, mark as read: a button that does it (undoing is one click too); a destructive one still asks."""
    page = browser.get(seeded["note"]).text
    assert 'commandfor="dlg-pin"' not in page and '<dialog id="dlg-pin"' not in page
    pin = re.search(r'<form class="action" id="action-pin"[^>]*>(.*?)</form>', page, re.S).group(1)
    assert '<button type="submit" class="secondary">Pin to the studio</button>' in pin
    done = browser.post(seeded["note"] + "/actions/pin", data={"csrf_token": csrf_of(page)})
    assert done.status_code == 303
    page = browser.get(seeded["note"]).text
    assert re.search(r'id="action-unpin"[^>]*><input type="hidden" name="csrf_token"[^>]*><button type="submit"', page)
    assert '<dialog id="dlg-close_decision"' in browser.get(seeded["decision"]).text  # destructive: asks first


def test_search_everywhere_names_each_results_studio_and_its_form(seeded, browser, api):
    api.post("/actions/create_studio", json={"handle": "ops", "name": "Operations"})
    api.post("/studios/ops/actions/create_note", json={"title": "Offsite budget", "body": "A **bold** [plan](https://x.example/p) for the offsite"})
    page = browser.get("/search?q=offsite").text
    assert '<label for="q">Search all your studios</label>' in page
    landmarks = re.findall(r'<form[^>]*role="search"[^>]*aria-label="([^"]+)"', page)
    assert len(landmarks) == 2 and len(set(landmarks)) == 2, landmarks
    rows = re.findall(r"<li><div class=\"row\">(.*?)</li>", page, re.S)
    budget = next(r for r in rows if "Offsite budget" in visible_text(r))
    assert '<a href="/studios/ops">Operations</a>' in budget
    snippet = visible_text(re.search(r'<p class="snippet">(.*?)</p>', budget, re.S).group(1))
    assert snippet.strip() == "A bold plan for the offsite", snippet
    studio_search = browser.get("/studios/team/search?q=offsite").text
    assert '<label for="q">Search this studio</label>' in studio_search and "Offsite budget" not in studio_search


def test_the_edit_forms_of_a_decision_and_a_commitment_start_from_them_and_send_what_changed(seeded, browser, api):
    """edit_decision's form is filled from the decision (question, description); sent with only the
    question changed, the decision gets one revision naming the question alone. Likewise a
    commitment's limit."""
    page = browser.get(seeded["decision"]).text
    form = _submit(form_of(page, "edit_decision"))
    assert form["question"].startswith("Where is the offsite") and "base" not in form
    assert browser.post(seeded["decision"] + "/actions/edit_decision",
                        data={**form, "question": "Where, then?"}).status_code == 303
    assert "✓ Updated the decision's question: revision 2." in visible_text(browser.get(seeded["decision"]).text)
    form = _submit(form_of(browser.get(seeded["commitment"]).text, "edit_commitment"))
    assert browser.post(seeded["commitment"] + "/actions/edit_commitment",
                        data={**form, "limit": "4"}).status_code == 303
    md = api.get(seeded["commitment"] + ".md").text
    assert "[Revision 2; its history:" in md and "| 4 |" in md


def test_the_edit_form_of_a_decision_renames_the_options_nobody_voted_on(seeded, browser, api):
    """edit_decision's form has a box per option for its new title (issue 44): an option with a
    vote has none, and says why; a box left empty keeps its option's title. Sent, the renames are one
    revision of the decision."""
    section = form_of(browser.get(seeded["decision"]).text, "edit_decision")
    renames = section.split('<fieldset class="field renames">', 1)[1].split("</fieldset>", 1)[0]
    assert "<span>Lisbon</span> <span class=\"muted\">has votes: keeps its title</span>" in renames
    boxes = {htmllib.unescape(label): name for label, name in re.findall(
        r'<label for="[^"]+">([^<]+)</label><input type="text" id="[^"]+" name="([^"]+)"', renames)}
    assert set(boxes) == {"Berlin", f"Opt {SCRIPT}"}  # user text stays text
    sent: list[tuple[str, str]] = [
        (name, htmllib.unescape(value)) for name, value in re.findall(
            r'<input type="(?:hidden|text)"[^>]*name="([^"]+)" value="([^"]*)"', section)]
    sent += [(name, htmllib.unescape(value)) for name, value in re.findall(
        r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', section, re.S)]
    data: dict[str, list[str]] = {}
    for name, value in sent:  # the options' hidden inputs repeat a name: each is sent
        data.setdefault(name, []).append("Berlin, by train" if name == boxes["Berlin"] else value)
    reply = browser.post(seeded["decision"] + "/actions/edit_decision", data=data)
    assert reply.status_code == 303, reply.text
    assert "✓ Updated the decision's options: revision 2." in visible_text(browser.get(seeded["decision"]).text)
    md = api.get(seeded["decision"] + ".md").text
    assert "Berlin, by train" in md and "Lisbon" in md and f"Opt {SCRIPT}" in md
