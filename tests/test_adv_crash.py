"""Crashes: kill -9 (and sometimes SIGTERM) the stdio servers in the middle of pipelined write
bursts, again and again.
Afterwards the database passes its integrity checks (SQLite, foreign keys, both full-text
indexes), every acknowledged action is there, nothing is there twice, and nothing is half-applied:
a decision has all of its options or doesn't exist, a user's vote is one whole ballot they sent,
and every applied write has its audit row (they share one transaction)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time

import pytest

from adversarial import figures, world
from adversarial.drivers import StdioProcess
from deadlines import HANG
from navmcp.store.migrations import sqlite_migrations

ROUNDS = figures.pick(6, 60)
WRITERS = 3
BURST = figures.pick(40, 60)
OPTIONS = ["X", "Y", "Z"]


@pytest.fixture(scope="module")
def crash_world(tmp_path_factory):
    w = world.build(tmp_path_factory.mktemp("crash") / "home", extra_users=WRITERS)
    app = w.app()
    w.urls["crash_decision"] = world.act(app, w.users["admin"], "/studios/adv", "create_decision",
                                         question="Crash?", options=OPTIONS)
    app.store.close()
    return w


def burst(name: str, round_: int, rng: random.Random, w: world.World) -> list[dict]:
    """The requests one writer pipelines: comments, decisions with options, vote replacements, joins."""
    requests = []
    for i in range(BURST):
        kind = rng.choice(["comment", "decision", "vote", "vote", "join"])
        tag = f"{name}-{round_}-{i}"
        if kind == "comment":
            action, url, params = "add_comment", w.urls["note"], {"body": f"k-{tag}"}
        elif kind == "decision":
            action, url = "create_decision", "/studios/adv"
            params = {"question": f"d-{tag}", "options": [f"{tag}-o{k}" for k in range(rng.randint(2, 6))]}
        elif kind == "vote":
            chosen = rng.sample(OPTIONS, rng.randint(1, 3))
            action, url = "vote", w.urls["crash_decision"]
            params = {"votes": [{"option": o, "accept": rng.random() < 0.7, "prefer": rng.random() < 0.3} for o in chosen]}
        else:
            action, url, params = rng.choice(["join_commitment", "leave_commitment"]), w.urls["commitment"], {}
        requests.append({"jsonrpc": "2.0", "id": f"{tag}", "method": "tools/call",
                         "params": {"name": "execute_action", "arguments": {"action": action, "url": url,
                                                                            "params": params}}})
    return requests


def drain(process: StdioProcess) -> dict[str, dict]:
    replies = {}
    while True:
        try:
            line = process.lines.get(timeout=HANG)
        except Exception:
            break
        if line is None:
            break
        reply = json.loads(line)
        replies[reply.get("id")] = reply
    return replies


def test_kill_9_during_write_bursts(crash_world):
    w = crash_world
    names = [f"user{n}" for n in range(WRITERS)]
    rng = random.Random(6)
    sent: dict[str, list[dict]] = {n: [] for n in names}  # in send order, per writer
    acked: set[str] = set()
    errors = []
    terms = 0
    for round_ in range(ROUNDS):
        processes = {n: StdioProcess(w.env(n)) for n in names}
        for n, p in processes.items():
            p.initialize(f"crash-{n}")
            p.call("navigate", url=w.urls["crash_decision"])  # warm: the burst, not the imports, meets the kill
        for n, p in processes.items():
            requests = burst(n, round_, rng, w)
            sent[n].extend(requests)
            p.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        time.sleep(rng.uniform(0.02, 0.4))
        # Mostly kill -9; every fifth round SIGTERM, which must roll back and exit 0 mid-burst.
        sig = signal.SIGTERM if round_ % 5 == 4 else signal.SIGKILL
        for p in processes.values():
            code = p.kill(sig)
            if sig == signal.SIGTERM:
                assert code == 0, p.stderr_text()
                terms += 1
        for n, p in processes.items():
            for id_, reply in drain(p).items():
                if id_ and str(id_).startswith(n + "-"):
                    result = reply.get("result", {})
                    if result and not result.get("isError"):
                        acked.add(id_)
                    elif "error" in reply or "lock" in json.dumps(reply) or "busy" in json.dumps(reply):
                        errors.append(reply)
    figures.add("crash.kills", ROUNDS * WRITERS - terms)
    figures.add("crash.sigterms", terms)
    figures.add("crash.requests_sent", sum(len(v) for v in sent.values()))
    figures.add("crash.acknowledged", len(acked))
    assert not errors, errors[:3]
    assert acked, "the bursts were killed before anything was acknowledged: the test proves nothing"

    # A fresh server opens the database after all those crashes and works.
    process = StdioProcess(w.env("admin"))
    try:
        process.initialize()
        assert process.call("navigate", url=w.urls["crash_decision"])["isError"] is False
    finally:
        assert process.close() == 0

    conn = sqlite3.connect(w.home / "navmcp.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO comments_fts(comments_fts) VALUES ('integrity-check')")
        all_sent = [r for reqs in sent.values() for r in reqs]
        by_id = {r["id"]: r["params"]["arguments"] for r in all_sent}
        # Comments: acknowledged ⊆ stored, nothing twice.
        stored = dict(conn.execute("SELECT body, count(*) FROM comments WHERE body LIKE 'k-%' GROUP BY body").fetchall())
        assert set(stored.values()) <= {1}
        for id_ in acked:
            if by_id[id_]["action"] == "add_comment":
                assert by_id[id_]["params"]["body"] in stored, f"acknowledged comment {id_} lost"
        # Decisions: acknowledged ⊆ stored; every stored one has exactly the options it was sent with.
        questions = {a["params"]["question"]: a["params"]["options"] for a in by_id.values()
                     if a["action"] == "create_decision"}
        stored_decisions = dict(conn.execute("SELECT title, id FROM items WHERE kind = 'decision' AND title LIKE 'd-%'").fetchall())
        for id_ in acked:
            if by_id[id_]["action"] == "create_decision":
                assert by_id[id_]["params"]["question"] in stored_decisions, f"acknowledged decision {id_} lost"
        for title, item_id in stored_decisions.items():
            options = sorted(r[0] for r in conn.execute("SELECT title FROM options WHERE decision_id = ?", (item_id,)))
            assert options == sorted(questions[title]), f"decision {title} half-applied: {options}"
        # Votes: one whole ballot per writer, sent no earlier than their last acknowledged vote.
        decision_id = w.urls["crash_decision"].rsplit("/", 1)[1]
        titles = dict(conn.execute("SELECT id, title FROM options WHERE decision_id = ?", (decision_id,)).fetchall())
        for n in names:
            votes = [r for r in sent[n] if r["params"]["arguments"]["action"] == "vote"]
            last_acked = max((i for i, r in enumerate(votes) if r["id"] in acked), default=None)
            got = {(titles[o], a, p) for o, a, p in conn.execute(
                "SELECT option_id, accept, prefer FROM votes WHERE decision_id = ? AND user_id = ?",
                (decision_id, w.users[n]["id"]))}
            candidates = [{(b["option"], int(b["accept"]), int(b["prefer"]))
                           for b in r["params"]["arguments"]["params"]["votes"]}
                          for r in votes[last_acked if last_acked is not None else 0:]]
            if last_acked is None:
                candidates.append(set())
            assert got in candidates, f"{n}'s stored vote {got} is not a whole ballot sent after the last acknowledged one"
        # Every applied write has its audit row: counted per writer and action.
        for n in names:
            uid = w.users[n]["id"]
            audited = dict(conn.execute("SELECT action, count(*) FROM audit WHERE user_id = ? AND outcome = 'ok' "
                                        "GROUP BY action", (uid,)).fetchall())
            comments = conn.execute("SELECT count(*) FROM comments WHERE created_by = ? AND body LIKE 'k-%'",
                                    (uid,)).fetchone()[0]
            decisions = conn.execute("SELECT count(*) FROM items WHERE created_by = ? AND kind = 'decision'",
                                     (uid,)).fetchone()[0]
            assert audited.get("add_comment", 0) == comments and audited.get("create_decision", 0) == decisions
            mine = [i for i in acked if i.startswith(n + "-")]
            assert sum(audited.values()) >= len(mine)
    finally:
        conn.close()


def test_kill_9_during_first_run(tmp_path):
    """Servers killed while they create the database, migrate it, write the secret and the owner:
    the next start finishes the job and works."""
    home = tmp_path / "fresh"
    env = {"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None, "NAVMCP_OWNER": "boss"}
    rng = random.Random(7)
    first = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "first-run"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "navigate", "arguments": {"url": "/"}}},
    ]
    kills = figures.pick(8, 40)
    for n in range(kills):
        process = StdioProcess(env)
        calls = first + [{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "execute_action", "arguments": {"action": "create_studio", "url": "/",
                                                    "params": {"handle": f"s{n}", "name": "S"}}}}]
        process.write(b"".join(json.dumps(c).encode() + b"\n" for c in calls))
        time.sleep(rng.uniform(0.0, 0.8))
        process.kill()
    process = StdioProcess(env)
    try:
        process.initialize()
        assert process.call("execute_action", action="create_studio", url="/",
                            params={"handle": "after", "name": "After"})["isError"] is False
        assert process.call("navigate", url="/studios/after")["isError"] is False
    finally:
        assert process.close() == 0
    conn = sqlite3.connect(home / "navmcp.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM users").fetchone()[0] == 1
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == [m.version for m in sqlite_migrations()]  # every shipped migration, once
        # Every studio that exists is whole: its creator is its admin.
        assert conn.execute("SELECT count(*) FROM studios s WHERE NOT EXISTS (SELECT 1 FROM memberships m "
                            "WHERE m.studio_id = s.id AND m.role = 'admin')").fetchone()[0] == 0
    finally:
        conn.close()
    assert len((home / "secret").read_bytes().strip()) == 64
    figures.add("crash.first_run_kills", kills)
