"""Approval in the MCP client (navmcp/held/elicit.py), with the official SDK client (a peer nobody
here wrote) over stdio in the 2026-07-28 era: a held write whose rule allows approval in the client
asks the client's person through its elicitation callback, and their answer approves (the action
runs as held), withdraws it, or leaves it pending. A forged, expired or missing signed state, or a
dismissed form, decides nothing: the hold stays pending at its page."""

from __future__ import annotations

import time

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.types import ElicitResult, InputRequiredResult  # noqa: E402

from mcp import Client  # noqa: E402
from nav_helpers import add_member  # noqa: E402
from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.demo.walkthrough import server_command  # noqa: E402
from navmcp.held import elicit  # noqa: E402
from navmcp.identity import create_user, ensure_owner, mint_token  # noqa: E402

STUDIO = "/studios/team"


@pytest.fixture
def team(tmp_path):
    """alice (the owner, an admin) and bob (a member) in `team`; bob's own rule holds his agent's
    close_decision for his own approval, in the client too; three decisions of bob's."""
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=None, token=None))
    alice = ensure_owner(app.store)
    with app.store.write() as tx:
        bob = create_user(tx, "bob", findable=True)
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "bob"})
    decisions = [ws.execute(bob, STUDIO, "create_decision", {"question": f"Q{n}?", "options": ["a"]},
                            browser=True).url for n in range(3)]
    ws.execute(bob, f"{STUDIO}/held", "set_hold_rule", {"actions": "close_decision", "approvers": "self",
                                                          "scope": "mine", "in_client": True}, browser=True)
    yield app, home, bob, decisions
    app.store.close()


def run_agent(home, bob, app, script, answer=None):
    """`script(client)` as bob's agent (an SDK client pinned to 2026-07-28); `answer(message)` is
    the client's person answering an elicitation, None for a client without the capability."""
    asked: list[str] = []

    async def person(context, params):
        asked.append(params.message)
        return answer(params.message)

    async def main():
        with anyio.fail_after(60):
            command = server_command()
            params = StdioServerParameters(command=command[0], args=command[1:], env={
                "NAVMCP_HOME": str(home), "NAVMCP_TOKEN": mint_token(app.secret, bob["id"]),
                "NAVMCP_LOG_LEVEL": "WARNING"})
            async with Client(params, mode="2026-07-28",
                              elicitation_callback=person if answer is not None else None) as client:
                return await script(client)

    return anyio.run(main), asked


def held_rows(app):
    with app.store.read() as tx:
        return {r["url"]: r for r in tx.all("SELECT * FROM held_actions")}


def closed(app, url) -> bool:
    with app.store.read() as tx:
        return tx.scalar("SELECT closed_at FROM items WHERE id = ?", (url.rsplit("/", 1)[1],)) is not None


def close(url):
    async def script(client):
        return await client.call_tool("execute_action", {"action": "close_decision", "url": url})
    return script


def text(result) -> str:
    return result.content[0].text


def test_the_person_allows_and_the_action_runs_as_held(team):
    app, home, bob, decisions = team
    result, asked = run_agent(home, bob, app, close(decisions[0]),
                              lambda message: ElicitResult(action="accept", content={"answer": "approve", "note": "ok"}))
    assert len(asked) == 1 and asked[0].startswith(f"Your agent wants to run close_decision on {decisions[0]}.")
    assert asked[0].endswith("Allow it?")
    assert not result.is_error and text(result).startswith("✓ Approved: close_decision ran as @bob."), text(result)
    assert closed(app, decisions[0])
    row = held_rows(app)[decisions[0]]
    assert (row["status"], row["decided_by"]) == ("executed", bob["id"])
    with app.store.read() as tx:
        audit = tx.one("SELECT * FROM audit WHERE action = 'close_decision' AND outcome LIKE 'ok%'")
    assert audit["user_id"] == bob["id"] and audit["outcome"].startswith("ok, approved by @bob via ")


def test_declined_is_withdrawn_and_dismissed_stays_pending(team):
    app, home, bob, decisions = team
    result, asked = run_agent(home, bob, app, close(decisions[0]), lambda message: ElicitResult(action="decline"))
    assert len(asked) == 1 and "Withdrawn" in text(result)
    assert held_rows(app)[decisions[0]]["status"] == "withdrawn" and not closed(app, decisions[0])
    result, asked = run_agent(home, bob, app, close(decisions[1]), lambda message: ElicitResult(action="cancel"))
    assert len(asked) == 1 and text(result).startswith("⏸ No answer was given; nothing was approved. Not done yet")
    assert held_rows(app)[decisions[1]]["status"] == "pending" and not closed(app, decisions[1])


def test_a_forged_or_expired_state_decides_nothing(team):
    app, home, bob, decisions = team
    url = decisions[2]
    arguments = {"action": "close_decision", "url": url}
    allow = {elicit.KEY: ElicitResult(action="accept", content={"answer": "approve"})}

    async def script(client):
        first = await client.session.call_tool("execute_action", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult) and set(first.input_requests) == {elicit.KEY}
        payload, mac = first.request_state.split(".")
        held_id = held_rows(app)[url]["id"]
        digest = elicit.call_digest("close_decision", None, url)
        states = {
            "forged": payload + "." + mac[::-1],  # the right facts, another signature
            "another secret": elicit.sign(b"x" * 32, bob["id"], held_id, f"{STUDIO}/held/{held_id}", digest),
            "expired": elicit.sign(app.secret, bob["id"], held_id, f"{STUDIO}/held/{held_id}", digest,
                                   at=time.time() - elicit.STATE_SECONDS - 1),
            "another call": elicit.sign(app.secret, bob["id"], held_id, f"{STUDIO}/held/{held_id}", "0" * 64),
            "missing": None,
        }
        answers = {}
        for name, state in states.items():
            answers[name] = await client.session.call_tool("execute_action", arguments, input_responses=allow,
                                                           request_state=state, allow_input_required=True)
        # a missing answer with a good state: still nothing decided
        answers["no answer"] = await client.session.call_tool("execute_action", arguments, input_responses={},
                                                              request_state=first.request_state,
                                                              allow_input_required=True)
        return answers

    answers, _ = run_agent(home, bob, app, script, lambda message: ElicitResult(action="cancel"))
    for name, result in answers.items():
        assert not isinstance(result, InputRequiredResult), name  # no second question: the answer was the one
        assert text(result).startswith("⏸ "), (name, text(result))
    assert "asked more than 10 minutes ago" in text(answers["expired"])
    assert "not one this server signed" in text(answers["forged"]) and "not one this server signed" in text(
        answers["another secret"])
    assert "another person or another call" in text(answers["another call"])
    assert "came without the state" in text(answers["missing"])
    assert "No answer was given" in text(answers["no answer"])
    rows = held_rows(app)
    assert len(rows) == 1 and rows[url]["status"] == "pending" and not closed(app, url)  # the same hold, waiting


def test_no_question_without_the_capability_or_the_rule(team):
    app, home, bob, decisions = team
    result, asked = run_agent(home, bob, app, close(decisions[0]))  # a client without elicitation
    assert text(result).startswith("⏸ Not done yet") and held_rows(app)[decisions[0]]["status"] == "pending"
    with app.store.write() as tx:
        tx.execute("UPDATE hold_rules SET in_client = 0")
    result, asked = run_agent(home, bob, app, close(decisions[1]),
                              lambda message: ElicitResult(action="accept", content={"answer": "approve"}))
    assert asked == [] and text(result).startswith("⏸ Not done yet") and not closed(app, decisions[1])


def test_approval_in_the_client_on_both_stores(any_app, new_user):
    """The same exchange as the SDK's, in 2026-07-28 messages to the protocol core, on either store
    (on PostgreSQL the approval and its decision are judged by row-level security as the person)."""
    from mcp_rpc import Rpc

    ws = any_app.workspace
    (alice, _), (bob, token) = new_user("alice"), new_user("bob")
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "bob"})
    decision = ws.execute(bob, STUDIO, "create_decision", {"question": "Q?", "options": ["a"]}, browser=True).url
    ws.execute(bob, f"{STUDIO}/held", "set_hold_rule", {"actions": "close_decision", "approvers": "self",
                                                          "scope": "mine", "in_client": True}, browser=True)
    agent = Rpc(any_app, token, capabilities={"elicitation": {"form": {}}})
    arguments = {"action": "close_decision", "url": decision}
    asked = agent.call("tools/call", name="execute_action", arguments=arguments)
    assert asked["resultType"] == "input_required" and "content" not in asked
    form = asked["inputRequests"][elicit.KEY]
    assert form["method"] == "elicitation/create" and form["params"]["mode"] == "form"
    assert form["params"]["requestedSchema"]["required"] == ["answer"]
    done = agent.call("tools/call", name="execute_action", arguments=arguments, requestState=asked["requestState"],
                      inputResponses={elicit.KEY: {"action": "accept", "content": {"answer": "approve"}}})
    assert done["resultType"] == "complete" and done["content"][0]["text"].startswith("✓ Approved:"), done
    replay = agent.call("tools/call", name="execute_action", arguments=arguments, requestState=asked["requestState"],
                        inputResponses={elicit.KEY: {"action": "accept", "content": {"answer": "approve"}}})
    assert replay["isError"] is True and "approved it already" in replay["content"][0]["text"]  # once only
    assert ws.page(bob, decision).data["item"]["closed_at"] is not None
