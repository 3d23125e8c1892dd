"""Where the scheduler puts the servers: the bench's stdio p50 and `/mcp` figures with client and
server on one CPU, on two, and wherever Linux puts them.

    .venv/bin/python -m bench.placement [--rounds 3] [--parts stdio,http]   # navmcp, the bare loop, the SDK

A sequential navigate is a ping-pong over two pipes: the client writes a request and sleeps in its
read, the server wakes, answers and sleeps in its read. When the two sit on different CPUs every
hand-over wakes an idle CPU (on a virtual machine: a vCPU the host has to schedule again); on one
CPU it is a context switch. The SDK's server hands every request from its event loop to a worker
thread and back, so the same holds inside it. `python -m bench` leaves the placement to the
scheduler, as an MCP client does; this measures the same figures with it fixed. The order of the
servers alternates from round to round; the layouts run in the order below.

stdio, legacy era (each server's p50 of `--calls` sequential navigates over the bench's five URLs,
after a navigate of each): each round starts a new process of each server and leaves it where the
scheduler puts it (`fresh`: the bench's own figure); then it pins this process (the client) to the
first allowed CPU and every thread of one long-running process of each server (started once, in
the first round) to the same CPU (`same`) or to another (`apart`), and lets them all run anywhere
again (`free`: where Linux leaves them after `apart`). The bare loop (`bench/bare_server.py`) is the
floor any server's stack could reach: its ratio in a placement is the most any server could show
there.

http (the bench's `/mcp` figure: 4 concurrent clients, `--requests` navigates each, and the
server's CPU time per request, both eras, a new server process each time): `free` as the bench
runs it, `confined` with the server on one CPU and the client threads anywhere, `apart` with the
server on one CPU and the client threads on another.

Linux only (`os.sched_setaffinity`), two CPUs or more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from bench.run import (
    ERAS,
    Settings,
    StdioServer,
    machine,
    measure_http,
    mint_token,
    navigate_p50,
    navigate_times,
    prepare,
    warmed_up,
)

LAYOUTS = ("fresh", "same", "apart", "free")
NAMES = ("navmcp", "bare", "sdk")
HTTP_LAYOUTS = ("free", "confined", "apart")


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of process `pid` onto `cpus`, until no thread is left that is not (a thread
    started meanwhile by one not yet pinned would have escaped; later ones inherit the mask)."""
    done: set[str] = set()
    while tasks := set(os.listdir(f"/proc/{pid}/task")) - done:
        for task in tasks:
            try:
                os.sched_setaffinity(int(task), cpus)
            except ProcessLookupError:  # a thread that ended meanwhile
                pass
        done |= tasks


def cpus_of(layout: str, allowed: set[int]) -> tuple[set[int], set[int]]:
    """The client's CPUs and the servers' in `layout`."""
    first, second = sorted(allowed)[:2]
    return {"same": ({first}, {first}), "apart": ({first}, {second}), "confined": (allowed, {second}),
            "free": (allowed, allowed)}[layout]


def place(layout: str, servers: dict[str, StdioServer], allowed: set[int]) -> None:
    client, server = cpus_of(layout, allowed)
    os.sched_setaffinity(0, client)
    for s in servers.values():
        pin(s.proc.pid, server)


def measure_stdio(rounds: int, settings: Settings, out=sys.stdout) -> dict[str, dict[str, list[float]]]:
    """Each layout's navigate p50 per server (ms), one value per round."""
    allowed = os.sched_getaffinity(0)
    fx = prepare(settings.sizes[0], settings)
    log = settings.workdir / "servers.log"

    def p50_of(server: StdioServer) -> float:
        return statistics.median(navigate_times(server, fx, settings))

    p50: dict[str, dict[str, list[float]]] = {layout: {name: [] for name in NAMES} for layout in LAYOUTS}
    servers: dict[str, StdioServer] = {}
    try:
        for r in range(rounds):
            order = NAMES if r % 2 == 0 else NAMES[::-1]
            for name in order:
                p50["fresh"][name].append(navigate_p50(fx, settings, log, name))
            for name in NAMES:  # the long-running ones, started once (one by one: all are closed if one fails)
                servers[name] = servers.get(name) or warmed_up(name, fx, log)
            for layout in LAYOUTS[1:]:
                place(layout, servers, allowed)
                for name in order:
                    p50[layout][name].append(p50_of(servers[name]))
            print(f"stdio round {r + 1}/{rounds} done ({' then '.join(order)})", file=out, flush=True)
    finally:
        os.sched_setaffinity(0, allowed)
        for s in servers.values():
            s.close()
    return p50


def measure_mcp(rounds: int, settings: Settings, out=sys.stdout) -> dict[tuple[str, str], dict[str, list[dict]]]:
    """Per (layout, era), each server's `/mcp` figures (requests/s, CPU ms per request), one per round."""
    allowed = os.sched_getaffinity(0)
    fx = prepare(settings.sizes[0], settings)
    log = settings.workdir / "servers.log"
    token = mint_token(fx)
    figures: dict[tuple[str, str], dict[str, list[dict]]] = {
        (layout, era): {"navmcp": [], "sdk": []} for layout in HTTP_LAYOUTS for era in ERAS}
    try:
        for r in range(rounds):
            order = ("navmcp", "sdk") if r % 2 == 0 else ("sdk", "navmcp")
            for layout in HTTP_LAYOUTS:
                client, server = cpus_of(layout, allowed)
                os.sched_setaffinity(0, client)  # the client threads, started later, inherit it
                for era in ERAS:
                    for name in order:
                        got = measure_http(name, fx, settings, log, token if name == "navmcp" else None, era,
                                           cpus=None if layout == "free" else server)
                        rps = next(v for k, v in got.items() if k.endswith("_rps"))
                        cpu = next(v for k, v in got.items() if k.endswith("cpu_ms_per_request") and "client" not in k)
                        figures[layout, era][name].append({"rps": rps, "cpu": cpu})
            print(f"http round {r + 1}/{rounds} done ({' then '.join(order)})", file=out, flush=True)
    finally:
        os.sched_setaffinity(0, allowed)
    return figures


def stdio_table(p50: dict[str, dict[str, list[float]]]) -> str:
    """Medians of the p50s and, as in the bench, the median of the rounds' ratios."""
    lines = ["| placement | navmcp p50 (ms) | bare p50 (ms) | sdk p50 (ms) | navmcp ÷ sdk | bare ÷ sdk "
             "| per-round navmcp ÷ sdk | per-round bare ÷ sdk |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for layout, figures in p50.items():
        median = {name: statistics.median(values) for name, values in figures.items()}
        ratios = {name: [a / b for a, b in zip(figures[name], figures["sdk"])] for name in ("navmcp", "bare")}
        lines.append(f"| {layout} | {median['navmcp']:.3f} | {median['bare']:.3f} | {median['sdk']:.3f} "
                     f"| {statistics.median(ratios['navmcp']):.3f}x | {statistics.median(ratios['bare']):.3f}x "
                     f"| {', '.join(f'{x:.3f}' for x in ratios['navmcp'])} | {', '.join(f'{x:.3f}' for x in ratios['bare'])} |")
    return "\n".join(lines)


def mcp_table(figures: dict[tuple[str, str], dict[str, list[dict]]]) -> str:
    lines = ["| placement | era | navmcp req/s | sdk req/s | navmcp ÷ sdk | per-round navmcp ÷ sdk "
             "| navmcp CPU ms/req | sdk CPU ms/req |",
             "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for (layout, era), by in figures.items():
        ratios = [a["rps"] / b["rps"] for a, b in zip(by["navmcp"], by["sdk"])]
        rps = {name: statistics.median(f["rps"] for f in runs) for name, runs in by.items()}
        cpu = {name: statistics.median(f["cpu"] for f in runs) for name, runs in by.items()}
        lines.append(f"| {layout} | {era} | {rps['navmcp']:,.0f} | {rps['sdk']:,.0f} | {statistics.median(ratios):.3f}x "
                     f"| {', '.join(f'{x:.3f}' for x in ratios)} | {cpu['navmcp']:.3f} | {cpu['sdk']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.placement", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", default="stdio,http", help="comma-separated: stdio, http")
    parser.add_argument("--calls", type=int, default=200, help="sequential navigates per stdio p50 (the bench's 200)")
    parser.add_argument("--requests", type=int, default=500, help="navigates per /mcp client")
    parser.add_argument("--size", type=int, default=1000, help="items in the database")
    parser.add_argument("--workdir", help="where the seeded databases are kept (default: the bench's)")
    args = parser.parse_args(argv)
    if not hasattr(os, "sched_setaffinity"):
        raise SystemExit("bench.placement needs Linux (os.sched_setaffinity)")
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("bench.placement needs two CPUs or more (this process may use one)")
    settings = Settings(sizes=[args.size], sequential=args.calls, http_per_session=args.requests)
    if args.workdir:
        settings.workdir = type(settings.workdir)(args.workdir)
    parts = set(args.parts.split(","))
    print(f"# the bench's figures by placement — {machine()['summary']}, {args.size:,} items\n", flush=True)
    if "stdio" in parts:
        p50 = measure_stdio(args.rounds, settings)
        print(f"\nstdio navigate p50, {args.calls} calls each:\n\n{stdio_table(p50)}\n", flush=True)
    if "http" in parts:
        figures = measure_mcp(args.rounds, settings)
        print(f"\n/mcp with {settings.sessions} clients, {args.requests} navigates each:\n\n{mcp_table(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
