"""Many processes, one PostgreSQL: 20 real `bin/mcp-server` stdio processes, each acting as its own
user (NAVMCP_TOKEN), join a commitment with limit 5, vote and comment at the same moment.
Exactly 5 get in, the others get a clear refusal; every acknowledged vote and comment is stored."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from deadlines import HANG, wait_for
from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.demo.walkthrough import StdioClient, text_of
from navmcp.errors import Busy, NavError
from navmcp.identity import add_user, mint_token
from store_fixtures import waiting_for_locks

CLIENTS = 20
LIMIT = 5


@pytest.mark.slow
def test_twenty_processes_join_vote_and_comment_at_once(tmp_path, pg_url, pg_database):
    home = tmp_path / "home"
    app = App(Config(home=home, database_url=pg_url, token=None))
    ws = app.workspace
    admin = add_user(app.store, "admin")
    ws.execute(admin, "/", "create_studio", {"handle": "crowd", "name": "Crowd"})
    commitment = ws.execute(admin, "/studios/crowd", "create_commitment",
                            {"title": "Small boat trip", "critical_mass": 3, "limit": LIMIT}).url
    decision = ws.execute(admin, "/studios/crowd", "create_decision",
                          {"question": "Which day?", "options": ["Saturday", "Sunday"]}).url
    tokens = []
    for n in range(CLIENTS):
        user = add_user(app.store, f"sailor-{n}")
        add_member(ws, admin, "/studios/crowd/members", {"handle": user["handle"]})
        tokens.append((user, mint_token(app.secret, user["id"])))
    app.store.close()

    clients = [StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_DATABASE_URL": pg_url, "NAVMCP_TOKEN": token,
                                "NAVMCP_PG_POOL_SIZE": "2"}, client_name=f"sailor-{n}")
               for n, (_, token) in enumerate(tokens)]
    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            assert all("result" in r for r in pool.map(lambda c: c.initialize(), clients))
            start = threading.Barrier(CLIENTS)

            def work(n: int):
                client = clients[n]
                start.wait(timeout=60)  # every process acts at the same moment
                join = client.act("join_commitment", url=commitment)
                vote = client.act("vote", url=decision, votes=[
                    {"option": "Saturday", "accept": True, "prefer": n % 2 == 0},
                    {"option": "Sunday", "accept": n % 3 == 0}])
                comment = client.act("add_comment", url=commitment, body=f"comment from sailor-{n}")
                return join, vote, comment

            results = list(pool.map(work, range(CLIENTS)))
    finally:
        codes = [client.close() for client in clients]
    assert codes == [0] * CLIENTS  # every server exits cleanly at end of input

    joined = [n for n, (join, _, _) in enumerate(results) if not join.get("isError")]
    refused = [text_of(join) for join, _, _ in results if join.get("isError")]
    assert len(joined) == LIMIT, [text_of(j) for j, _, _ in results]
    assert len(refused) == CLIENTS - LIMIT
    for text in refused:
        assert "join_commitment is not available" in text and ("full" in text or "closed" in text), text
    acknowledged_votes = {tokens[n][0]["id"] for n, (_, vote, _) in enumerate(results) if not vote.get("isError")}
    acknowledged_comments = sum(not comment.get("isError") for _, _, comment in results)
    assert len(acknowledged_votes) == CLIENTS and acknowledged_comments == CLIENTS

    with psycopg.connect(pg_database.admin_url) as db:  # the owner's view: everything that was stored
        participants = {r[0] for r in db.execute(
            "SELECT p.user_id FROM participants p JOIN items i ON i.id = p.commitment_id WHERE i.title = %s",
            ("Small boat trip",))}
        assert participants == {tokens[n][0]["id"] for n in joined}
        assert db.execute("SELECT closed_at IS NOT NULL FROM items WHERE title = %s",
                          ("Small boat trip",)).fetchone()[0]
        voters = {r[0] for r in db.execute("SELECT DISTINCT user_id FROM votes")}
        assert voters == acknowledged_votes
        assert db.execute("SELECT count(*) FROM votes").fetchone()[0] == 2 * CLIENTS
        assert db.execute("SELECT count(*) FROM comments").fetchone()[0] == CLIENTS


def test_two_admins_demoting_each_other_at_once_leave_an_admin(tmp_path, pg_url, pg_database):
    # Each sees the other still admin; without the studio row lock both would commit and leave none.
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    x, y = add_user(app.store, "xena"), add_user(app.store, "yuri")
    rounds = 12
    for n in range(rounds):
        ws.execute(x, "/", "create_studio", {"handle": f"duo-{n}", "name": "Duo"})
        add_member(ws, x, f"/studios/duo-{n}/members", {"handle": "yuri", "role": "admin"})

    def demote(actor, other, n, barrier):
        barrier.wait(timeout=30)
        try:
            add_member(ws, actor, f"/studios/duo-{n}/members", {"handle": other, "role": "member"})
            return "ok"
        except Exception as e:  # a refusal is fine; losing the last admin is not
            return type(e).__name__

    try:
        with ThreadPoolExecutor(2) as pool:
            for n in range(rounds):
                barrier = threading.Barrier(2)
                outcomes = list(pool.map(lambda args: demote(*args), [(x, "yuri", n, barrier), (y, "xena", n, barrier)]))
                assert "ok" in outcomes and set(outcomes) <= {"ok", "ActionFailed", "ActionUnavailable"}, outcomes
    finally:
        app.store.close()
    with psycopg.connect(pg_database.admin_url) as db:
        admins = dict(db.execute("SELECT s.handle, count(m.user_id) FILTER (WHERE m.role = 'admin') FROM studios s"
                                 " JOIN memberships m ON m.studio_id = s.id GROUP BY s.handle").fetchall())
    assert len(admins) == rounds and min(admins.values()) == 1, admins


def test_an_action_and_a_change_of_its_users_role_take_turns(tmp_path, pg_url, pg_database):
    """An action reads its user's role when it resolves its page and acts on it later. A demotion
    committed in between made an admin's close a silent no-op (the items trigger skipped it) that was
    reported and audited as done, and a removal made a member's insert an internal error. The
    action now holds its user's membership row: it waits for a role change in flight, then reads
    the new role."""
    from navmcp.errors import ActionUnavailable, NotFound

    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    try:
        alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
        ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
        add_member(ws, alice, "/studios/team/members", {"handle": "bob", "role": "admin"})
        decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Q", "options": ["a"]}).url
        studio_id = app.store.read_one("SELECT id FROM studios WHERE handle = 'team'", user_id=alice["id"])["id"]

        def bobs_action_during(change: str, action: str, url: str, params=None):
            outcome = {}

            def run():
                try:
                    outcome["ok"] = ws.execute(bob, url, action, params).message
                except (ActionUnavailable, NotFound) as e:
                    outcome["refused"] = e.message

            with app.store.write(user_id=alice["id"]) as tx:  # alice's change, not yet committed
                tx.execute(change, (studio_id, bob["id"]))
                worker = threading.Thread(target=run)
                worker.start()
                wait_for(lambda: waiting_for_locks(pg_database) or not worker.is_alive(), "bob's action waits or ends")
                assert worker.is_alive(), f"bob's {action} did not wait for the change of his role: {outcome}"
            worker.join(timeout=HANG)
            return outcome

        demoted = bobs_action_during("UPDATE memberships SET role = 'member' WHERE studio_id = ? AND user_id = ?",
                                     "close_decision", decision)
        assert "only its creator or a studio admin" in demoted["refused"], demoted
        assert app.store.read_one("SELECT closed_at FROM items WHERE id = ?", (decision.rsplit("/", 1)[1],),
                                  user_id=alice["id"])["closed_at"] is None
        removed = bobs_action_during("DELETE FROM memberships WHERE studio_id = ? AND user_id = ?",
                                     "add_comment", decision, {"body": "still here?"})
        assert "refused" in removed, removed  # the studio now reads as missing to him, not an internal error
    finally:
        app.store.close()


def test_a_pool_whose_idle_connections_all_died_answers_the_next_call(tmp_path, pg_url, pg_database, monkeypatch):
    """A server restart kills every idle pooled connection. Each retry of a transaction start drew
    another dead one, so with more of them than retries the next call failed (AdminShutdown): the
    pool is now checked at the first failure."""
    monkeypatch.setenv("NAVMCP_PG_POOL_SIZE", "7")  # more connections than PostgresStore.RETRIES
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        alice = add_user(app.store, "alice")
        app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
        start = threading.Barrier(7)

        def hold():  # seven transactions at once: seven connections in the pool
            with app.store.read(alice["id"]) as tx:
                start.wait(timeout=30)
                tx.one("SELECT pg_sleep(0.2)")

        with ThreadPoolExecutor(7) as pool:
            list(pool.map(lambda _: hold(), range(7)))
        assert app.store.pool.get_stats()["pool_size"] == 7
        with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
            killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                   " WHERE datname = %s AND usename = 'navmcp_app'", (pg_database.name,)).fetchone()
        assert killed[0] >= 7
        assert app.workspace.page(alice, "/studios/team").title == "Team"
    finally:
        app.store.close()


def test_a_call_kept_waiting_by_a_lock_held_elsewhere_is_refused_in_time(tmp_path, pg_url, pg_database, monkeypatch):
    """No lock or statement timeout was set: a row locked by another session (an operator's open
    psql transaction, a stuck migration) stalled every call that needed it for as long as it was
    held, each keeping a pooled connection. A call now waits NAVMCP_PG_LOCK_TIMEOUT at most, is
    rolled back whole and answered Busy (503); sent again once the lock is gone, it goes through."""
    monkeypatch.setenv("NAVMCP_PG_LOCK_TIMEOUT", "300ms")
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    ws = app.workspace
    try:
        alice = add_user(app.store, "alice")
        ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
        decision = ws.execute(alice, "/studios/team", "create_decision", {"question": "Q", "options": ["a"]}).url
        vote = {"votes": [{"option": "a", "accept": True}]}
        with psycopg.connect(pg_database.admin_url) as other:  # a transaction left open elsewhere
            other.execute("SELECT 1 FROM items WHERE title = 'Q' FOR UPDATE")
            started = time.monotonic()
            with pytest.raises(Busy) as refused:
                ws.execute(alice, decision, "vote", vote)
            waited = time.monotonic() - started
        assert waited >= 0.3, waited  # it waited for the lock as long as it may, and no longer: the message
        assert refused.value.status == 503
        assert "held what this one needed for more than 300ms" in refused.value.message
        assert "nothing of it was applied, so it is safe to send again" in refused.value.message
        with psycopg.connect(pg_database.admin_url) as db:
            assert db.execute("SELECT count(*) FROM votes").fetchone()[0] == 0
            assert db.execute("SELECT count(*) FROM audit WHERE action = 'vote'").fetchone()[0] == 0  # nothing at all
        assert ws.execute(alice, decision, "vote", vote).ok  # the same call, sent again
    finally:
        app.store.close()


def test_a_statement_past_its_timeout_is_busy_and_bad_timeouts_are_named(tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("NAVMCP_PG_STATEMENT_TIMEOUT", "200ms")
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        with pytest.raises(Busy, match="a statement of this call ran longer than 200ms"):
            with app.store.read() as tx:
                tx.one("SELECT pg_sleep(2)")
        with app.store.read() as tx:  # the connection it ran on is fine for the next call
            assert tx.one("SELECT 1 AS one")["one"] == 1
    finally:
        app.store.close()
    monkeypatch.setenv("NAVMCP_PG_LOCK_TIMEOUT", "soon")
    with pytest.raises(NavError, match="NAVMCP_PG_LOCK_TIMEOUT .*soon"):
        App(Config(home=tmp_path / "home2", database_url=pg_url, token=None)).store  # noqa: B018 — opening it is the test
