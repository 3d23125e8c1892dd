"""One URL, three renditions: every page type as HTML, markdown and JSON, carrying the same facts
(the JSON's data itself: tests/test_page.py)."""

from __future__ import annotations

import html as htmllib
import re

import pytest

from nav_helpers import accepts
from navmcp.identity import create_user, mint_token
from navmcp.mcp.tools import connect
from webclient import Client

PAGES = ["/", "/help", "/help/decisions", "/help/urls", "/whoami", "/studios/team", "/studios/team/members", "{note}",
         "{decision}", "{commitment}", "/studios/team/cycles/today", "/studios/team/search?q=venue",
         "/studios/team/tags/offsite", "/studios/team/audit"]


def visible_text(page_html: str) -> str:
    """What a reader sees: tags dropped, entities decoded, whitespace folded. A time reads as its
    exact form, which people see on hover ("3 h ago" shows; "2026-11-25 06:32 UTC" is its title)."""
    body = re.sub(r"<style>.*?</style>", " ", page_html, flags=re.S)
    body = re.sub(r'<time [^>]*title="([^"]*)"[^>]*>.*?</time>', r"\1", body, flags=re.S)
    body = re.sub(r"</?(?:a|code|em|strong|span|q|b)\b[^>]*>", "", body)  # inline tags join their text
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", body)))


def markdown_text(md: str) -> str:
    """The markdown as read: backslash escapes and code marks removed, whitespace folded."""
    return re.sub(r"\s+", " ", re.sub(r"\\(.)", r"\1", md)).replace("`", "")


def expected_facts(url: str, structured: dict, md: str) -> list[str]:
    """Facts both renditions must show: the title, the counts in the metadata table, statuses,
    option names, and (checked separately) the action names."""
    facts = [structured["title"]]
    # every cell of the markdown metadata table (counts, statuses, roles) that is plain text; a
    # table's header row names the facts (the HTML may label them in its own words)
    headers = set(re.findall(r"^(\|.*\|)\n\| --- ", md, flags=re.M))
    for row in re.findall(r"^\|(?! ---)(.*)\|$", md, flags=re.M):
        if f"|{row}|" in headers:
            continue
        cells = row.split(" | ")
        if url.split("?", 1)[0].endswith("/audit"):
            # people read the audit log in words ("voted on a decision · through the HTTP API"):
            # its client, action and outcome cells are the agents' and the JSON's, not the page's
            cells = cells[:2]
        for cell in cells:
            cell = markdown_text(cell).strip(" |")
            if re.search(r"\w", cell) and not cell.startswith(("[", "`", "#")) and "](" not in cell:
                facts.append(cell)
    for status in ("Critical mass reached", "more needed", "You have not voted", "Your vote"):
        if status in md:
            facts.append(status)
    return facts


@pytest.mark.parametrize("template", PAGES)
def test_every_page_in_every_rendition(seeded, browser, template):
    url = template.format(**seeded)
    path, _, query = url.partition("?")
    suffix = "?" + query if query else ""
    md = browser.get(url, headers={"Accept": "text/markdown"})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert md.headers["vary"] == "Accept"
    md_suffix = browser.get((path if path != "/" else "") + ".md" + suffix)
    assert md_suffix.text == md.text
    as_json = browser.get((path if path != "/" else "") + ".json" + suffix)
    assert as_json.status_code == 200 and as_json.headers["content-type"] == "application/json"
    structured = as_json.json()
    assert set(structured) == {"url", "title", "page", "breadcrumb", "data", "actions"}

    page = browser.get(url)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["vary"] == "Accept"
    assert '<link rel="alternate" type="text/markdown"' in page.text
    assert '<link rel="alternate" type="application/json"' in page.text
    seen = visible_text(page.text)
    for fact in expected_facts(url, structured, md.text):
        assert fact in seen, f"{url}: HTML lacks {fact!r}"
        assert fact in markdown_text(md.text), f"{url}: markdown lacks {fact!r}"
    # the same actions, by name, in all three renditions
    names = [a["name"] for a in structured["actions"]]
    # each action once, where it belongs (the comment box under the comments, the ballot on the
    # options, the rest as buttons); a commitment you are in shows Leave, not Join as well
    shown = re.findall(r'data-action="([a-z_]+)"', page.text)
    offered = [n for n in names if not (n == "join_commitment" and "leave_commitment" in names)]
    assert sorted(shown) == sorted(offered)
    # the raw names are for agents, in their menu only
    agents = re.search(r'<footer class="agents">(.*?)</footer>', page.text, re.S).group(1)
    listed = agents.split("execute_action", 1)[1] if "execute_action" in agents else ""
    assert re.findall(r"<code>([a-z_]+)</code>", listed) == names
    assert re.findall(r"^- `([a-z_]+)` — ", md.text, flags=re.M) == names


def test_decision_facts_match(seeded, api, browser):
    """The facts of a decision: status, counts per option, option names, your vote."""
    md = api.get(seeded["decision"] + ".md").text
    seen = visible_text(browser.get(seeded["decision"]).text)
    for fact in ["open", "1 of 1 members", "Lisbon", "Berlin", "1 accept, 1 prefer", "0 accept, 0 prefer",
                 "Your vote: Lisbon: accept + prefer"]:
        assert fact in markdown_text(md), fact
        assert fact in seen, fact


def test_commitment_facts_match(seeded, api, browser):
    md = api.get(seeded["commitment"] + ".md").text
    seen = visible_text(browser.get(seeded["commitment"]).text)
    for fact in ["open", "1 (you joined)", "1 more needed", "Book the venue"]:
        assert fact in markdown_text(md), fact
        assert fact in seen, fact


def test_markdown_is_exactly_what_navigate_returns(seeded, app, owner, owner_token, api):
    connection = connect(app, owner_token)
    connection.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "t"}}})
    for url in (seeded["decision"], "/studios/team", "/"):
        reply = connection.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "navigate", "arguments": {"url": url}}})
        result = reply["result"]
        assert api.get(url, headers={"Accept": "text/markdown"}).text == result["content"][0]["text"]
        # the JSON rendition: the structured content (url, title, actions), and the page's data beside it
        as_json = api.get(url.rstrip("/") + ".json").json()
        assert {k: as_json[k] for k in result["structuredContent"]} == result["structuredContent"]
        assert as_json["data"] and as_json["title"] == result["structuredContent"]["title"]


def test_accept_negotiation(seeded, api):
    url = seeded["note"]
    assert api.get(url).headers["content-type"].startswith("text/html")
    assert api.get(url, headers={"Accept": "*/*"}).headers["content-type"].startswith("text/html")
    browser_accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    assert api.get(url, headers={"Accept": browser_accept}).headers["content-type"].startswith("text/html")
    prefers_md = "text/markdown, text/html;q=0.5"
    assert api.get(url, headers={"Accept": prefers_md}).headers["content-type"].startswith("text/markdown")


def test_action_api_lists_and_runs(seeded, api):
    listed = api.get(seeded["decision"] + "/actions")
    assert listed.status_code == 200
    assert [a["name"] for a in listed.json()["actions"]] == [
        "add_comment", "add_option", "vote", "close_decision", "edit_decision", "extend_decision", "attach",
        "delete_item"]
    voted = api.post(seeded["decision"] + "/actions/vote", json={"votes": [{"option": "Berlin", "prefer": True}]})
    assert voted.status_code == 200
    assert voted.json()["ok"] is True and voted.json()["url"] == seeded["decision"]
    assert "Berlin: accept + prefer" in api.get(seeded["decision"] + ".md").text


def _user_client(app, web, handle: str):
    with app.store.write() as tx:
        user = create_user(tx, handle, findable=True)
    return user, Client(web, {"Authorization": f"Bearer {mint_token(app.secret, user['id'])}"})


def test_action_api_statuses(seeded, app, web, api):
    bob, as_bob = _user_client(app, web, "bob")
    eve, as_eve = _user_client(app, web, "eve")
    try:
        assert api.post("/studios/team/members/actions/add_member", json={"handle": "bob"}).status_code == 200
        accepts(app.workspace, "bob")
        # 403: a member, but pinning is for admins
        refused = as_bob.post(seeded["note"] + "/actions/pin")
        assert refused.status_code == 403, refused.text
        assert refused.json()["actions"] and "pin" not in refused.json()["actions"]
        # 404: not a member (the page reads as missing), an unknown page, an unknown action
        assert as_eve.post(seeded["note"] + "/actions/add_comment", json={"body": "hi"}).status_code == 404
        assert api.post("/studios/nope/actions/create_note", json={}).status_code == 404
        for nowhere in ("/nope/actions/create_note", "/studios/team/x/actions/vote"):  # no page at all
            missing = api.post(nowhere, json={})
            assert missing.status_code == 404 and missing.headers["content-type"].startswith("application/json")
            assert missing.json()["message"].startswith("no page at")
        assert api.get("/nope/actions").status_code == 404
        assert api.get("/nope/actions").headers["content-type"].startswith("application/json")
        # a path typed with capitals is the same page, for its actions too
        assert api.get("/Studios/Team/actions").json()["url"] == "/studios/team"
        # a tag named 'actions' is a page, not an action path
        assert api.get("/studios/team/tags/actions.md").status_code == 200
        assert api.post(seeded["note"] + "/actions/launch_rockets", json={}).status_code == 404
        # 422: params that fail the action's model name the field
        bad = api.post(seeded["decision"] + "/actions/vote", json={"votes": "Lisbon"})
        assert bad.status_code == 422 and "votes" in bad.json()["message"]
        # 409: a state conflict — the decision closed, so vote is refused
        assert api.post(seeded["decision"] + "/actions/close_decision").status_code == 200
        late = as_bob.post(seeded["decision"] + "/actions/vote", json={"votes": [{"option": "Lisbon"}]})
        assert late.status_code == 409, late.text
        assert "vote is not available" in late.json()["message"]
    finally:
        as_bob.close()
        as_eve.close()


def test_canonical_error_bodies(api, seeded):
    """One error body per rendition, pinned."""
    missing = "/studios/team/n/nothere"
    as_json = api.get(missing + ".json")
    assert as_json.status_code == 404
    assert as_json.json() == {"ok": False, "status": 404, "error": "Not Found",
                              "message": as_json.json()["message"], "url": None, "actions": []}
    assert "see /studios/team" in as_json.json()["message"]
    as_md = api.get(missing + ".md")
    assert as_md.status_code == 404 and as_md.headers["content-type"].startswith("text/markdown")
    assert as_md.text.startswith("# Error 404: Not Found\n\nno page at /studios/team/n/nothere")
    as_html = api.get(missing)
    assert as_html.status_code == 404 and as_html.headers["content-type"].startswith("text/html")
    assert "<h1>Error 404: Not Found</h1>" in as_html.text
    # an action's refusal in JSON has the same shape, with the valid actions
    api.post(seeded["decision"] + "/actions/close_decision")
    refused = api.post(seeded["decision"] + "/actions/vote", json={"votes": [{"option": "Lisbon"}]})
    body = refused.json()
    assert set(body) == {"ok", "status", "error", "message", "url", "actions"}
    assert (body["ok"], body["status"], body["error"], body["url"]) == (False, 409, "Conflict", seeded["decision"])
    assert body["actions"] == ["add_comment", "reopen_decision", "set_outcome", "attach", "delete_item"]


def test_item_page_shows_cut_comments_and_more_links(seeded, api, browser):
    """What the markdown marks (a cut comment and its full URL, links beyond those listed, the way
    back from one comment) the HTML page shows too, as links."""
    def act(url, action, **params):
        reply = api.post(f"{url}/actions/{action}", json=params)
        assert reply.status_code == 200, reply.text
        return reply.json()["url"]

    targets = [act("/studios/team", "create_note", title=f"Target {i:02}", body="x") for i in range(22)]
    hub = act("/studios/team", "create_note", title="Hub", body="\n".join(targets))
    act(hub, "add_comment", body="long " * 300)
    md = api.get(hub + ".md").text
    assert "- and 2 more" in md and "[cut: the comment continues at" in md
    page = browser.get(hub).text
    seen = visible_text(page)
    assert "and 2 more" in seen
    full_url = re.search(r"\?comment=([\w-]+)", md).group(0)
    assert f'href="{hub}{full_url}"' in page and "the comment continues" in seen
    assert "and 1 more" not in visible_text(browser.get(targets[0]).text)  # nothing beyond: no mark
    single = browser.get(hub + full_url).text
    assert f'<a href="{hub}">all comments</a>' in single and "the comment continues" not in single
    assert ("long " * 300).strip() in htmllib.unescape(single)


def test_a_refusal_of_parameters_carries_its_fields_in_json(api, seeded):
    """The action API's 422 names each refused parameter as data, beside the message; other
    refusals keep the canonical shape (no `fields`)."""
    bad = api.post("/studios/team/actions/create_note", json={"title": "", "colour": "red"})
    assert bad.status_code == 422
    assert bad.json()["fields"] == [{"field": "title", "problem": "must not be empty"},
                                    {"field": "body", "problem": "is required"},
                                    {"field": "colour", "problem": "is no parameter of create_note"}]
    assert "'title': must not be empty" in bad.json()["message"]


def _request(path: str, method: str = "GET", query: str = "", **headers: str):
    from navmcp.web.request import Request

    async def nothing():
        return {"type": "http.disconnect"}

    return Request(method, path, query, {k.replace("_", "-"): v for k, v in headers.items()}, "http", nothing)


@pytest.mark.parametrize("path,method,headers,expected", [
    ("/studios/team", "GET", {}, ("html", "/studios/team", None)),
    ("/studios/team", "GET", {"accept": "text/markdown"}, ("markdown", "/studios/team", None)),
    ("/studios/team.md", "GET", {"accept": "text/html"}, ("markdown", "/studios/team", None)),
    ("/studios/team.json", "GET", {}, ("json", "/studios/team", None)),
    ("/studios/team/actions", "GET", {}, ("json", "/studios/team", "")),
    ("/studios/team/actions/create_note", "POST", {"accept": "*/*"}, ("json", "/studios/team", "create_note")),
    ("/studios/team/actions/create_note", "POST", {"content_type": "application/x-www-form-urlencoded"},
     ("html", "/studios/team", "create_note")),
    ("/studios/team/tags/actions", "GET", {}, ("html", "/studios/team/tags/actions", None)),  # a tag named so
    ("/mcp", "POST", {"accept": "text/html"}, ("jsonrpc", None, None)),
])
def test_one_place_decides_what_a_request_names_and_its_rendition(path, method, headers, expected):
    from navmcp.web.renditions import target

    found = target(_request(path, method, **headers), fixed=path == "/mcp")
    assert (found.rendition, found.page, found.action) == expected
    if found.page is not None:  # routed once, here: the page's row (or why there is none) travels with it
        assert found.spec is not None and found.missing is None


def test_a_target_that_names_no_page_says_why():
    from navmcp.web.renditions import target

    found = target(_request("/studios/team/x/y/actions/vote", "POST"), fixed=False)
    assert (found.rendition, found.action, found.spec) == ("json", "vote", None)
    assert found.missing is not None and "no page at /studios/team/x/y" in found.missing.message
    assert target(_request("/search", query="q=x"), fixed=False).costly


def test_json_pages_carry_no_store_id_of_a_studio_or_a_person(any_app):
    """docs/http.md: the store's ids of people and studios are left out of `.json` (pages name them
    by handle). The studio rows of `/`, `/whoami` and every studio page carried theirs (issue 40
    item 13); both stores."""
    from navmcp.identity import add_user, mint_token
    from navmcp.web import create_app
    from webclient import Client

    alice, bob = add_user(any_app.store, "alice"), add_user(any_app.store, "bob")
    api = Client(create_app(any_app), {"Authorization": f"Bearer {mint_token(any_app.secret, alice['id'])}"})
    try:
        def act(url, action, **params):
            reply = api.post(f"{url.rstrip('/')}/actions/{action}", json=params)
            assert reply.status_code == 200, reply.text
            return reply.json()["url"]

        act("/", "create_studio", handle="team", name="Team")
        note = act("/studios/team", "create_note", title="N", body="b", tags=["t"])
        decision = act("/studios/team", "create_decision", question="Q", options=["A", "B"])
        commitment = act("/studios/team", "create_commitment", title="C", critical_mass=1, limit=3)
        act(note, "add_comment", body="c")
        act(decision, "vote", votes=[{"option": "A", "accept": True, "prefer": True}])
        act(commitment, "join_commitment")
        with any_app.store.read(user_id=alice["id"]) as tx:
            studio_id = tx.one("SELECT id FROM studios WHERE handle = 'team'")["id"]
        secret = {studio_id, alice["id"], bob["id"]}
        for url in ("/", "/whoami", "/studios/team", "/studios/team/members", note, decision, commitment,
                    "/studios/team/cycles/today", "/studios/team/tags/t", "/studios/team/audit", "/search?q=N"):
            reply = api.get(url, headers={"Accept": "application/json"})
            assert reply.status_code == 200, (url, reply.text[:200])
            assert not [s for s in secret if s in reply.text], (url, reply.text[:600])
            assert reply.json()["data"]  # the page's facts are still there
        home = api.get("/", headers={"Accept": "application/json"}).json()["data"]
        assert [s["handle"] for s in home["studios"]] == ["team"]  # named by handle
    finally:
        api.close()
