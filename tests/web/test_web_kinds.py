"""Decision kinds in the web app (navmcp/kinds/): each kind's ballot is a real form of the page, and
what a person submits through it is what the action receives."""

from __future__ import annotations

import re

from webclient import SCRIPT, csrf_of


def _act(api, url: str, action: str, **params) -> str:
    reply = api.post(f"{url.rstrip('/')}/actions/{action}", json=params)
    assert reply.status_code == 200, reply.text
    return reply.json()["url"]


def test_a_kind_is_chosen_in_the_new_decision_form(browser, api, seeded):
    page = browser.get("/studios/team").text
    assert re.search(r'<select[^>]*name="kind"', page)
    assert '<option value="consent">consent</option>' in page
    reply = browser.post("/studios/team/actions/create_decision", data={
        "csrf_token": csrf_of(page), "question": "Adopt it?", "description": "The proposal", "kind": "consent",
        "quorum": "2", "options": "", "deadline": "", "tags": ""})
    assert reply.status_code == 303
    md = api.get(reply.headers["location"] + ".md").text
    assert "| consent proposal | open |" in md and "quorum 2" in md


def test_consent_and_objection_forms(browser, api, seeded):
    url = _act(api, "/studios/team", "create_decision", question=f"Proposal {SCRIPT}", kind="consent",
               description=f"Text {SCRIPT}")
    page = browser.get(url).text
    assert SCRIPT not in page  # user text is escaped everywhere
    assert 'id="action-consent"' in page and re.search(r'<textarea[^>]*name="reason"', page)
    refused = browser.post(url + "/actions/object", data={"csrf_token": csrf_of(page), "reason": "no"})
    assert refused.status_code == 422 and "at least 10 characters" in refused.text  # shown beside its form
    assert browser.post(url + "/actions/object", data={"csrf_token": csrf_of(page),
                                                       "reason": f"It breaks the build {SCRIPT}"}).status_code == 303
    shown = browser.get(url).text
    assert "Objections (1)" in shown and "It breaks the build &lt;script" in shown
    assert browser.post(url + "/actions/consent", data={"csrf_token": csrf_of(shown)}).status_code == 303
    assert "Your stance: consent on version 1." in api.get(url + ".md").text


def test_dots_are_given_with_a_number_per_option(browser, api, seeded):
    url = _act(api, "/studios/team", "create_decision", question="Which first?", kind="dots", dots=4,
               options=["Alpha", "Beta", "Gamma"])
    page = browser.get(url).text
    steppers = re.findall(r'<input class="stepper" type="number" id="[^"]+" name="dots\.dots\.([a-z0-9]+)" min="0" '
                          r'max="4"', page)
    assert len(steppers) == 3
    ids = re.findall(r'name="dots.option" value="([a-z0-9]+)"', page)
    assert ids == steppers
    form = {"csrf_token": csrf_of(page), "dots.option": ids, f"dots.dots.{ids[0]}": "1", f"dots.dots.{ids[1]}": "3",
            f"dots.dots.{ids[2]}": "0"}
    reply = browser.post(url + "/actions/allocate", data=form)
    assert reply.status_code == 303, reply.text
    md = api.get(url + ".md").text
    assert "Your dots: #1 Alpha ×1; #2 Beta ×3 (4 of 4 used)." in md
    assert 'value="3"' in browser.get(url).text  # the form shows your dots
    over = browser.post(url + "/actions/allocate", data={**form, f"dots.dots.{ids[2]}": "2"})
    assert over.status_code == 422 and "you have 4 dots and gave 6" in over.text


def test_a_time_poll_is_answered_in_its_grid(browser, api, seeded):
    url = _act(api, "/studios/team", "create_decision", question="When?", kind="times",
               options=["2100-05-04 10:00", "2100-05-05 10:00"])
    page = browser.get(url).text
    ids = re.findall(r'name="times.option" value="([a-z0-9]+)"', page)
    assert len(ids) == 2 and len(re.findall(r'type="radio" name="times\.answer\.', page)) == 6
    assert '<time datetime="2100-05-04T10:00Z">' in page
    reply = browser.post(url + "/actions/answer", data={"csrf_token": csrf_of(page), "times.option": ids,
                                                        f"times.answer.{ids[0]}": "yes"})
    assert reply.status_code == 303, reply.text
    md = api.get(url + ".md").text
    assert "Your answers: 1 yes." in md
    assert re.search(rf'name="times.answer.{ids[0]}" value="yes" checked', browser.get(url).text)
