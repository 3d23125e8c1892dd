"""Every action of DESIGN §4: it works, it is refused with a teaching message in the wrong state or
role, and a page lists exactly the actions its executor accepts (the same rule decides both)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from nav_helpers import add_member, role_listed
from navmcp import actions as action_table
from navmcp.errors import ActionFailed, ActionUnavailable, FieldError, InvalidActionParams, NotFound
from navmcp.identity import user_by_id

STUDIO = "/studios/team"
ALL_ACTIONS = sorted({a.name for a in action_table.ACTIONS})
PROBE = {"__probe__": 1}  # fails every params model (extra="forbid"): a probe that can never write


@pytest.fixture
def people(ws, owner, make_user):
    bob, _ = make_user("bob")
    carol, _ = make_user("carol")
    eve, _ = make_user("eve")
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    for handle in ("bob", "carol"):
        add_member(ws, owner, f"{STUDIO}/members", {"handle": handle})
    return {"owner": owner, "bob": bob, "carol": carol, "eve": eve}


def act(ws, user, url, name, params=None, browser=False):
    return ws.execute(user, url, name, params, browser=browser)


def accepted(ws, user, url, browser=False) -> set[str]:
    """The actions the executor accepts on `url` for `user`, found without writing anything."""
    found = set()
    for name in ALL_ACTIONS:
        try:
            ws.execute(user, url, name, PROBE, browser=browser)
        except InvalidActionParams:
            found.add(name)  # the rules let it through; only the (deliberately bad) params failed
        except ActionUnavailable:
            pass
    return found


def assert_listing_matches_execution(ws, user, url, browser=False) -> set[str]:
    page = ws.page(user, url, browser=browser)
    listed = {a.name for a in page.actions}
    assert listed == accepted(ws, user, url, browser), (user["handle"], url)
    assert listed == set(page.structured()["actions"][i]["name"] for i in range(len(listed)))
    return listed


# --- listing and execution agree, in every state -------------------------------------------------


def test_listing_equals_execution_in_every_state(ws, people, app):
    owner, bob, carol = people["owner"], people["bob"], people["carol"]
    seen: dict[str, set[str]] = {}

    def check(user, url, expect, browser=False):
        listed = assert_listing_matches_execution(ws, user, url, browser)
        assert listed == set(expect), (user["handle"], url, listed)
        for name in listed:
            seen.setdefault(name, set()).add(url)

    check(owner, "/", {"create_studio"})
    check(bob, "/", {"create_studio"})
    check(owner, STUDIO, {"create_note", "create_decision", "create_commitment"})
    check(bob, STUDIO, {"create_note", "create_decision", "create_commitment"})
    check(owner, f"{STUDIO}/members", {"add_member", "remove_member", "create_invitation"})
    check(bob, f"{STUDIO}/members", {"leave_studio"})
    act(ws, owner, f"{STUDIO}/members", "create_invitation")  # an open invitation can be revoked
    check(owner, f"{STUDIO}/members", {"add_member", "remove_member", "create_invitation", "revoke_invitation"})
    check(bob, f"{STUDIO}/members", {"leave_studio"})
    for url in ("/help", f"{STUDIO}/cycles/today", f"{STUDIO}/search?q=x", f"{STUDIO}/tags/x",
                f"{STUDIO}/audit"):
        check(owner, url, set())
    # accounts made by `navmcp user add` start findable
    check(owner, "/whoami", {"make_unfindable", "set_email", "set_time_zone"})
    act(ws, owner, "/whoami", "make_unfindable")
    with app.store.read() as tx:  # the row as the next call reads it
        unfindable = user_by_id(tx, owner["id"])
    check(unfindable, "/whoami", {"make_findable", "set_email", "set_time_zone"})
    act(ws, unfindable, "/whoami", "make_findable")
    act(ws, owner, "/whoami", "set_email", {"email": "me@example.org"})
    check(owner, "/whoami", {"make_unfindable", "set_email", "digest_off", "set_time_zone"})
    act(ws, owner, "/whoami", "digest_off")
    check(owner, "/whoami", {"make_unfindable", "set_email", "digest_on", "set_time_zone"})

    note = act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b"}).url
    check(owner, note, {"add_comment", "attach", "confirm_read", "edit_note", "pin", "delete_item"})
    check(bob, note, {"add_comment", "attach", "confirm_read"})
    act(ws, owner, note, "confirm_read")
    act(ws, owner, note, "pin")
    check(owner, note, {"add_comment", "attach", "edit_note", "unpin", "delete_item"})
    bobs_note = act(ws, bob, STUDIO, "create_note", {"title": "B", "body": "b"}).url
    check(bob, bobs_note, {"add_comment", "attach", "confirm_read", "edit_note", "delete_item"})
    check(owner, bobs_note, {"add_comment", "attach", "confirm_read", "pin", "delete_item"})

    bare = act(ws, bob, STUDIO, "create_decision", {"question": "No options yet?"}).url
    check(bob, bare, {"add_comment", "attach", "add_option", "close_decision", "edit_decision", "extend_decision", "delete_item"})
    check(carol, bare, {"add_comment", "attach", "add_option"})
    check(owner, bare, {"add_comment", "attach", "add_option", "close_decision", "edit_decision", "extend_decision", "delete_item"})  # admin may close, edit
    act(ws, carol, bare, "add_option", {"title": "Yes"})
    check(carol, bare, {"add_comment", "attach", "add_option", "vote"})
    act(ws, carol, bare, "add_comment", {"body": "mine"})
    check(carol, bare, {"add_comment", "attach", "add_option", "vote", "edit_comment", "delete_comment"})  # her comment
    check(owner, bare, {"add_comment", "attach", "add_option", "vote", "close_decision", "edit_decision", "extend_decision",
                        "delete_comment", "remind", "delete_item"})  # an admin deletes any comment, edits none of others'
    check(bob, bare, {"add_comment", "attach", "add_option", "vote", "close_decision", "edit_decision", "extend_decision",
                      "remind", "delete_item"})
    act(ws, bob, bare, "close_decision")
    check(bob, bare, {"add_comment", "attach", "reopen_decision", "set_outcome", "delete_item"})  # within a week of closing
    check(carol, bare, {"add_comment", "attach", "edit_comment", "delete_comment"})
    act(ws, carol, bare, "delete_comment", {"comment": ws.page(carol, bare).data["comments"][0]["id"]})
    check(carol, bare, {"add_comment", "attach"})

    late = act(ws, owner, STUDIO, "create_decision", {"question": "Late?", "options": ["a"],
                                                     "deadline": "2100-01-01"}).url
    check(owner, late, {"add_comment", "attach", "add_option", "vote", "close_decision", "edit_decision", "extend_decision",
                        "remind", "delete_item"})  # nobody has voted
    with app.store.write() as tx:  # the deadline passes without any write to the decision
        tx.execute("UPDATE items SET deadline = '2000-01-01T00:00:00.000000Z' WHERE id = ?", (late.rsplit("/", 1)[1],))
    check(owner, late, {"add_comment", "attach", "set_outcome", "delete_item"})  # closed by its deadline long ago: no reopening

    c = act(ws, bob, STUDIO, "create_commitment", {"title": "C", "critical_mass": 1, "limit": 2}).url
    check(bob, c, {"add_comment", "attach", "join_commitment", "close_commitment", "edit_commitment", "delete_item"})
    check(carol, c, {"add_comment", "attach", "join_commitment"})
    check(owner, c, {"add_comment", "attach", "join_commitment", "edit_commitment", "delete_item"})  # admins edit, don't close others' commitments
    act(ws, carol, c, "join_commitment")
    check(carol, c, {"add_comment", "attach", "leave_commitment"})  # already in: leaving is offered, not joining
    act(ws, owner, c, "join_commitment")  # the limit is reached: closed
    check(owner, c, {"add_comment", "attach", "delete_item"})  # closed: joining is over, for those who joined too
    check(bob, c, {"add_comment", "attach", "delete_item"})

    due = act(ws, bob, STUDIO, "create_commitment", {"title": "Due", "critical_mass": 3, "deadline": "2100-01-01"}).url
    check(bob, due, {"add_comment", "attach", "join_commitment", "close_commitment", "edit_commitment", "delete_item"})
    with app.store.write() as tx:  # closed by its deadline: closing it by hand would rewrite when it closed
        tx.execute("UPDATE items SET deadline = '2000-01-01T00:00:00.000000Z' WHERE id = ?", (due.rsplit("/", 1)[1],))
    check(bob, due, {"add_comment", "attach", "delete_item"})
    check(carol, c, {"add_comment", "attach"})

    # decision kinds (navmcp/kinds): each offers its own actions, and no other kind's
    proposal = act(ws, bob, STUDIO, "create_decision", {"question": "P?", "kind": "consent",
                                                        "deadline": "2100-01-01"}).url
    check(bob, proposal, {"add_comment", "attach", "consent", "object", "amend", "extend_decision", "remind", "delete_item"})  # not everyone has a stance: no close
    check(carol, proposal, {"add_comment", "attach", "consent", "object"})
    check(owner, proposal, {"add_comment", "attach", "consent", "object", "extend_decision", "remind", "delete_item"})
    for user in (owner, bob):
        act(ws, user, proposal, "consent")
    act(ws, carol, proposal, "object", {"reason": "not before the release"})
    check(bob, proposal, {"add_comment", "attach", "consent", "object", "amend", "close_decision", "extend_decision", "delete_item"})  # everyone has one
    check(owner, proposal, {"add_comment", "attach", "consent", "object", "close_decision", "extend_decision", "delete_item"})  # an admin may close
    check(carol, proposal, {"add_comment", "attach", "consent", "object"})
    act(ws, owner, proposal, "close_decision")
    check(bob, proposal, {"add_comment", "attach", "reopen_decision", "set_outcome", "delete_item"})  # no edit_decision: amend is its edit
    undated = act(ws, carol, STUDIO, "create_decision", {"question": "U?", "kind": "consent"}).url
    check(carol, undated, {"add_comment", "attach", "consent", "object", "amend", "close_decision", "extend_decision",
                           "remind", "delete_item"})  # no deadline to wait for

    dotted = act(ws, bob, STUDIO, "create_decision", {"question": "D?", "kind": "dots"}).url
    check(bob, dotted, {"add_comment", "attach", "add_option", "close_decision", "edit_decision", "extend_decision", "delete_item"})
    act(ws, carol, dotted, "add_option", {"title": "one"})
    check(carol, dotted, {"add_comment", "attach", "add_option", "allocate"})
    act(ws, carol, dotted, "allocate", {"dots": [{"option": 1, "dots": 2}]})
    act(ws, bob, dotted, "close_decision")
    check(carol, dotted, {"add_comment", "attach"})
    act(ws, carol, dotted, "attach", {"filename": "dots.csv", "content_type": "text/csv", "data": "YSxi"})
    check(carol, dotted, {"add_comment", "attach", "remove_attachment"})  # her file
    check(bob, dotted, {"add_comment", "attach", "reopen_decision", "set_outcome", "delete_item"})  # not his file, and he is no admin
    check(owner, dotted, {"add_comment", "attach", "remove_attachment", "reopen_decision", "set_outcome", "delete_item"})  # an admin removes any

    poll = act(ws, bob, STUDIO, "create_decision", {"question": "T?", "kind": "times"}).url
    check(bob, poll, {"add_comment", "attach", "add_time", "close_poll", "edit_decision", "extend_decision", "delete_item"})
    check(carol, poll, {"add_comment", "attach", "add_time"})
    act(ws, carol, poll, "add_time", {"start": "2100-01-05T10:00+01:00"})
    check(carol, poll, {"add_comment", "attach", "add_time", "answer"})
    check(owner, poll, {"add_comment", "attach", "add_time", "answer", "close_poll", "edit_decision", "extend_decision", "remind", "delete_item"})
    act(ws, carol, poll, "answer", {"times": [{"option": 1, "answer": "yes"}]})
    act(ws, bob, poll, "close_poll")
    check(carol, poll, {"add_comment", "attach"})

    # the inbox: bob's holds entries (added, a comment, critical mass, ...), unread until he reads them
    check(people["eve"], "/inbox", set())  # in no studio: nothing concerns her
    check(bob, "/inbox", {"mark_read", "dismiss"})
    act(ws, bob, "/inbox", "mark_read", {"all": True})
    check(bob, "/inbox", {"dismiss"})
    act(ws, bob, "/inbox", "dismiss", {"all": True})
    check(bob, "/inbox", set())
    # an invitation for eve waits for her answer: declined anywhere, accepted in her browser only
    act(ws, owner, f"{STUDIO}/members", "create_invitation", {"handle": "eve"})
    check(people["eve"], "/inbox", {"mark_read", "dismiss", "decline_invitation"})
    check(people["eve"], "/inbox", {"mark_read", "dismiss", "decline_invitation", "accept_invitation"}, browser=True)
    waiting = ws.page(people["eve"], "/inbox").data["invitations"][0]["id"]
    act(ws, people["eve"], "/inbox", "decline_invitation", {"invitation": waiting})
    act(ws, owner, f"{STUDIO}/members", "create_invitation", {"handle": "eve"})
    waiting = ws.page(people["eve"], "/inbox").data["invitations"][0]["id"]
    act(ws, people["eve"], "/inbox", "accept_invitation", {"invitation": waiting}, browser=True)
    check(people["eve"], "/inbox", {"dismiss"})  # answered: its entries are read
    act(ws, owner, f"{STUDIO}/members", "remove_member", {"handle": "eve"})

    # a studio's last member deletes it (leaving is not offered); with anyone else in it, nobody may
    act(ws, carol, "/", "create_studio", {"handle": "solo", "name": "Solo"})
    check(carol, "/studios/solo/members", {"add_member", "remove_member", "create_invitation", "delete_studio"})
    act(ws, carol, "/studios/solo/members", "delete_studio", {"confirm": "solo"})

    # held actions (navmcp/held): rules in the browser only; a held write decided on its page
    check(owner, f"{STUDIO}/held", set())  # over MCP or a token: no rule to change
    check(owner, f"{STUDIO}/held", {"set_hold_rule", "remove_hold_rule"}, browser=True)
    check(bob, f"{STUDIO}/held", {"set_hold_rule", "remove_hold_rule"}, browser=True)  # his own agents' rules
    act(ws, owner, f"{STUDIO}/held", "set_hold_rule", {"actions": "create_note"}, browser=True)
    held = act(ws, bob, STUDIO, "create_note", {"title": "Held", "body": "b"}).url
    check(bob, held, {"withdraw"})
    check(owner, held, set())  # over MCP or a token: decided by no agent
    check(owner, held, {"approve", "reject"}, browser=True)
    check(carol, held, set(), browser=True)  # a member, not an admin: reads it, decides nothing
    act(ws, owner, held, "approve", {}, browser=True)
    check(owner, held, set())

    # a deleted item offers its restore alone, to its creator and the admins; to others it is not there
    gone = act(ws, bob, STUDIO, "create_commitment", {"title": "Gone", "critical_mass": 2}).url  # notes are held now
    act(ws, bob, gone, "delete_item", {"confirm": "Gone"})
    check(bob, gone, {"restore_item"})
    check(owner, gone, {"restore_item"})

    # every action was offered (and accepted) somewhere
    assert set(seen) == set(ALL_ACTIONS)


def test_validation_speaks_in_words(ws, people):
    owner = people["owner"]
    with pytest.raises(InvalidActionParams) as e:
        act(ws, owner, STUDIO, "create_commitment", {"title": "T", "critical_mass": "three"})
    assert "'critical_mass': must be a whole number, e.g. 3" in e.value.message
    assert "unable to parse" not in e.value.message
    with pytest.raises(InvalidActionParams) as e:
        act(ws, owner, "/", "create_studio", {"handle": "Bad Handle!", "name": "X"})
    assert "'handle': must be lowercase letters, digits and '-'" in e.value.message and "^[" not in e.value.message
    with pytest.raises(InvalidActionParams, match="'title': must not be empty"):
        act(ws, owner, STUDIO, "create_note", {"title": " ", "body": "b"})


def test_actions_of_other_pages_are_refused_with_the_valid_ones(ws, people):
    with pytest.raises(ActionUnavailable) as e:
        act(ws, people["owner"], STUDIO, "vote", {"votes": [{"option": "x"}]})
    assert "vote is not an action of /studios/team" in e.value.message
    assert ("Available here: create_note(title, body, tags?), create_decision(question, description?, options?,"
            " deadline?, tags?, anonymous?, kind?, quorum?, dots?, max_objections?, duration_minutes?), create_commitment(title, description?, critical_mass, limit?, deadline?, tags?)."
            in e.value.message)  # with what each needs (? marks an optional parameter)
    assert e.value.available == ["create_note", "create_decision", "create_commitment"]
    with pytest.raises(ActionUnavailable, match="No actions are available here"):
        act(ws, people["owner"], "/help", "create_note", {"title": "x", "body": "y"})


def test_non_members_see_nothing_and_do_nothing(ws, people):
    owner, eve = people["owner"], people["eve"]
    note = act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b"}).url
    for url in (STUDIO, f"{STUDIO}/members", note, f"{STUDIO}/search?q=b", f"{STUDIO}/cycles/today"):
        with pytest.raises(NotFound):
            ws.page(eve, url)
    for url, name, params in ((STUDIO, "create_note", {"title": "x", "body": "y"}), (note, "add_comment", {"body": "x"}),
                              (f"{STUDIO}/members", "add_member", {"handle": "eve"})):
        with pytest.raises(NotFound):
            act(ws, eve, url, name, params)


# --- studios and members ------------------------------------------------------------------------


def test_create_studio_returns_its_url_and_refuses_a_taken_handle(ws, people):
    r = act(ws, people["bob"], "/", "create_studio", {"handle": "bobs", "name": "Bob's"})
    assert r.ok and r.url == "/studios/bobs" and set(r.actions) == {"create_note", "create_decision", "create_commitment"}
    assert r.structured() == {"ok": True, "message": r.message, "url": "/studios/bobs", "actions": r.actions}
    with pytest.raises(ActionFailed, match="taken"):
        act(ws, people["carol"], "/", "create_studio", {"handle": "bobs", "name": "Mine"})


@pytest.mark.parametrize("params,field", [
    ({"handle": "Bad Handle", "name": "x"}, "handle"),
    ({"name": "x"}, "handle"),
    ({"handle": "ok", "name": "two\nlines"}, "name"),
    ({"handle": "ok", "name": "x", "colour": "red"}, "colour"),
])
def test_parameter_errors_name_the_field(ws, people, params, field):
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["owner"], "/", "create_studio", params)
    assert f"'{field}'" in e.value.message
    assert "Parameters of create_studio: handle, name, description?." in e.value.message


def test_a_refusal_of_parameters_names_each_field_as_data(ws, people):
    """Which parameter, and what is wrong with it, as data: from the params model and from the
    handler alike (forms mark their inputs by it, JSON and tool results carry it)."""
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["owner"], "/", "create_studio", {"handle": "Bad Handle", "colour": "red"})
    assert {f.field for f in e.value.fields} == {"handle", "name", "colour"}
    assert FieldError("name", "is required") in e.value.fields
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["owner"], f"{STUDIO}/members", "add_member", {"handle": "nobody"})
    assert e.value.fields == (FieldError("handle", "no such person you can add"),)
    d = act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "options": ["a", "b"]}).url
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["bob"], d, "vote", {"votes": [{"option": "a"}, {"option": "zzz"}]})
    assert e.value.fields == (FieldError("votes.1.option", "no such option"),)
    assert "'votes.1.option'" in e.value.message  # the message still names it for the agent
    with pytest.raises(ActionUnavailable) as refused:  # a refusal that is no parameter's names none
        act(ws, people["bob"], f"{STUDIO}/members", "add_member", {"handle": "eve"})
    assert refused.value.fields == ()


def test_allowed_values_are_named(ws, people):
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["owner"], f"{STUDIO}/members", "add_member", {"handle": "bob", "role": "owner"})
    assert "'role'" in e.value.message and "'member'" in e.value.message and "'admin'" in e.value.message


def test_members_add_change_remove(ws, people):
    owner, eve = people["owner"], people["eve"]
    members = f"{STUDIO}/members"
    assert add_member(ws, owner, members, {"handle": "eve"}).message.startswith("Invited @eve")  # she accepted
    assert ws.page(eve, STUDIO).title == "Team"
    act(ws, owner, members, "add_member", {"handle": "eve", "role": "admin"})
    assert role_listed(ws.page(owner, members).markdown, "eve") == "admin"
    # adding someone who is in already, with no role, makes sure they are in: it never demotes
    assert act(ws, owner, members, "add_member", {"handle": "eve"}).message == "@eve was already an admin; nothing changed."
    # a handle as pages show it works too
    assert act(ws, owner, members, "add_member", {"handle": "@eve"}).message == "@eve was already an admin; nothing changed."
    assert role_listed(ws.page(owner, members).markdown, "eve") == "admin"
    act(ws, eve, members, "remove_member", {"handle": "bob"})
    with pytest.raises(NotFound):
        ws.page(people["bob"], STUDIO)
    # a handle that names nobody here is a bad parameter (422), and the refusal says what is valid
    with pytest.raises(InvalidActionParams) as e:
        act(ws, owner, members, "remove_member", {"handle": "bob"})
    assert e.value.message == ("remove_member failed: 'handle': @bob is not a member of this studio. "
                               "Available here: add_member, remove_member, leave_studio, create_invitation.")
    with pytest.raises(InvalidActionParams, match=r"^add_member failed: 'handle': no such person you can add: @nobody\. .*Available here: "):
        act(ws, owner, members, "add_member", {"handle": "nobody"})


def test_members_may_not_manage_members(ws, people):
    with pytest.raises(ActionUnavailable) as e:
        act(ws, people["bob"], f"{STUDIO}/members", "add_member", {"handle": "eve"})
    assert e.value.status == 403 and "only the studio's admins" in e.value.message


def test_the_last_admin_stays(ws, people):
    owner = people["owner"]
    with pytest.raises(ActionFailed, match="at least one admin"):
        act(ws, owner, f"{STUDIO}/members", "remove_member", {"handle": owner["handle"]})
    with pytest.raises(ActionFailed, match="at least one admin"):
        act(ws, owner, f"{STUDIO}/members", "add_member", {"handle": owner["handle"], "role": "member"})
    assert role_listed(ws.page(owner, f"{STUDIO}/members").markdown, owner["handle"]) == "admin"


# --- notes, comments, links, tags -----------------------------------------------------------------


def test_note_lifecycle(ws, people):
    owner, bob = people["owner"], people["bob"]
    r = act(ws, bob, STUDIO, "create_note", {"title": "Plan", "body": "draft", "tags": ["q4", "plan"]})
    assert r.url.startswith(f"{STUDIO}/n/") and "edit_note" in r.actions
    act(ws, bob, r.url, "edit_note", {"body": "final text about walruses", "tags": ["done"]})
    page = ws.page(owner, r.url)
    assert "final text about walruses" in page.markdown and "draft" not in page.markdown
    assert "[#done]" in page.markdown and "[#q4]" not in page.markdown
    assert r.url in ws.page(owner, f"{STUDIO}/search?q=walruses").markdown  # the index follows edits
    assert r.url not in ws.page(owner, f"{STUDIO}/search?q=draft").markdown
    with pytest.raises(ActionUnavailable, match="only the author"):
        act(ws, owner, r.url, "edit_note", {"title": "Mine now"})
    with pytest.raises(InvalidActionParams, match="at least one of title, body, tags"):
        act(ws, bob, r.url, "edit_note", {})
    # an edit to what is there already changes nothing, its Updated time included; a real one says what
    updated = ws.page(bob, r.url).data["item"]["updated_at"]
    same = act(ws, bob, r.url, "edit_note", {"title": "Plan", "body": "final text about walruses", "tags": ["done"]})
    assert same.message == "Nothing changed: the note already reads that way (revision 2)."
    assert ws.page(bob, r.url).data["item"]["updated_at"] == updated
    assert act(ws, bob, r.url, "edit_note", {"title": "Plan", "tags": ["done", "q1"]}).message == (
        "Updated the note's tags: revision 3.")
    act(ws, owner, r.url, "confirm_read")
    with pytest.raises(ActionUnavailable, match="already confirmed"):
        act(ws, owner, r.url, "confirm_read")
    with pytest.raises(ActionUnavailable) as e:
        act(ws, bob, r.url, "pin")
    assert e.value.status == 403
    act(ws, owner, r.url, "pin")
    with pytest.raises(ActionUnavailable, match="already pinned"):
        act(ws, owner, r.url, "pin")
    act(ws, owner, r.url, "unpin")
    with pytest.raises(ActionUnavailable, match="not pinned"):
        act(ws, owner, r.url, "unpin")


def test_comments_on_every_kind(ws, people):
    owner = people["owner"]
    urls = [act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b"}).url,
            act(ws, owner, STUDIO, "create_decision", {"question": "D"}).url,
            act(ws, owner, STUDIO, "create_commitment", {"title": "C", "critical_mass": 1}).url]
    for url in urls:
        r = act(ws, people["carol"], url, "add_comment", {"body": "  nice one  "})
        assert r.url == url
        assert "## Comments (1)" in ws.page(owner, url).markdown and "nice one" in ws.page(owner, url).markdown
    with pytest.raises(InvalidActionParams, match="'body'"):
        act(ws, owner, urls[0], "add_comment", {"body": "   "})


def test_links_from_bodies_and_comments(ws, people, make_user):
    owner = people["owner"]
    d = act(ws, owner, STUDIO, "create_decision", {"question": "D"}).url
    n = act(ws, owner, STUDIO, "create_note", {"title": "Refers", "body": f"see {d} and /studios/team/d/nonexistent"}).url
    c = act(ws, owner, STUDIO, "create_commitment", {"title": "C", "critical_mass": 1}).url
    act(ws, owner, c, "add_comment", {"body": f"related: {n}"})
    assert f"[D]({d})" in ws.page(owner, n).markdown.split("## Links to")[1]
    assert f"[Refers]({n})" in ws.page(owner, d).markdown.split("## Linked from")[1]
    assert f"[C]({c})" in ws.page(owner, n).markdown.split("## Linked from")[1]
    # A mention of another studio's item links nothing and reveals nothing.
    eve = people["eve"]
    act(ws, eve, "/", "create_studio", {"handle": "secret", "name": "Secret"})
    hidden = act(ws, eve, "/studios/secret", "create_note", {"title": "Hidden title", "body": "x"}).url
    m = act(ws, owner, STUDIO, "create_note", {"title": "Probe", "body": f"{hidden} {hidden.replace('secret', 'team')}"}).url
    assert "Hidden title" not in ws.page(owner, m).markdown and "## Links to" not in ws.page(owner, m).markdown
    # Editing the body re-links.
    act(ws, owner, n, "edit_note", {"body": "no more links"})
    assert "## Links to" not in ws.page(owner, n).markdown


def test_tags_on_notes_decisions_commitments(ws, people):
    owner = people["owner"]
    urls = [act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b", "tags": ["x"]}).url,
            act(ws, owner, STUDIO, "create_decision", {"question": "D", "tags": ["x", "x"]}).url,
            act(ws, owner, STUDIO, "create_commitment", {"title": "C", "critical_mass": 1, "tags": ["x"]}).url]
    md = ws.page(owner, f"{STUDIO}/tags/x").markdown
    assert all(u in md for u in urls)
    with pytest.raises(InvalidActionParams, match="'tags"):
        act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b", "tags": ["Not A Tag"]})
    with pytest.raises(InvalidActionParams, match="'tags'"):
        act(ws, owner, STUDIO, "create_note", {"title": "N", "body": "b", "tags": [f"t{i}" for i in range(11)]})


# --- decisions ----------------------------------------------------------------------------------


@pytest.fixture
def decision(ws, people):
    return act(ws, people["owner"], STUDIO, "create_decision",
               {"question": "Where?", "options": ["Lisbon", "Berlin", "Online"]}).url


def tally(ws, user, url) -> dict[str, tuple[int, int]]:
    return {o["title"]: (o["accepts"], o["prefers"]) for o in ws.page(user, url).data["options"]}


def test_vote_by_title_and_by_id(ws, people, decision):
    bob = people["bob"]
    berlin = next(o["id"] for o in ws.page(bob, decision).data["options"] if o["title"] == "Berlin")
    r = act(ws, bob, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}, {"option": berlin, "accept": False}]})
    assert r.message.startswith("Vote recorded")
    assert tally(ws, bob, decision) == {"Lisbon": (1, 1), "Berlin": (0, 0), "Online": (0, 0)}
    assert "Your vote: Lisbon: accept + prefer; Berlin: reject." in ws.page(bob, decision).markdown


def test_second_vote_replaces_the_first(ws, people, decision):
    bob = people["bob"]
    act(ws, bob, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}, {"option": "Berlin"}]})
    r = act(ws, bob, decision, "vote", {"votes": [{"option": "Online"}]})
    assert r.message.startswith("Vote replaced")
    assert tally(ws, bob, decision) == {"Online": (1, 0), "Lisbon": (0, 0), "Berlin": (0, 0)}
    page = ws.page(bob, decision)
    assert "Your vote: Online: accept." in page.markdown
    assert "| 1 of 3 members |" in page.markdown


def test_voters_who_left_are_counted_apart_from_the_members(ws, people, decision):
    """Votes of people who left stay in the tally; "N of M members" counts only those still members."""
    from navmcp.web.html import render_page

    owner, bob, carol = people["owner"], people["bob"], people["carol"]
    for user in (owner, bob, carol):
        act(ws, user, decision, "vote", {"votes": [{"option": "Lisbon"}]})
    for handle in ("bob", "carol"):
        act(ws, owner, f"{STUDIO}/members", "remove_member", {"handle": handle})
    page = ws.page(owner, decision)
    assert tally(ws, owner, decision)["Lisbon"] == (3, 0)
    assert "| 1 of 1 members (+2 former members) |" in page.markdown
    assert "<dt>Voters</dt><dd>1 of 1 members (+2 former members)</dd>" in render_page(page, csrf="csrf", alternates={})


def test_an_option_is_named_by_the_number_or_the_title_the_page_shows(ws, people):
    owner = people["owner"]
    url = act(ws, owner, STUDIO, "create_decision",
              {"question": "Which plan?", "options": ["Plan_B: *cheap*", "Plan [A]", "2026"]}).url
    page = ws.page(owner, url).markdown
    shown = re.findall(r"^(\d+)\. (.*?) — id `", page, re.M)
    assert [n for n, _ in shown] == ["1", "2", "3"]
    by_shown = dict((title, n) for n, title in shown)
    # the title exactly as the page displays it (escapes and all), and a number as the page shows it
    act(ws, owner, url, "vote", {"votes": [{"option": [t for t in by_shown if "cheap" in t][0]},
                                            {"option": "2", "accept": False}]})
    assert tally(ws, owner, url)["Plan_B: *cheap*"] == (1, 0) and tally(ws, owner, url)["Plan [A]"] == (0, 0)
    # numbers stay with their options whatever the votes: the page lists them oldest first
    act(ws, people["bob"], url, "vote", {"votes": [{"option": 2}, {"option": "#1."}]})
    assert re.findall(r"^(\d+)\. (.*?) — id `", ws.page(owner, url).markdown, re.M) == shown
    assert tally(ws, owner, url)["Plan [A]"] == (1, 0)
    # a title made of digits is that title before it is a number
    act(ws, owner, url, "vote", {"votes": [{"option": "2026"}]})
    assert tally(ws, owner, url)["2026"] == (1, 0) and tally(ws, owner, url)["Plan [A]"] == (1, 0)


def test_vote_with_unknown_option_lists_the_options(ws, people, decision):
    with pytest.raises(InvalidActionParams) as e:  # a parameter naming nothing: 422, and which one it is
        act(ws, people["bob"], decision, "vote", {"votes": [{"option": "Berlin"}, {"option": "lisbon"}]})  # titles are exact
    assert e.value.message.startswith("vote failed: 'votes.1.option': no option 'lisbon'. Name one by its number,"
                                      " its title or its id. Options: 1. 'Lisbon' (id ")
    assert e.value.message.endswith("Available here: add_comment, add_option, vote, attach.")
    assert e.value.url == decision and "vote" in e.value.available
    assert tally(ws, people["bob"], decision)["Lisbon"] == (0, 0)  # nothing written


@pytest.mark.parametrize("params,field", [({}, "votes"), ({"votes": []}, "votes"),
                                           ({"votes": [{"accept": True}]}, "votes.0.option"),
                                           ({"votes": [{"option": "Lisbon", "accept": "maybe"}]}, "votes.0.accept"),
                                           # a prefer tips ties between accepted options: not on a rejected one
                                           ({"votes": [{"option": "Lisbon", "accept": False, "prefer": True}]}, "votes.0"),
                                           # one say per option: not the last of two, silently
                                           ({"votes": [{"option": "Lisbon"}, {"option": "Lisbon", "accept": False}]},
                                            "votes.1.option")])
def test_vote_parameter_errors(ws, people, decision, params, field):
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["bob"], decision, "vote", params)
    assert f"'{field}'" in e.value.message


BALLOT = "{option: number | title | id, accept?: true/false, prefer?: true/false}"


@pytest.mark.parametrize("params,words", [
    ({"votes": ["Lisbon"]}, f"'votes.0': must be an object {BALLOT}."),
    ({"votes": {"option": "Lisbon"}}, f"'votes': must be a list of {BALLOT}."),
    # a flat ballot: the parameter list says what an entry looks like
    ({"option": "Lisbon", "accept": True}, f"Parameters of vote: votes (list of {BALLOT})."),
])
def test_a_flat_or_mistyped_ballot_is_answered_with_an_entrys_shape(ws, people, decision, params, words):
    with pytest.raises(InvalidActionParams) as e:
        act(ws, people["bob"], decision, "vote", params)
    assert words in e.value.message
    assert e.value.message.count(BALLOT) == 1  # said once
    assert f"`votes` (list of {BALLOT})" in ws.page(people["bob"], decision).markdown


def test_a_prefer_on_a_rejected_option_does_not_count(app, ws, people, decision):
    """Ballots can no longer pair a prefer with a reject; a row written before that must not tip a tie."""
    owner, bob, carol = people["owner"], people["bob"], people["carol"]
    for voter in (owner, bob):
        act(ws, voter, decision, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Berlin"}]})
    act(ws, carol, decision, "vote", {"votes": [{"option": "Lisbon", "accept": False}, {"option": "Berlin", "accept": False}]})
    with app.store.write() as tx:
        tx.execute("UPDATE votes SET prefer = 1 WHERE user_id = ? AND option_id IN"
                   " (SELECT id FROM options WHERE title = 'Berlin')", (carol["id"],))
    assert tally(ws, owner, decision)["Berlin"] == (2, 0)
    assert act(ws, owner, decision, "close_decision").message == (
        "Decision closed. Result: 'Lisbon' / tie with 'Berlin'. A tie: set_outcome says which is chosen.")


def test_replies_quote_user_text_inertly(ws, people, decision):
    """A title in an action's reply is in a code span as on a page: shown as typed, and no link, image
    or code span of its author's."""
    from markdown_it import MarkdownIt

    evil = "Nice ![t](http://evil.example/p.png) [see](http://evil.example) ``` ok"
    shown = f"````{evil}````"  # a run of backticks longer than the title's own
    assert act(ws, people["bob"], decision, "add_option", {"title": evil}).message == f"Added option {shown}."
    with pytest.raises(ActionFailed) as e:
        act(ws, people["carol"], decision, "add_option", {"title": evil})
    assert e.value.message == (f"add_option failed: an option titled {shown} already exists. "
                               "Available here: add_comment, add_option, vote, attach.")
    r = act(ws, people["carol"], decision, "vote", {"votes": [{"option": evil}]})
    assert r.message == f"Vote recorded: {shown}: accept."
    closed = act(ws, people["owner"], decision, "close_decision").message
    assert closed == f"Decision closed. Result: {shown}."
    rendered = MarkdownIt("commonmark").render(closed)
    assert "<a " not in rendered and "<img" not in rendered and rendered.count("<code>") == 1
    r = act(ws, people["bob"], STUDIO, "create_note", {"title": "[x](http://evil.example)", "body": "b"})
    assert r.message == "Created note `[x](http://evil.example)`."
    assert act(ws, people["bob"], STUDIO, "create_note", {"title": "Plain", "body": "b"}).message == "Created note 'Plain'."


@pytest.mark.parametrize("title,reason", [("\u202eSREDRO", "text-direction controls"),
                                          ("a \u2066b", "text-direction controls"),
                                          ("\u200b", "a visible character"), ("\u200b \u2060", "a visible character")])
def test_titles_refuse_direction_controls_and_invisible_text(ws, people, decision, title, reason):
    with pytest.raises(InvalidActionParams, match=reason):
        act(ws, people["bob"], STUDIO, "create_note", {"title": title, "body": "b"})
    with pytest.raises(InvalidActionParams, match=reason):
        act(ws, people["bob"], decision, "add_option", {"title": title})
    # text that only looks unusual is fine: a zero-width joiner in an emoji, right-to-left script
    assert act(ws, people["bob"], decision, "add_option", {"title": "👩\u200d💻 שלום"}).message


def test_a_stored_direction_control_is_dropped_from_pages(app, ws, people):
    """A row written before titles refused them (or by hand) cannot reverse the rest of its line."""
    note = act(ws, people["bob"], STUDIO, "create_note", {"title": "Plain", "body": "b"}).url
    with app.store.write() as tx:
        tx.execute("UPDATE items SET title = ? WHERE id = ?", ("Evil \u202eenod", note.rsplit("/", 1)[1]))
    md = ws.page(people["owner"], STUDIO).markdown
    assert "Evil enod" in md and "\u202e" not in md
    assert "\u202e" not in ws.page(people["owner"], note).markdown


def test_add_option_refuses_a_duplicate(ws, people, decision):
    act(ws, people["bob"], decision, "add_option", {"title": "Paris"})
    with pytest.raises(ActionFailed, match="already exists"):
        act(ws, people["carol"], decision, "add_option", {"title": "Paris"})
    with pytest.raises(InvalidActionParams, match="'options': options must be distinct"):
        act(ws, people["bob"], STUDIO, "create_decision", {"question": "Q", "options": ["a", "a"]})


def test_closed_decision_shows_result_and_offers_no_vote(ws, people, decision):
    owner, bob, carol = people["owner"], people["bob"], people["carol"]
    act(ws, bob, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}, {"option": "Berlin"}]})
    act(ws, carol, decision, "vote", {"votes": [{"option": "Lisbon"}]})
    with pytest.raises(ActionUnavailable) as e:
        act(ws, carol, decision, "close_decision")
    assert e.value.status == 403 and "creator or a studio admin" in e.value.message
    r = act(ws, owner, decision, "close_decision")
    assert "Result: 'Lisbon'" in r.message and r.actions == ["add_comment", "reopen_decision", "set_outcome", "attach", "delete_item"]
    page = ws.page(bob, decision)
    assert "**Result**: Lisbon." in page.markdown  # its tally is in the options list, said once
    assert "1. Lisbon — id `" in page.markdown and " — 2 accept, 1 prefer" in page.markdown
    assert "| decision | closed |" in page.markdown
    assert [a.name for a in page.actions] == ["add_comment", "attach"]
    with pytest.raises(ActionUnavailable) as e:
        act(ws, bob, decision, "vote", {"votes": [{"option": "Berlin"}]})
    message = e.value.message
    assert message.startswith("vote is not available: the decision is closed: it closed at ")
    assert message.endswith("Available here: add_comment, attach.") and e.value.status == 409
    assert tally(ws, bob, decision)["Berlin"] == (1, 0)


def test_a_tie_names_every_winner_and_no_votes_means_no_result(ws, people, decision):
    owner = people["owner"]
    act(ws, owner, decision, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Online"}]})
    assert "'Lisbon' / tie with 'Online'" in act(ws, owner, decision, "close_decision").message
    empty = act(ws, owner, STUDIO, "create_decision", {"question": "Nobody?", "options": ["x"]}).url
    act(ws, owner, empty, "close_decision")
    assert "**Result**: no option was accepted." in ws.page(owner, empty).markdown


def test_a_decision_closed_since_you_looked_refuses_the_vote(ws, people, decision):
    page = ws.page(people["bob"], decision)
    assert "vote" in [a.name for a in page.actions]
    act(ws, people["owner"], decision, "close_decision")
    with pytest.raises(ActionUnavailable, match="closed"):
        act(ws, people["bob"], decision, "vote", {"votes": [{"option": "Lisbon"}]})


def test_deadline_must_be_in_the_future(ws, people):
    with pytest.raises(InvalidActionParams, match="'deadline'.*future"):
        act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "deadline": "2001-01-01"})
    with pytest.raises(InvalidActionParams, match="'deadline'.*or a day in words \\(today, tomorrow"):
        act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "deadline": "whenever"})
    r = act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "deadline": "in 3 days"})  # navmcp.clock.dates
    day = (datetime.now(UTC).date() + timedelta(days=3)).isoformat()
    assert f"{day} 23:59 UTC" in ws.page(people["owner"], r.url).markdown
    r = act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "deadline": "2099-06-01T12:00:00+02:00"})
    assert "2099-06-01 10:00 UTC" in ws.page(people["owner"], r.url).markdown
    for bare in ("2099-06-01", "20990601", "2099-W23-1"):  # a date without a time: the end of that day
        r = act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "deadline": bare})
        assert "2099-06-01 23:59 UTC" in ws.page(people["owner"], r.url).markdown, bare


# --- commitments --------------------------------------------------------------------------------


def test_joining_is_offered_only_to_those_not_in(ws, people):
    c = act(ws, people["owner"], STUDIO, "create_commitment", {"title": "C", "critical_mass": 3}).url
    assert "join_commitment" in [a.name for a in ws.page(people["bob"], c).actions]
    act(ws, people["bob"], c, "join_commitment")
    listed = [a.name for a in ws.page(people["bob"], c).actions]
    assert "join_commitment" not in listed and "leave_commitment" in listed
    with pytest.raises(ActionUnavailable, match="already joined"):  # a second join writes nothing
        act(ws, people["bob"], c, "join_commitment")
    assert ws.page(people["bob"], c).data["count"] == 1


def test_critical_mass_and_leaving(ws, people):
    c = act(ws, people["owner"], STUDIO, "create_commitment", {"title": "C", "critical_mass": 2}).url
    act(ws, people["bob"], c, "join_commitment")
    r = act(ws, people["carol"], c, "join_commitment")
    assert "Critical mass reached." in r.message
    act(ws, people["carol"], c, "leave_commitment")
    assert "**1 more needed**" in ws.page(people["owner"], c).markdown
    with pytest.raises(ActionUnavailable, match="not joined"):
        act(ws, people["carol"], c, "leave_commitment")


def test_reaching_the_limit_closes_and_refuses_a_third(ws, people):
    c = act(ws, people["owner"], STUDIO, "create_commitment", {"title": "Two seats", "critical_mass": 1, "limit": 2}).url
    act(ws, people["bob"], c, "join_commitment")
    r = act(ws, people["carol"], c, "join_commitment")
    assert "The limit is reached: the commitment is now closed." in r.message
    md = ws.page(people["owner"], c).markdown
    assert "| commitment | closed |" in md and "**Closed**: it closed at" in md
    with pytest.raises(ActionUnavailable) as e:
        act(ws, people["owner"], c, "join_commitment")
    assert "the commitment is closed" in e.value.message and e.value.available == ["add_comment", "attach", "delete_item"]
    assert ws.page(people["owner"], c).data["count"] == 2
    with pytest.raises(ActionUnavailable, match="the commitment is closed"):
        act(ws, people["owner"], c, "close_commitment")


def test_close_commitment_is_for_its_creator(ws, people):
    c = act(ws, people["bob"], STUDIO, "create_commitment", {"title": "C", "critical_mass": 2}).url
    with pytest.raises(ActionUnavailable, match="only its creator"):
        act(ws, people["owner"], c, "close_commitment")
    r = act(ws, people["bob"], c, "close_commitment")
    assert "short of critical mass (0 of 2)" in r.message


def test_an_admin_may_close_a_commitment_whose_creator_left(ws, people, app):
    """Only its creator could close a commitment: once the creator was removed, or their account
    deleted, nobody could, and it stayed open (and on every member's home) for ever."""
    from navmcp.identity import delete_user

    by_bob = act(ws, people["bob"], STUDIO, "create_commitment", {"title": "Rota", "critical_mass": 5}).url
    by_carol = act(ws, people["carol"], STUDIO, "create_commitment", {"title": "Party", "critical_mass": 5}).url
    assert "close_commitment" not in accepted(ws, people["owner"], by_bob)
    act(ws, people["owner"], f"{STUDIO}/members", "remove_member", {"handle": "bob"})
    with app.store.write() as tx:
        delete_user(tx, "carol")
    for url in (by_bob, by_carol):
        assert "close_commitment" in accepted(ws, people["owner"], url)
        assert "short of critical mass" in act(ws, people["owner"], url, "close_commitment").message


@pytest.mark.parametrize("params,field", [({"title": "C"}, "critical_mass"),
                                           ({"title": "C", "critical_mass": 0}, "critical_mass"),
                                           # a rule between two fields names the field it refuses, and no pydantic prefix
                                           ({"title": "C", "critical_mass": 3, "limit": 2},
                                            r"'limit': must be at least the number of people needed \(3\)")])
def test_commitment_parameter_errors(ws, people, params, field):
    with pytest.raises(InvalidActionParams, match=field):
        act(ws, people["owner"], STUDIO, "create_commitment", params)


# --- navigation state (url optional) --------------------------------------------------------------


def test_execute_without_url_uses_the_current_page(app, people):
    from navmcp.mcp.tools import Session

    session = Session(app, None)
    refused = session.call_tool("execute_action", {"action": "create_studio", "params": {"handle": "x", "name": "X"}})
    assert refused["isError"] and "no current page" in refused["content"][0]["text"] and "url" in refused["content"][0]["text"]
    session.call_tool("navigate", {"url": STUDIO})
    r = session.call_tool("execute_action", {"action": "create_note", "params": {"title": "T", "body": "b"}})
    assert r["isError"] is False and r["structuredContent"]["url"].startswith(f"{STUDIO}/n/")
    # only navigate moves the page a url-less call means (as the tool's description says): not the action
    assert session.state.current_url == STUDIO and list(session.state.history) == []
    again = session.call_tool("execute_action", {"action": "create_note", "params": {"title": "T2", "body": "b"}})
    assert again["isError"] is False and again["structuredContent"]["url"] != r["structuredContent"]["url"]
    session.call_tool("navigate", {"url": r["structuredContent"]["url"]})
    assert session.state.current_url == r["structuredContent"]["url"] and list(session.state.history) == [STUDIO]
    r = session.call_tool("execute_action", {"action": "vote", "params": {"votes": []}})
    assert r["isError"] and r["structuredContent"]["ok"] is False
    assert "Available here: add_comment" in r["content"][0]["text"]


def test_refused_tool_result_teaches(app, people):
    from navmcp.mcp.tools import Session

    session = Session(app, None)
    d = session.call_tool("execute_action", {"url": STUDIO, "action": "create_decision",
                                             "params": {"question": "Q", "options": ["a"]}})["structuredContent"]["url"]
    session.call_tool("execute_action", {"url": d, "action": "close_decision"})
    r = session.call_tool("execute_action", {"url": d, "action": "vote", "params": {"votes": [{"option": "a"}]}})
    assert r["isError"] is True
    assert r["structuredContent"] == {"ok": False, "message": r["content"][0]["text"], "url": d,
                                    "actions": ["add_comment", "reopen_decision", "set_outcome", "attach", "delete_item"]}
    assert "vote is not available" in r["content"][0]["text"]
    bad = session.call_tool("execute_action", {"url": STUDIO, "action": "create_note", "params": {"title": ""}})
    assert bad["isError"] is True
    assert bad["structuredContent"]["fields"] == [{"field": "title", "problem": "must not be empty"},
                                                  {"field": "body", "problem": "is required"}]


def test_an_admin_can_leave_a_studio(ws, people):
    owner, bob = people["owner"], people["bob"]
    act(ws, owner, f"{STUDIO}/members", "add_member", {"handle": "bob", "role": "admin"})
    r = act(ws, bob, f"{STUDIO}/members", "remove_member", {"handle": "bob"})
    assert r.url == "/" and r.actions == ["create_studio"] and "left" in r.message
    with pytest.raises(NotFound):
        ws.page(bob, STUDIO)


def test_adding_an_existing_member_again_changes_nothing(ws, people):
    r = act(ws, people["owner"], f"{STUDIO}/members", "add_member", {"handle": "bob"})
    assert "already a member; nothing changed" in r.message
    r = act(ws, people["owner"], f"{STUDIO}/members", "add_member", {"handle": "bob", "role": "admin"})
    assert r.message == "@bob is now an admin of this studio."


def test_null_optional_params_count_as_omitted(app, owner):
    """Agents send optional parameters as null; that means "not given", and required ones stay required."""
    ws = app.workspace
    ws.execute(owner, "/", "create_studio", {"handle": "nulls", "name": "Nulls", "description": None})
    made = ws.execute(owner, "/studios/nulls", "create_note", {"title": "T", "body": "B", "tags": None})
    assert made.ok and "/studios/nulls/n/" in made.url
    with pytest.raises(InvalidActionParams) as refused:
        ws.execute(owner, "/studios/nulls", "create_note", {"title": None, "body": "B"})
    assert "'title' is required" in refused.value.message


def test_a_nul_in_any_parameter_is_refused_where_it_is_and_text_that_only_reads_as_one_is_not(ws, people):
    """Parameters are looked at for NUL before any model runs (the walk only when their repr shows
    one): a NUL in a ballot or a parameter name is refused by its place; the four characters
    backslash, x, 0, 0 are text like any other."""
    decision = act(ws, people["owner"], STUDIO, "create_decision", {"question": "Q", "options": ["A", "B"]}).url
    with pytest.raises(InvalidActionParams) as refused:
        act(ws, people["bob"], decision, "vote", {"votes": [{"option": "A"}, {"option": "B\x00"}]})
    assert "'votes.1.option' must not contain NUL" in refused.value.message
    for params in ({"votes": [{"option": "A"}], "x\x00": True}, {"votes": [{"option": "A", "x\x00": True}]}):
        with pytest.raises(InvalidActionParams) as refused:  # a name's NUL never reaches a message or the audit
            act(ws, people["bob"], decision, "vote", params)
        assert "a parameter name must not contain NUL" in refused.value.message
    act(ws, people["owner"], decision, "add_option", {"title": "C:\\x00"})
    assert act(ws, people["bob"], decision, "vote", {"votes": [{"option": "C:\\x00"}]}).ok
