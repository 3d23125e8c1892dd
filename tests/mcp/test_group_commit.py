"""Group commit: messages that arrive together share one store transaction, committed once.

- pipelined writes through the real `bin/mcp-server` all land, each exactly once, and every reply
  is sent only after its write is committed (a second connection sees it when the reply arrives);
- a refused action inside a group rolls back alone: the writes around it commit, it is audited;
- when the group's COMMIT fails, no write of the group is applied and every request that wrote (or
  failed) is answered with an error (none with the success it computed before the commit);
- reads in a group see the group's earlier writes; a group never holds more than MAX_GROUP messages;
- a read after a write commits the group's writes first: no write lock is held across reads, and
  when a later commit fails, what an earlier one applied keeps its replies;
- the change feed hears of a page once per transaction of the group, not once per write in it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import SERVER
from navmcp.mcp import stdio
from navmcp.mcp.tools import connect

STUDIO = "/studios/team"


def frame(n: int, method: str, params: dict | None = None) -> bytes:
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


def call(n: int, tool: str, **arguments) -> bytes:
    return frame(n, "tools/call", {"name": tool, "arguments": arguments})


INIT = frame(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}})


class Out(io.BytesIO):
    """stdout for `serve`: records what had been written at each flush."""

    def __init__(self):
        super().__init__()
        self.flushed: list[int] = []

    def flush(self):
        self.flushed.append(len(self.getvalue()))


def serve_all(app, data: bytes) -> list[dict]:
    """`data` as one pipelined burst through the stdio transport (the store already open)."""
    out = Out()
    assert stdio.serve(connect(app, None), io.BytesIO(INIT + data), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()][1:]


@pytest.fixture
def studio(ws, owner):
    ws.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    return ws


def env(tmp_path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("NAVMCP_")},
            "NAVMCP_HOME": str(tmp_path / "home")}


def notes(app) -> list[str]:
    with app.store.read() as tx:
        return [r["title"] for r in tx.all("SELECT title FROM items WHERE kind = 'note' ORDER BY seq")]


def test_pipelined_writes_through_the_real_server_each_land_once(tmp_path):
    burst = [INIT, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', call(1, "execute_action", action="create_studio", url="/", params={"handle": "team", "name": "T"})]
    burst += [call(n, "execute_action", action="create_note", url=STUDIO, params={"title": f"n{n}", "body": "b"})
              for n in range(2, 202)]
    burst.append(call(202, "navigate", url=STUDIO))
    done = subprocess.run([str(SERVER)], input=b"".join(burst), capture_output=True, env=env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == list(range(203))
    assert not any(r["result"].get("isError") for r in replies[1:]), replies
    assert "n201" in replies[-1]["result"]["content"][0]["text"]  # the feed, read in the same group
    with contextlib.closing(sqlite3.connect(tmp_path / "home" / "navmcp.db")) as db:
        titles = [t for (t,) in db.execute("SELECT title FROM items WHERE kind = 'note' ORDER BY seq")]
        assert titles == [f"n{n}" for n in range(2, 202)]
        assert db.execute("SELECT count(*) FROM audit WHERE action = 'create_note' AND outcome = 'ok'").fetchone() == (200,)


def test_each_reply_is_sent_after_its_write_is_committed(tmp_path):
    """A client reading the replies one by one sees each acknowledged note in the database."""
    proc = subprocess.Popen([str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env(tmp_path))
    try:
        proc.stdin.write(INIT + call(1, "execute_action", action="create_studio", url="/",
                                     params={"handle": "team", "name": "T"}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        assert not json.loads(proc.stdout.readline())["result"]["isError"]
        proc.stdin.write(b"".join(call(n, "execute_action", action="create_note", url=STUDIO,
                                        params={"title": f"n{n}", "body": "b"}) for n in range(2, 302)))
        proc.stdin.flush()
        with contextlib.closing(sqlite3.connect(tmp_path / "home" / "navmcp.db")) as db:
            for n in range(2, 302):
                reply = json.loads(proc.stdout.readline())
                assert reply["id"] == n and not reply["result"]["isError"]
                assert db.execute("SELECT count(*) FROM items WHERE title = ?", (f"n{n}",)).fetchone() == (1,), n
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        proc.stdout.close()


def test_a_refused_action_in_a_group_rolls_back_alone_and_is_audited(app, studio):
    burst = [call(1, "execute_action", action="create_note", url=STUDIO, params={"title": "before", "body": "b"}),
             call(2, "execute_action", action="create_note", url=STUDIO, params={"title": "", "body": "b"}),
             call(3, "execute_action", action="vote", url=STUDIO, params={}),
             call(4, "execute_action", action="create_note", url=STUDIO, params={"title": "after", "body": "b"}),
             call(5, "navigate", url=STUDIO)]
    replies = serve_all(app, b"".join(burst))
    assert [r["result"]["isError"] for r in replies] == [False, True, True, False, False]
    assert "title" in replies[1]["result"]["content"][0]["text"]
    assert "vote is not an action of /studios/team" in replies[2]["result"]["content"][0]["text"]
    assert "before" in replies[4]["result"]["content"][0]["text"] and "after" in replies[4]["result"]["content"][0]["text"]
    assert notes(app) == ["before", "after"]
    with app.store.read() as tx:
        outcomes = [r["outcome"].split(":")[0] for r in tx.all("SELECT outcome FROM audit WHERE action != 'create_studio' ORDER BY id")]
    assert outcomes == ["ok", "invalid params", "refused", "ok"]


def changes_of(app) -> list[tuple]:
    with app.store.read() as tx:
        return tx.tuples("SELECT studio_id, item_id, user_id, action FROM changes ORDER BY seq")


def test_a_groups_writes_to_one_page_are_one_change_of_it(app, studio, owner):
    """The change feed hears of a group's commit once per page, user and kind of action, not of each
    write in it (pipelined votes on a decision are one change of it); a write rolled back leaves nothing that
    would silence the next one's, and once the group has committed (a read after a write), a write
    is a change again."""
    decision = studio.execute(owner, STUDIO, "create_decision", {"question": "Lunch?", "options": ["A", "B"]}).url
    with app.store.read() as tx:
        team = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    seen = len(changes_of(app))
    with app.store.group():
        for option in ("A", "B", "A"):
            studio.execute(owner, decision, "vote", {"votes": [{"option": option}]})
        studio.execute(owner, STUDIO, "create_note", {"title": "n", "body": "b"})
        studio.execute(owner, decision, "add_comment", {"body": "done"})
    made = changes_of(app)[seen:]
    item = decision.rsplit("/", 1)[1]
    # the decision's votes once, the new note, the comment on the decision
    assert made[0] == (team, item, owner["id"], "vote") and len(made) == 3, made
    assert made[1][1] not in (item, None) and made[2] == (team, item, owner["id"], "add_comment")
    seen += len(made)
    with app.store.group():
        with pytest.raises(RuntimeError), app.store.write() as tx:
            tx.note_change("2026-01-01T00:00:00.000000Z", team, item, owner["id"], "vote")
            raise RuntimeError("rolled back after noting its change")
        studio.execute(owner, decision, "vote", {"votes": [{"option": "B"}]})
        with app.store.read() as tx:  # commits the vote: what comes after is another transaction
            tx.all("SELECT * FROM studios")
        studio.execute(owner, decision, "vote", {"votes": [{"option": "A"}]})
    assert changes_of(app)[seen:] == [(team, item, owner["id"], "vote")] * 2


def test_a_group_whose_commit_fails_applies_nothing_and_answers_every_request_with_an_error(app, studio, caplog):
    # A real COMMIT-time failure: a deferred foreign key that the second note's insert breaks
    # (temporary objects of this connection only, so the schema is untouched).
    app.store.conn.execute("CREATE TEMP TABLE parent (id TEXT PRIMARY KEY)")
    app.store.conn.execute("CREATE TEMP TABLE child (parent_id TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    app.store.conn.execute("CREATE TEMP TRIGGER poison AFTER INSERT ON main.items WHEN new.title = 'poison' "
                           "BEGIN INSERT INTO child VALUES ('no such parent'); END")
    burst = [call(1, "execute_action", action="create_note", url=STUDIO, params={"title": "first", "body": "b"}),
             call(2, "execute_action", action="create_note", url=STUDIO, params={"title": "poison", "body": "b"}),
             call(3, "navigate", url=STUDIO),
             frame(4, "ping"),
             call(5, "execute_action", action="vote", url=STUDIO, params={})]
    replies = serve_all(app, b"".join(burst))
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5]
    assert replies[3]["result"] == {}  # a ping wrote nothing: its answer stands
    for reply in replies[:3] + replies[4:]:
        assert "result" not in reply and reply["error"]["code"] == -32603, reply
        assert "nothing of it was applied" in reply["error"]["message"]
    assert notes(app) == []
    assert "could not be committed" in caplog.text
    # The connection goes on: the next message, alone, is served and committed as usual.
    app.store.conn.execute("DROP TRIGGER temp.poison")
    replies = serve_all(app, call(6, "execute_action", action="create_note", url=STUDIO,
                                  params={"title": "again", "body": "b"}))
    assert replies[0]["result"]["isError"] is False and notes(app) == ["again"]


def test_reads_in_a_group_see_its_writes_and_groups_are_bounded(app, studio, monkeypatch):
    groups = []
    real_group = app.store.group

    def counting_group():
        groups.append(0)
        return real_group()

    monkeypatch.setattr(app.store, "group", counting_group)
    monkeypatch.setattr(stdio, "MAX_GROUP", 4)
    burst = [call(1, "execute_action", action="create_note", url=STUDIO, params={"title": "seen", "body": "b"}),
             call(2, "navigate", url=STUDIO)] + [frame(n, "ping") for n in range(3, 11)]
    replies = serve_all(app, b"".join(burst))
    assert "seen" in replies[1]["result"]["content"][0]["text"]
    assert [r["id"] for r in replies] == list(range(1, 11))
    # initialize + 10 messages, all read at once, at most 4 per group: 3 groups.
    assert len(groups) == 3
    assert notes(app) == ["seen"]


def test_a_group_reads_the_acting_users_row_once_and_again_after_its_snapshot_ends(app, studio):
    """Calls of one group share a snapshot, so the user's row is read by the first of them only;
    a write that ends a read-only snapshot starts a new one (the row is read again), as does a read
    that follows a write, and a write
    naming the users table in the group forgets what was read."""
    reads = []
    app.store.conn.set_trace_callback(lambda sql: reads.append(sql) if sql.startswith("SELECT * FROM users") else None)
    try:
        navigations = [call(n, "navigate", url=STUDIO) for n in range(1, 4)]
        write_then_read = [call(4, "execute_action", action="create_note", url=STUDIO, params={"title": "n", "body": "b"}),
                     call(5, "navigate", url=STUDIO)]
        replies = serve_all(app, b"".join(navigations + write_then_read))
    finally:
        app.store.conn.set_trace_callback(None)
    assert all(r["result"]["isError"] is False for r in replies), replies
    # 3 navigations: one read; the write's new snapshot: one more; the navigation after it one more
    # (the write is committed before it, so that no lock is held across reads: a new snapshot).
    assert len(reads) == 3, reads
    with app.store.group():
        with app.store.write() as tx:
            tx.users["someone"] = {"id": "someone"}
            tx.execute("UPDATE users SET name = name WHERE id = ?", ("nobody",))
            assert tx.users == {}


def test_a_user_deleted_before_a_group_is_refused_in_it(app, studio, owner):
    from navmcp.identity import create_user, delete_user, mint_token

    with app.store.write() as tx:
        gone = create_user(tx, "gone", findable=True)
    token = mint_token(app.secret, gone["id"])
    with app.store.write() as tx:
        delete_user(tx, "gone")
    session = connect(app, token)
    session.receive(json.loads(INIT))
    with app.store.group():
        first = session.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "navigate", "arguments": {"url": "/"}}})
    assert first["result"]["isError"] and "does not exist" in first["result"]["content"][0]["text"]


def test_a_group_commits_its_writes_before_a_read_so_no_write_lock_is_held_across_reads(app, studio):
    """A client that pipelines a write and then reads (searches) must not keep every other writer
    of the file waiting while the reads run: the group commits before its first read after a write.
    Here the group's read is held open (a slow search) while another connection writes, with no
    busy timeout: a write lock still held would refuse it at once (`database is locked`)."""
    other = sqlite3.connect(app.store.path, timeout=0, isolation_level=None)
    try:
        with app.store.group():
            with app.store.write() as tx:
                tx.execute("UPDATE studios SET name = 'Team A' WHERE handle = 'team'")
            with app.store.read() as tx:
                tx.all("SELECT * FROM studios")
                other.execute("BEGIN IMMEDIATE")  # refused, unless the group's write was committed already
                other.execute("UPDATE studios SET description = 'other' WHERE handle = 'team'")
                other.execute("COMMIT")
                assert tx.scalar("SELECT name FROM studios WHERE handle = 'team'") == "Team A"
    finally:
        other.close()
    with app.store.read() as tx:
        assert tx.one("SELECT name, description FROM studios WHERE handle = 'team'") == {
            "name": "Team A", "description": "other"}


def test_a_group_whose_later_commit_fails_keeps_the_replies_an_earlier_commit_applied(app, studio, caplog):
    """Writes committed before a read of the group (see above) are acknowledged as they were; the
    requests after the last commit that held are answered as not applied, and nothing of them is."""
    app.store.conn.execute("CREATE TEMP TABLE parent (id TEXT PRIMARY KEY)")
    app.store.conn.execute("CREATE TEMP TABLE child (parent_id TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    app.store.conn.execute("CREATE TEMP TRIGGER poison AFTER INSERT ON main.items WHEN new.title = 'poison' "
                           "BEGIN INSERT INTO child VALUES ('no such parent'); END")
    burst = [call(1, "execute_action", action="create_note", url=STUDIO, params={"title": "first", "body": "b"}),
             call(2, "navigate", url=STUDIO),  # commits "first"
             call(3, "execute_action", action="create_note", url=STUDIO, params={"title": "poison", "body": "b"}),
             call(4, "execute_action", action="create_note", url=STUDIO, params={"title": "third", "body": "b"})]
    replies = serve_all(app, b"".join(burst))
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert replies[0]["result"]["isError"] is False and replies[1]["result"]["isError"] is False
    for reply in replies[2:]:
        assert "result" not in reply and "nothing of it was applied" in reply["error"]["message"], reply
    assert notes(app) == ["first"]
    assert "could not be committed" in caplog.text
