"""What the web pages say and offer people, beyond what agents read: labels instead of parameter
names, members picked instead of typed, a date input for deadlines, destructive actions that say
what they do, a help page and a sign-in page written for people, the app shell."""

from __future__ import annotations

import re

from nav_helpers import accepts
from navmcp.identity import create_user
from test_web_renditions import visible_text
from webclient import csrf_of


def dialog_of(page_html: str, action: str) -> str:
    return re.search(rf'<dialog id="dlg-{action}"[^>]*>(.*?)</dialog>', page_html, re.S).group(1)


def test_actions_are_buttons_with_labels_not_parameter_names(seeded, browser):
    studio = browser.get("/studios/team").text
    assert re.findall(r'command="show-modal"[^>]*>([^<]+)</button>', studio) == [
        "New note", "New decision", "New commitment"]
    commitment = dialog_of(studio, "create_commitment")
    labels = re.findall(r'<label for="create_commitment-[a-z_]+">([^<]+)', commitment)
    assert [label.strip() for label in labels] == ["Title", "Description", "People needed", "At most", "Deadline",
                                                   "Tags"]
    assert "critical_mass" not in visible_text(commitment) and "create_commitment" not in visible_text(commitment)
    # the raw names are in the agents' menu only
    main = studio.split('<main id="main">', 1)[1].split("</main>", 1)[0]
    assert "create_note" not in visible_text(main)


def test_a_deadline_is_a_date_input_whose_date_is_taken(seeded, browser, api):
    page = browser.get("/studios/team").text
    field = re.search(r'<input type="date" id="create_decision-deadline" name="deadline"[^>]*>', page).group(0)
    today = re.search(r'min="(\d{4}-\d\d-\d\d)"', field).group(1)
    reply = browser.post("/studios/team/actions/create_decision", data={
        "csrf_token": csrf_of(page), "question": "Dated?", "options": "Yes\r\nNo", "deadline": "2099-12-31"})
    assert reply.status_code == 303
    md = api.get(reply.headers["location"] + ".md").text
    assert "2099-12-31 23:59 UTC" in md  # a date is the end of that day
    assert today <= "2099-12-31"


def test_members_are_picked_to_remove_and_suggested_to_add(app, seeded, browser, api):
    for handle in ("carol", "dave", "erin"):
        with app.store.write() as tx:
            create_user(tx, handle, handle.capitalize() + " Person", findable=True)
    api.post("/studios/team/members/actions/add_member", json={"handle": "carol"})
    accepts(app.workspace, "carol")
    api.post("/actions/create_studio", json={"handle": "other", "name": "Other"})
    api.post("/studios/other/members/actions/add_member", json={"handle": "dave"})
    api.post("/studios/other/members/actions/add_member", json={"handle": "erin"})
    accepts(app.workspace, "dave")
    accepts(app.workspace, "erin")
    with app.store.write() as tx:  # erin chose to stop being findable: she can't be added, so isn't offered
        tx.execute("UPDATE users SET findable = 0 WHERE handle = 'erin'")
    page = browser.get("/studios/team/members").text
    remove = dialog_of(page, "remove_member")
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', remove)
    assert options == [("", "Choose…"), ("carol", "Carol Person (@carol)")]  # not yourself: that is Leave
    add = dialog_of(page, "add_member")
    suggested = re.findall(r'<option value="([a-z0-9-]+)">([^<]+)</option>', add.split("<datalist", 1)[1].split(
        "</datalist>", 1)[0])
    assert suggested == [("dave", "Dave Person (@dave)")]  # shares a studio with you, not in this one
    assert 'list="add_member-handle-people"' in add
    # the destructive one says what will happen, and is styled as such
    assert "They will no longer see this studio" in visible_text(remove)
    assert re.search(r'<button type="submit" class="danger">Remove a person</button>', remove)
    assert 'class="danger secondary" commandfor="dlg-remove_member"' in page
    reply = browser.post("/studios/team/members/actions/remove_member", data={"csrf_token": csrf_of(page),
                                                                               "handle": "carol"})
    members = api.get("/studios/team/members.md").text.split("Invitations")[0]  # (hers, accepted, stays listed)
    assert reply.status_code == 303 and "@carol" not in members


def test_destructive_actions_say_what_will_happen(seeded, browser):
    decision = browser.get(seeded["decision"]).text
    close = dialog_of(decision, "close_decision")
    assert "Voting ends for everyone and the result is fixed" in visible_text(close)
    assert re.search(r'<button type="button" class="secondary" commandfor="dlg-close_decision" command="close">'
                     r'Cancel</button>', close)
    commitment = browser.get(seeded["commitment"]).text
    assert "Nobody can join or leave after this." in visible_text(dialog_of(commitment, "close_commitment"))
    # one join-or-leave button: you are in, so Leave
    assert re.findall(r'data-action="((?:join|leave)_commitment)"', commitment) == ["leave_commitment"]


def test_a_commitment_shows_its_progress(seeded, browser):
    page = browser.get(seeded["commitment"]).text
    card = re.search(r'<section class="progress-card"[^>]*>(.*?)</section>', page, re.S).group(1)
    assert "1 joined" in visible_text(card) and "critical mass 2 · at most 5" in visible_text(card)
    assert 'class="fill short" style="width: 20.0%"' in card and 'style="left: calc(40.0% - 1px)"' in card


def test_the_app_shell(app, seeded, browser, api):
    page = browser.get(seeded["note"]).text
    shell = re.search(r'<header class="shell">(.*?)</header>', page, re.S).group(1)
    assert 'action="/studios/team/search"' in shell or 'action="/search"' in shell
    assert re.search(r'<span class="n">\d+\+?</span> waiting for you', shell)
    assert re.search(r'<span class="avatar hue\d" aria-hidden="true">[A-Z]{1,2}</span>', shell)
    side = re.search(r'<nav class="side" id="studios" aria-label="Your studios">(.*?)</nav>', page, re.S).group(1)
    assert '<a href="/studios/team" aria-current="page">' in side
    # what awaits you counts home's lists: a decision you have not voted on
    before = int(re.search(r'class="awaits" href="/#awaiting"><span class="n">(\d+)', shell).group(1))
    api.post("/studios/team/actions/create_decision", json={"question": "New one", "options": ["a", "b"]})
    after = re.search(r'class="awaits" href="/#awaiting"><span class="n">(\d+)', browser.get(seeded["note"]).text).group(1)
    assert int(after) == before + 1


def test_help_and_sign_in_are_written_for_people(browser, anon):
    help_page = visible_text(browser.get("/help").text)
    assert "You vote on the options themselves" in help_page and "navigate(" not in help_page
    assert "execute_action" not in help_page.split("For agents")[0]
    login = anon.get("/login?bye=1")
    seen = visible_text(login.text)
    assert "You are signed out." in seen and "How to get back in" in seen
    # the exact command for this workspace; to a browser on the server's own machine, with the owner's handle
    assert re.search(r"navmcp( --home \S+)? login-link \S+", seen) and "ask the person who runs it" in seen
    expired = anon.get("/login?token=not-a-real-token")
    assert expired.status_code == 401 and "How to get back in" in visible_text(expired.text)


def test_search_marks_the_matched_words(seeded, browser):
    page = browser.get("/studios/team/search?q=venue").text
    assert "Book the <mark>venue</mark>" in page
    hostile = browser.get("/studios/team/search?q=%3Cmark%3Escript").text
    assert "<q>&lt;mark&gt;script</q>" in hostile  # the query is text, its words marked in the results only
    titles = browser.get("/studios/team/search?q=script").text
    assert "&lt;<mark>script</mark>&gt;" in titles  # a title's "<script>", escaped around the mark



def test_search_shows_a_snippet_of_the_items_own_text(seeded, browser, api):
    """A match in an item's text shows the words around it, marked; a match in its title shows its
    text too, with the words marked where they occur."""
    filler = "Lorem ipsum dolor sit amet. " * 12
    api.post("/studios/team/actions/create_note", json={
        "title": "Quarterly review", "body": filler + "We picked the harbour warehouse for <b>the</b> offsite. " + filler})
    api.post("/studios/team/actions/create_note", json={"title": "Warehouse keys",
                                                         "body": "Ask **Dana** for the [warehouse](/x) `keys`."})
    page = browser.get("/studios/team/search?q=warehouse").text
    rows = dict(re.findall(r'<li><div class="row"><span class="title"><a href="[^"]+">(.*?)</a></span>.*?'
                           r'<p class="snippet">(.*?)</p></li>', page, re.S))
    assert "harbour <mark>warehouse</mark> for &lt;b&gt;the&lt;/b&gt; offsite" in rows["Quarterly review"]
    assert rows["Quarterly review"].startswith("…") and len(visible_text(rows["Quarterly review"])) < 200
    assert rows["<mark>Warehouse</mark> keys"] == "Ask Dana for the <mark>warehouse</mark> keys."
