"""Fair under load: another user's requests while one user's clients attack (issue 40, item 3).

    .venv/bin/python -m bench fairness                                  # 100k items, 8 attackers, 30 s
    .venv/bin/python -m bench fairness --items 500 --attackers 2 --seconds 2   # a smoke

One `navmcp web` on a SQLite workspace seeded with `--items` items in studio `bench` (kept in
`--workdir/items-N`, reused). `--attackers` clients of the owner (threads, each its own keep-alive
connection) send the attack shapes of the issue in turn, as fast as answers come: tag completion
with an empty prefix (`completion/complete` over /mcp), `/awaiting`, the studio's `this-month`
cycle page, and a search. Meanwhile another user, in a studio of their own with one note, reads
their note's page and searches for it, one request at a time. Their latencies are measured with
nobody attacking (quiet) and under attack: p50, p95, max per kind, and how many requests each side
got answered. Every wait is bounded; the server binds 127.0.0.1 and is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.run import NAVMCP, ROOT, free_port, percentile, stop, wait_for_port

WAIT = 60.0  # no request may hang the bench longer than this
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def make_home(workdir: Path, items: int) -> tuple[Path, dict[str, str]]:
    """The seeded home (made once per size), and the tokens and URLs the clients use."""
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.demo import seed
    from navmcp.identity import add_user, ensure_owner, mint_token, user_by_handle

    home = workdir / f"items-{items}"
    fresh = not (home / "navmcp.db").exists() and not any(home.glob("*.db"))
    home.mkdir(parents=True, exist_ok=True)
    app = App(Config(home=home, database_url=None, token=None))
    try:
        if fresh:
            seed.seed(app.store, items)
        owner = ensure_owner(app.store)
        with app.store.read() as tx:
            other = user_by_handle(tx, "bystander")
        if other is None:
            other = add_user(app.store, "bystander")
            app.workspace.execute(other, "/", "create_studio", {"handle": "quiet", "name": "Quiet"})
            app.workspace.execute(other, "/studios/quiet", "create_note", {"title": "Hello", "body": "the one note"})
        with app.store.read() as tx:
            note = tx.scalar("SELECT id FROM items WHERE studio_id = (SELECT id FROM studios WHERE handle = 'quiet')")
        return home, {"attacker": mint_token(app.secret, owner["id"]), "bystander": mint_token(app.secret, other["id"]),
                      "note": f"/studios/quiet/n/{note}"}
    finally:
        app.store.close()


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


def run(items: int, attackers: int, seconds: float, workdir: Path) -> dict[str, Any]:
    home, world = make_home(workdir, items)
    port = free_port()
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("NAVMCP_DATABASE_URL", "NAVMCP_TOKEN")}
    log = open(workdir / "fairness-web.log", "w")
    proc = __import__("subprocess").Popen(NAVMCP + ["web", "--host", "127.0.0.1", "--port", str(port)],
                                          env={**env, "NAVMCP_HOME": str(home)}, stdout=log, stderr=log, cwd=ROOT)
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
        return {"items": items, "attackers": attackers, "seconds": seconds, "bystander_quiet": quiet,
                "bystander_attacked": loaded, "attackers_answered": summary(merged)}
    finally:
        stop(proc)
        log.close()


def report(f: dict[str, Any]) -> str:
    lines = [f"Fairness: {f['items']} items, {f['attackers']} attacking clients, {f['seconds']:g} s per phase", "",
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
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    figures = run(args.items, args.attackers, args.seconds, args.workdir)
    print(report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
