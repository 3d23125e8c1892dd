"""Fair under load: another user's requests while one user's clients attack (issue 40, item 3).

    .venv/bin/python -m bench fairness                                  # both stores, 100k items, 8 attackers, 30 s
    .venv/bin/python -m bench fairness --stores sqlite --items 500 --attackers 2 --seconds 2   # a smoke

Per store (`--stores`, default both), one `navmcp web` on a workspace seeded with `--items` items in
studio `bench`: SQLite in `--workdir/items-N`; PostgreSQL in database `<--pg-prefix>N` on the server
of `--database-url` (the owner's URL, as for `navmcp migrate`), created, migrated and seeded as the
owner once, served as `navmcp_app` (row-level security on, as in production). Both are reused.
`--attackers` clients of the owner (threads, each its own keep-alive connection) send the attack
shapes of the issue in turn, as fast as answers come: tag completion with an empty prefix
(`completion/complete` over /mcp), `/awaiting`, the studio's `this-month` cycle page, and a search.
Meanwhile another user, in a studio of their own with one note, reads their note's page and
searches for it, one request at a time. Their latencies are measured with nobody attacking (quiet)
and under attack: p50, p95, max per kind, and how many requests each side got answered, with the
load average at the end. Every wait is bounded; the server binds 127.0.0.1 and is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.run import NAVMCP, ROOT, free_port, percentile, stop, wait_for_port

WAIT = 60.0  # no request may hang the bench longer than this
PG_PREFIX = "navmcp_bench_fairness_"  # PostgreSQL: the database for N items is <prefix>N
DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/postgres"  # the owner's, as for `navmcp migrate`
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def make_home(workdir: Path, items: int, database_url: str | None = None,
              pg_prefix: str = PG_PREFIX) -> tuple[Path, dict[str, str]]:
    """The seeded home (made once per size and store), and the tokens and URLs the clients use
    ("database_url": the URL the server connects with; absent on SQLite)."""
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.demo import seed
    from navmcp.identity import add_user, ensure_owner, mint_token

    owner_url = app_url = None
    if database_url is None:
        home = workdir / f"items-{items}"
        fresh = not (home / "navmcp.db").exists() and not any(home.glob("*.db"))
    else:
        home = workdir / f"pg-items-{items}"
        owner_url, app_url, fresh = _pg_database(database_url, pg_prefix + str(items), home / "seeded")
    home.mkdir(parents=True, exist_ok=True)
    if fresh and owner_url is not None:  # bulk COPY as the owner, as `navmcp seed` does
        seed.seed_postgres(owner_url, items)
        (home / "seeded").touch()
    app = App(Config(home=home, database_url=app_url, token=None))  # PostgreSQL: as the server, RLS on

    def scalar(sql: str) -> Any:  # PostgreSQL: as the owner, who sees every row (the app role sees its own)
        if owner_url is None:
            with app.store.read() as tx:
                return tx.scalar(sql)
        import psycopg

        with psycopg.connect(owner_url) as db:
            row = db.execute(sql).fetchone()
            return row[0] if row else None

    try:
        if fresh and owner_url is None:
            seed.seed(app.store, items)
        owner_id = ensure_owner(app.store)["id"] if owner_url is None else scalar(OWNER_ID_SQL)
        other_id = scalar("SELECT id FROM users WHERE handle = 'bystander'")
        if other_id is None:
            other = add_user(app.store, "bystander")
            other_id = other["id"]
            app.workspace.execute(other, "/", "create_studio", {"handle": "quiet", "name": "Quiet"})
            app.workspace.execute(other, "/studios/quiet", "create_note", {"title": "Hello", "body": "the one note"})
        note = scalar("SELECT id FROM items WHERE studio_id = (SELECT id FROM studios WHERE handle = 'quiet')")
        world = {"attacker": mint_token(app.secret, owner_id), "bystander": mint_token(app.secret, other_id),
                 "note": f"/studios/quiet/n/{note}"}
        return home, {**world, "database_url": app_url} if app_url else world
    finally:
        app.store.close()


OWNER_ID_SQL = "SELECT value FROM settings WHERE key = 'owner'"


def _pg_database(database_url: str, dbname: str, marker: Path) -> tuple[str, str, bool]:
    """Database `dbname` beside `database_url`'s, created unless `marker` says it was seeded already,
    and migrated (a reused one gets the migrations added since): the owner's URL, the app role's
    URL, and whether it still needs its seed."""
    import psycopg

    from bench.run import pg_url
    from navmcp.store.postgres import migrate

    owner_url, app_url = pg_url(database_url, None, dbname), pg_url(database_url, "navmcp_app", dbname)
    with psycopg.connect(database_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        fresh = not (exists and marker.exists())
        if fresh:
            marker.unlink(missing_ok=True)
            if exists:  # a seed that did not finish
                admin.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{dbname}"')
    migrate(owner_url)
    return owner_url, app_url, fresh


def attack_shapes(token: str) -> list[tuple[str, dict[str, Any]]]:
    auth = {"Authorization": f"Bearer {token}"}
    complete = {"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": {
        "_meta": MODERN, "ref": {"type": "ref/resource", "uri": "navmcp:///studios/{studio}/tags/{tag}"},
        "argument": {"name": "tag", "value": ""}, "context": {"arguments": {"studio": "bench"}}}}
    return [
        ("tags", {"method": "POST", "url": "/mcp", "json": complete, "headers": {
            **auth, "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "completion/complete"}}),
        ("awaiting", {"method": "GET", "url": "/awaiting.md", "headers": auth}),
        ("cycle", {"method": "GET", "url": "/studios/bench/cycles/this-month.md", "headers": auth}),
        ("search", {"method": "GET", "url": "/search.md?q=de", "headers": auth}),
    ]


def bystander_shapes(token: str, note: str) -> list[tuple[str, dict[str, Any]]]:
    auth = {"Authorization": f"Bearer {token}"}
    return [("page", {"method": "GET", "url": note + ".md", "headers": auth}),
            ("search", {"method": "GET", "url": "/studios/quiet/search.md?q=hello", "headers": auth})]


def measure(base: str, shapes, seconds: float, stop_flag: threading.Event | None = None) -> dict[str, list[float]]:
    """Send `shapes` in turn, one at a time, for `seconds`: latencies (ms) per shape."""
    import httpx

    times: dict[str, list[float]] = {name: [] for name, _ in shapes}
    ends = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=WAIT) as http:
        n = 0
        while time.monotonic() < ends and not (stop_flag and stop_flag.is_set()):
            name, request = shapes[n % len(shapes)]
            n += 1
            started = time.perf_counter()
            reply = http.request(**request)
            if reply.status_code != 200:
                raise RuntimeError(f"{name}: {reply.status_code} {reply.text[:200]}")
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {name: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95), "max": max(v)}
            for name, v in times.items() if v}


def run(items: int, attackers: int, seconds: float, workdir: Path, database_url: str | None = None,
        pg_prefix: str = PG_PREFIX) -> dict[str, Any]:
    """One store's figures: SQLite, or PostgreSQL when `database_url` (the owner's) is given."""
    home, world = make_home(workdir, items, database_url, pg_prefix)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NAVMCP_DATABASE_URL", "NAVMCP_TOKEN")}
    env["NAVMCP_HOME"] = str(home)
    if "database_url" in world:
        env["NAVMCP_DATABASE_URL"] = world["database_url"]
    log = open(workdir / "fairness-web.log", "w")
    proc = subprocess.Popen(NAVMCP + ["web", "--host", "127.0.0.1", "--port", str(port)],
                            env=env, stdout=log, stderr=log, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, proc)
        victim = bystander_shapes(world["bystander"], world["note"])
        measure(base, victim + attack_shapes(world["attacker"]), 1.0)  # warmed up: every shape once or more
        quiet = summary(measure(base, victim, seconds))
        done = threading.Event()
        attacked: list[dict[str, list[float]]] = []
        threads = [threading.Thread(target=lambda: attacked.append(measure(base, attack_shapes(world["attacker"]),
                                                                           seconds + WAIT, done)), daemon=True)
                   for _ in range(attackers)]
        for thread in threads:
            thread.start()
        time.sleep(min(1.0, seconds / 4))  # the attack is under way
        loaded = summary(measure(base, victim, seconds))
        done.set()
        for thread in threads:
            thread.join(WAIT)
        merged: dict[str, list[float]] = {}
        for times in attacked:
            for name, values in times.items():
                merged.setdefault(name, []).extend(values)
        return {"store": "postgresql" if database_url else "sqlite", "items": items, "attackers": attackers,
                "seconds": seconds, "load_average": list(os.getloadavg()), "bystander_quiet": quiet,
                "bystander_attacked": loaded, "attackers_answered": summary(merged)}
    finally:
        stop(proc)
        log.close()


def report(f: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in f["load_average"])
    lines = [f"Fairness on {f['store']}: {f['items']} items, {f['attackers']} attacking clients, "
             f"{f['seconds']:g} s per phase; load average at the end {load}", "",
             "| who | request | answered | p50 ms | p95 ms | max ms |", "| --- | --- | --- | --- | --- | --- |"]
    for who, key in (("bystander, quiet", "bystander_quiet"), ("bystander, attacked", "bystander_attacked"),
                     ("attackers", "attackers_answered")):
        for name, s in f[key].items():
            lines.append(f"| {who} | {name} | {s['n']} | {s['p50']:.1f} | {s['p95']:.1f} | {s['max']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench fairness", description="Another user's latency under attack.")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase (quiet, attacked)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "navmcp-bench-fairness")
    parser.add_argument("--stores", default="sqlite,postgres", help="sqlite, postgres or both (in that order)")
    parser.add_argument("--database-url", default=os.environ.get("NAVMCP_DATABASE_URL") or DATABASE_URL,
                        help="PostgreSQL: the owner's URL (as for `navmcp migrate`); the bench makes its own database")
    parser.add_argument("--pg-prefix", default=PG_PREFIX, help="PostgreSQL: the database for N items is PREFIX<N>")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file (a list, one per store)")
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if not stores or set(stores) - {"sqlite", "postgres"}:
        parser.error("--stores takes sqlite, postgres or both")
    args.workdir.mkdir(parents=True, exist_ok=True)
    figures = []
    for store in stores:
        figures.append(run(args.items, args.attackers, args.seconds, args.workdir,
                           args.database_url if store == "postgres" else None, args.pg_prefix))
        print(report(figures[-1]), end="\n\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
