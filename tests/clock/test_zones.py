"""Time zones (navmcp/clock/zones.py), on both stores: a person sets theirs on /whoami; a deadline they
type without a zone is read in it; markdown shows deadlines in it as ISO 8601 with the offset, the
zone's name and how far off; the web app shows local time (the browser's for someone with none)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from nav_helpers import add_member
from navmcp.errors import InvalidActionParams


@pytest.fixture
def team(any_app, new_user):
    """alice (admin, in Paris once she says so) and bob (a member, no zone) in team."""
    ws = any_app.workspace
    alice, bob = new_user("alice")[0], new_user("bob")[0]
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    return any_app, alice, bob


def _user(app, user):
    from navmcp.identity import user_by_id

    with app.store.read(user_id=user["id"]) as tx:
        return user_by_id(tx, user["id"])


def _stored(app, user, url) -> str:
    return app.workspace.page(user, url).data["item"]["deadline"]


def test_a_person_sets_their_zone_on_whoami_and_unknown_names_are_refused(team):
    app, alice, bob = team
    ws = app.workspace
    assert "| Time zone | none set" in ws.page(alice, "/whoami").markdown
    said = ws.execute(alice, "/whoami", "set_time_zone", {"zone": " europe/paris "})
    assert "Europe/Paris" in said.message
    alice = _user(app, alice)
    assert alice["time_zone"] == "Europe/Paris"
    assert "| Time zone | Europe/Paris |" in ws.page(alice, "/whoami").markdown
    for wrong in ("Mars/Olympus", "+02:00", "Europe/Paris; DROP TABLE users"):
        with pytest.raises(InvalidActionParams, match="no time zone"):
            ws.execute(alice, "/whoami", "set_time_zone", {"zone": wrong})
    assert _user(app, alice)["time_zone"] == "Europe/Paris"  # a refused name changed nothing
    assert _user(app, bob).get("time_zone") is None  # hers alone
    ws.execute(alice, "/whoami", "set_time_zone", {"zone": "none"})
    assert _user(app, alice)["time_zone"] is None


def test_a_deadline_without_a_zone_is_read_in_the_persons_zone_and_shown_in_it(team):
    app, alice, bob = team
    ws = app.workspace
    ws.execute(alice, "/whoami", "set_time_zone", {"zone": "Europe/Paris"})
    alice = _user(app, alice)
    year = datetime.now(UTC).year + 1
    paris = ZoneInfo("Europe/Paris")
    url = ws.execute(alice, "/studios/team", "create_decision",
                     {"question": "Where?", "options": ["Here"], "deadline": f"{year}-01-15T17:00"}).url
    assert _stored(app, alice, url).startswith(f"{year}-01-15T16:00:00")  # 17:00 in Paris, winter: UTC+1
    # markdown: hers in her zone with the offset and the phrase; bob's (no zone) in UTC, as before
    assert re.search(rf"\| {year}-01-15T17:00\+01:00 Europe/Paris \(in \d+ (days|months)\) \|",
                     ws.page(alice, url).markdown)
    assert re.search(rf"\| {year}-01-15 16:00 UTC \(in \d+ (days|months)\) \|", ws.page(bob, url).markdown)
    # a zone named in the text wins; bob's own "17:00" is UTC
    ws.execute(alice, url, "edit_decision", {"deadline": f"{year}-01-15T17:00+05:00"})
    assert _stored(app, alice, url).startswith(f"{year}-01-15T12:00:00")
    ws.execute(alice, url, "edit_decision", {"deadline": "friday 17:00 utc"})
    assert _stored(app, alice, url)[11:16] == "17:00"
    bobs = ws.execute(bob, "/studios/team", "create_commitment",
                      {"title": "Run", "critical_mass": 2, "deadline": f"{year}-01-15T17:00"}).url
    assert _stored(app, bob, bobs).startswith(f"{year}-01-15T17:00:00")
    # a phrase with a time, and a bare date (the end of that day), in her zone
    ws.execute(alice, url, "edit_decision", {"deadline": "friday 17:00"})
    stored = datetime.fromisoformat(_stored(app, alice, url).replace("Z", "+00:00"))
    local = stored.astimezone(paris)
    assert (local.weekday(), local.hour, local.minute) == (4, 17, 0)
    ws.execute(alice, url, "edit_decision", {"deadline": f"{year}-07-01"})
    assert _stored(app, alice, url).startswith(f"{year}-07-01T21:59:59")  # 23:59:59 in Paris, summer: UTC+2
    # her home lists it in her zone too
    assert f"deadline {year}-07-01T23:59+02:00 Europe/Paris" in ws.page(alice, "/").markdown
    assert f"deadline {year}-07-01 21:59 UTC" in ws.page(bob, "/").markdown


def test_the_web_app_shows_local_time(team):
    from navmcp.web.html import render_page

    app, alice, bob = team
    ws = app.workspace
    ws.execute(alice, "/whoami", "set_time_zone", {"zone": "Asia/Tokyo"})
    alice = _user(app, alice)
    soon = (datetime.now(UTC) + timedelta(days=40)).replace(hour=3, minute=30).strftime("%Y-%m-%dT%H:%M+00:00")
    url = ws.execute(bob, "/studios/team", "create_decision", {"question": "When?", "options": ["Now"],
                                                               "deadline": soon}).url
    tokyo = datetime.fromisoformat(soon).astimezone(ZoneInfo("Asia/Tokyo"))
    hers = render_page(ws.page(alice, url), csrf="", alternates={})
    assert 'data-zone="Asia/Tokyo"' in hers and f"{tokyo:%H:%M} Asia/Tokyo" in hers
    his = render_page(ws.page(bob, url), csrf="", alternates={})  # no zone: UTC, which app.js makes the browser's
    assert '<time datetime="' in his and 'class="local" title=' in his and "data-zone" not in his
    assert "03:30 UTC" in his


def test_a_deadline_from_a_browser_is_read_in_its_zone_for_a_person_who_set_none(team):
    """The web app sends the browser's zone with a form (app.js's `browser_zone`): bob, with no zone
    of his own, means his browser's local time; alice's own zone wins over her browser's."""
    app, alice, bob = team
    ws = app.workspace
    year = datetime.now(UTC).year + 1
    url = ws.execute(bob, "/studios/team", "create_decision", {"question": "When?", "options": ["Now"],
                                                               "deadline": f"{year}-01-15"}, zone="Asia/Tokyo").url
    assert _stored(app, bob, url).startswith(f"{year}-01-15T14:59:59")  # the end of the 15th in Tokyo
    ws.execute(bob, url, "edit_decision", {"deadline": f"{year}-01-20T09:00"}, zone="America/New_York")
    assert _stored(app, bob, url).startswith(f"{year}-01-20T14:00:00")
    ws.execute(alice, "/whoami", "set_time_zone", {"zone": "Europe/Paris"})
    alice = _user(app, alice)
    ws.execute(alice, url, "edit_decision", {"deadline": f"{year}-01-21T09:00"}, zone="Asia/Tokyo")
    assert _stored(app, alice, url).startswith(f"{year}-01-21T08:00:00")  # Paris, hers


def test_the_web_form_sends_the_browsers_zone_and_a_bad_one_is_left_out():
    from navmcp.web.actions import browser_zone

    assert browser_zone({"browser_zone": ["asia/tokyo"]}) == "Asia/Tokyo"
    assert browser_zone({"browser_zone": ["Mars/Olympus"]}) is None and browser_zone({}) is None


def test_the_exact_time_of_a_comment_and_an_audit_line_is_in_the_persons_zone(team):
    """Every time the web app shows as "3 h ago" carries its exact moment in the person's zone (in
    UTC for someone with none, which app.js then shows in the browser's)."""
    from navmcp.web.html import render_page

    app, alice, bob = team
    ws = app.workspace
    note = ws.execute(bob, "/studios/team", "create_note", {"title": "N", "body": "b"}).url
    ws.execute(bob, note, "add_comment", {"body": "hello"})
    ws.execute(alice, "/whoami", "set_time_zone", {"zone": "Asia/Tokyo"})
    alice = _user(app, alice)
    at = ws.page(alice, note).data["comments"][0]["created_at"]
    tokyo = datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(ZoneInfo("Asia/Tokyo"))
    exact = f'class="exact" data-zone="Asia/Tokyo" title="{tokyo:%Y-%m-%d %H:%M} Asia/Tokyo"'
    assert exact in render_page(ws.page(alice, note), csrf="", alternates={})
    audit = render_page(ws.page(alice, "/studios/team/audit"), csrf="", alternates={})
    assert audit.count('class="exact" data-zone="Asia/Tokyo"') >= 3 and " UTC\"" not in audit
    his = render_page(ws.page(bob, note), csrf="", alternates={})
    assert 'class="exact" title="' in his and "data-zone" not in his


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_lets_a_person_set_only_their_own_zone(team, pg_database):
    app, alice, bob = team

    def as_(user, sql, params=()):
        with app.store.write(user_id=user["id"]) as tx:
            return tx.execute(sql, params)

    assert as_(bob, "UPDATE users SET time_zone = 'Asia/Tokyo' WHERE id = ?", (alice["id"],)) == 0
    assert as_(bob, "UPDATE users SET time_zone = 'Asia/Tokyo' WHERE id = ?", (bob["id"],)) == 1
    assert _user(app, alice).get("time_zone") is None and _user(app, bob)["time_zone"] == "Asia/Tokyo"
