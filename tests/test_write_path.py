"""The shortcuts of the write path (`Workspace.execute`) give exactly what the plain way gives.

- an action that changes none of the facts its page's rules read (`changes_facts=False`) reports
  the actions valid after it from the facts its transaction read, without resolving the page
  again: the same list as the page lists right after, in every state tried here.
"""

from __future__ import annotations

import pytest

from nav_helpers import add_member
from navmcp import actions as action_table
from navmcp.errors import InvalidActionParams

STUDIO = "/studios/team"
UNCHANGING = sorted(a.name for a in action_table.ACTIONS if not a.changes_facts)


@pytest.fixture
def world(ws, owner, make_user):
    """A studio with an admin (the owner), a member and a second admin; one item of each kind."""
    bob, _ = make_user("bob")
    carol, _ = make_user("carol")
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, owner, f"{STUDIO}/members", {"handle": "bob"})
    add_member(ws, owner, f"{STUDIO}/members", {"handle": "carol", "role": "admin"})
    urls = {
        "decision": ws.execute(bob, STUDIO, "create_decision", {"question": "When?", "options": ["A", "B"]}).url,
        "empty": ws.execute(bob, STUDIO, "create_decision", {"question": "Empty?", "options": []}).url,
        "note": ws.execute(bob, STUDIO, "create_note", {"title": "N", "body": "b"}).url,
        "commitment": ws.execute(bob, STUDIO, "create_commitment",
                                 {"title": "C", "critical_mass": 2, "limit": 2}).url,
    }
    return ws, {"owner": owner, "bob": bob, "carol": carol}, urls


def test_actions_reported_after_a_write_are_the_pages_listing_right_after(world):
    ws, people, urls = world
    assert UNCHANGING == ["vote"]  # add_comment makes edit_comment valid for a first comment

    def run(who, url, name, params=None):
        user = people[who]
        result = ws.execute(user, url, name, params)
        assert result.actions == [a.name for a in ws.page(user, result.url).actions], (who, url, name)

    for who in ("owner", "bob", "carol"):  # admin, author and member, admin
        run(who, urls["decision"], "vote", {"votes": [{"option": "A"}]})
        run(who, urls["decision"] + "?page=1", "vote", {"votes": [{"option": "B", "accept": False}]})
    run("bob", urls["empty"], "add_option", {"title": "Only"})
    run("carol", urls["empty"], "vote", {"votes": [{"option": "Only"}]})
    run("owner", urls["empty"], "add_option", {"title": "Another"})
    for kind in ("note", "decision", "commitment"):
        run("bob", urls[kind], "add_comment", {"body": f"hi, see {urls['note']}"})
    run("bob", urls["note"], "confirm_read")
    run("owner", urls["note"], "pin")
    run("bob", urls["commitment"], "join_commitment")
    run("carol", urls["commitment"], "join_commitment")  # reaches the limit: closes
    run("carol", urls["commitment"], "add_comment", {"body": "closed now"})
    run("carol", urls["decision"], "close_decision")
    run("owner", urls["decision"], "add_comment", {"body": "closed too"})
    run("owner", f"{STUDIO}", "create_note", {"title": "Another", "body": "x"})


def test_audited_param_names_are_the_json_of_the_sorted_names(world, app):
    import json

    ws, people, urls = world
    params = {"votes": [], "zeta": 1, 'a"b': 2, "é": 3}
    with pytest.raises(InvalidActionParams):
        ws.execute(people["bob"], urls["decision"], "vote", params)
    with app.store.read() as tx:
        stored = tx.scalar("SELECT param_names FROM audit ORDER BY id DESC LIMIT 1")
    assert stored == json.dumps(sorted(params))


def test_a_deleted_user_is_refused_by_the_calls_own_transaction_and_not_audited(world, app, make_user):
    from navmcp.identity import delete_user
    from navmcp.mcp.tools import Session

    ws, people, urls = world
    dan, token = make_user("dan")
    session = Session(app, token)
    assert not session.call_tool("navigate", {"url": "/"})["isError"]
    with app.store.write() as tx:
        delete_user(tx, "dan")
        audited = tx.scalar("SELECT count(*) FROM audit")
    for tool, arguments in (("navigate", {"url": "/"}),
                            ("execute_action", {"action": "create_studio", "url": "/",
                                                "params": {"handle": "dans", "name": "D"}})):
        text = session.call_tool(tool, arguments)["content"][0]["text"]
        assert text == "authentication failed: token names a user that does not exist (deleted?)"
    with app.store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM audit") == audited
