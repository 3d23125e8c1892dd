"""The e-mail digest (navmcp/feeds/mail.py) against a real SMTP server (aiosmtpd), on both stores: a
person who gave an address gets their unread entries with links that work, once a day at most,
and no more once they turned it off; their address is theirs alone."""

from __future__ import annotations

import re
import subprocess
import sys
from email import message_from_bytes

import pytest

from nav_helpers import add_member
from navmcp.errors import ActionUnavailable, InvalidActionParams
from navmcp.feeds import mail


@pytest.fixture
def team(any_app, new_user):
    alice, _ = new_user("alice")
    bob, _ = new_user("bob")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    return ws, alice, bob


def test_the_digest_goes_out_with_working_links_and_stops_when_turned_off(any_app, team, smtp_server):
    ws, alice, bob = team
    received, url = smtp_server
    smtp = mail.Smtp.from_url(url)
    assert mail.send_digests(any_app.store, smtp, "http://navmcp.test") == 0  # nobody gave an address
    with pytest.raises(InvalidActionParams, match="must be an e-mail address"):
        ws.execute(bob, "/whoami", "set_email", {"email": "not an address"})
    ws.execute(bob, "/whoami", "set_email", {"email": "bob@example.org"})
    assert "| E-mail digest | on, to bob@example.org (only you see it) |" in ws.page(bob, "/whoami").markdown
    assert "bob@example.org" not in ws.page(alice, "/studios/team/members").markdown
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Agenda", "body": "@bob, a look?"}).url
    assert mail.send_digests(any_app.store, smtp, "http://navmcp.test/") == 1
    [message] = received
    assert message["To"] == "bob@example.org" and message["Subject"] == "navmcp: 1 unread"
    body = message.get_payload(decode=True).decode()
    assert "@alice mentioned you in “Agenda” in team" in body and "http://navmcp.test/inbox" in body
    links = re.findall(r"http://navmcp\.test(/\S*)", body)
    assert note in links
    for link in links:  # each link is a page bob may open
        if link != "/whoami":
            assert ws.page(bob, link).url == link
    assert mail.send_digests(any_app.store, smtp, "http://navmcp.test") == 0  # one a day
    with any_app.store.write(user_id=bob["id"]) as tx:
        tx.execute("UPDATE mail_settings SET digest_sent_at = '2000-01-01'")
    ws.execute(bob, "/whoami", "digest_off", {})
    with pytest.raises(ActionUnavailable, match="off already"):
        ws.execute(bob, "/whoami", "digest_off", {})
    assert mail.send_digests(any_app.store, smtp, "http://navmcp.test") == 0 and len(received) == 1
    ws.execute(bob, "/whoami", "digest_on", {})
    assert mail.send_digests(any_app.store, smtp, "http://navmcp.test") == 1


def test_the_digest_states_a_closed_decisions_result(any_app, team, smtp_server):
    """A decision bob voted on closes: his digest says what was decided, as his inbox page does. The
    result is user text (an option's title) in a text/plain e-mail: kept as typed (no HTML escaping),
    quoted as the verdict quotes it, on the entry's one line."""
    ws, alice, bob = team
    received, url = smtp_server
    ws.execute(bob, "/whoami", "set_email", {"email": "bob@example.org"})
    title = "Lisbon <b>&amp;</b> “Porto”"
    made = ws.execute(alice, "/studios/team", "create_decision", {"question": "Where?", "options": [title, "Berlin"]}).url
    ws.execute(bob, made, "vote", {"votes": [{"option": title, "accept": True, "prefer": True}]})
    ws.execute(alice, made, "close_decision", {})
    entry = next(e for e in ws.page(bob, "/inbox").data["entries"] if e["kind"] == "decision_closed")
    assert title in entry["result"] and "Berlin" not in entry["result"]
    assert mail.send_digests(any_app.store, mail.Smtp.from_url(url), "http://navmcp.test") == 1
    body = received[0].get_payload(decode=True).decode()
    [line] = [line for line in body.splitlines() if "“Where?”" in line]
    assert line.endswith(f"“Where?”, result: {entry['result']} in team") and title in line, line
    assert "Berlin" not in body and "&lt;" not in body


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_an_address_is_its_owners_alone(any_app, team):
    ws, alice, bob = team
    ws.execute(bob, "/whoami", "set_email", {"email": "bob@example.org"})
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.all("SELECT * FROM mail_settings") == []


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_the_digest_command(any_app, team, smtp_server, tmp_path):
    ws, alice, bob = team
    received, url = smtp_server
    ws.execute(bob, "/whoami", "set_email", {"email": "bob@example.org"})
    ws.execute(alice, "/studios/team", "create_note", {"title": "Agenda", "body": "@bob, a look?"})
    env = {"NAVMCP_HOME": str(any_app.config.home), "PATH": "/usr/bin:/bin"}
    refused = subprocess.run([sys.executable, "-m", "navmcp", "digest"], env=env, capture_output=True, text=True)
    assert refused.returncode == 1 and "NAVMCP_SMTP_URL" in refused.stderr
    done = subprocess.run([sys.executable, "-m", "navmcp", "digest", "--base-url", "http://navmcp.test"],
                          env={**env, "NAVMCP_SMTP_URL": url}, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "1 digest(s) sent.", done.stderr
    assert message_from_bytes(received[0].as_bytes())["Subject"] == "navmcp: 1 unread"
