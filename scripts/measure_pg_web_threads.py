"""How one `navmcp web` process on PostgreSQL copes with concurrent /mcp clients: workspace calls on
the event loop (NAVMCP_WEB_THREADS=0) versus in worker threads over the store's connection pool.

    .venv/bin/python scripts/measure_pg_web_threads.py [--clients 8] [--seconds 8] [--threads 0,5]

Creates a throwaway database on the local PostgreSQL (NAVMCP_TEST_PG, default
postgresql://postgres@127.0.0.1:5432/postgres), seeds one studio with a note per client, then for
each setting starts one `navmcp web` process and lets every client loop for a fixed time over
`navigate` (its note) + `execute_action add_comment` (on its note). Prints calls/s and latency.
Bounded: each run stops itself after --seconds.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.identity import add_user, invitations, mint_token  # noqa: E402
from navmcp.store.postgres import migrate  # noqa: E402
from pg_web import HttpMcp, PgWebServer  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(server: PgWebServer, tokens: list[str], notes: list[str], seconds: float,
        reads_only: bool = False) -> dict[str, float]:
    latencies: list[list[float]] = [[] for _ in tokens]
    errors = [0]
    clients = [HttpMcp(server.base, token, name=f"load-{n}") for n, token in enumerate(tokens)]
    for client in clients:
        client.initialize()
    start = threading.Barrier(len(clients) + 1)
    stop_at = [0.0]

    def work(n: int) -> None:
        client = clients[n]
        start.wait()
        i = 0
        while time.monotonic() < stop_at[0]:
            t = time.perf_counter()
            reply = (client.navigate(notes[n]) if reads_only or i % 2 == 0
                     else client.act("add_comment", url=notes[n], body=f"c{i}"))
            latencies[n].append(time.perf_counter() - t)
            errors[0] += bool(reply.get("isError"))
            i += 1

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(clients))]
    for thread in threads:
        thread.start()
    stop_at[0] = time.monotonic() + seconds
    began, cpu_before = time.monotonic(), cpu_seconds(server.proc.pid)
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - began
    cpu = cpu_seconds(server.proc.pid) - cpu_before
    for client in clients:
        client.close()
    flat = sorted(x for per in latencies for x in per)
    return {"calls": len(flat), "calls_per_s": len(flat) / elapsed, "p50_ms": 1000 * statistics.median(flat),
            "p95_ms": 1000 * flat[int(0.95 * (len(flat) - 1))], "errors": errors[0],
            "cpu_ms_per_call": 1000 * cpu / max(1, len(flat)), "cpu_busy": cpu / elapsed}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--threads", default="0,5", help="NAVMCP_WEB_THREADS settings to compare")
    parser.add_argument("--pool", default="5", help="NAVMCP_PG_POOL_SIZE")
    parser.add_argument("--reads-only", action="store_true", help="navigate only (no add_comment)")
    args = parser.parse_args()
    admin_url = os.environ.get("NAVMCP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"navmcp_measure_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = admin_url.rsplit("/", 1)[0]
    try:
        migrate(f"{base}/{name}")
        app_url = f"{base.replace('//postgres@', '//navmcp_app@')}/{name}"
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            app = App(Config(home=home, database_url=app_url, token=None))
            owner = add_user(app.store, "owner")
            app.workspace.execute(owner, "/", "create_studio", {"handle": "load", "name": "Load"})
            tokens, notes = [], []
            for n in range(args.clients):
                user = add_user(app.store, f"user-{n}")
                app.workspace.execute(owner, "/studios/load/members", "add_member", {"handle": user["handle"]})
                with app.store.read(user_id=user["id"]) as tx:  # add_member invites: they accept, in a browser
                    made = invitations.addressed_to(tx, user["id"])[0]["id"]
                app.workspace.execute(user, "/inbox", "accept_invitation", {"invitation": made}, browser=True)
                notes.append(app.workspace.execute(user, "/studios/load", "create_note",
                                                   {"title": f"Note {n}", "body": "text " * 200}).url)
                tokens.append(mint_token(app.secret, user["id"]))
            app.store.close()
            print(f"{args.clients} clients, {args.seconds:.0f} s each, pool {args.pool}; " +
                  ("navigate only" if args.reads_only else "navigate + add_comment alternating"), flush=True)
            for threads in args.threads.split(","):
                server = PgWebServer(home, app_url, env={"NAVMCP_WEB_THREADS": threads,
                                                         "NAVMCP_PG_POOL_SIZE": args.pool})
                try:
                    run(server, tokens, notes, 1.0, args.reads_only)  # warm-up
                    figures = run(server, tokens, notes, args.seconds, args.reads_only)
                finally:
                    server.stop()
                label = "event loop" if threads == "0" else f"{threads} threads"
                print(f"  {label:>11}: {figures['calls_per_s']:7.1f} calls/s  p50 {figures['p50_ms']:6.1f} ms  "
                      f"p95 {figures['p95_ms']:6.1f} ms  server CPU {figures['cpu_ms_per_call']:.1f} ms/call, "
                      f"{100 * figures['cpu_busy']:.0f}% of a core  ({figures['calls']} calls, {figures['errors']} errors)",
                      flush=True)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
