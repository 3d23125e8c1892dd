"""Live pages measured: many watchers on one `navmcp web` process, votes committed by another process.

    .venv/bin/python -m bench live                                    # both stores, 1,000 watchers
    .venv/bin/python -m bench live --stores sqlite --watchers 100 --changes 5 --idle 3   # a quick look

For each store (a SQLite file; PostgreSQL when `--database-url` reaches a server) the bench makes a
fresh workspace — a studio, a decision and `--users` members — starts `navmcp web` on it, and opens
`--watchers` event streams of the decision's page (its URL asked for as `text/event-stream`, as a
browser's EventSource does) from one asyncio client, at most 20 per member (the server's bound).
Every watcher watches the page every vote changes: each change goes to all of them. Then:

- **idle cost**: the web process's resident memory (VmRSS) before the streams open (warmed up: a
  few pages served and one stream opened and closed) and once they are open, and its CPU time
  (user + system of all its threads, /proc/PID/task/*/schedstat) over `--idle` seconds while
  nothing changes, beside the same figure with no stream open;
- **latency**: `--changes` votes, one at a time, cast by another process (`bin/mcp-server` over
  stdio with a member's token, legacy era); for each vote, the time from writing its request to
  each watcher reading its `changed` event. It is an upper bound on "from commit": it includes the
  vote's own work and its answer, and the client's reading of every watcher's event in turn.

Every wait is bounded; the servers bind 127.0.0.1 and are stopped at the end of each store's part;
the PostgreSQL database (`<pg-prefix>live`) is made afresh and dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.run import NAVMCP, PROTOCOL, ROOT, cpu_seconds, free_port, machine, percentile, pg_url, stop, wait_for_port

TARGET_P95_MS = 200.0
TARGET_RSS_MIB = 20.0
TARGET_CPU_PERCENT = 1.0
PER_USER = 20  # navmcp.web.streams.MAX_PER_USER: streams one member may hold open
WAIT = 30.0  # no single step may hang the bench longer than this


@dataclass
class Settings:
    watchers: int = 1000
    changes: int = 50
    idle: float = 30.0
    users: int | None = None  # default: the fewest that may hold `watchers` streams
    stores: tuple[str, ...] = ("sqlite", "postgres")
    database_url: str = "postgresql://postgres@127.0.0.1:5432/postgres"  # the owner's, as for `navmcp migrate`
    pg_prefix: str = "navmcp_bench_"
    workdir: Path = Path(tempfile.gettempdir()) / "navmcp-bench-live"


@dataclass
class World:
    home: Path
    env: dict[str, str]
    decision: str
    tokens: list[str]
    cleanup: list[Any] = field(default_factory=list)


# --- the workspace --------------------------------------------------------------------------------


def make_world(store: str, settings: Settings) -> World:
    """A fresh workspace on `store`: member 0 owns studio `live` and its decision; all are members."""
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.identity import add_user, invitations, mint_token

    home = settings.workdir / store
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True, mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NAVMCP_")}
    env["NAVMCP_HOME"] = str(home)
    cleanup: list[Any] = []
    url = None
    if store == "postgres":
        import psycopg

        from navmcp.store.postgres import migrate

        dbname = settings.pg_prefix + "live"
        with psycopg.connect(settings.database_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{dbname}"')

        def drop() -> None:
            with psycopg.connect(settings.database_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

        cleanup.append(drop)
        migrate(pg_url(settings.database_url, None, dbname))
        url = pg_url(settings.database_url, "navmcp_app", dbname)  # row-level security on, as in production
        env["NAVMCP_DATABASE_URL"] = url
    app = App(Config(home=home, database_url=url, token=None))
    try:
        users = settings.users or -(-settings.watchers // PER_USER)
        people = [add_user(app.store, f"watcher{n}") for n in range(users)]
        ws = app.workspace
        ws.execute(people[0], "/", "create_studio", {"handle": "live", "name": "Live"})
        for person in people[1:]:
            ws.execute(people[0], "/studios/live/members", "add_member", {"handle": person["handle"]})
            with app.store.read(user_id=person["id"]) as tx:  # add_member invites: each accepts, in a browser
                made = invitations.addressed_to(tx, person["id"])[0]["id"]
            ws.execute(person, "/inbox", "accept_invitation", {"invitation": made}, browser=True)
        decision = ws.execute(people[0], "/studios/live", "create_decision",
                              {"question": "Which day?", "options": ["Monday", "Tuesday"]}).url
        tokens = [mint_token(app.secret, person["id"]) for person in people]
    finally:
        app.store.close()
    return World(home, env, decision, tokens, cleanup)


# --- the processes --------------------------------------------------------------------------------


def start_web(world: World, log) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(NAVMCP + ["web", "--host", "127.0.0.1", "--port", str(port)], stdin=subprocess.DEVNULL,
                            stdout=log, stderr=log, env=world.env, cwd=ROOT)
    wait_for_port(port, proc)
    return proc, port


def loop_cpu_seconds(pid: int) -> float:
    """CPU seconds so far of a process's main thread: `navmcp web`'s event loop (its other threads
    are the change feed's, and worker threads, idle here)."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")


async def get(port: int, path: str, token: str) -> int:
    """One plain GET of a page; its status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                     f"Connection: close\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        await asyncio.wait_for(reader.read(), WAIT)
        return int(head.split(b" ", 2)[1])
    finally:
        writer.close()


class Watchers:
    """Event streams of one page, each on its own connection, read by one event loop. A `changed`
    event's arrival time is recorded for the vote being measured."""

    def __init__(self, port: int, url: str):
        self.port, self.url = port, url
        self.writers: list[asyncio.StreamWriter] = []
        self.readers: list[asyncio.Task] = []
        self.arrivals: list[float] = []
        self.expected = 0
        self.all_arrived = asyncio.Event()
        self.failures: list[str] = []

    async def open(self, token: str) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(f"GET {self.url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                     f"Authorization: Bearer {token}\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        if not head.startswith(b"HTTP/1.1 200"):
            writer.close()
            raise RuntimeError(f"a stream was refused: {head[:200]!r}")
        while not (await asyncio.wait_for(reader.readline(), WAIT)).startswith(b": watching"):
            pass
        self.writers.append(writer)
        self.readers.append(asyncio.ensure_future(self._read(reader)))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        # The body is chunked; an event's lines arrive whole inside one chunk, so lines suffice.
        while True:
            line = await reader.readline()
            if not line:
                self.failures.append("a stream ended")
                return
            if line.startswith(b"event: changed"):
                self.arrivals.append(time.monotonic())
                if len(self.arrivals) >= self.expected:
                    self.all_arrived.set()
            elif line.startswith(b"event: "):
                self.failures.append(line.decode().strip())

    def expect(self, count: int) -> None:
        self.arrivals, self.expected = [], count
        self.all_arrived.clear()

    async def close(self) -> None:
        for task in self.readers:
            task.cancel()
        for writer in self.writers:
            writer.close()
        self.writers, self.readers = [], []


class Voter:
    """`bin/mcp-server` as a member (another process than the web one), voting over stdio."""

    def __init__(self, world: World, token: str):
        self.world, self.token, self.next_id, self.n = world, token, 0, 0

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            str(ROOT / "bin" / "mcp-server"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env={**self.world.env, "NAVMCP_TOKEN": self.token})
        await self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                          "clientInfo": {"name": "navmcp-bench-live", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params}).encode() + b"\n")
        line = await asyncio.wait_for(self.proc.stdout.readline(), WAIT)
        reply = json.loads(line)
        if "error" in reply or reply["result"].get("isError"):
            raise RuntimeError(f"{method} failed: {line[:300]!r}")
        return reply["result"]

    async def vote(self) -> None:
        self.n += 1
        await self.request("tools/call", {"name": "execute_action", "arguments": {
            "action": "vote", "url": self.world.decision,
            "params": {"votes": [{"option": "Monday", "accept": self.n % 2 == 0},
                                 {"option": "Tuesday", "accept": True, "prefer": self.n % 3 == 0}]}}})

    async def close(self) -> None:
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


# --- the run --------------------------------------------------------------------------------------


async def measure(world: World, settings: Settings, proc: subprocess.Popen, port: int, out) -> dict[str, Any]:
    pid, tokens = proc.pid, world.tokens
    for token in tokens[:5]:  # warm up: pages served, the stream code run once
        assert await get(port, world.decision, token) == 200
    warm = Watchers(port, world.decision)
    await warm.open(tokens[0])
    await warm.close()
    await asyncio.sleep(1.0)
    idle_seconds = min(settings.idle, 10.0)
    cpu = cpu_seconds(pid)
    await asyncio.sleep(idle_seconds)
    idle_cpu_none = (cpu_seconds(pid) - cpu) / idle_seconds * 100
    rss_before = rss_mib(pid)

    watchers = Watchers(port, world.decision)
    started = time.monotonic()
    gate = asyncio.Semaphore(32)  # opening is a page check each: a few at a time, as tabs open

    async def open_one(n: int) -> None:
        async with gate:
            await watchers.open(tokens[n // PER_USER])

    await asyncio.gather(*(open_one(n) for n in range(settings.watchers)))
    opened_seconds = time.monotonic() - started
    print(f"  {settings.watchers} streams open in {opened_seconds:.1f} s", file=out, flush=True)
    await asyncio.sleep(2.0)
    rss_after = rss_mib(pid)
    cpu, loop_cpu = cpu_seconds(pid), loop_cpu_seconds(pid)
    await asyncio.sleep(settings.idle)
    idle_cpu = (cpu_seconds(pid) - cpu) / settings.idle * 100
    idle_loop_cpu = (loop_cpu_seconds(pid) - loop_cpu) / settings.idle * 100
    normal = await get(port, world.decision, tokens[0])  # with every stream open, a request is still served

    voter = Voter(world, tokens[-1])
    await voter.start()
    deliveries: list[float] = []
    firsts: list[float] = []
    lasts: list[float] = []
    vote_ms: list[float] = []
    per_vote: list[tuple[float, float, float, float]] = []  # the vote's answer; first, median, last delivery
    missing = 0
    try:
        for n in range(3 + settings.changes):  # 3 to warm the voter up, not counted
            watchers.expect(settings.watchers)
            sent = time.monotonic()
            await voter.vote()
            answered = time.monotonic()
            try:
                await asyncio.wait_for(watchers.all_arrived.wait(), 10)
            except TimeoutError:
                pass
            if n < 3:
                continue
            got = [(t - sent) * 1000 for t in watchers.arrivals]
            missing += settings.watchers - len(got)
            vote_ms.append((answered - sent) * 1000)
            if got:
                deliveries += got
                firsts.append(min(got))
                lasts.append(max(got))
                per_vote.append((round(vote_ms[-1], 1), round(min(got), 1), round(percentile(got, 0.5), 1),
                                 round(max(got), 1)))
            await asyncio.sleep(0.05)
    finally:
        await voter.close()
        await watchers.close()
    return {
        "watchers": settings.watchers, "users": len(tokens), "changes": settings.changes,
        "open_seconds": opened_seconds,
        "rss_before_mib": rss_before, "rss_after_mib": rss_after, "rss_extra_mib": rss_after - rss_before,
        "idle_seconds": settings.idle, "idle_cpu_percent": idle_cpu, "idle_cpu_percent_event_loop": idle_loop_cpu,
        "idle_cpu_percent_without_streams": idle_cpu_none,
        "page_status_while_open": normal,
        "latency_ms": {"p50": percentile(deliveries, 0.5), "p95": percentile(deliveries, 0.95),
                       "p99": percentile(deliveries, 0.99), "max": max(deliveries)} if deliveries else None,
        "first_watcher_p95_ms": percentile(firsts, 0.95) if firsts else None,
        "last_watcher_p95_ms": percentile(lasts, 0.95) if lasts else None,
        "vote_answer_median_ms": statistics.median(vote_ms) if vote_ms else None,
        "per_vote_ms": per_vote, "deliveries": len(deliveries), "missing": missing, "stream_failures": watchers.failures[:5],
    }


def run_store(store: str, settings: Settings, out) -> dict[str, Any]:
    print(f"\n## {store}", file=out, flush=True)
    world = make_world(store, settings)
    try:
        with open(settings.workdir / f"{store}-servers.log", "ab") as log:
            proc, port = start_web(world, log)
            try:
                figures = _run_loop(measure(world, settings, proc, port, out))
            finally:
                stop(proc)
    finally:
        for undo in world.cleanup:
            undo()
    print(report(figures), file=out, flush=True)
    return figures


def _run_loop(coroutine):
    """On uvloop when installed (as navmcp web runs): the client reads a thousand streams, and its
    own reading is part of each latency measured."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def report(f: dict[str, Any]) -> str:
    latency = f["latency_ms"] or {}
    p95 = latency.get("p95", float("inf"))
    lines = [
        "| figure | value | target |",
        "| --- | ---: | --- |",
        f"| change → watcher, p95 over {f['deliveries']:,} deliveries ({f['changes']} votes × {f['watchers']:,} "
        f"watchers; {f['missing']} missing) | {p95:,.1f} ms | ≤ {TARGET_P95_MS:g} ms {verdict(p95 <= TARGET_P95_MS)} |",
        f"| … p50 / p99 / max | {latency.get('p50', 0):,.1f} / {latency.get('p99', 0):,.1f} / "
        f"{latency.get('max', 0):,.1f} ms | — |",
        f"| … the first watcher, p95 over votes; the last watcher | {f['first_watcher_p95_ms'] or 0:,.1f} ms; "
        f"{f['last_watcher_p95_ms'] or 0:,.1f} ms | — |",
        f"| the vote's own answer (median) | {f['vote_answer_median_ms'] or 0:,.1f} ms | — |",
        f"| extra RSS of {f['watchers']:,} open watchers | {f['rss_extra_mib']:,.2f} MiB ({f['rss_before_mib']:.1f} → "
        f"{f['rss_after_mib']:.1f}) | ≤ {TARGET_RSS_MIB:g} MiB {verdict(f['rss_extra_mib'] <= TARGET_RSS_MIB)} |",
        f"| CPU while idle with them open ({f['idle_seconds']:g} s) | {f['idle_cpu_percent']:.2f}% of a core | "
        f"< {TARGET_CPU_PERCENT:g}% {verdict(f['idle_cpu_percent'] < TARGET_CPU_PERCENT)} |",
        f"| … of which the event loop's thread; the others (the change feed's) | "
        f"{f['idle_cpu_percent_event_loop']:.2f}%; {f['idle_cpu_percent'] - f['idle_cpu_percent_event_loop']:.2f}% | — |",
        f"| CPU while idle with none open | {f['idle_cpu_percent_without_streams']:.2f}% of a core | — |",
        f"| a page request with them open | {f['page_status_while_open']} | 200 "
        f"{verdict(f['page_status_while_open'] == 200)} |",
        f"| time to open them all | {f['open_seconds']:.1f} s | — |",
    ]
    if f["stream_failures"]:
        lines.append(f"stream failures: {f['stream_failures']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> tuple[Settings, Path | None]:
    parser = argparse.ArgumentParser(prog="python -m bench live", description="Live pages: watchers, latency, idle cost.")
    parser.add_argument("--watchers", type=int, default=Settings.watchers, help="event streams held open")
    parser.add_argument("--changes", type=int, default=Settings.changes, help="votes measured (one at a time)")
    parser.add_argument("--idle", type=float, default=Settings.idle, help="seconds of idle CPU measured")
    parser.add_argument("--users", type=int, help="members holding the streams (default: watchers / 20)")
    parser.add_argument("--stores", default=",".join(Settings.stores), help="sqlite, postgres or both")
    parser.add_argument("--database-url", default=os.environ.get("NAVMCP_DATABASE_URL") or Settings.database_url,
                        help="PostgreSQL, the owner's URL (a database <pg-prefix>live is made on its server)")
    parser.add_argument("--pg-prefix", default=Settings.pg_prefix)
    parser.add_argument("--workdir", type=Path, default=Settings.workdir)
    parser.add_argument("--json", type=Path, help="also write all figures as JSON to this file")
    args = parser.parse_args(argv)
    if args.users is not None and args.users * PER_USER < args.watchers:
        parser.error(f"--users {args.users} can hold at most {args.users * PER_USER} streams")
    return Settings(watchers=args.watchers, changes=args.changes, idle=args.idle, users=args.users,
                    stores=tuple(args.stores.split(",")), database_url=args.database_url,
                    pg_prefix=args.pg_prefix, workdir=args.workdir), args.json


def main(argv: list[str] | None = None) -> int:
    settings, json_path = parse_args(argv)
    settings.workdir.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    results: dict[str, Any] = {"machine": machine(), "load_average": load, "settings": {
        k: str(v) for k, v in vars(settings).items() if k != "database_url"}, "stores": {}}
    print(f"# navmcp live pages — {results['machine']['summary']} — load average {load[0]:.2f}", flush=True)
    for store in settings.stores:
        results["stores"][store] = run_store(store, settings, sys.stdout)
    if json_path:
        json_path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
