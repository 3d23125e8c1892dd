"""Crowds: dozens of real stdio server processes on one SQLite file voting, joining and commenting
on the same items at once. No acknowledged write is lost, none is doubled, the commitment's limit
holds, and a busy database is retried — never reported to an agent as a failure."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from adversarial import crowd, figures, world
from adversarial.drivers import StdioProcess

AGENTS = figures.pick(24, 48)
ROUNDS = figures.pick(3, 12)
LIMIT = AGENTS * 2 // 3


@pytest.fixture(scope="module")
def crowd_world(tmp_path_factory):
    w, app = world.build_crowd(tmp_path_factory.mktemp("crowd") / "home", AGENTS, LIMIT)
    app.store.close()
    return w


def script(w: world.World):
    decision, commitment, note = w.urls["crowd_decision"], w.urls["crowd_commitment"], w.urls["note"]
    race = w.urls["race_decision"]

    def run(name: str, agent, log: crowd.Log, rng) -> None:
        for round_ in range(ROUNDS):
            ballot = [{"option": o, "accept": rng.random() < 0.6, "prefer": rng.random() < 0.3}
                      for o in rng.sample(["A", "B", "C"], rng.randint(1, 3))]
            crowd.act(agent, log, "vote", decision, votes=ballot)
            for k in range(2):
                target = rng.choice([note, decision, commitment])
                crowd.act(agent, log, "add_comment", target, body=f"c-{name}-{round_}-{k}")
            if round_ == 0 or rng.random() < 0.3:
                crowd.act(agent, log, "join_commitment", commitment)  # a second join is refused: already in
            if rng.random() < 0.2:
                crowd.act(agent, log, "add_option", decision, title=f"opt-{name}-{round_}")
            crowd.act(agent, log, "vote", race, votes=[{"option": rng.choice(["Now", "Later"])}])
            if name == "user0" and round_ == ROUNDS // 2:
                crowd.act(agent, log, "close_decision", race)  # while everyone else is still voting
            agent.call("navigate", url=decision)
    return run


def test_crowd_of_stdio_servers(crowd_world):
    w = crowd_world
    names = [f"user{n}" for n in range(AGENTS)]
    with ThreadPoolExecutor(8) as pool:
        processes = dict(zip(names, pool.map(lambda n: StdioProcess(w.env(n), timeout=120), names)))
    try:
        for name, process in processes.items():
            process.initialize(f"crowd-{name}")
        logs = crowd.run(processes, script(w))
    finally:
        codes = {name: process.close() for name, process in processes.items()}
    assert all(code == 0 for code in codes.values()), codes
    logged = [p.stderr_text(last=None) for p in processes.values()]
    assert not [text for text in logged if "Traceback" in text or "ERROR" in text], logged
    assert not [log.crashed for log in logs.values() if log.crashed]
    assert crowd.busy_failures(logs) == []

    verify(w, logs, names, LIMIT)


def verify(w: world.World, logs: dict[str, crowd.Log], names: list[str], limit: int, prefix: str = "crowd") -> None:
    """What a crowd run by `script` must leave in the database (also used by the HTTP crowd)."""
    conn = sqlite3.connect(w.home / "navmcp.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        ids = {n: w.users[n]["id"] for n in names}
        # Comments: every acknowledged one exactly once, nothing that wasn't acknowledged.
        rows = conn.execute("SELECT body, count(*) FROM comments WHERE body LIKE 'c-%' GROUP BY body").fetchall()
        stored = dict(rows)
        acked = [e.params["body"] for log in logs.values() for e in log.acked("add_comment")]
        tried = [e for log in logs.values() for e in log.entries if e.action == "add_comment"]
        assert all(e.ok for e in tried) and len(acked) == len(set(acked)) == len(tried) == len(names) * ROUNDS * 2
        assert set(stored) == set(acked) and set(stored.values()) == {1}
        # The race: no vote is stored after the decision closed; votes refused after it say it closed.
        race_id = w.urls["race_decision"].rsplit("/", 1)[1]
        closed_at = conn.execute("SELECT closed_at FROM items WHERE id = ?", (race_id,)).fetchone()[0]
        assert closed_at and logs["user0"].acked("close_decision")
        assert conn.execute("SELECT count(*) FROM votes WHERE decision_id = ? AND created_at > ?",
                            (race_id, closed_at)).fetchone()[0] == 0
        late = [e for log in logs.values() for e in log.entries if e.url == w.urls["race_decision"] and not e.ok]
        assert late and all("closed" in e.text for e in late)
        # Votes: each user's stored ballot is exactly their last acknowledged one.
        decision_id = w.urls["crowd_decision"].rsplit("/", 1)[1]
        titles = dict(conn.execute("SELECT id, title FROM options WHERE decision_id = ?", (decision_id,)).fetchall())
        for name in names:
            last = [e for e in logs[name].acked("vote") if e.url == w.urls["crowd_decision"]][-1].params["votes"]
            want = {(b["option"], int(b["accept"]), int(b["prefer"])) for b in last}
            got = {(titles[o], a, p) for o, a, p in conn.execute(
                "SELECT option_id, accept, prefer FROM votes WHERE decision_id = ? AND user_id = ?",
                (decision_id, ids[name]))}
            assert got == want, name
        # Options: every acknowledged add_option exists once.
        added = [e.params["title"] for log in logs.values() for e in log.acked("add_option")]
        assert sorted(t for t in titles.values() if t.startswith("opt-")) == sorted(added)
        # The commitment: exactly LIMIT joined (more tried), closed at the limit, refusals say it is full.
        commitment_id = w.urls["crowd_commitment"].rsplit("/", 1)[1]
        joined = conn.execute("SELECT count(*) FROM participants WHERE commitment_id = ?", (commitment_id,)).fetchone()[0]
        first_joins = [e for log in logs.values() for e in log.acked("join_commitment") if e.text.startswith("✓ Joined")]
        assert joined == limit == len(first_joins)
        assert conn.execute("SELECT closed_at FROM items WHERE id = ?", (commitment_id,)).fetchone()[0] is not None
        refused = [e for log in logs.values() for e in log.entries if e.action == "join_commitment" and not e.ok]
        assert refused and all("closed" in e.text or "full" in e.text or "already joined" in e.text for e in refused)
    finally:
        conn.close()
    calls = sum(len(log.entries) for log in logs.values())
    figures.add(f"{prefix}.sessions", len(names))
    figures.add(f"{prefix}.writes_attempted", calls)
    figures.add(f"{prefix}.writes_acknowledged", sum(e.ok for log in logs.values() for e in log.entries))
    figures.add(f"{prefix}.busy_failures", len(crowd.busy_failures(logs)))
    for e in (e for log in logs.values() for e in log.entries if not e.ok):
        figures.add(f"{prefix}.refused.{e.action}" + (".race" if e.url == w.urls["race_decision"] else ""))


def test_first_run_stampede(tmp_path):
    """Many servers started at once on an empty NAVMCP_HOME as the tokenless owner: the database,
    its migrations, the signing secret and the owner are created once, and every write lands."""
    home = tmp_path / "fresh"
    count = figures.pick(12, 24)
    env = {"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None, "NAVMCP_OWNER": "boss"}
    processes = {f"p{n}": StdioProcess(env, timeout=120) for n in range(count)}
    try:
        for name, process in processes.items():
            process.initialize(name)

        def run(name, agent, log, rng):
            crowd.act(agent, log, "create_studio", "/", handle=f"s-{name}", name=name)
            crowd.act(agent, log, "create_note", f"/studios/s-{name}", title=name, body="first run")

        logs = crowd.run(processes, run)
    finally:
        codes = [p.close() for p in processes.values()]
    assert codes == [0] * count
    assert crowd.busy_failures(logs) == [] and not [log.crashed for log in logs.values() if log.crashed]
    assert all(e.ok for log in logs.values() for e in log.entries), [e.text for log in logs.values() for e in log.entries if not e.ok]
    conn = sqlite3.connect(home / "navmcp.db")
    try:
        assert conn.execute("SELECT count(*) FROM users").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM studios").fetchone()[0] == count
        assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == count
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == sorted(set(versions)) and len(versions) >= 2
    finally:
        conn.close()
    assert (home / "secret").stat().st_mode & 0o777 == 0o600
    figures.add("crowd.sessions", count)
