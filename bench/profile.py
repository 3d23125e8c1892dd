"""Where a call's time goes, in-process: the workspace work both servers share, split up.

    .venv/bin/python -m bench.profile --size 100000            # medians per URL
    .venv/bin/python -m bench.profile --size 100000 --cprofile # plus the top functions (cProfile)

For each benchmarked URL: the whole `tools/call` through navmcp's protocol core (bytes in, bytes
out, no pipe), the page's data (SQL and Python in `Workspace.page`), and the Jinja render. The
difference between a server's figure in `python -m bench` and the "tools/call" column here is that
server's stack: transport, framing, dispatch and validation.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time

from bench.run import Settings, prepare


def seeded_workspace(prog: str, doc: str, argv: list[str] | None):
    """The profilers' shared start: parse --size/--calls/--workdir/--cprofile, seed (or reuse) that
    size's database, and point this process at it as the embedded store's owner."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--workdir", default=str(Settings.workdir))
    parser.add_argument("--cprofile", action="store_true")
    args = parser.parse_args(argv)
    settings = Settings(sizes=[args.size])
    settings.workdir = type(settings.workdir)(args.workdir)
    fx = prepare(args.size, settings)
    os.environ["NAVMCP_HOME"] = str(fx.home)
    os.environ.pop("NAVMCP_DATABASE_URL", None)
    os.environ.pop("NAVMCP_TOKEN", None)
    return args, fx


def connected(client: str):
    """This process's App, an initialized protocol connection to it, and the local owner."""
    from navmcp.app import App
    from navmcp.mcp.tools import connect

    app = App()
    conn = connect(app, None)
    conn.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": client}}})
    return app, conn, app.authenticate(None)


def frame(tool: str, arguments: dict) -> bytes:
    """One tools/call request, as bytes for `Connection.receive_bytes`."""
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()


def main(argv: list[str] | None = None) -> int:
    args, fx = seeded_workspace("python -m bench.profile", __doc__, argv)
    app, conn, user = connected("profile")
    print(f"{args.size:,} items, medians of {args.calls} calls, milliseconds")
    print(f"{'URL':<34} {'tools/call':>10} {'page data':>10} {'render':>8} {'reply KB':>8}")
    for url in ["/help", *fx.urls]:
        message = frame("navigate", {"url": url})
        reply = conn.receive_bytes(message)
        full, data, render = [], [], []
        for _ in range(args.calls):
            started = time.perf_counter()
            conn.receive_bytes(message)
            full.append(time.perf_counter() - started)
            started = time.perf_counter()
            page = app.workspace.page(user, url)
            data.append(time.perf_counter() - started)
            started = time.perf_counter()
            page.markdown  # noqa: B018 — rendering is what is timed
            render.append(time.perf_counter() - started)
        print(f"{url:<34} {ms(full):>10} {ms(data):>10} {ms(render):>8} {len(reply) / 1024:>8.1f}")
    vote = frame("execute_action", {"action": "vote", "url": fx.vote_url,
                                    "params": {"votes": [{"option": "March 3", "accept": True}]}})
    conn.receive_bytes(vote)
    times = []
    for _ in range(args.calls):
        started = time.perf_counter()
        conn.receive_bytes(vote)
        times.append(time.perf_counter() - started)
    print(f"{'execute_action vote':<34} {ms(times):>10}")
    if args.cprofile:
        print_profile(conn.receive_bytes, [frame("navigate", {"url": url}) for url in fx.urls], args.calls,
                      "tottime", 20)
    return 0


def print_profile(call, messages: list, rounds: int, sort: str, limit: int) -> None:
    """cProfile `call` over `messages`, `rounds` times each in turn, and print the top `limit` by `sort`."""
    profiler = cProfile.Profile()
    profiler.enable()
    for n in range(rounds * len(messages)):
        call(messages[n % len(messages)])
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stdout).sort_stats(sort).print_stats(limit)


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.3f}"


if __name__ == "__main__":
    sys.exit(main())
