"""Every refusal a form can meet reads in people's words: each form of each page is sent empty,
with words where numbers go, with negative numbers and with overlong text, and no refusal shown
names a parameter or an action by its code name (`critical_mass`, `'limit'`, `add_member`)."""

from __future__ import annotations

import re

from test_web_renditions import visible_text
from webclient import csrf_of

CODE_NAME = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")  # critical_mass, add_member, 'reply_to'
FORM = re.compile(r'<form class="action"[^>]*action="([^"]+)"[^>]*data-action="([a-z_]+)">(.*?)</form>', re.S)
FIELD = re.compile(r'<(input|textarea|select)\b([^>]*)>')


def _fields(form: str) -> list[tuple[str, str]]:
    found = []
    for _tag, attrs in FIELD.findall(form):
        name = re.search(r'\bname="([^"]+)"', attrs)
        if name and name.group(1) != "csrf_token":
            kind = re.search(r'\btype="([^"]+)"', attrs)
            found.append((name.group(1), kind.group(1) if kind else "text"))
    return found


def _variants(fields: list[tuple[str, str]]) -> list[dict[str, str]]:
    empty = {name: "" for name, _ in fields}
    words = {name: ("lots" if kind == "number" else "x") for name, kind in fields}
    negative = {name: ("-5" if kind == "number" else "x") for name, kind in fields}
    overlong = {name: ("1" if kind == "number" else "y" * 20000) for name, kind in fields}
    return [empty, words, negative, overlong]


def test_no_refusal_a_form_can_meet_names_code(browser, seeded):
    pages = ["/", "/studios/team", "/studios/team/members", seeded["note"], seeded["decision"], seeded["commitment"]]
    seen, offending = 0, []
    for url in pages:
        page = browser.get(url).text
        for action_url, action, form in FORM.findall(page):
            fields = _fields(form)
            if not fields or action.startswith(("leave_", "close_", "delete_")):
                continue
            for data in _variants(fields):
                reply = browser.post(action_url, data={"csrf_token": csrf_of(page), **data})
                if reply.status_code < 400:
                    page = browser.get(url).text  # it was done: the page (and its csrf) as it is now
                    continue
                shown = re.search(r'<div class="alert refusal"[^>]*>(.*?)</div>', reply.text, re.S)
                text = visible_text(shown.group(1)) if shown else visible_text(reply.text)
                seen += 1
                if CODE_NAME.search(text):
                    offending.append((action, text))
    assert seen >= 20, seen
    assert not offending, "\n".join(f"{a}: {t}" for a, t in offending)


def test_a_404_links_the_paths_it_suggests_not_the_one_asked_for(browser, seeded):
    cases = {"/studios/team/n/zzzz": ["/studios/team"], "/nope": ["/", "/help"],
             "/studios/teem": ["/studios/team"], "//evil.example/x": ["/", "/help"]}
    for asked, suggested in cases.items():
        reply = browser.get(asked)
        assert reply.status_code == 404, asked
        alert = re.search(r'<p class="alert error" role="alert">(.*?)</p>', reply.text, re.S).group(1)
        links = re.findall(r'<a href="([^"]*)">', alert)
        assert sorted(set(links)) == sorted(suggested), (asked, alert)
        assert f'href="{asked}"' not in alert


def test_the_audit_page_says_who_did_what_where_in_words(browser, api, seeded):
    """People read the audit log in words; timings and raw parameter lists are in its JSON only."""
    page = browser.get("/studios/team").text
    browser.post("/studios/team/actions/create_commitment", data={"csrf_token": csrf_of(page), "title": "x",
                                                                  "critical_mass": "lots"})  # refused
    shown = browser.get("/studios/team/audit").text
    lines = [visible_text(li).strip() for li in re.findall(r"<li>(.*?)</li>", shown.split('<ul class="items">', 1)[1], re.S)]
    assert any(line.startswith("@") and "voted on a decision" in line and "through" in line for line in lines), lines
    assert any("commented on a note" in line for line in lines) and any("created the studio" in line for line in lines)
    assert any("proposed a commitment in the studio" in line and "in the web app" in line and "not done" in line
               for line in lines), lines
    body = shown.split('id="main"', 1)[1].split("For agents", 1)[0]
    assert " ms" not in visible_text(body) and "param_names" not in body and '["votes"]' not in body
    assert not CODE_NAME.search(visible_text(body).replace("@", " ")), visible_text(body)
    data = browser.get("/studios/team/audit.json").json()["data"]["entries"]
    assert {"duration_ms", "param_names"} <= set(data[0])
    assert '| ms |' not in api.get("/studios/team/audit.md").text
