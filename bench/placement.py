"""Where the scheduler puts the server: the stdio navigate p50 with client and server on one CPU,
on two, and wherever Linux puts them.

    .venv/bin/python -m bench.placement [--rounds 3] [--calls 300]   # navmcp, the bare loop, the SDK

A sequential navigate is a ping-pong over two pipes: the client writes a request and sleeps in its
read, the server wakes, answers and sleeps in its read. When the two sit on different CPUs every
hand-over wakes an idle CPU (on a virtual machine: a vCPU the host has to schedule again); on one
CPU it is a context switch. `python -m bench` leaves the placement to the scheduler, as an MCP
client does, so its p50 ratio moves with where each fresh server process lands. This measures it
with the placement fixed: each round first starts a new process of each server, as the bench does,
and leaves it where the scheduler puts it (`fresh`: the bench's own figure); then it pins this
process (the client) to the first allowed CPU and every thread of each long-running server to the
same CPU (`same`) or to another (`apart`), and lets them all run anywhere again (`free`: where
Linux leaves them after that). Each figure is a server's p50 of `--calls` navigates over the
bench's five URLs on the 1,000-item database (`--size`), after the bench's warm-up. The bare loop
(`bench/bare_server.py`) is the floor any server's stack could reach; its ratio in each placement
is the most any server could show there. Linux only (`os.sched_setaffinity`), two CPUs or more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from bench.run import SERVERS, Settings, StdioServer, navigate_args, navigate_times, prepare, server_env

LAYOUTS = ("fresh", "same", "apart", "free")
NAMES = ("navmcp", "bare", "sdk")


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of process `pid` onto `cpus` (threads it starts later inherit their creator's)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(task), cpus)
        except ProcessLookupError:  # a thread that ended meanwhile
            pass


def place(layout: str, servers: dict[str, StdioServer], allowed: set[int]) -> None:
    first, second = sorted(allowed)[:2]
    client = {first} if layout != "free" else allowed
    server = {"same": {first}, "apart": {second}, "free": allowed}[layout]
    os.sched_setaffinity(0, client)
    for s in servers.values():
        pin(s.proc.pid, server)


def measure(rounds: int, calls: int, size: int = 1000, workdir: str | None = None,
            out=sys.stdout) -> dict[str, dict[str, list[float]]]:
    """Each layout's p50 per server (ms), one value per round."""
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        raise SystemExit("bench.placement needs two CPUs or more (this process may use one)")
    settings = Settings(sizes=[size], sequential=calls)
    if workdir:
        settings.workdir = type(settings.workdir)(workdir)
    fx = prepare(size, settings)
    log = settings.workdir / "servers.log"

    def started(name: str) -> StdioServer:
        server = StdioServer(SERVERS[name]["stdio"], server_env(fx), log)
        server.initialize()
        for url in fx.urls:  # warm-up, as in the bench
            server.call("navigate", navigate_args(url))
        return server

    def p50_of(server: StdioServer) -> float:
        return statistics.median(navigate_times(server, fx, settings))

    p50: dict[str, dict[str, list[float]]] = {layout: {name: [] for name in NAMES} for layout in LAYOUTS}
    servers: dict[str, StdioServer] = {}
    try:
        for r in range(rounds):
            order = NAMES if r % 2 == 0 else NAMES[::-1]
            for name in order:
                server = started(name)
                try:
                    p50["fresh"][name].append(p50_of(server))
                finally:
                    server.close()
            servers = servers or {name: started(name) for name in NAMES}
            for layout in LAYOUTS[1:]:
                place(layout, servers, allowed)
                for name in order:
                    p50[layout][name].append(p50_of(servers[name]))
            print(f"round {r + 1}/{rounds} done ({' then '.join(order)})", file=out, flush=True)
    finally:
        os.sched_setaffinity(0, allowed)
        for s in servers.values():
            s.close()
    return p50


def table(p50: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| placement | navmcp p50 (ms) | bare p50 (ms) | sdk p50 (ms) | navmcp ÷ sdk | bare ÷ sdk "
             "| per-round navmcp ÷ sdk |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for layout, figures in p50.items():
        median = {name: statistics.median(values) for name, values in figures.items()}
        rounds = ", ".join(f"{a / b:.3f}" for a, b in zip(figures["navmcp"], figures["sdk"]))
        lines.append(f"| {layout} | {median['navmcp']:.3f} | {median['bare']:.3f} | {median['sdk']:.3f} "
                     f"| {median['navmcp'] / median['sdk']:.3f}x | {median['bare'] / median['sdk']:.3f}x | {rounds} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.placement", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300, help="sequential navigates per p50")
    parser.add_argument("--size", type=int, default=1000, help="items in the database")
    parser.add_argument("--workdir", help="where the seeded databases are kept (default: the bench's)")
    args = parser.parse_args(argv)
    if not hasattr(os, "sched_setaffinity"):
        raise SystemExit("bench.placement needs Linux (os.sched_setaffinity)")
    from bench.run import machine

    print(f"# stdio navigate p50 by placement — {machine()['summary']}, {args.size:,} items, "
          f"{args.calls} calls per p50\n", flush=True)
    print(table(measure(args.rounds, args.calls, args.size, args.workdir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
