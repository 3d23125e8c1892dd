"""The Tasks extension for held writes (navmcp/held/tasks.py), over MCP (the protocol core, 2026-07-28
messages) on both stores: where the client declares the extension, a held `execute_action` is a task;
`tasks/get` reads it working while pending, completed with the action's result once approved, and
completed with `isError` and the reason once rejected, withdrawn (`tasks/cancel`) or expired. A client
that did not declare it gets no task, and a task is read only by members of its studio."""

from __future__ import annotations

import pytest

from mcp_rpc import Rpc
from nav_helpers import add_member
from navmcp.identity import mint_token
from test_store_contract import _as_owner

STUDIO = "/studios/team"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.fixture
def team(any_app, new_user):
    """alice (admin), bob (member) and dave (no member); a rule holds agents' close_decision and
    add_option for an admin; bob's decision."""
    ws = any_app.workspace
    users = {h: new_user(h)[0] for h in ("alice", "bob", "dave")}
    ws.execute(users["alice"], "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, users["alice"], f"{STUDIO}/members", {"handle": "bob"})
    ws.execute(users["alice"], f"{STUDIO}/held", "set_hold_rule",
               {"actions": "close_decision,add_option", "approvers": "admins"}, browser=True)
    decision = ws.execute(users["bob"], STUDIO, "create_decision", {"question": "Where?", "options": ["Lisbon"]},
                          browser=True).url
    return any_app, users, decision


def agent(app, user, capabilities=TASKS) -> Rpc:
    return Rpc(app, mint_token(app.secret, user["id"]), capabilities=capabilities)


def test_a_held_write_is_a_task_that_completes_with_the_result(team):
    app, u, decision = team
    bob = agent(app, u["bob"])
    assert "io.modelcontextprotocol/tasks" in bob.call("server/discover")["capabilities"]["extensions"]
    task = bob.call("tools/call", name="execute_action", arguments={"action": "close_decision", "url": decision})
    assert task["resultType"] == "task" and task["status"] == "working" and "content" not in task
    assert f"{STUDIO}/held/{task['taskId']}" in task["statusMessage"] and "1 admin" in task["statusMessage"]
    assert task["pollIntervalMilliseconds"] == 30_000 and task["ttlSeconds"] == 72 * 3600 + 86_400
    polled = bob.call("tasks/get", taskId=task["taskId"])
    assert (polled["resultType"], polled["status"]) == ("complete", "working") and "result" not in polled
    app.workspace.execute(u["alice"], f"{STUDIO}/held/{task['taskId']}", "approve", {}, browser=True)
    done = bob.call("tasks/get", taskId=task["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is False
    assert done["result"]["structuredContent"]["url"] == decision
    assert done["result"]["content"][0]["text"].startswith("✓ ") and done["lastUpdatedAt"] >= done["createdAt"]
    ack = bob.call("tasks/update", taskId=task["taskId"], inputResponses={})
    assert ack["resultType"] == "complete" and set(ack) == {"resultType", "_meta"}  # an empty acknowledgement


def test_rejected_cancelled_and_expired_tasks_complete_with_the_reason(team, store_kind, request):
    app, u, decision = team
    bob = agent(app, u["bob"])
    call = lambda title: bob.call("tools/call", name="execute_action",  # noqa: E731
                                  arguments={"action": "add_option", "url": decision, "params": {"title": title}})
    rejected, cancelled, expired = call("A"), call("B"), call("C")
    app.workspace.execute(u["alice"], f"{STUDIO}/held/{rejected['taskId']}", "reject", {"note": "not now"},
                          browser=True)
    assert agent(app, u["alice"]).call("tasks/cancel", taskId=cancelled["taskId"])["resultType"] == "complete"
    assert bob.call("tasks/get", taskId=cancelled["taskId"])["status"] == "working"  # not hers to withdraw
    bob.call("tasks/cancel", taskId=cancelled["taskId"])
    bob.call("tasks/cancel", taskId="no-such-task")  # acknowledged whatever the id
    # as the owner: nobody rewrites a held request through the app role
    _as_owner(app, store_kind, request, "UPDATE held_actions SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE id = ?",
              (expired["taskId"],))
    for task, words in ((rejected, "it was rejected (not now)"), (cancelled, "it was withdrawn"),
                        (expired, "it was expired (nobody approved it before")):
        got = bob.call("tasks/get", taskId=task["taskId"])
        assert got["status"] == "completed" and got["result"]["isError"] is True, got
        assert words in got["result"]["content"][0]["text"], got
    assert len(app.workspace.page(u["alice"], decision).data["options"]) == 1  # none of them ran


def test_no_task_without_the_extension_and_none_for_strangers(team):
    app, u, decision = team
    plain = agent(app, u["bob"], capabilities={}).call(
        "tools/call", name="execute_action", arguments={"action": "close_decision", "url": decision})
    assert plain["resultType"] == "complete" and plain["structuredContent"]["held"]["status"] == "pending"
    task_id = plain["structuredContent"]["held"]["id"]
    assert agent(app, u["bob"]).call("tasks/get", taskId=task_id)["status"] == "working"  # the same hold, as a task
    refused = agent(app, u["dave"]).error("tasks/get", taskId=task_id)
    assert refused["code"] == -32602 and "no task" in refused["message"]
    agent(app, u["dave"]).call("tasks/cancel", taskId=task_id)
    assert agent(app, u["bob"]).call("tasks/get", taskId=task_id)["status"] == "working"  # a stranger cancels nothing
