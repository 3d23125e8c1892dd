"""The authorization matrix, generated from the page table and the action table themselves.

Every page (ROUTES) and every (page, action) pair (BY_PAGE) × {admin, author, member, outsider,
invalid token} is tried through the real Session (the tools layer agents use), each write on a
fresh copy of the same world, and compared with the explicit expectations below. A page or an
action with no row here fails `test_every_page_and_action_has_an_expectation`: whoever adds one
decides who may use it. A sample runs through the real stdio server as well.
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from adversarial import figures, world
from adversarial.drivers import StdioProcess
from navmcp.actions import BY_PAGE
from navmcp.mcp.tools import Session
from navmcp.pages import ROUTES

ROLES = ("admin", "author", "member", "outsider", "invalid")
ANYONE = {"admin", "author", "member", "outsider"}
MEMBERS = {"admin", "author", "member"}

# page name → (URL key or URL in the world, roles that may see it)
PAGE_EXPECT: dict[str, tuple[str, set[str]]] = {
    "home": ("/", ANYONE),
    "help": ("/help", ANYONE),
    "help_topic": ("/help/urls", ANYONE),
    "whoami": ("/whoami", ANYONE),
    "awaiting": ("/awaiting", ANYONE),  # anyone; they list only their own studios' items
    "near_mass": ("/near-mass", ANYONE),
    "inbox": ("/inbox", ANYONE),  # anyone: their own entries only
    "studio": ("/studios/adv", MEMBERS),
    "members": ("/studios/adv/members", MEMBERS),
    "note": ("note", MEMBERS),
    "decision": ("decision", MEMBERS),
    "commitment": ("commitment", MEMBERS),
    "file": ("note_file", MEMBERS),
    "cycle": ("/studios/adv/cycles/today", MEMBERS),
    "search": ("/studios/adv/search?q=note", MEMBERS),
    "workspace_search": ("/search?q=note", ANYONE),  # anyone; it lists only their own studios' items
    "tag": ("/studios/adv/tags/x", MEMBERS),
    "audit": ("/studios/adv/audit", {"admin"}),
    "deleted": ("/studios/adv/deleted", MEMBERS),  # each sees what they may restore (a member: nothing)
    "held_queue": ("/studios/adv/held", MEMBERS),
    "held": ("held", MEMBERS),  # the author's agent's held remind
}

# (page, action) → (URL key or URL, params, roles that may run it); the item was written by "author".
ACTION_EXPECT: dict[tuple[str, str], tuple[str, dict, set[str]]] = {
    ("home", "create_studio"): ("/", {"handle": "fresh", "name": "Fresh"}, ANYONE),
    # the world's accounts are `navmcp user add`'s, findable: each may stop being so, and be again
    ("whoami", "make_unfindable"): ("/whoami", {}, ANYONE),
    ("whoami", "make_findable"): ("/whoami", {}, ANYONE),  # after make_unfindable (see SETUP)
    ("whoami", "set_email"): ("/whoami", {"email": "me@example.org"}, ANYONE),  # their own address
    ("whoami", "set_time_zone"): ("/whoami", {"zone": "Europe/Lisbon"}, ANYONE),  # their own zone
    ("whoami", "digest_off"): ("/whoami", {}, ANYONE),  # after set_email (see SETUP)
    ("whoami", "digest_on"): ("/whoami", {}, ANYONE),  # after set_email and digest_off (see SETUP)
    ("members", "add_member"): ("/studios/adv/members", {"handle": "outsider"}, {"admin"}),
    ("members", "remove_member"): ("/studios/adv/members", {"handle": "member"}, {"admin"}),
    ("members", "create_invitation"): ("/studios/adv/members", {"role": "admin", "uses": 3}, {"admin"}),
    ("members", "revoke_invitation"): ("/studios/adv/members", {"invitation": "w0rld1nv"}, {"admin"}),
    # the studio's only admin may not leave while others are in it
    ("members", "leave_studio"): ("/studios/adv/members", {}, {"author", "member"}),
    # only a studio's last member may delete it, and the world's studio has several: nobody may
    ("members", "delete_studio"): ("/studios/adv/members", {"confirm": "adv"}, set()),
    ("studio", "create_note"): ("/studios/adv", {"title": "T", "body": "B"}, MEMBERS),
    ("studio", "create_decision"): ("/studios/adv", {"question": "Q?", "options": ["A"]}, MEMBERS),
    ("studio", "create_commitment"): ("/studios/adv", {"title": "C", "critical_mass": 1}, MEMBERS),
    ("note", "add_comment"): ("note", {"body": "hi"}, MEMBERS),
    ("note", "confirm_read"): ("note", {}, MEMBERS),
    ("note", "edit_note"): ("note", {"title": "Edited"}, {"author"}),
    ("note", "pin"): ("note", {}, {"admin"}),
    ("note", "unpin"): ("pinned_note", {}, {"admin"}),
    ("decision", "add_comment"): ("decision", {"body": "hi"}, MEMBERS),
    ("decision", "add_option"): ("decision", {"title": "Green"}, MEMBERS),
    ("decision", "vote"): ("decision", {"votes": [{"option": "Red", "prefer": True}]}, MEMBERS),
    ("decision", "close_decision"): ("decision", {}, {"admin", "author"}),
    ("decision", "remind"): ("decision", {}, {"admin", "author"}),
    ("decision", "consent"): ("proposal", {}, MEMBERS),
    ("decision", "object"): ("proposal", {"reason": "It is not ready yet."}, MEMBERS),
    ("decision", "amend"): ("proposal", {"text": "The proposal, amended"}, {"author"}),
    ("decision", "allocate"): ("dotted", {"dots": [{"option": "Red", "dots": 2}]}, MEMBERS),
    ("decision", "add_time"): ("poll", {"start": "2100-01-02 10:00"}, MEMBERS),
    ("decision", "answer"): ("poll", {"times": [{"option": 1, "answer": "yes"}]}, MEMBERS),
    ("decision", "close_poll"): ("poll", {"create_commitment": False}, {"admin", "author"}),
    ("commitment", "add_comment"): ("commitment", {"body": "hi"}, MEMBERS),
    ("commitment", "join_commitment"): ("commitment", {}, MEMBERS),
    ("commitment", "leave_commitment"): ("commitment", {}, MEMBERS),  # after joining (see SETUP)
    ("commitment", "close_commitment"): ("commitment", {}, {"author"}),
    # "=key": a value of the world's (the author's comment on the item, an id)
    ("note", "edit_comment"): ("note", {"comment": "=note_comment", "body": "edited"}, {"author"}),
    ("decision", "edit_comment"): ("decision", {"comment": "=decision_comment", "body": "edited"}, {"author"}),
    ("commitment", "edit_comment"): ("commitment", {"comment": "=commitment_comment", "body": "edited"}, {"author"}),
    ("note", "delete_comment"): ("note", {"comment": "=note_comment"}, {"admin", "author"}),
    ("decision", "delete_comment"): ("decision", {"comment": "=decision_comment"}, {"admin", "author"}),
    ("commitment", "delete_comment"): ("commitment", {"comment": "=commitment_comment"}, {"admin", "author"}),
    ("decision", "extend_decision"): ("decision", {"deadline": "2100-01-01"}, {"admin", "author"}),
    ("decision", "reopen_decision"): ("decision", {}, {"admin", "author"}),  # after closing (see SETUP)
    ("decision", "set_outcome"): ("decision", {"outcome": "Red"}, {"admin", "author"}),  # after closing
    ("decision", "edit_decision"): ("decision", {"question": "Which, then?"}, {"admin", "author"}),
    ("commitment", "edit_commitment"): ("commitment", {"title": "Do it now"}, {"admin", "author"}),
    # whoever has entries: the admin added author and member to the studio, the author's agent's
    # held remind asks the admin's approval (the outsider has none)
    ("inbox", "mark_read"): ("/inbox", {"all": True}, MEMBERS),
    ("inbox", "dismiss"): ("/inbox", {"all": True}, MEMBERS),
    # answered by the person an invitation is for (none waits for anyone here; accepting is for the
    # browser only): tests/test_invitations.py
    ("inbox", "accept_invitation"): ("/inbox", {"invitation": "nope"}, set()),
    ("inbox", "decline_invitation"): ("/inbox", {"invitation": "nope"}, set()),
    # held actions: decided and their rules changed in a person's browser session only, so over MCP
    # nobody may (tests/held/test_held.py: an admin, not the requester, in the browser); the requester
    # withdraws from anywhere
    ("held", "approve"): ("held", {}, set()),
    ("held", "reject"): ("held", {"note": "not now"}, set()),
    ("held", "withdraw"): ("held", {}, {"author"}),
    ("held_queue", "set_hold_rule"): ("/studios/adv/held", {"actions": "*"}, set()),
    ("held_queue", "remove_hold_rule"): ("/studios/adv/held", {"rule": "nope"}, set()),
    **{(kind, "attach"): (kind, {"filename": "a.txt", "content_type": "text/plain", "data": "aGk="}, MEMBERS)
       for kind in ("note", "decision", "commitment")},
    **{(kind, "remove_attachment"): (kind, {"file": f"={kind}_file_id"}, {"admin", "author"})
       for kind in ("note", "decision", "commitment")},
    ("file", "remove_attachment"): ("note_file", {"file": "=note_file_id"}, {"admin", "author"}),
    **{(kind, "delete_item"): (kind, {"confirm": f"={kind}"}, {"admin", "author"}) for kind in ("note", "decision", "commitment")},
    **{(kind, "restore_item"): (kind, {}, {"admin", "author"}) for kind in ("note", "decision", "commitment")},  # deleted first
    ("deleted", "restore_item"): ("/studios/adv/deleted", {"item": "=deleted_note_id"}, {"admin", "author"}),
}
SETUP = {("commitment", "leave_commitment"): ("join_commitment", {}), ("whoami", "make_findable"): ("make_unfindable", {}),
         ("decision", "reopen_decision"): ("close_decision", {}), ("decision", "set_outcome"): ("close_decision", {}),
         ("whoami", "digest_off"): ("set_email", {"email": "me@example.org"}),
         **{(kind, "restore_item"): ("delete_item", {"confirm": title})
            for kind, title in (("note", "A note"), ("decision", "Which?"), ("commitment", "Do it"))},
         ("whoami", "digest_on"): [("set_email", {"email": "me@example.org"}), ("digest_off", {})]}

DATA_TABLES = ("users", "studios", "memberships", "items", "item_tags", "options", "votes", "participants",
               "comments", "reads", "links", "revisions", "inbox", "invitations", "mail_settings", "responses",
               "proposal_versions", "hold_rules", "held_actions", "held_approvals", "attachments")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("authz") / "home")


def url_of(w: world.World, key: str) -> str:
    return key if key.startswith("/") else w.urls[key]


def params_of(w: world.World, params: dict) -> dict:
    """An expectation's params, each "=key" replaced by the world's value of that key."""
    return {k: w.urls[v[1:]] if isinstance(v, str) and v.startswith("=") else v for k, v in params.items()}


def token_of(w: world.World, role: str) -> str:
    return "not-a-jwt.at-all" if role == "invalid" else w.tokens[role]


def digest(home) -> str:
    """Everything but the audit log, hashed: a refused action must leave it unchanged."""
    conn = sqlite3.connect(home / "navmcp.db")
    h = hashlib.sha256()
    for table in DATA_TABLES:
        for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
            h.update(repr(row).encode())
    conn.close()
    return h.hexdigest()


def test_every_page_and_action_has_an_expectation():
    pages = {spec.name for spec in ROUTES}
    actions = {(page, name) for page, table in BY_PAGE.items() for name in table}
    assert pages == set(PAGE_EXPECT), f"pages without an expectation: {pages - set(PAGE_EXPECT)}; " \
                                      f"stale expectations: {set(PAGE_EXPECT) - pages}"
    assert actions == set(ACTION_EXPECT), f"actions without an expectation: {actions - set(ACTION_EXPECT)}; " \
                                          f"stale expectations: {set(ACTION_EXPECT) - actions}"


@pytest.mark.parametrize("page", sorted(PAGE_EXPECT))
def test_page_matrix(template, page):
    key, allowed = PAGE_EXPECT[page]
    app = template.app()
    try:
        for role in ROLES:
            session = Session(app, token_of(template, role))
            url = url_of(template, key)
            result = session.call_tool("navigate", {"url": url})
            text = result["content"][0]["text"]
            figures.add("authz.page_checks")
            if role in allowed:
                assert result["isError"] is False, (role, url, text)
                listed = {a["name"] for a in result["structuredContent"]["actions"]}
                may = {name for (p, name), (_, _, who) in ACTION_EXPECT.items() if p == page and role in who}
                assert listed <= may, f"{page} lists {listed - may} to {role}, who may not use them"
            else:
                assert result["isError"] is True, (role, url)
                assert "structuredContent" not in result
                if role == "invalid":
                    assert text.startswith("authentication failed"), text
                else:
                    assert "no page at" in text, text
                    for secret in ("Adversarial", "A note", "Which?", "Do it", "Red"):
                        assert secret not in text
    finally:
        app.store.close()


@pytest.mark.parametrize("page,action", sorted(ACTION_EXPECT))
def test_action_matrix(template, tmp_path, page, action):
    key, params, allowed = ACTION_EXPECT[(page, action)]
    for role in ROLES:
        w = world.copy(template, tmp_path / role)
        params = params_of(w, params)
        app = w.app()
        try:
            session = Session(app, token_of(w, role))
            url = url_of(w, key)
            if (page, action) in SETUP and role in allowed:
                steps = SETUP[(page, action)]
                for before_name, before_params in steps if isinstance(steps, list) else [steps]:
                    assert not session.call_tool("execute_action", {"action": before_name, "params": before_params,
                                                                    "url": url})["isError"]
            before = digest(w.home)
            result = session.call_tool("execute_action", {"action": action, "params": params, "url": url})
            text = result["content"][0]["text"]
            figures.add("authz.action_checks")
            if role in allowed:
                assert result["isError"] is False, (role, action, text)
                assert result["structuredContent"]["ok"] is True
                assert digest(w.home) != before, f"{action} by {role} reported success but changed nothing"
            else:
                assert result["isError"] is True, f"{role} could run {action} on {url}: {text}"
                assert digest(w.home) == before, f"refused {action} by {role} still wrote"
                if role == "invalid":
                    assert text.startswith("authentication failed"), text
                elif role == "outsider" and page not in ("home", "inbox"):  # pages of their own
                    assert "no page at" in text and "Adversarial" not in text, text
                else:
                    assert "not available" in text, text
        finally:
            app.store.close()


def test_matrix_sample_over_stdio(template, tmp_path):
    """The same verdicts from the real server process, one process per role."""
    w = world.copy(template, tmp_path / "stdio")
    for role in ROLES:
        process = StdioProcess(w.env(role) if role != "invalid" else {**w.env(None), "NAVMCP_TOKEN": "bad.token.x"})
        try:
            process.initialize(f"authz-{role}")
            for page, (key, allowed) in PAGE_EXPECT.items():
                result = process.call("navigate", url=url_of(w, key))
                assert result["isError"] is (role not in allowed), (role, page, result["content"][0]["text"])
                figures.add("authz.stdio_checks")
            result = process.call("execute_action", action="pin", url=w.urls["note"])
            assert result["isError"] is (role != "admin"), (role, result)
            if role == "admin":
                process.call("execute_action", action="unpin", url=w.urls["note"])
        finally:
            assert process.close() == 0


def test_removed_member_loses_access_mid_session(template, tmp_path):
    """A member removed while their session is open: their next call reads like a studio that
    doesn't exist, for pages and actions alike (authorization is judged per call, on fresh data)."""
    w = world.copy(template, tmp_path / "removed")
    app = w.app()
    try:
        member = Session(app, w.tokens["member"])
        assert member.call_tool("navigate", {"url": w.urls["note"]})["isError"] is False
        admin = Session(app, w.tokens["admin"])
        assert not admin.call_tool("execute_action", {"action": "remove_member", "url": "/studios/adv/members",
                                                      "params": {"handle": "member"}})["isError"]
        before = digest(w.home)
        for url in (w.urls["note"], "/studios/adv", "/studios/adv/search?q=note"):
            result = member.call_tool("navigate", {"url": url})
            assert result["isError"] is True and "no page at" in result["content"][0]["text"]
        result = member.call_tool("execute_action", {"action": "add_comment", "params": {"body": "still here?"}})
        assert result["isError"] is True and "no page at" in result["content"][0]["text"]
        assert digest(w.home) == before
    finally:
        app.store.close()
