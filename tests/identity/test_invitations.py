"""Invitations (navmcp/identity/invitations.py) on both stores: an admin's link lets a person join with its
role, up to its uses, until it expires, unless revoked; it is stored hashed, listed with who used
it, and a link that does not work adds nobody and says why to nobody. The browser's side is in
tests/web/test_web_invite.py."""

from __future__ import annotations

import re

import pytest

from navmcp.clock import now
from navmcp.errors import ActionFailed, ActionUnavailable, InvalidActionParams
from navmcp.identity import invitations
from test_store_contract import _as_owner


@pytest.fixture
def team(any_app, new_user, store_kind, request):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    carol, _ = new_user("carol")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    # bob is put in by the store, not by add_member: its invitation would be listed beside the tests' own
    _as_owner(any_app, store_kind, request, "INSERT INTO memberships (studio_id, user_id, role, created_at)"
              " SELECT id, ?, 'member', ? FROM studios WHERE handle = 'team'", (bob["id"], now()))
    return ws, alice, bob, carol


def invite(ws, admin, **params) -> str:
    said = ws.execute(admin, "/studios/team/members", "create_invitation", params).message
    return re.search(r"`/invite/([A-Za-z0-9_-]+)`", said).group(1)


def roles(ws, admin) -> dict[str, str]:
    return {m["handle"]: m["role"] for m in ws.page(admin, "/studios/team/members").data["members"]}


def test_a_link_lets_people_join_with_its_role_up_to_its_uses(any_app, team, new_user):
    ws, alice, bob, carol = team
    token = invite(ws, alice, role="admin", uses=2)
    assert invitations.offered(any_app.store, token)["handle"] == "team"
    assert invitations.redeem(any_app.store, token, carol["id"]) == "team"
    assert roles(ws, alice)["carol"] == "admin"
    assert invitations.redeem(any_app.store, token, carol["id"]) == "team"  # already in: no use spent
    dave, _ = new_user("dave")
    erin, _ = new_user("erin")
    assert invitations.redeem(any_app.store, token, dave["id"]) == "team"
    assert invitations.redeem(any_app.store, token, erin["id"]) is None  # used up
    assert invitations.offered(any_app.store, token) is None and "erin" not in roles(ws, alice)
    [listed] = ws.page(alice, "/studios/team/members").data["invitations"]
    assert (listed["state"], listed["uses"], listed["used_by"]) == ("used up", 2, ["carol", "dave"])
    page = ws.page(alice, "/studios/team/members").markdown
    assert "| used up | @carol, @dave |" in page and token not in page  # the secret is shown once only
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.scalar("SELECT token_hash FROM invitations") == invitations.token_hash(token) != token


def test_only_admins_invite_and_revoke(any_app, team):
    ws, alice, bob, carol = team
    with pytest.raises(ActionUnavailable):
        ws.execute(bob, "/studios/team/members", "create_invitation", {})
    assert "invitations" not in ws.page(bob, "/studios/team/members").markdown.lower()
    with pytest.raises(ActionUnavailable, match="no open invitation"):
        ws.execute(alice, "/studios/team/members", "revoke_invitation", {"invitation": "nope"})
    token = invite(ws, alice)
    [listed] = ws.page(alice, "/studios/team/members").data["invitations"]
    with pytest.raises(InvalidActionParams):
        ws.execute(alice, "/studios/team/members", "revoke_invitation", {"invitation": "nope"})
    ws.execute(alice, "/studios/team/members", "revoke_invitation", {"invitation": listed["id"]})
    assert invitations.redeem(any_app.store, token, carol["id"]) is None and "carol" not in roles(ws, alice)
    assert ws.page(alice, "/studios/team/members").data["invitations"][0]["state"] == "revoked"


def test_an_expired_or_unknown_link_adds_nobody(any_app, team):
    ws, alice, bob, carol = team
    token = invite(ws, alice, days=1)
    _age(any_app, token)
    assert invitations.offered(any_app.store, token) is None
    assert invitations.redeem(any_app.store, token, carol["id"]) is None
    assert invitations.redeem(any_app.store, "not-a-link", carol["id"]) is None
    assert invitations.offered(any_app.store, "x" * 500) is None
    assert "carol" not in roles(ws, alice)


def _age(any_app, token: str) -> None:
    """The link's expiry moved into the past (on PostgreSQL as the owner: navmcp_app may not)."""
    hashed = invitations.token_hash(token)
    if any_app.store.hosted:
        import psycopg

        url = any_app.config.database_url.replace("navmcp_app@", "postgres@")
        with psycopg.connect(url, autocommit=True) as owner:
            owner.execute("UPDATE invitations SET expires_at = '2000-01-01' WHERE token_hash = %s", (hashed,))
    else:
        with any_app.store.write() as tx:
            tx.execute("UPDATE invitations SET expires_at = '2000-01-01' WHERE token_hash = ?", (hashed,))


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_keeps_invitations_to_admins(any_app, team):
    import psycopg

    ws, alice, bob, carol = team
    invite(ws, alice)
    with any_app.store.read(user_id=bob["id"]) as tx:  # a member, not an admin
        assert tx.all("SELECT * FROM invitations") == []
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        with any_app.store.write(user_id=bob["id"]) as tx:
            tx.execute("INSERT INTO invitations (id, studio_id, token_hash, role, max_uses, created_by, created_at,"
                       " expires_at) VALUES ('x', ?, 'h', 'admin', 9, ?, 'a', '2999')", (studio, bob["id"]))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the count of uses is not the admins' to write
        with any_app.store.write(user_id=alice["id"]) as tx:
            tx.execute("UPDATE invitations SET uses = 0")


def test_an_invitation_to_a_handle_waits_in_the_inbox_until_accepted(any_app, team, new_user):
    """An admin invites a findable handle: the person is told in their inbox (an entry outside any
    studio, and the list on /inbox) and is no member until they accept, in their browser; accepting
    joins with its role and uses it; the members page lists it for them."""
    ws, alice, bob, carol = team
    said = ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "@carol", "role": "admin"}).message
    assert "/invite/" not in said and "@carol" in said  # no link: only carol answers it
    assert "carol" not in roles(ws, alice)
    page = ws.page(carol, "/inbox")
    [waiting] = page.data["invitations"]
    assert (waiting["studio"], waiting["studio_name"], waiting["role"], waiting["inviter"]) == ("team", "Team", "admin", "alice")
    assert "## Invitations for you" in page.markdown and f"invitation `{waiting['id']}`" in page.markdown
    [entry] = [e for e in page.data["entries"] if e["kind"] == "invited"]
    # (on PostgreSQL carol may not read alice's account yet: the entry says "someone", the list names her)
    assert entry["unread"] and entry["url"] == "/inbox" and "invited you to a studio" in entry["before"]
    assert ws.page(carol, "/").data["unread"] == 1
    assert {"accept_invitation", "decline_invitation"} <= {a.name for a in ws.page(carol, "/inbox", browser=True).actions}
    with pytest.raises(ActionUnavailable, match="browser"):  # an agent cannot say yes for them
        ws.execute(carol, "/inbox", "accept_invitation", {"invitation": waiting["id"]})
    with pytest.raises((ActionUnavailable, InvalidActionParams)):  # bob cannot answer carol's
        ws.execute(bob, "/inbox", "decline_invitation", {"invitation": waiting["id"]})
    listed = ws.page(alice, "/studios/team/members")
    assert listed.data["invitations"][0]["invitee"] == "carol" and "for @carol" in listed.markdown
    with pytest.raises(ActionFailed, match="already"):  # one waiting invitation per person
        ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "carol"})
    done = ws.execute(carol, "/inbox", "accept_invitation", {"invitation": waiting["id"]}, browser=True)
    assert done.url == "/studios/team" and roles(ws, alice)["carol"] == "admin"
    assert ws.page(carol, "/inbox").data["invitations"] == [] and ws.page(carol, "/").data["unread"] == 0
    listed = ws.page(alice, "/studios/team/members")
    assert listed.data["invitations"][0]["state"] == "accepted"
    assert "|  | accepted |" in listed.markdown  # no expiry said of an invitation that was used
    with pytest.raises(ActionFailed, match="member of this studio already"):  # members are not invited
        ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "bob"})


def test_a_declined_revoked_or_unfindable_invitation_adds_nobody(any_app, team, new_user):
    ws, alice, bob, carol = team
    ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "carol"})
    [waiting] = ws.page(carol, "/inbox").data["invitations"]
    ws.execute(carol, "/inbox", "decline_invitation", {"invitation": waiting["id"]})  # an agent may decline
    assert "carol" not in roles(ws, alice) and ws.page(carol, "/inbox").data["invitations"] == []
    assert ws.page(alice, "/studios/team/members").data["invitations"][0]["state"] == "declined"
    ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "carol"})  # asked again
    [again] = ws.page(carol, "/inbox").data["invitations"]
    ws.execute(alice, "/studios/team/members", "revoke_invitation", {"invitation": again["id"]})
    assert ws.page(carol, "/inbox").data["invitations"] == []
    with pytest.raises(ActionUnavailable):  # nothing waits any more
        ws.execute(carol, "/inbox", "accept_invitation", {"invitation": again["id"]}, browser=True)
    assert "carol" not in roles(ws, alice)
    # an unfindable handle and no handle at all get one answer (no probing who exists)
    dave, _ = new_user("dave")
    ws.execute(dave, "/whoami", "make_unfindable", {})
    refusals = []
    for handle in ("dave", "nobody-here"):
        with pytest.raises(InvalidActionParams) as refused:
            ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": handle})
        refusals.append(refused.value.message.replace(handle, "H"))
    assert refusals[0] == refusals[1] and ws.page(dave, "/inbox").data["invitations"] == []
    with pytest.raises(ActionUnavailable):  # only admins invite
        ws.execute(bob, "/studios/team/members", "create_invitation", {"handle": "carol"})


def test_an_invitation_by_e_mail_sends_a_link_that_works(any_app, team, monkeypatch, smtp_server):
    """Where SMTP is configured, the link goes to the address (a real SMTP server, aiosmtpd) and is
    shown to nobody; it works once, in a browser. Without SMTP the action says so and makes none."""
    from email import message_from_bytes

    ws, alice, bob, carol = team
    with pytest.raises(ActionFailed, match="sends no e-mail"):
        ws.execute(alice, "/studios/team/members", "create_invitation", {"email": "carol@example.org"})
    assert ws.page(alice, "/studios/team/members").data["invitations"] == []

    received, url = smtp_server
    monkeypatch.setenv("NAVMCP_SMTP_URL", url)
    monkeypatch.setenv("NAVMCP_BASE_URL", "http://navmcp.test/")
    with pytest.raises(InvalidActionParams, match="e-mail address"):
        ws.execute(alice, "/studios/team/members", "create_invitation", {"email": "not an address"})
    done = ws.execute(alice, "/studios/team/members", "create_invitation",
                      {"email": "carol@example.org", "role": "admin"})
    assert "/invite/" not in done.message and "carol@example.org" not in done.message
    [sent] = received
    assert sent["To"] == "carol@example.org" and sent["Subject"] == "navmcp: an invitation to Team"
    body = message_from_bytes(sent.as_bytes()).get_payload(decode=True).decode()
    assert "@alice invites you to join “Team” on navmcp as admin" in body
    token = re.search(r"http://navmcp\.test/invite/([A-Za-z0-9_-]+)\n", body).group(1)
    [listed] = ws.page(alice, "/studios/team/members").data["invitations"]
    assert (listed["role"], listed["max_uses"], listed["state"]) == ("admin", 1, "open")
    assert "carol@example.org" not in ws.page(alice, "/studios/team/members").markdown  # the address is kept nowhere
    assert invitations.offered(any_app.store, token)["handle"] == "team"
    assert invitations.redeem(any_app.store, token, carol["id"]) == "team" and roles(ws, alice)["carol"] == "admin"
    assert invitations.offered(any_app.store, token) is None  # used


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_the_invitee_functions_act_on_ones_own_invitations_only(any_app, team):
    """By SQL through the app role: nobody answers, lists or is told of another's invitation, and
    only the admin who made one for a person writes its inbox entry."""
    import psycopg

    ws, alice, bob, carol = team
    ws.execute(alice, "/studios/team/members", "create_invitation", {"handle": "carol"})
    with any_app.store.read(user_id=carol["id"]) as tx:
        [mine] = tx.all("SELECT * FROM navmcp.invitations_for_me('2000')")
    with any_app.store.write(user_id=bob["id"]) as tx:  # a member, but not the invitee
        assert tx.all("SELECT * FROM navmcp.invitations_for_me('2000')") == []
        assert tx.scalar("SELECT navmcp.answer_invitation(?, true, '2000')", (mine["id"],)) is None
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # bob did not make it
        with any_app.store.write(user_id=bob["id"]) as tx:
            tx.execute("SELECT navmcp.note_invited(?, '2000', 'x')", (mine["id"],))
    with any_app.store.write(user_id=carol["id"]) as tx:  # nor may carol write herself more entries
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            tx.execute("SELECT navmcp.note_invited(?, '2000', 'y')", (mine["id"],))
    assert "carol" not in roles(ws, alice) and ws.page(carol, "/inbox").data["invitations"][0]["id"] == mine["id"]
