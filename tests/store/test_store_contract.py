"""The store contract: every page and every action, the same test bodies on SQLite and PostgreSQL.

`any_app` is parametrized by `store_kind` (tests/store_fixtures.py), so each test here runs twice.
The last test runs one scripted session on both stores and compares the pages they render.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta

import pytest

from nav_helpers import add_member, role_listed
from navmcp import actions as action_table
from navmcp.app import App
from navmcp.content.domain import CYCLES, cycle_window
from navmcp.errors import ActionFailed, ActionUnavailable, InvalidActionParams, NotFound
from navmcp.identity import mint_token
from navmcp.mcp import sessions
from navmcp.mcp.tools import Session
from navmcp.pages import ROUTES
from navmcp.pages.home import HELP_TOPICS
from navmcp.pages.request import PAGE_SIZE
from navmcp.state import NavigationState
from navmcp.web.html import render_page
from store_fixtures import PARTICIPANT_COUNTS, TAG_COPIES, tag_copies_exact

EXERCISED_ACTIONS = {
    "create_studio", "add_member", "remove_member", "create_note", "create_decision", "create_commitment",
    "add_comment", "confirm_read", "edit_note", "pin", "unpin", "add_option", "vote", "close_decision",
    "join_commitment", "leave_commitment", "close_commitment", "leave_studio", "delete_studio", "make_findable", "make_unfindable",
    "edit_decision", "edit_commitment", "edit_comment", "delete_comment", "extend_decision", "reopen_decision",
    "set_outcome", "mark_read", "dismiss", "create_invitation", "revoke_invitation",
    "accept_invitation", "decline_invitation",  # tests/identity/test_invitations.py, on both stores
    "remind", "set_email", "digest_off",
    "digest_on", "set_time_zone",  # set_time_zone: tests/clock/test_zones.py, on both stores
    "approve", "reject", "withdraw", "set_hold_rule", "remove_hold_rule",
}
# The decision kinds' own actions run on both stores in tests/kinds/test_kinds.py (any_app, like this file).
KIND_ACTIONS = {"consent", "object", "amend", "allocate", "answer", "add_time", "close_poll"}
EXERCISED_PAGES = {"home", "help", "help_topic", "whoami", "studio", "members", "note", "decision", "commitment",
                   "cycle", "search", "workspace_search", "tag", "audit", "awaiting", "near_mass", "inbox",
                   "held_queue", "held"}
# Attachments' actions and the file page run on both stores in tests/content/test_attachments.py (any_app too).
ATTACHMENTS = ({"attach", "remove_attachment"}, {"file"})
# Deleting and restoring items, and the Deleted list, run on both stores in tests/test_deletion.py.
DELETION = ({"delete_item", "restore_item"}, {"deleted"})


def test_the_contract_covers_every_page_and_action():
    # A page or action added to the tables must be added to the contract below, or this fails.
    assert {spec.name for spec in ROUTES} == EXERCISED_PAGES | ATTACHMENTS[1] | DELETION[1]
    assert {a.name for a in action_table.ACTIONS} == EXERCISED_ACTIONS | KIND_ACTIONS | ATTACHMENTS[0] | DELETION[0]


def test_edits_are_revisions_on_every_kind(any_app, team):
    """edit_decision (creator or admin), edit_commitment, edit_comment (its author): each a revision
    with its base, in the page's history (tests/content/test_revisions.py has the rest)."""
    ws, alice, bob, carol = team
    decision = ws.execute(bob, "/studios/team", "create_decision", {"question": "Q?", "options": ["a"]}).url
    commitment = ws.execute(bob, "/studios/team", "create_commitment", {"title": "C", "critical_mass": 1}).url
    ws.execute(alice, decision, "edit_decision", {"question": "Q, really?", "base": 1})
    ws.execute(bob, commitment, "edit_commitment", {"limit": 4, "description": "why", "base": 1})
    ws.execute(alice, commitment, "add_comment", {"body": "typo hree"})
    cid = ws.page(alice, commitment).data["comments"][0]["id"]
    ws.execute(alice, commitment, "edit_comment", {"comment": cid, "body": "typo here", "base": 1})
    assert "edit_comment" not in names(ws.page(bob, commitment))
    assert "### Revision 2: @alice" in ws.page(bob, decision + "?history=1").markdown
    assert ws.page(bob, commitment).data["item"]["participant_limit"] == 4
    assert "- body: typo hree → typo here" in ws.page(bob, f"{commitment}?comment={cid}&history=1").markdown
    ws.execute(bob, commitment, "add_comment", {"body": "re", "reply_to": cid})
    ws.execute(alice, commitment, "delete_comment", {"comment": cid})
    assert f"comment `{cid}`: [deleted] by @alice" in ws.page(bob, commitment).markdown
    ws.execute(bob, decision, "extend_decision", {"deadline": "2100-01-01"})
    ws.execute(bob, decision, "close_decision", {"outcome": "a, then"})
    ws.execute(alice, decision, "set_outcome", {"outcome": "a, surely"})
    ws.execute(alice, decision, "reopen_decision", {})
    assert "- outcome: a, surely → (none)" in ws.page(bob, decision + "?history=1").markdown


def test_held_actions(any_app, team):
    """A rule set in the browser holds bob's agent's note; alice approves it in the browser; a second
    one is withdrawn; a rule is removed (tests/held/test_held.py has the rest)."""
    ws, alice, bob, carol = team
    rule = ws.execute(alice, "/studios/team/held", "set_hold_rule", {"actions": "create_note"}, browser=True)
    held = ws.execute(bob, "/studios/team", "create_note", {"title": "Held", "body": "b"})
    assert held.held is not None and "| pending | @bob |" in ws.page(alice, held.url).markdown
    assert names(ws.page(alice, held.url, browser=True)) == {"approve", "reject"}
    ws.execute(alice, held.url, "approve", {}, browser=True)
    assert "| executed | @bob |" in ws.page(bob, held.url).markdown
    other = ws.execute(bob, "/studios/team", "create_note", {"title": "Again", "body": "b"})
    ws.execute(bob, other.url, "withdraw", {})
    rejected = ws.execute(bob, "/studios/team", "create_note", {"title": "No", "body": "b"})
    ws.execute(alice, rejected.url, "reject", {"note": "no"}, browser=True)
    ws.execute(alice, "/studios/team/held", "remove_hold_rule", {"rule": rule.message.split()[1]}, browser=True)
    assert ws.execute(bob, "/studios/team", "create_note", {"title": "Free", "body": "b"}).held is None
    queue = ws.page(alice, "/studios/team/held").markdown
    assert "| withdrawn |" in queue and "| rejected |" in queue and "No rule holds writes here." in queue


def names(page) -> set[str]:
    return {a.name for a in page.actions}


def _roles(members_page) -> dict[str, str]:
    """handle → role, as a members page lists them."""
    return {m["handle"]: m["role"] for m in members_page.data["members"]}


@pytest.fixture
def team(any_app, new_user):
    """alice (admin) and bob (member) in studio `team`; carol is in no studio."""
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    carol, _ = new_user("carol")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team", "description": "the team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    return ws, alice, bob, carol


def test_home_help_whoami(any_app, team):
    ws, alice, bob, carol = team
    home = ws.page(alice, "/")
    assert "create_studio" in names(home) and "[Team](/studios/team)" in home.markdown
    assert "Team" not in ws.page(carol, "/").markdown
    assert "/studios/team" in ws.page(bob, "/whoami").markdown
    assert ws.page(alice, "/help").title == "Help"
    for topic in HELP_TOPICS:
        assert ws.page(alice, f"/help/{topic}").title == HELP_TOPICS[topic]


def test_home_is_a_to_do_list_with_counts_and_full_lists(any_app, team):
    """Home: decisions awaiting your vote by the soonest deadline, commitments by the fewest joins to
    go, each counted and linked to its full list in the same order (every item once)."""
    from navmcp.pages.home import HOME_ROWS

    ws, alice, bob, carol = team
    decisions = {}
    for n, deadline in enumerate(["2099-03-01", None, "2099-01-01", None, "2099-02-01", None, None]):
        params = {"question": f"D{n}?", "options": ["yes"], **({"deadline": deadline} if deadline else {})}
        decisions[f"D{n}?"] = ws.execute(alice, "/studios/team", "create_decision", params).url
    ws.execute(bob, decisions["D6?"], "vote", {"votes": [{"option": "yes"}]})  # voted: not awaiting bob
    for n, (mass, joins) in enumerate([(5, 1), (3, 2), (4, 1), (2, 1), (6, 0), (3, 0)]):
        url = ws.execute(alice, "/studios/team", "create_commitment", {"title": f"C{n}", "critical_mass": mass}).url
        for who in (alice, carol)[:joins]:
            if who is carol:
                add_member(ws, alice, "/studios/team/members", {"handle": "carol"}) \
                    if "carol" not in ws.page(alice, "/studios/team/members").markdown else None
            ws.execute(who, url, "join_commitment", {})
    home = ws.page(bob, "/")
    want_d = ["D2?", "D4?", "D0?", "D5?", "D3?", "D1?"]  # deadlines soonest first, then the newest
    want_c = ["C3", "C1", "C5", "C2", "C0", "C4"]  # 1, 1, 3, 3, 4, 6 to go; ties newest first
    assert [d["title"] for d in home.data["awaiting_votes"]] == want_d[:HOME_ROWS]
    assert [c["title"] for c in home.data["near_mass"]] == want_c[:HOME_ROWS]
    assert "## Awaiting your vote (6)" in home.markdown and "## Commitments that need you (6)" in home.markdown
    assert "all 6: `/awaiting`" in home.markdown and "all 6: `/near-mass`" in home.markdown
    assert [r["title"] for r in ws.page(bob, "/awaiting").data["rows"]] == want_d
    assert [r["title"] for r in ws.page(bob, "/near-mass").data["rows"]] == want_c
    assert "(6 in all)" in ws.page(bob, "/near-mass").markdown
    # A decision with no option yet has nothing to vote on; its first option (counted on the item
    # by a trigger on both stores) puts it on the list.
    empty = ws.execute(alice, "/studios/team", "create_decision", {"question": "D7?"}).url
    assert "## Awaiting your vote (6)" in ws.page(bob, "/").markdown
    ws.execute(alice, empty, "add_option", {"title": "yes"})
    assert "## Awaiting your vote (7)" in ws.page(bob, "/").markdown
    assert "D7?" in [r["title"] for r in ws.page(bob, "/awaiting").data["rows"]]


def test_studio_feed_members_and_membership_actions(any_app, team, new_user):
    ws, alice, bob, carol = team
    page = ws.page(bob, "/studios/team")
    assert names(page) == {"create_note", "create_decision", "create_commitment"}
    members = ws.page(alice, "/studios/team/members")
    assert {"add_member", "remove_member"} <= names(members)
    assert "@bob" in members.markdown and "@carol" not in members.markdown
    assert not names(ws.page(bob, "/studios/team/members")) & {"add_member", "remove_member"}
    # A non-member sees no such studio (no leak), an admin adds and removes.
    with pytest.raises(NotFound):
        ws.page(carol, "/studios/team")
    add_member(ws, alice, "/studios/team/members", {"handle": "carol", "role": "admin"})
    assert ws.page(carol, "/studios/team/audit").title.startswith("Audit log")
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "carol"})
    with pytest.raises(NotFound):
        ws.page(carol, "/studios/team")
    with pytest.raises(InvalidActionParams, match="no such person you can add: @nobody"):
        add_member(ws, alice, "/studios/team/members", {"handle": "nobody"})
    with pytest.raises(ActionFailed, match="at least one admin"):
        ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "alice"})
    # Handles are unique across studios the creator cannot see.
    with pytest.raises(ActionFailed, match="is taken"):
        ws.execute(carol, "/", "create_studio", {"handle": "team", "name": "Mine"})
    # An admin may leave while another admin stays (PostgreSQL counted after the write, when the
    # memberships were already hidden from the one who left, and refused).
    add_member(ws, alice, "/studios/team/members", {"handle": "bob", "role": "admin"})
    left = ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "alice"})
    assert left.message == "You left this studio." and left.url == "/"
    with pytest.raises(NotFound):
        ws.page(alice, "/studios/team")
    assert role_listed(ws.page(bob, "/studios/team/members").markdown, "bob") == "admin"


def test_a_member_may_leave_and_the_last_admin_only_last(any_app, team):
    """Only admins could delete memberships: a member added to a studio had no way out of it, and
    its only admin could not leave it even when nobody else was in it."""
    ws, alice, bob, carol = team
    assert "leave_studio" in names(ws.page(bob, "/studios/team/members"))
    assert "leave_studio" not in names(ws.page(alice, "/studios/team/members"))  # bob is still in
    with pytest.raises(ActionUnavailable, match="you are this studio's last admin: make another member an admin"):
        ws.execute(alice, "/studios/team/members", "leave_studio", None)
    left = ws.execute(bob, "/studios/team/members", "leave_studio", None)
    assert (left.message, left.url) == ("You left this studio.", "/")
    with pytest.raises(NotFound):
        ws.page(bob, "/studios/team")
    assert "bob" not in _roles(ws.page(alice, "/studios/team/members"))  # (the invitation he accepted is listed)
    # the last one out deletes it, by its own action: leaving is not offered
    assert {"delete_studio"} <= names(ws.page(alice, "/studios/team/members")) and "leave_studio" not in names(
        ws.page(alice, "/studios/team/members"))
    last = ws.execute(alice, "/studios/team/members", "delete_studio", {"confirm": "team"})
    assert last.message.startswith("Deleted the studio 'team'")
    with pytest.raises(NotFound):
        ws.page(alice, "/studios/team")


def test_the_last_member_deletes_the_studio_by_its_own_action_once_they_name_it(any_app, team, store_kind, request):
    """The only member of a studio could leave it and orphan it: its page answered 404 to everyone
    and its handle stayed taken. Deleting is its own action (it was a consequence discovered after
    "Leave"): offered to the last member only, refused until they name the studio in `confirm`; then
    the studio goes, with all it holds, and its handle is free again. Leaving is not offered then."""
    ws, alice, bob, carol = team
    ws.execute(carol, "/", "create_studio", {"handle": "solo", "name": "Solo"})
    note = ws.execute(carol, "/studios/solo", "create_note", {"title": "Mine alone", "body": "b", "tags": ["t"]}).url
    ws.execute(carol, note, "add_comment", {"body": "to myself"})
    ws.execute(carol, "/studios/solo", "create_decision", {"question": "q?", "options": ["o"]})
    offered = names(ws.page(carol, "/studios/solo/members"))
    assert "delete_studio" in offered and "leave_studio" not in offered
    with pytest.raises(ActionUnavailable, match="you are this studio.s last member: leaving would leave it to nobody. "
                                       "delete_studio deletes it"):
        ws.execute(carol, "/studios/solo/members", "leave_studio", None)
    with pytest.raises(InvalidActionParams):
        ws.execute(carol, "/studios/solo/members", "delete_studio", None)
    for confirm in ("team", "Solo", "/studios/team", ""):
        with pytest.raises(InvalidActionParams, match="type the studio's handle, 'solo', to delete it"):
            ws.execute(carol, "/studios/solo/members", "delete_studio", {"confirm": confirm})
    assert ws.page(carol, note).title == "Mine alone"
    gone = ws.execute(carol, "/studios/solo/members", "delete_studio", {"confirm": "solo"})
    assert (gone.url, gone.message) == ("/", "Deleted the studio 'solo' with its 2 item(s); the handle 'solo' is free again.")
    for url in ("/studios/solo", note, "/studios/solo/tags/t"):
        with pytest.raises(NotFound):
            ws.page(carol, url)
    assert "/studios/solo" not in ws.page(carol, "/").markdown
    # The handle is free: bob founds a studio of that handle, and none of carol's work is in it.
    ws.execute(bob, "/", "create_studio", {"handle": "solo", "name": "Bob's"})
    assert ws.page(bob, "/studios/solo").data["counts"]["note"] == 0
    with pytest.raises(NotFound):
        ws.page(bob, note)
    assert ws.page(bob, "/studios/solo/search?q=alone").data["pager"]["total"] == 0


def test_the_last_working_member_out_deletes_the_studio_whatever_their_role(any_app, team, store_kind, request):
    """Members whose accounts were deleted keep no studio alive: with only them left beside you, you
    are its last member. A plain member may be the last one, once its admins' accounts are deleted."""
    ws, alice, bob, carol = team
    _as_owner(any_app, store_kind, request, "UPDATE users SET deleted_at = ? WHERE handle = ?",
              ("2026-01-01T00:00:00.000000Z", "alice"))  # `navmcp user delete --force`: no working admin left
    assert "delete_studio" in names(ws.page(bob, "/studios/team/members"))
    with pytest.raises(ActionUnavailable, match="you are this studio.s last member"):
        ws.execute(bob, "/studios/team/members", "leave_studio", None)
    assert "Deleted the studio" in ws.execute(bob, "/studios/team/members", "delete_studio", {"confirm": "team"}).message
    ws.execute(carol, "/", "create_studio", {"handle": "team", "name": "Carol's team"})
    assert _roles(ws.page(carol, "/studios/team/members")) == {"carol": "admin"}
    # An admin beside a member whose account was deleted is its last member too.
    add_member(ws, carol, "/studios/team/members", {"handle": "bob"})
    _as_owner(any_app, store_kind, request, "UPDATE users SET deleted_at = ? WHERE handle = ?",
              ("2026-01-01T00:00:00.000000Z", "bob"))
    assert "delete_studio" in names(ws.page(carol, "/studios/team/members"))
    assert "Deleted the studio" in ws.execute(carol, "/studios/team/members", "delete_studio", {"confirm": "team"}).message


def test_a_deleted_account_can_be_removed_and_its_admin_role_does_not_count(any_app, team, store_kind, request):
    """`navmcp user delete` keeps a user's work and memberships: the members page says the account
    is deleted, an admin can remove it, and a deleted admin keeps no studio administered."""
    ws, alice, bob, carol = team
    add_member(ws, alice, "/studios/team/members", {"handle": "carol", "role": "admin"})
    for handle in ("bob", "carol"):  # what identity.delete_user writes
        _as_owner(any_app, store_kind, request, "UPDATE users SET deleted_at = ? WHERE handle = ?",
                  ("2026-01-01T00:00:00.000000Z", handle))
    members = ws.page(alice, "/studios/team/members").markdown
    assert "| @bob (account deleted) |" in members and "| @alice |" in members
    with pytest.raises(ActionFailed, match="at least one admin"):  # carol's role administers nothing
        add_member(ws, alice, "/studios/team/members", {"handle": "alice", "role": "member"})
    with pytest.raises(ActionFailed, match="at least one admin"):
        ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "alice"})
    assert "Removed @bob" in ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"}).message
    assert "Removed @carol" in ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "carol"}).message
    assert _roles(ws.page(alice, "/studios/team/members")).keys() == {"alice"}
    # adding a deleted account back is refused as adding nobody is (test_only_a_findable_person_can_be_added)
    with pytest.raises(InvalidActionParams, match="no such person you can add: @bob"):
        add_member(ws, alice, "/studios/team/members", {"handle": "bob"})


def test_only_a_findable_person_can_be_added_and_every_refusal_reads_the_same(any_app, team, new_user):
    """Anyone could add anyone to a studio by a guessable handle, without their consent, and read
    their name on the members page; and add_member's different refusals told which handles existed.
    A person is now added only by a handle they made findable, and every refusal reads the same."""
    from navmcp.identity import Principal, create_user, delete_user, new_id

    ws, alice, bob, carol = team
    members = "/studios/team/members"
    dana_id = new_id(10)
    with any_app.store.write(user_id=dana_id) as tx:  # as a Supabase user is made on first sight
        create_user(tx, "dana", user_id=dana_id, findable=False)
    dana = Principal(dana_id)  # her row read afresh on every call, as every surface does
    erin = new_user("erin")[0]  # made findable (`navmcp user add`), then deleted
    with any_app.store.write(user_id=erin["id"]) as tx:
        delete_user(tx, "erin")
    refusals = {}
    for handle in ("dana", "erin", "nobody"):  # not findable, deleted, nobody's
        with pytest.raises(InvalidActionParams) as refused:
            add_member(ws, alice, members, {"handle": handle})
        refusals[handle] = refused.value.message.replace(handle, "HANDLE")
    assert len(set(refusals.values())) == 1, refusals
    assert ("'handle': no such person you can add: @HANDLE. People are added by a handle they made findable"
            " (`make_findable`, on their /whoami page): ask them for it.") in refusals["dana"]
    assert "@dana" not in ws.page(alice, members).markdown

    # dana chooses to be found, on her whoami page; then alice can add her.
    page = ws.page(dana, "/whoami")
    assert {"make_findable", "make_unfindable"} & names(page) == {"make_findable"}
    assert "| Findable | no: nobody can invite you to a studio |" in page.markdown
    done = ws.execute(dana, "/whoami", "make_findable", None)
    assert done.message == "You are findable: an admin who knows your handle @dana can invite you to a studio."
    assert "make_unfindable" in done.actions and "make_findable" not in done.actions
    assert "| Findable | yes: a studio admin who knows your handle can invite you |" in ws.page(dana, "/whoami").markdown
    with pytest.raises(ActionUnavailable, match="you are findable already"):
        ws.execute(dana, "/whoami", "make_findable", None)
    assert add_member(ws, alice, members, {"handle": "dana"}).message.startswith("Invited @dana to join as member")
    assert _roles(ws.page(alice, members))["dana"] == "member"  # once she accepted (test_add_member_invites…)
    # Unfindable again: she stays in, and her role may change; once out, she cannot be added back.
    ws.execute(dana, "/whoami", "make_unfindable", None)
    assert "/studios/team" in ws.page(dana, "/whoami").markdown
    add_member(ws, alice, members, {"handle": "dana", "role": "admin"})
    assert _roles(ws.page(alice, members))["dana"] == "admin"
    ws.execute(alice, members, "remove_member", {"handle": "dana"})
    with pytest.raises(InvalidActionParams, match="no such person you can add: @dana"):
        add_member(ws, alice, members, {"handle": "dana"})


def _waiting(any_app, user_id: str) -> list[dict]:
    from navmcp.identity import invitations

    with any_app.store.read(user_id=user_id) as tx:
        return invitations.addressed_to(tx, user_id)


def test_add_member_invites_a_newcomer_who_joins_only_by_agreeing(any_app, team, new_user):
    """add_member put any findable person in a studio at once, without asking them (issue 43: nobody
    is added without agreeing). A newcomer's add is now an invitation addressed to them, in their
    inbox: no member until they accept it; declining adds nobody; a member's role change stays at once."""
    ws, alice, bob, carol = team
    dana = new_user("dana")[0]
    members = "/studios/team/members"
    told = ws.execute(alice, members, "add_member", {"handle": "@dana", "role": "admin"})
    assert told.message == ("Invited @dana to join as admin: they are not a member until they accept the invitation "
                            "waiting in their inbox (within 7 days); nobody is added without agreeing.")
    assert "dana" not in _roles(ws.page(alice, members))
    assert "for @dana" in ws.page(alice, members).markdown  # the admins see the invitation waiting
    with pytest.raises(NotFound):
        ws.page(dana, "/studios/team")
    inbox = ws.page(dana, "/inbox")
    assert "Team (`team`), as admin, from @alice" in inbox.markdown and "decline_invitation" in names(inbox)
    assert "accept_invitation" in names(ws.page(dana, "/inbox", browser=True))  # accepted in her browser only
    again = ws.execute(alice, members, "add_member", {"handle": "dana"})
    assert again.message.startswith("@dana is invited already and has not answered yet; nothing changed")
    [waiting] = _waiting(any_app, dana["id"])  # one invitation, not two
    assert (waiting["studio"], waiting["role"], waiting["inviter"]) == ("team", "admin", "alice")
    # an agent cannot accept for her
    with pytest.raises(ActionUnavailable, match="in their browser"):
        ws.execute(dana, "/inbox", "accept_invitation", {"invitation": waiting["id"]})
    assert "declined" in ws.execute(dana, "/inbox", "decline_invitation", {"invitation": waiting["id"]}).message
    assert "dana" not in _roles(ws.page(alice, members)) and _waiting(any_app, dana["id"]) == []
    # asked again, she accepts in her browser and is in, with the role she was invited to
    ws.execute(alice, members, "add_member", {"handle": "dana"})
    [waiting] = _waiting(any_app, dana["id"])
    joined = ws.execute(dana, "/inbox", "accept_invitation", {"invitation": waiting["id"]}, browser=True)
    assert joined.url == "/studios/team" and _roles(ws.page(alice, members))["dana"] == "member"
    # a member's role changes at once, and no invitation is made for it
    assert ws.execute(alice, members, "add_member", {"handle": "dana", "role": "admin"}).message == \
        "@dana is now an admin of this studio."
    assert _roles(ws.page(alice, members))["dana"] == "admin" and _waiting(any_app, dana["id"]) == []


def test_the_inbox_lists_what_it_runs(any_app, team):
    """/inbox offers mark_read while something is unread and dismiss while anything is there; each
    valid action runs, and what the page then offers is what the outcome says."""
    ws, alice, bob, carol = team
    assert names(ws.page(carol, "/inbox")) == set()
    with pytest.raises(ActionUnavailable, match="your inbox is empty"):
        ws.execute(carol, "/inbox", "dismiss", {"all": True})
    ws.execute(alice, "/studios/team", "create_note", {"title": "For bob", "body": "@bob and @carol"})
    page = ws.page(bob, "/inbox")
    assert names(page) == {"mark_read", "dismiss"} and page.data["unread"] == 1  # mentioned (his invitation: read)
    assert names(ws.page(carol, "/inbox")) == set()  # carol is in no studio: her mention is plain text
    done = ws.execute(bob, "/inbox", "mark_read", {"all": True})
    assert done.message == "Marked 1 entry read." and set(done.actions) == names(ws.page(bob, "/inbox")) == {"dismiss"}
    done = ws.execute(bob, "/inbox", "dismiss", {"all": True})
    assert done.actions == [] and names(ws.page(bob, "/inbox")) == set()


def test_a_name_is_never_an_email_address(any_app):
    """A name is shown to every member of one's studios: an e-mail address in it is refused."""
    from navmcp.errors import NavError
    from navmcp.identity import add_user

    for name in ("frank@example.com", "Frank <frank@example.com>", "frank.b@mail.example.org (work)"):
        with pytest.raises(NavError, match="leave out the e-mail address"):
            add_user(any_app.store, "frank", name)
    assert add_user(any_app.store, "frank", "Frank @ home")["name"] == "Frank @ home"  # no address in it


def test_deleting_a_studios_last_admin_is_refused_unless_forced(any_app, team):
    """`navmcp user delete` (as the user, as the CLI acts) keeps the rule remove_member keeps: a
    studio is not left without an admin whose account works."""
    from navmcp.errors import NavError
    from navmcp.identity import delete_user

    ws, alice, bob, carol = team
    with pytest.raises(NavError, match="last admin of /studios/team: make another member an admin"):
        with any_app.store.write(user_id=alice["id"]) as tx:
            delete_user(tx, "alice")
    add_member(ws, alice, "/studios/team/members", {"handle": "bob", "role": "admin"})
    with any_app.store.write(user_id=alice["id"]) as tx:
        delete_user(tx, "alice")
    assert "| @alice (account deleted) |" in ws.page(bob, "/studios/team/members").markdown
    ws.execute(carol, "/", "create_studio", {"handle": "solo", "name": "Solo"})
    with any_app.store.write(user_id=carol["id"]) as tx:
        delete_user(tx, "carol", force=True)  # the operator's choice: her studio keeps no working admin


def _feed_urls(ws, user, url="/studios/team") -> tuple[list[str], list[str]]:
    """The Pinned list of a studio's feed, and every page of its Recent list followed by Next."""
    page = ws.page(user, url)
    pinned, recent = [r["url"] for r in page.data["pinned"]], []
    while True:
        recent += [r["url"] for r in page.data["recent"]]
        if not page.data["pager"].get("next"):
            return pinned, recent
        page = ws.page(user, page.data["pager"]["next"])


def test_a_pinned_item_is_listed_once_and_every_item_is_reachable(any_app, team):
    ws, alice, _, _ = team
    notes = [ws.execute(alice, "/studios/team", "create_note", {"title": f"n{i}", "body": "b"}).url
             for i in range(PAGE_SIZE + 2)]
    ws.execute(alice, notes[0], "pin", {})
    pinned, recent = _feed_urls(ws, alice)
    assert pinned == [notes[0]] and notes[0] not in recent
    assert sorted(recent) == sorted(notes[1:])
    assert ws.page(alice, "/studios/team").data["pager"]["total"] == len(notes) - 1
    for url in notes[1:PAGE_SIZE + 1]:  # more pinned than one page shows: Recent lists them all again
        ws.execute(alice, url, "pin", {})
    pinned, recent = _feed_urls(ws, alice)
    assert len(pinned) == PAGE_SIZE and sorted(recent) == sorted(notes)


def test_notes_comments_reads_links_pins(any_app, team):
    ws, alice, bob, carol = team
    first = ws.execute(alice, "/studios/team", "create_note",
                       {"title": "Kick-off", "body": "We meet on Mondays.", "tags": ["meetings", "start"]}).url
    second = ws.execute(bob, "/studios/team", "create_note",
                        {"title": "Follow-up", "body": f"See {first} for the plan.", "tags": ["meetings"]}).url
    page = ws.page(alice, first)
    assert "Linked from" in page.markdown and "Follow-up" in page.markdown
    assert {"add_comment", "confirm_read", "edit_note", "pin"} <= names(page)
    agenda = ws.execute(alice, "/studios/team", "create_note", {"title": "Agenda", "body": "1. dates"}).url
    ws.execute(bob, first, "add_comment", {"body": f"Mondays are busy for me, see {second}"})
    ws.execute(bob, first, "confirm_read", {})
    assert "confirm_read" not in names(ws.page(bob, first))
    ws.execute(alice, first, "edit_note", {"title": "Kick-off (edited)", "body": f"On Tuesdays: {agenda}"})
    page = ws.page(bob, first)
    assert "Kick-off (edited)" in page.markdown and "Tuesdays" in page.markdown
    # A new body's mentions replace the old body's; the comment's mention stays linked.
    assert sorted(link["title"] for link in page.data["links_to"]) == ["Agenda", "Follow-up"]
    ws.execute(alice, first, "edit_note", {"body": "We meet on Tuesdays."})
    assert [link["title"] for link in ws.page(bob, first).data["links_to"]] == ["Follow-up"]
    assert "Kick-off" not in ws.page(bob, agenda).markdown
    assert "Mondays are busy for me" in page.markdown and "@bob" in page.markdown
    with pytest.raises(ActionUnavailable):
        ws.execute(bob, first, "edit_note", {"title": "mine now"})
    ws.execute(alice, first, "pin", {})
    assert "unpin" in names(ws.page(alice, first))
    # Links to items of one title are listed in id order on both stores (PostgreSQL's was arbitrary).
    same = [ws.execute(alice, "/studios/team", "create_note", {"title": "Same", "body": "x"}).url for _ in range(6)]
    hub = ws.execute(alice, "/studios/team", "create_note", {"title": "Hub", "body": " ".join(same)}).url
    assert [link["id"] for link in ws.page(bob, hub).data["links_to"]] == sorted(u.rsplit("/", 1)[1] for u in same)
    feed = ws.page(bob, "/studios/team").markdown
    assert feed.index("Kick-off (edited)") < feed.index("Follow-up")
    ws.execute(alice, first, "unpin", {})
    assert "pin" in names(ws.page(alice, first))
    tag = ws.page(bob, "/studios/team/tags/meetings")
    assert "Kick-off (edited)" in tag.markdown and "Follow-up" in tag.markdown
    assert "Follow-up" not in ws.page(bob, "/studios/team/tags/start").markdown
    assert second in ws.page(alice, second).url


def test_decisions_vote_replace_close(any_app, team):
    ws, alice, bob, carol = team
    url = ws.execute(alice, "/studios/team", "create_decision",
                     {"question": "Where is the offsite?", "options": ["Lisbon", "Berlin"]}).url
    bare = ws.execute(alice, "/studios/team", "create_decision", {"question": "What to cook?"}).url
    # Home lists what awaits your vote: a decision with no options yet offers no vote.
    assert "Where is the offsite?" in ws.page(bob, "/").markdown and "What to cook?" not in ws.page(bob, "/").markdown
    ws.execute(bob, bare, "add_option", {"title": "Soup"})
    assert "What to cook?" in ws.page(bob, "/").markdown
    ws.execute(bob, url, "add_option", {"title": "Online"})
    with pytest.raises(ActionFailed, match="already exists"):
        ws.execute(bob, url, "add_option", {"title": "Online"})
    assert ws.execute(alice, url, "vote", {"votes": [{"option": "Lisbon", "prefer": True}]}).message.startswith(
        "Vote recorded")
    ws.execute(bob, url, "vote", {"votes": [{"option": "Berlin"}]})
    assert ws.execute(bob, url, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Berlin", "accept": False}]}
                      ).message.startswith("Vote replaced")

    def bobs_votes():  # (option, accept, prefer) of bob's rows on this decision
        with ws.store.read(user_id=bob["id"]) as tx:
            return sorted((r["title"], r["accept"], r["prefer"]) for r in tx.all(
                """SELECT o.title, v.accept, v.prefer FROM votes v JOIN options o ON o.id = v.option_id
                    WHERE o.decision_id = ? AND v.user_id = ?""", (url.rsplit("/", 1)[1], bob["id"])))
    assert bobs_votes() == [("Berlin", 0, 0), ("Lisbon", 1, 0)]
    # A new ballot updates the options it names and drops the ones it leaves out (Berlin).
    ws.execute(bob, url, "vote", {"votes": [{"option": "Online", "prefer": True}, {"option": "Lisbon", "accept": False}]})
    assert bobs_votes() == [("Lisbon", 0, 0), ("Online", 1, 1)]
    ws.execute(bob, url, "vote", {"votes": [{"option": "Lisbon"}, {"option": "Berlin", "accept": False}]})
    with pytest.raises(ActionUnavailable):
        ws.execute(bob, url, "close_decision", {})
    result = ws.execute(alice, url, "close_decision", {})
    assert "Lisbon" in result.message
    page = ws.page(bob, url)
    assert "vote" not in names(page) and "Lisbon" in page.markdown
    with pytest.raises(ActionUnavailable, match="closed"):
        ws.execute(bob, url, "vote", {"votes": [{"option": "Berlin"}]})
    home = ws.page(bob, "/")
    # nothing awaits his vote there any more (his inbox says it closed)
    assert "Where is the offsite?" not in [d["title"] for d in home.data["awaiting_votes"]]
    assert "Where is the offsite?" not in home.markdown.split("## Awaiting your vote")[1]


def test_commitments_join_limit_leave_close(any_app, team, new_user):
    ws, alice, bob, carol = team
    dave, _ = new_user("dave")
    add_member(ws, alice, "/studios/team/members", {"handle": "dave"})
    full = ws.execute(alice, "/studios/team", "create_commitment",
                      {"title": "Book the venue", "critical_mass": 2, "limit": 2}).url
    ws.execute(alice, full, "join_commitment", {})
    assert "join_commitment" not in names(ws.page(alice, full)) and "leave_commitment" in names(ws.page(alice, full))
    with pytest.raises(ActionUnavailable, match="already joined it; leave_commitment takes you out"):
        ws.execute(alice, full, "join_commitment", {})
    assert "now closed" in ws.execute(bob, full, "join_commitment", {}).message
    with pytest.raises(ActionUnavailable, match="full|closed"):
        ws.execute(dave, full, "join_commitment", {})
    # A closed commitment offers no join, to those who joined it either.
    assert names(ws.page(alice, full)) == {"add_comment", "attach", "delete_item"}
    assert "Critical mass reached" in ws.page(dave, full).markdown
    open_one = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Run together", "critical_mass": 3}).url
    ws.execute(dave, open_one, "join_commitment", {})
    assert "leave_commitment" in names(ws.page(dave, open_one))
    ws.execute(dave, open_one, "leave_commitment", {})
    assert "3 more needed" in ws.page(dave, open_one).markdown
    ws.execute(bob, open_one, "add_comment", {"body": "anyone?"})
    assert "Commitment closed short of critical mass" in ws.execute(bob, open_one, "close_commitment", {}).message
    with pytest.raises(ActionUnavailable):
        ws.execute(dave, open_one, "join_commitment", {})


# --- what a page lists, its executor runs: after every change of an item creator's role ----------

# Each action of an item page, with parameters it accepts wherever it is valid.
_ITEM_ACTIONS = {
    "note": {"add_comment": {"body": "seen"}, "confirm_read": {}, "edit_note": {"title": "Edited"},
             "pin": {}, "unpin": {}},
    "decision": {"add_comment": {"body": "seen"}, "add_option": {"title": "Later"},
                 "vote": {"votes": [{"option": "Now"}]}, "close_decision": {}},
    "commitment": {"add_comment": {"body": "seen"}, "join_commitment": {}, "leave_commitment": {},
                   "close_commitment": {}},
}
_ROLE_CHANGES = ("left", "removed", "deleted", "demoted", "promoted")


@pytest.mark.parametrize("change", _ROLE_CHANGES)
def test_what_a_page_lists_executes_after_its_creators_role_changes(any_app, new_user, change):
    """On PostgreSQL an admin was offered close_commitment once its creator had left, and the items
    trigger refused it (409): listing and execution must agree on both stores, whoever asks, after
    the creator left, was removed, had their account deleted, or was demoted or promoted. Every
    action of every item page is tried on an item of its own, as an admin, a plain member and (while
    still in) the creator: listed, it runs; not listed, it is refused as unavailable."""
    from navmcp.identity import delete_user

    ws = any_app.workspace
    alice, ed, maker = (new_user(h)[0] for h in ("alice", "ed", "maker"))
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "ed"})
    add_member(ws, alice, "/studios/team/members", {"handle": "maker", "role": "admin" if change == "demoted" else "member"})
    actors = {"admin": alice, "member": ed}
    if change in ("demoted", "promoted"):
        actors["creator"] = maker
    made = {"note": ("create_note", {"title": "Plan", "body": "b"}),
            "decision": ("create_decision", {"question": "When?", "options": ["Now"]}),
            "commitment": ("create_commitment", {"title": "Run", "critical_mass": 2})}
    cases = []
    for kind, tried in _ITEM_ACTIONS.items():
        for who, actor in actors.items():
            for action, params in tried.items():
                url = ws.execute(maker, "/studios/team", made[kind][0], made[kind][1]).url
                if action == "unpin":
                    ws.execute(alice, url, "pin", {})
                if action == "leave_commitment":
                    ws.execute(actor, url, "join_commitment", {})
                cases.append((who, actor, url, action, params))

    if change == "left":
        ws.execute(maker, "/studios/team/members", "leave_studio", None)
    elif change == "removed":
        ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "maker"})
    elif change == "deleted":
        with any_app.store.write(user_id=maker["id"]) as tx:  # as `navmcp user delete` acts
            delete_user(tx, "maker")
    else:
        add_member(ws, alice, "/studios/team/members", {"handle": "maker", "role": "member" if change == "demoted" else "admin"})

    disagreements, ran = [], set()
    for who, actor, url, action, params in cases:
        listed = action in names(ws.page(actor, url))
        try:
            ws.execute(actor, url, action, params)
            executed = "ran"
        except ActionUnavailable:
            executed = "refused as unavailable"
        except (ActionFailed, InvalidActionParams) as e:
            executed = f"failed: {e.message}"
        if listed != (executed == "ran"):
            disagreements.append(f"{who} on {url.split('/')[3]}: {action} {'listed' if listed else 'not listed'},"
                                 f" {executed}")
        if listed:
            ran.add((who, action))
    assert disagreements == []
    # Not a test of nothing: the admin closes what the creator can no longer, or what is still theirs.
    assert ("admin", "close_decision") in ran and ("member", "add_comment") in ran
    assert (("admin", "close_commitment") in ran) == (change in ("left", "removed", "deleted"))
    assert (("creator", "pin") in ran) == (change == "promoted")


def _participant_counts(app, user) -> dict[str, tuple[int, int]]:
    """Every visible commitment's kept count beside a fresh count of its participants."""
    with app.store.read(user["id"]) as tx:
        rows = tx.all(PARTICIPANT_COUNTS + " WHERE i.kind = 'commitment'")
    return {r["id"]: (r["kept"], r["counted"]) for r in rows}


def _as_owner(any_app, store_kind, request, sql: str, params: tuple) -> None:
    """A write no action makes, as the database owner (on PostgreSQL, past row-level security)."""
    if store_kind == "sqlite":
        with any_app.store.write() as tx:
            tx.execute(sql, params)
        return
    import psycopg

    from navmcp.store.postgres import translate

    with psycopg.connect(request.getfixturevalue("pg_database").admin_url, autocommit=True) as owner:
        owner.execute(translate(sql), params)


def test_participant_counts_stay_exact(any_app, team, new_user, store_kind, request):
    """The count kept on a commitment (migration 0007) equals a fresh count(*) after every step."""
    ws, alice, bob, carol = team
    dave, _ = new_user("dave")
    add_member(ws, alice, "/studios/team/members", {"handle": "dave"})
    full = ws.execute(alice, "/studios/team", "create_commitment",
                      {"title": "Book the venue", "critical_mass": 2, "limit": 2}).url
    open_one = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Run together", "critical_mass": 3}).url
    spare = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Spare", "critical_mass": 1}).url
    full_id, open_id, spare_id = (url.rsplit("/", 1)[1] for url in (full, open_one, spare))

    def check(expected: dict[str, int]) -> None:
        counts = _participant_counts(any_app, alice)
        assert all(kept == counted for kept, counted in counts.values()), counts
        assert {i: counts[i][0] for i in expected} == expected, counts

    check({full_id: 0, open_id: 0, spare_id: 0})
    ws.execute(alice, full, "join_commitment", {})
    check({full_id: 1, open_id: 0})
    with pytest.raises(ActionUnavailable, match="already joined"):  # a second join writes nothing
        ws.execute(alice, full, "join_commitment", {})
    check({full_id: 1})
    assert "now closed" in ws.execute(bob, full, "join_commitment", {}).message  # the limit
    check({full_id: 2})
    with pytest.raises(ActionUnavailable, match="closed"):
        ws.execute(dave, full, "join_commitment", {})
    check({full_id: 2})
    ws.execute(dave, open_one, "join_commitment", {})
    ws.execute(bob, open_one, "join_commitment", {})
    with pytest.raises(NotFound):  # not a member: nothing written, nothing counted
        ws.execute(carol, open_one, "join_commitment", {})
    check({full_id: 2, open_id: 2})
    ws.execute(dave, open_one, "leave_commitment", {})
    check({open_id: 1})
    assert "2 more needed" in ws.page(alice, open_one).markdown
    assert re.search(r"\[Run together\]\(\S+\) — 1 of 3 joined, 2 more needed", ws.page(alice, "/").markdown)  # one studio: not named per line
    # A removed member's participation stays with the studio, and so does the count.
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"})
    check({full_id: 2, open_id: 1})
    # Moving a participant to another commitment (no action does) moves the count with it.
    _as_owner(any_app, store_kind, request, "UPDATE participants SET commitment_id = ? WHERE commitment_id = ?",
              (spare_id, open_id))
    check({open_id: 0, spare_id: 1})
    # Deleting a commitment takes its participants with it (cascade); the other counts stand.
    with any_app.store.write(alice["id"]) as tx:
        assert tx.execute("DELETE FROM items WHERE id = ?", (full_id,)) == 1
    check({open_id: 0, spare_id: 1})
    assert full_id not in _participant_counts(any_app, alice)
    with any_app.store.read(alice["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM participants WHERE commitment_id = ?", (full_id,)) == 0


def _tag_copies_exact(app, user) -> bool:
    with app.store.read(user["id"]) as tx:
        return tag_copies_exact(tx.all(TAG_COPIES))


def test_tag_pages_follow_their_items(any_app, team, store_kind, request):
    """A tag page counts and orders its items by the copies their tag rows carry (migration 0008):
    the studio's items with the tag, last updated first, after every change to an item."""
    ws, alice, bob, carol = team
    ws.execute(carol, "/", "create_studio", {"handle": "other", "name": "Other"})
    ws.execute(carol, "/studios/other", "create_note", {"title": "Elsewhere", "body": "x", "tags": ["plan"]})
    new = lambda action, params: ws.execute(alice, "/studios/team", action, params).url.rsplit("/", 1)[1]  # noqa: E731
    note = new("create_note", {"title": "First", "body": "x", "tags": ["plan", "q1"]})
    decision = new("create_decision", {"question": "Second?", "options": ["a"], "tags": ["plan"]})
    commitment = new("create_commitment", {"title": "Third", "critical_mass": 2, "tags": ["plan"]})
    new("create_note", {"title": "Untagged", "body": "x"})

    def listed(tag: str = "plan") -> tuple[list[str], int]:
        page = ws.page(bob, f"/studios/team/tags/{tag}")
        return [item["id"] for item in page.data["items"]], page.data["pager"]["total"]

    assert listed() == ([commitment, decision, note], 3) and listed("q1") == ([note], 1)
    assert _tag_copies_exact(any_app, alice) and _tag_copies_exact(any_app, carol)
    ws.execute(bob, f"/studios/team/n/{note}", "add_comment", {"body": "bumps it"})
    assert listed() == ([note, commitment, decision], 3)
    ws.execute(alice, f"/studios/team/d/{decision}", "add_option", {"title": "b"})
    assert listed() == ([decision, note, commitment], 3)
    ws.execute(alice, f"/studios/team/n/{note}", "edit_note", {"title": "First, edited", "tags": ["q2"]})
    assert listed() == ([decision, commitment], 2) and listed("q1") == ([], 0) and listed("q2") == ([note], 1)
    ws.execute(alice, f"/studios/team/c/{commitment}", "close_commitment", {})
    assert listed() == ([commitment, decision], 2)
    assert _tag_copies_exact(any_app, alice)
    # A writer that gives other values (no action does) gets the item's all the same.
    _as_owner(any_app, store_kind, request, "UPDATE item_tags SET updated_at = '2000', studio_id = 'x', seq = 0", ())
    assert _tag_copies_exact(any_app, alice) and _tag_copies_exact(any_app, carol)
    assert listed() == ([commitment, decision], 2)
    # Deleting an item takes its tag rows with it (cascade).
    with any_app.store.write(alice["id"]) as tx:
        assert tx.execute("DELETE FROM items WHERE id = ?", (commitment,)) == 1
    assert listed() == ([decision], 1)
    assert [i["title"] for i in ws.page(carol, "/studios/other/tags/plan").data["items"]] == ["Elsewhere"]


def test_cycles_search_audit(any_app, team):
    ws, alice, bob, carol = team
    ws.execute(alice, "/studios/team", "create_note", {"title": "Standup ritual", "body": "daily at nine"})
    body_hit = ws.execute(alice, "/studios/team", "create_note",
                          {"title": "Misc", "body": "the standup moved to ten"}).url
    ws.execute(bob, body_hit, "add_comment", {"body": "standups are great, keep them short"})
    ws.execute(alice, "/studios/team", "create_note", {"title": "Unrelated", "body": "lunch"})
    for cycle in CYCLES:
        page = ws.page(bob, f"/studios/team/cycles/{cycle}")
        assert ("Standup ritual" in page.markdown) == (cycle in ("today", "this-week", "this-month"))
    search = ws.page(bob, "/studios/team/search?q=standup")
    # Title hits rank above body hits; an item found by its text and a comment is listed once, the
    # comment counted; unrelated items never match.
    assert search.markdown.index("Standup ritual") < search.markdown.index("Misc")
    assert "Unrelated" not in search.markdown and "in its text: the standup moved" in search.markdown
    assert "(and 1 comment)" in search.markdown
    assert len(search.data["results"]) == search.data["pager"]["total"] == 2
    beyond = ws.page(bob, "/studios/team/search?q=standup&page=5")  # past the last page: none, and still counted
    assert beyond.data["results"] == [] and beyond.data["pager"]["total"] == 2
    # The workspace-wide search finds the same items, and names their studio.
    everywhere = ws.page(bob, "/search?q=standup")
    assert [r["url"] for r in everywhere.data["results"]] == [r["url"] for r in search.data["results"]]
    assert "in `team`" in everywhere.markdown
    assert "Standup ritual" in ws.page(bob, "/studios/team/search?q=stand").markdown   # last word is a prefix
    assert "Standup ritual" in ws.page(bob, "/studios/team/search?q=daily%20nin").markdown
    assert "Standup ritual" not in ws.page(bob, "/studios/team/search?q=daily%20lunch").markdown  # all words
    # User text never reaches the query syntax.
    for q in ['"', "NEAR(", "a:*", "!&|", "'", "\\", "%", "?"]:
        ws.page(bob, "/studios/team/search?q=" + q.replace("%", "%25").replace("&", "%26"))
    audit = ws.page(alice, "/studios/team/audit").markdown
    assert "`create_note`" in audit and "`add_comment`" in audit and "@bob" in audit
    with pytest.raises(NotFound, match="admins"):
        ws.page(bob, "/studios/team/audit")


def test_a_rate_limited_call_is_refused_and_its_audit_row_is_on_the_studios_audit_page(any_app, team):
    """The refusal's audit row is written by `ratelimit.record`, outside the workspace's actions; on
    PostgreSQL it must be written as the refused user, or the audit policy refuses the row (it did
    until 31b6783, and the refusal went unaudited)."""
    ws, alice, bob, carol = team
    limited = App(dataclasses.replace(any_app.config, rate_limit="2/60s"))  # the same database and secret
    try:
        session = Session(limited, mint_token(limited.secret, bob["id"]))
        for _ in range(2):
            assert session.call_tool("navigate", {"url": "/studios/team"})["isError"] is False
        refused = session.call_tool("execute_action", {"action": "create_note", "url": "/studios/team",
                                                       "params": {"title": "One too many", "body": "x"}})
        assert refused["isError"] is True and "retry in" in refused["content"][0]["text"]
    finally:
        limited.store.close()
    assert "One too many" not in ws.page(alice, "/studios/team").markdown
    rows = ws.page(alice, "/studios/team/audit").data["entries"]
    assert [(r["action"], r["outcome"][:13]) for r in rows[:1]] == [("create_note", "rate limited:")], rows[:1]


def test_a_passed_deadline_closes_an_item_in_every_list_and_in_its_cycle(any_app, team, store_kind, request):
    """A deadline closes an item without a write: every list shows it closed, as its own page does,
    and the cycle in which the deadline passed counts and lists it among the closed items."""
    ws, alice, bob, carol = team
    lunch = ws.execute(alice, "/studios/team", "create_decision",
                       {"question": "Lunch?", "options": ["pizza"], "deadline": "2099-01-01", "tags": ["food"]}).url
    by_hand = ws.execute(alice, "/studios/team", "create_decision", {"question": "Manual?", "tags": ["food"]}).url
    ws.execute(alice, by_hand, "close_decision", {})
    ws.execute(alice, "/studios/team", "create_decision", {"question": "Still open?", "deadline": "2099-01-01"})
    start, _ = cycle_window("today")
    passed = max(start, (datetime.now(UTC) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    _as_owner(any_app, store_kind, request, "UPDATE items SET deadline = ? WHERE id = ?", (passed, lunch.rsplit("/", 1)[1]))

    def line(url: str, title: str) -> str:
        return next(x for x in ws.page(bob, url).markdown.splitlines() if f"[{title}]" in x)

    assert "**Closed**: its deadline passed" in ws.page(bob, lunch).markdown
    for url in ("/studios/team", "/studios/team/tags/food", "/studios/team/search?q=lunch"):
        assert "— decision, closed (result: " in line(url, "Lunch?"), url
    assert "— decision, closed (result: " in line("/studios/team", "Manual?")
    assert "closed" not in line("/studios/team", "Still open?")
    today = ws.page(bob, "/studios/team/cycles/today")
    assert "| 3 | 2 |" in today.markdown
    closed = today.markdown.split("## Closed", 1)[1]
    assert "[Lunch?]" in closed and "[Manual?]" in closed and "Still open?" not in closed
    assert "Lunch?" not in ws.page(bob, "/studios/team/cycles/yesterday").markdown
    # More closed than a page lists: the count is all of them, and the rest are on the closed list's
    # own next page, which lists nothing else (no created items again).
    for n in range(20):
        ws.execute(alice, ws.execute(alice, "/studios/team", "create_decision", {"question": f"Q{n}?"}).url,
                   "close_decision", {})
    today = ws.page(bob, "/studios/team/cycles/today").markdown
    assert "| 23 | 22 |" in today and "## Closed (22)" in today
    assert "Page 1 of 2 (22 in all). Next page: `/studios/team/cycles/today?closed=2`." in today
    assert "[Q19?]" in today.split("## Closed", 1)[1] and "[Lunch?]" not in today.split("## Closed", 1)[1]
    rest = ws.page(bob, "/studios/team/cycles/today?closed=2").markdown
    assert "## Created" not in rest and "| 23 | 22 |" not in rest
    assert "[Lunch?]" in rest and "[Manual?]" in rest and "[Q19?]" not in rest


def test_a_cycles_activity_counts_this_studios_comments_ballots_and_joins(any_app, team):
    ws, alice, bob, carol = team
    ws.execute(carol, "/", "create_studio", {"handle": "other", "name": "Other"})
    decisions = {}
    for user, studio in ((alice, "team"), (bob, "team"), (carol, "other")):
        decision = decisions[user["handle"]] = ws.execute(user, f"/studios/{studio}", "create_decision",
                              {"question": f"{user['handle']}'s question", "options": ["Yes", "No"]}).url
        # A ballot naming both options (two vote rows), then another replacing it: still one ballot.
        ws.execute(user, decision, "vote", {"votes": [{"option": "Yes"}, {"option": "No", "accept": False}]})
        ws.execute(user, decision, "vote", {"votes": [{"option": "No"}, {"option": "Yes", "accept": False}]})
        ws.execute(user, decision, "add_comment", {"body": "voted"})
        commitment = ws.execute(user, f"/studios/{studio}", "create_commitment", {"title": "Show up", "critical_mass": 5}).url
        ws.execute(user, commitment, "join_commitment", {})
    ws.execute(bob, decisions["alice"], "add_comment", {"body": "on alice's decision"})
    def activity(user, url):
        counts = ws.page(user, url).data["activity"]
        return {k: counts[k] for k in ("comments", "votes", "joins")}

    assert activity(bob, "/studios/team/cycles/today") == {"comments": 3, "votes": 2, "joins": 2}
    assert activity(carol, "/studios/other/cycles/today") == {"comments": 1, "votes": 1, "joins": 1}
    assert activity(bob, "/studios/team/cycles/yesterday") == {"comments": 0, "votes": 0, "joins": 0}


def test_a_former_members_work_stays_with_the_studio(any_app, team):
    """bob writes, comments, reads, votes and joins, then is removed: the studio keeps all of it under
    his handle for those still in it, and bob no longer sees the studio. (On PostgreSQL the users
    policy once hid a former member's row from people he shared no other studio with: his items read
    "not found" and the audit showed his raw id.)"""
    ws, alice, bob, carol = team
    note = ws.execute(bob, "/studios/team", "create_note",
                      {"title": "Handover", "body": "all yours", "tags": ["handover"]}).url
    ws.execute(bob, note, "add_comment", {"body": "ping me if stuck"})
    ws.execute(bob, note, "confirm_read", {})
    decision = ws.execute(bob, "/studios/team", "create_decision", {"question": "Keep it?", "options": ["yes"]}).url
    ws.execute(bob, decision, "vote", {"votes": [{"option": "yes", "prefer": True}]})
    ws.execute(alice, decision, "vote", {"votes": [{"option": "yes"}]})
    assert "| 2 of 2 members |" in ws.page(alice, decision).markdown
    commitment = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Night watch", "critical_mass": 2}).url
    ws.execute(bob, commitment, "join_commitment", {})
    ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "bob"})

    page = ws.page(alice, note).markdown
    assert "| note | @bob |" in page and "ping me if stuck" in page and "Confirmed reading: @bob." in page
    assert "| decision | open | @bob |" in ws.page(alice, decision).markdown
    # His vote still counts, but he is no longer one of the members it is counted against (the
    # label once read "2 of 1 members"), in markdown and HTML alike.
    page = ws.page(alice, decision)
    assert "2 accept, 1 prefer" in page.markdown
    assert "| 1 of 1 members (+1 former member) |" in page.markdown
    assert "<dt>Voters</dt><dd>1 of 1 members (+1 former member)</dd>" in render_page(page, csrf="csrf", alternates={})
    assert "- @bob, joined" in ws.page(alice, commitment).markdown
    cycle = ws.page(alice, "/studios/team/cycles/today").markdown
    assert re.search(r"\[Handover\]\(\S+\) — note, updated \S+ by @bob", cycle), cycle
    audit = ws.page(alice, "/studios/team/audit").markdown
    assert re.search(r"\| @bob \| \S+ \| `create_note` on /studios/team \|", audit), audit
    assert "bob" not in _roles(ws.page(alice, "/studios/team/members"))
    # bob, outside now, finds nothing of the studio; carol, never in it, neither.
    for outsider in (bob, carol):
        for url in ("/studios/team", note, decision, commitment, "/studios/team/members"):
            with pytest.raises(NotFound):
                ws.page(outsider, url)
        assert "Team" not in ws.page(outsider, "/").markdown
    with pytest.raises(NotFound):
        ws.execute(bob, note, "add_comment", {"body": "still here?"})


def test_pagination(any_app, team):
    ws, alice, bob, carol = team
    for n in range(25):
        ws.execute(alice, "/studios/team", "create_note", {"title": f"Note {n:02d}", "body": "paged body",
                                                             "tags": ["paged"]})
    for url in ("/studios/team", "/studios/team/tags/paged", "/studios/team/search?q=paged",
                "/studios/team/cycles/today", "/studios/team/audit"):
        first, second = ws.page(alice, url), ws.page(alice, url + ("&" if "?" in url else "?") + "page=2")
        titles1 = set(re.findall(r"Note \d\d", first.markdown))
        titles2 = set(re.findall(r"Note \d\d", second.markdown))
        if url.endswith("audit"):
            assert first.markdown != second.markdown
            continue
        assert len(titles1) == 20 and len(titles2) == 5 and not titles1 & titles2, url
        assert "page=2" in first.markdown


def _next_link(markdown: str) -> str | None:
    m = re.search(r"Next page: `([^`]+)`", markdown)
    return m.group(1) if m else None


def test_next_links_walk_every_item_once_and_agree_with_page_numbers(any_app, team):
    ws, alice, bob, carol = team
    for n in range(45):
        url = ws.execute(alice, "/studios/team", "create_note", {"title": f"Item {n:02d}", "body": "x",
                                                                   "tags": ["walk"]}).url
        if n % 7 == 0:  # edits move items to the top of the feed: the walk must still see each once
            ws.execute(alice, url, "add_comment", {"body": "bump"})
    for start in ("/studios/team", "/studios/team/tags/walk", "/studios/team/cycles/today", "/studios/team/audit"):
        seen, url, pages = [], start, 0
        while url:
            page = ws.page(alice, url)
            pages += 1
            if pages == 2:
                assert "after=" in url  # the Next link carries the keyset position...
                by_number = ws.page(alice, start + "?page=2")  # ...and agrees with the plain page number
                rows = r"\[(Item \d\d)\]|^\| \S+ \S+ \| @.*$"
                assert re.findall(rows, by_number.markdown, flags=re.M) == re.findall(rows, page.markdown, flags=re.M)
            seen += re.findall(r"\[(Item \d\d)\]", page.markdown) if not start.endswith("audit") else \
                re.findall(r"^\| \S+ \S+ \| @", page.markdown, flags=re.M)
            url = _next_link(page.markdown)
        if start.endswith("audit"):
            # create_studio, add_member, accept_invitation, notes, comments
            assert len(seen) == 1 + 1 + 1 + 45 + 7 and pages == 3
        else:
            assert sorted(seen) == [f"Item {n:02d}" for n in range(45)] and pages == 3, start


def test_sessions_are_stored_per_user(any_app, new_user):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    stored = sessions.create(any_app.store, alice["id"], "claude-code", "2025-11-25")
    stored.state.visit("/help", []) if hasattr(stored.state, "visit") else None
    sessions.save(any_app.store, stored)
    again = sessions.load(any_app.store, stored.id, user_id=alice["id"])
    assert again is not None and again.user_id == alice["id"] and again.client == "claude-code"
    assert isinstance(again.state, NavigationState)
    assert sessions.end(any_app.store, stored.id, user_id=alice["id"])
    assert sessions.load(any_app.store, stored.id, user_id=alice["id"]) is None


def _normalize(text: str, ids: dict[str, str]) -> str:
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?Z?)?", "<time>", text)
    text = re.sub(r"\| [\d.]+ \|$", "| <ms> |", text, flags=re.M)
    text = re.sub(r"`[a-z0-9]{8}(?:[a-z0-9]{2})?`", "`<id>`", text)

    def stable(m: re.Match) -> str:
        return m.group(1) + ids.setdefault(m.group(2), f"<id{len(ids)}>")
    return re.sub(r"(/[ndc]/)([a-z0-9]{8})", stable, text)


def _script(app, make_user) -> list[str]:
    alice, _ = make_user("alice")
    bob, _ = make_user("bob")
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "the plan", "tags": ["a"]}).url
    ws.execute(bob, note, "add_comment", {"body": "looks good"})
    ws.execute(bob, "/studios/team", "create_note", {"title": "Reply", "body": f"re {note}"})
    dec = ws.execute(alice, "/studios/team", "create_decision", {"question": "Which?", "options": ["X", "Y"]}).url
    ws.execute(bob, dec, "vote", {"votes": [{"option": "X", "prefer": True}]})
    com = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Go", "critical_mass": 2, "limit": 3}).url
    ws.execute(alice, com, "join_commitment", {})
    pages = ["/", "/whoami", "/studios/team", "/studios/team/members", note, dec, com, "/studios/team/tags/a",
             "/studios/team/search?q=plan", "/studios/team/cycles/today", "/studios/team/audit"]
    ids: dict[str, str] = {}
    return [_normalize(ws.page(alice, url).markdown, ids) for url in pages]


def test_both_stores_render_the_same_pages(tmp_path, pg_url):
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.identity import add_user

    rendered = []
    for url in (None, pg_url):
        app = App(Config(home=tmp_path / ("pg" if url else "sqlite"), database_url=url, token=None))
        try:
            rendered.append(_script(app, lambda h, app=app: (add_user(app.store, h), None)))
        finally:
            app.store.close()
    for sqlite_page, pg_page in zip(*rendered):
        assert sqlite_page == pg_page
