"""Notifications say what changed (issue 42, navmcp/summaries.py): `notifications/resources/updated`
carries in `_meta` the change's kind and a short summary ("vote by @ben", "closed: 'Soup'",
"comment by @cy"), in both eras and on both stores, and nothing its watcher may not see: no voter
of an anonymous decision, nothing of a studio to one who has left it."""

from __future__ import annotations

import json
import threading

import pytest

from deadlines import HANG
from navmcp.protocol import Connection
from navmcp.subscriptions import CHANGE
from navmcp.tools import Session

STUDIO = "/studios/team"
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def team(any_app, new_user):
    """ann (admin), ben and cy in `team`: (user, token) each."""
    people = {h: new_user(h) for h in ("ann", "ben", "cy")}
    ws = any_app.workspace
    ws.execute(people["ann"][0], "/", "create_studio", {"handle": "team", "name": "Team"})
    for h in ("ben", "cy"):
        ws.execute(people["ann"][0], f"{STUDIO}/members", "add_member", {"handle": h})
    yield people
    if "feed" in any_app.__dict__:  # its thread and its connection end with the test
        any_app.feed.close()


class Inbox:
    """What a connection's transport was handed, with a wait for the next notification."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.arrived = threading.Condition()

    def __call__(self, message: dict) -> None:
        with self.arrived:
            self.sent.append(message)
            self.arrived.notify_all()

    def updates(self, count: int) -> list[dict]:
        """The first `count` notifications/resources/updated (waiting, within HANG, for them)."""
        def found() -> list[dict]:
            return [m for m in self.sent if m.get("method") == "notifications/resources/updated"]
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(found()) >= count, timeout=HANG), self.sent
            return found()[:count]


def _listen(app, token: str, uris: list[str]) -> tuple[Connection, Inbox]:
    inbox = Inbox()
    connection = Connection(Session(app, token), name="navmcp", version="0", instructions="", outbound=inbox,
                            watchable=True)
    params = {"_meta": MODERN, "notifications": {"resourceSubscriptions": ["navmcp://" + u for u in uris]}}
    assert connection.receive({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}) is None
    return connection, inbox


def _subscribe(app, token: str, uri: str) -> tuple[Connection, Inbox]:
    inbox = Inbox()
    connection = Connection(Session(app, token), name="navmcp", version="0", instructions="", outbound=inbox)
    connection.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    connection.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert connection.receive({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                               "params": {"uri": "navmcp://" + uri}})["result"] == {}
    return connection, inbox


def test_a_watcher_of_a_decision_hears_what_each_change_was(any_app, team):
    ws = any_app.workspace
    ann, ben, cy = (team[h][0] for h in ("ann", "ben", "cy"))
    decision = ws.execute(ann, STUDIO, "create_decision", {"question": "Lunch?", "options": ["Pizza", "Soup"]}).url
    modern, modern_seen = _listen(any_app, team["ann"][1], [decision])
    legacy, legacy_seen = _subscribe(any_app, team["cy"][1], decision)
    try:
        ws.execute(ben, decision, "vote", {"votes": [{"option": "Soup", "prefer": True}]})
        modern_seen.updates(1)
        legacy_seen.updates(1)
        ws.execute(cy, decision, "add_comment", {"body": "soup, please"})
        modern_seen.updates(2)
        legacy_seen.updates(2)
        ws.execute(ann, decision, "close_decision", {})
        expected = [{"kind": "vote", "summary": "vote by @ben"}, {"kind": "add_comment", "summary": "comment by @cy"},
                    {"kind": "close_decision", "summary": "closed: 'Soup'"}]
        for seen in (modern_seen, legacy_seen):
            updates = seen.updates(3)
            assert [u["params"]["_meta"][CHANGE] for u in updates] == expected
            assert all(u["params"]["uri"] == "navmcp://" + decision for u in updates)
        # The result is the page's own words.
        assert ws.page(ann, decision).as_json()["data"]["verdict"]["text"] == "'Soup'"
    finally:
        modern.close()
        legacy.close()


def test_an_anonymous_decisions_watcher_is_not_told_who_voted(any_app, team):
    ws = any_app.workspace
    ann, ben = team["ann"][0], team["ben"][0]
    decision = ws.execute(ann, STUDIO, "create_decision",
                          {"question": "Secret?", "options": ["Yes", "No"], "anonymous": True}).url
    connection, seen = _listen(any_app, team["cy"][1], [decision])
    try:
        ws.execute(ben, decision, "vote", {"votes": [{"option": "Yes"}]})
        [update] = seen.updates(1)
        assert update["params"]["_meta"][CHANGE] == {"kind": "vote", "summary": "vote (anonymous)"}
        assert "ben" not in json.dumps(update)
    finally:
        connection.close()


def test_one_who_leaves_a_studio_hears_that_their_page_changed_and_nothing_of_it(any_app, team):
    ws = any_app.workspace
    ann = team["ann"][0]
    note = ws.execute(ann, STUDIO, "create_note", {"title": "Plans", "body": "secret plans"}).url
    connection, seen = _listen(any_app, team["cy"][1], ["/"])  # cy's home: her studios' changes
    try:
        ws.execute(team["ben"][0], note, "add_comment", {"body": "noted"})
        [first] = seen.updates(1)
        assert first["params"]["_meta"][CHANGE] == {"kind": "add_comment", "summary": "comment by @ben"}
        ws.execute(ann, f"{STUDIO}/members", "remove_member", {"handle": "cy"})
        second = seen.updates(2)[1]
        assert CHANGE not in second["params"]["_meta"], second  # her home changed; what happened is not hers
    finally:
        connection.close()


def test_a_summary_is_one_short_line_of_user_text(any_app, team):
    """A title in a summary (a join's commitment, a result) cannot stretch it or break it into lines."""
    ws = any_app.workspace
    ann, ben = team["ann"][0], team["ben"][0]
    decision = ws.execute(ann, STUDIO, "create_decision", {"question": "Q?", "options": ["x" * 190 + " end"]}).url
    connection, seen = _listen(any_app, team["cy"][1], [decision])
    try:
        ws.execute(ben, decision, "vote", {"votes": [{"option": 1}]})
        ws.execute(ann, decision, "close_decision", {})
        summary = seen.updates(2)[1]["params"]["_meta"][CHANGE]["summary"]
        assert summary.startswith("closed: 'xxx") and summary.endswith("…") and len(summary) == 120
        assert "\n" not in summary
    finally:
        connection.close()
