"""Storage does not grow without bound (issue 24, item 13), on both stores: MCP sessions end when
idle and are deleted when ended, a user keeps a bounded number of them however many times they
`initialize`, and audit lines past the retention are pruned (docs/limits.md)."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest

from navmcp import workspace
from navmcp.clock import ago
from navmcp.config import Config
from navmcp.errors import NavError
from navmcp.web import create_app
from webclient import Client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "loop", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.fixture
def owner_db(store_kind, request):
    """Runs SQL as the database's owner (PostgreSQL: past row-level security), for checks."""
    if store_kind == "postgres":
        url = request.getfixturevalue("pg_database").admin_url

        def run(sql: str, *params):
            with psycopg.connect(url, autocommit=True) as conn:
                cursor = conn.execute(sql.replace("?", "%s"), params)
                return cursor.fetchall() if cursor.description else None
    else:
        app = request.getfixturevalue("any_app")

        def run(sql: str, *params):
            return [tuple(r.values()) for r in app.store.conn.execute(sql, params).fetchall()]
    return run


@pytest.fixture
def api(any_app, new_user):
    """An MCP-over-HTTP client of alice's, on an app keeping at most 5 sessions per user."""
    any_app.config = dataclasses.replace(any_app.config, mcp_sessions_per_user=5)
    alice, token = new_user("alice")
    client = Client(create_app(any_app), {"Authorization": f"Bearer {token}"})
    yield client, alice
    client.close()


def initialize(client: Client) -> dict[str, str]:
    reply = client.post("/mcp", json=INIT)
    assert reply.status_code == 200
    return {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}


def test_an_initialize_loop_keeps_a_bounded_number_of_sessions(api, owner_db):
    client, alice = api
    opened = [initialize(client) for _ in range(30)]
    assert owner_db("SELECT count(*) FROM mcp_sessions WHERE user_id = ?", alice["id"]) == [(5,)]
    for headers in opened[-5:]:  # the newest five are live
        assert client.post("/mcp", json=LIST, headers=headers).status_code == 200
    assert client.post("/mcp", json=LIST, headers=opened[0]).status_code == 404  # the oldest ended
    # An ended session is deleted, not kept as a row marked ended.
    assert client.delete("/mcp", headers=opened[-1]).status_code == 200
    assert owner_db("SELECT count(*) FROM mcp_sessions WHERE user_id = ?", alice["id"]) == [(4,)]
    assert client.post("/mcp", json=LIST, headers=opened[-1]).status_code == 404


def test_an_idle_session_has_ended_and_a_used_one_stays_fresh(api, any_app, owner_db):
    client, alice = api
    idle, used = initialize(client), initialize(client)
    hours = any_app.config.mcp_session_idle_hours
    owner_db("UPDATE mcp_sessions SET last_seen = ? WHERE id = ?", ago(hours * 3600 + 60), idle["Mcp-Session-Id"])
    two_hours_ago = ago(2 * 3600)
    owner_db("UPDATE mcp_sessions SET last_seen = ? WHERE id = ?", two_hours_ago, used["Mcp-Session-Id"])
    assert client.post("/mcp", json=LIST, headers=idle).status_code == 404
    # A call that moves nothing still says the session is in use, once its last_seen is old.
    assert client.post("/mcp", json=LIST, headers=used).status_code == 200
    (seen,), = owner_db("SELECT last_seen FROM mcp_sessions WHERE id = ?", used["Mcp-Session-Id"])
    assert seen > two_hours_ago
    initialize(client)  # the user's next session deletes the idle one
    assert owner_db("SELECT count(*) FROM mcp_sessions WHERE id = ?", idle["Mcp-Session-Id"]) == [(0,)]


def _old_lines(any_app, owner_db, user_id: str, *days: int) -> None:
    """Audit lines written `days` ago: as the owner on PostgreSQL, where the app role's lines are
    stamped with the time they are written (tests/store/test_pg_rls.py)."""
    for n in days:
        line = (ago(n * 86400), user_id, "t", None, "/", "old", "[]", "ok", 0)
        if any_app.store.hosted:
            owner_db(workspace.AUDIT_SQL, *line)
        else:
            with any_app.store.write(user_id=user_id) as tx:
                tx.execute(workspace.AUDIT_SQL, line)


def test_audit_lines_past_the_retention_are_pruned(any_app, new_user, owner_db, monkeypatch):
    alice, _ = new_user("alice")
    ws = any_app.workspace
    assert ws.audit_retention_days == 365  # the default
    _old_lines(any_app, owner_db, alice["id"], 400, 380, 366)
    monkeypatch.setattr(workspace, "AUDIT_PRUNE_EVERY", 1)
    monkeypatch.setattr(workspace, "AUDIT_PRUNE_MOST", 2)  # at most this many per prune, oldest first
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    assert owner_db("SELECT action, at FROM audit ORDER BY id")[0][1] > ago(367 * 86400)
    monkeypatch.setattr(workspace, "AUDIT_PRUNE_MOST", 10_000)
    ws.execute(alice, "/studios/team", "create_note", {"title": "n", "body": "b"})
    assert [a for (a,) in owner_db("SELECT action FROM audit ORDER BY id")] == ["create_studio", "create_note"]


def test_with_retention_0_the_audit_is_kept(any_app, new_user, owner_db, monkeypatch):
    alice, _ = new_user("alice")
    ws = workspace.Workspace(any_app.store, audit_retention_days=0)
    _old_lines(any_app, owner_db, alice["id"], 4000)
    monkeypatch.setattr(workspace, "AUDIT_PRUNE_EVERY", 1)
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    assert [a for (a,) in owner_db("SELECT action FROM audit ORDER BY id")] == ["old", "create_studio"]


def test_the_settings_come_from_the_environment_and_bad_values_are_refused(tmp_path):
    env = {"NAVMCP_HOME": str(tmp_path)}
    config = Config.from_env(env)
    assert (config.audit_retention_days, config.mcp_session_idle_hours, config.mcp_sessions_per_user) == (365, 24, 100)
    config = Config.from_env({**env, "NAVMCP_AUDIT_RETENTION_DAYS": "0", "NAVMCP_MCP_SESSION_IDLE_HOURS": "0.5",
                              "NAVMCP_MCP_SESSIONS_PER_USER": "3"})
    assert (config.audit_retention_days, config.mcp_session_idle_hours, config.mcp_sessions_per_user) == (0, 0.5, 3)
    for name, value in (("NAVMCP_AUDIT_RETENTION_DAYS", "-1"), ("NAVMCP_MCP_SESSIONS_PER_USER", "0"),
                        ("NAVMCP_MCP_SESSION_IDLE_HOURS", "nan"), ("NAVMCP_AUDIT_RETENTION_DAYS", "a year")):
        with pytest.raises(NavError, match=name):
            Config.from_env({**env, name: value})
