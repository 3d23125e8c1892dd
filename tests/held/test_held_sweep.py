"""The sweep over the action table (navmcp/held/): for every action an agent may run, a rule holding
it holds it; the held request is visible to and decidable by an eligible approver in the browser;
approving runs exactly what was held, as the requester, and the audit says who approved. Actions
outside a studio (no studio's rule reaches them) and the exempt ones run at once. Built on the
authorization matrix's world and expectations (tests/test_adv_authz.py), on SQLite."""

from __future__ import annotations

import json

import pytest

from adversarial import world
from navmcp.held.rules import EXEMPT
from navmcp.identity import user_by_id
from test_adv_authz import ACTION_EXPECT, SETUP, params_of, url_of

PREFERRED = ("author", "member", "admin")  # whose agent asks: the author where allowed
SWEPT = sorted((page, action) for (page, action), (_, _, who) in ACTION_EXPECT.items() if set(who) & set(PREFERRED))


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("held-sweep") / "home")


def test_the_sweep_covers_every_action_an_agent_may_run():
    assert {a for _, a in SWEPT} >= {a for (_, a), (_, _, who) in ACTION_EXPECT.items() if who} - {"approve", "reject"}
    assert len(SWEPT) > 40


@pytest.mark.parametrize("page,action", SWEPT)
def test_a_held_request_is_decided_and_runs_exactly_what_was_held(template, tmp_path, page, action):
    key, params, allowed = ACTION_EXPECT[(page, action)]
    w = world.copy(template, tmp_path / "w")
    params = params_of(w, params)
    role = next(r for r in PREFERRED if r in allowed)
    requester, admin = w.users[role], w.users["admin"]
    # the admin's own agent needs another's approval: any member then; else an admin
    approver, approvers = (w.users["member"], "members") if role == "admin" else (admin, "admins")
    app = w.app()
    try:
        ws = app.workspace
        steps = SETUP.get((page, action), [])
        for name, p in steps if isinstance(steps, list) else [steps]:
            ws.execute(requester, url_of(w, key), name, p, "sweep")
        with app.store.read() as tx:  # the row as the setup left it (findable or not)
            requester = user_by_id(tx, requester["id"])
        ws.execute(admin, "/studios/adv/held", "set_hold_rule", {"actions": action, "approvers": approvers},
                   browser=True)
        url = url_of(w, key)
        result = ws.execute(requester, url, action, params, "sweep-agent")
        if action in EXEMPT or not url.startswith("/studios/adv"):
            assert result.held is None, (action, "is never held here")
            return
        assert result.held is not None and result.message.startswith("Not done yet"), (action, result.message)
        with app.store.read() as tx:
            row = tx.one("SELECT * FROM held_actions WHERE id = ?", (result.held["id"],))
        assert row["action"] == action and json.loads(row["params"]) == {k: v for k, v in params.items()
                                                                          if v is not None}
        shown = ws.page(approver, result.url, browser=True)
        assert {"approve", "reject"} <= {a.name for a in shown.actions}, (action, shown.markdown)
        assert f"`{action}`" in shown.markdown
        done = ws.execute(approver, result.url, "approve", {"anyway": True}, browser=True)
        assert done.message.startswith(f"Approved: {action} ran as @{requester['handle']}."), done.message
        with app.store.read() as tx:
            after = tx.one("SELECT status, result_message FROM held_actions WHERE id = ?", (result.held["id"],))
            audit = tx.one("SELECT * FROM audit WHERE action = ? AND outcome LIKE 'ok, approved by%'", (action,))
        assert after["status"] == "executed" and after["result_message"], after
        assert audit["user_id"] == requester["id"] and audit["client"] == row["client"]  # the world's held remind is joined
        assert json.loads(audit["param_names"]) == sorted(row and json.loads(row["params"]))
    finally:
        app.store.close()
