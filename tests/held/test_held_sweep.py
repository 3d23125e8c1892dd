"""The sweep over the action table (navmcp/held/): for every action an agent may run, a rule holding
it holds it; the held request is visible to and decidable by an eligible approver in the browser;
approving runs exactly what was held, as the requester, and the audit says who approved. Actions
outside a studio (no studio's rule reaches them) and the exempt ones run at once. Built on the
authorization matrix's world and expectations (tests/test_adv_authz.py), on both stores: on
PostgreSQL the world is written once as the app role and each case runs on a copy of that database
(CREATE DATABASE … TEMPLATE), the requester's run judged by row-level security as them."""

from __future__ import annotations

import contextlib
import json
import secrets

import pytest

from adversarial import world
from navmcp.held.rules import EXEMPT
from navmcp.identity import user_by_id
from store_fixtures import PG_ADMIN_URL, _url
from test_adv_authz import ACTION_EXPECT, SETUP, params_of, url_of

PREFERRED = ("author", "member", "admin")  # whose agent asks: the author where allowed
SWEPT = sorted((page, action) for (page, action), (_, _, who) in ACTION_EXPECT.items() if set(who) & set(PREFERRED))


@contextlib.contextmanager
def _pg_database(template: str | None = None):
    """A throwaway database (migrated, or a copy of `template`): (app URL, owner URL)."""
    psycopg = pytest.importorskip("psycopg")
    from navmcp.store.postgres import migrate

    name = f"navmcp_test_sweep_{secrets.token_hex(4)}"
    user = "postgres"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        try:
            urls = (_url(PG_ADMIN_URL, "navmcp_app", name), _url(PG_ADMIN_URL, user, name))
            if template is None:
                migrate(urls[1])
            yield urls
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def template(request, tmp_path_factory):
    home = tmp_path_factory.mktemp("held-sweep") / "home"
    if request.param == "sqlite":
        yield world.build(home)
        return
    request.getfixturevalue("pg_database")  # PostgreSQL reachable (or skipped, or failed where required)
    with _pg_database() as database:
        yield world.build(home, database=database)


@pytest.fixture
def sweep_world(template, tmp_path):
    """A copy of the template world to write in."""
    if template.database is None:
        yield world.copy(template, tmp_path / "w")
        return
    with _pg_database(template=template.database[1].rsplit("/", 1)[1]) as database:
        yield world.copy(template, tmp_path / "w", database)


def test_the_sweep_covers_every_action_an_agent_may_run():
    assert {a for _, a in SWEPT} >= {a for (_, a), (_, _, who) in ACTION_EXPECT.items() if who} - {"approve", "reject"}
    assert len(SWEPT) > 40


@pytest.mark.parametrize("page,action", SWEPT)
def test_a_held_request_is_decided_and_runs_exactly_what_was_held(sweep_world, page, action):
    key, params, allowed = ACTION_EXPECT[(page, action)]
    w = sweep_world
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
        with app.store.read(user_id=requester["id"]) as tx:  # the row as the setup left it (findable or not)
            requester = user_by_id(tx, requester["id"])
        ws.execute(admin, "/studios/adv/held", "set_hold_rule", {"actions": action, "approvers": approvers},
                   browser=True)
        url = url_of(w, key)
        result = ws.execute(requester, url, action, params, "sweep-agent")
        if action in EXEMPT or not url.startswith("/studios/adv"):
            assert result.held is None, (action, "is never held here")
            return
        assert result.held is not None and result.message.startswith("Not done yet"), (action, result.message)
        ((action_held, params_held, client),) = world.owner_sql(
            w, app, "SELECT action, params, client FROM held_actions WHERE id = ?", (result.held["id"],))
        assert action_held == action and json.loads(params_held) == {k: v for k, v in params.items() if v is not None}
        shown = ws.page(approver, result.url, browser=True)
        assert {"approve", "reject"} <= {a.name for a in shown.actions}, (action, shown.markdown)
        assert f"`{action}`" in shown.markdown
        done = ws.execute(approver, result.url, "approve", {"anyway": True}, browser=True)
        assert done.message.startswith(f"Approved: {action} ran as @{requester['handle']}."), done.message
        ((status, message),) = world.owner_sql(w, app, "SELECT status, result_message FROM held_actions WHERE id = ?",
                                              (result.held["id"],))
        assert status == "executed" and message, (status, message)
        audit = world.owner_sql(w, app, "SELECT user_id, client, param_names FROM audit WHERE action = ?"
                                        " AND outcome LIKE 'ok, approved by%'", (action,))
        assert [(user_id, by, json.loads(names)) for user_id, by, names in audit] == [
            (requester["id"], client, sorted(json.loads(params_held)))], audit
    finally:
        app.store.close()
