"""Pages at a small and a large size, in one run: each page's time at N items ÷ its time at 1K.

    .venv/bin/python -m bench.scale --sizes 1000,1000000 [--rounds 3]
    .venv/bin/python -m bench.scale --sizes 1000,1000000 --database-url postgresql://postgres@127.0.0.1:5432/postgres

Issue 41's target: every page, search included, at most 5× its 1K time at 1M items, on both stores.
Seeds (or reuses) each size's database as `python -m bench` does (`--workdir`), then runs rounds:
each round times every page in one process per size (sizes in alternating order, so the machine's
drift falls on both), a page's figure being the median of `--calls` calls of `Workspace.page` and
its markdown after one warm-up call, as the store's owner (PostgreSQL: as `navmcp_app` under
row-level security, with the owner's token). A page's ratio is the median of its per-round ratios;
the time shown is the median over rounds. Every page is the same URL at every size: the seed makes
the same studio, words and tags at any size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.run import PYTHON, ROOT, Settings, prepare, server_env

TARGET = 5.0
# The pages issue 41 names (search: a common word, across the workspace, with filters, filters
# alone; the cycle pages) and the other pages whose cost could grow with the studio.
PAGES = [
    "/",
    "/studios/bench",
    "/studios/bench/search?q=plan",
    "/studios/bench/search?q=launch review",
    "/studios/bench/search?q=zebra",  # a word no item has (a typo): every source finds nothing
    "/search?q=plan",
    "/search?q=plan type:decision status:open",
    "/search?q=type:decision status:open tag:planning",
    "/studios/bench/tags/q1",
    "/studios/bench/cycles/today",
    "/studios/bench/cycles/this-week",
    "/studios/bench/cycles/this-month",
    "/inbox",
    "/awaiting",
]


def inner(calls: int, pages: list[str]) -> int:
    """In a process pointed at one size's database: each page's median seconds, as JSON on stdout."""
    from navmcp.app import App

    app = App()
    user = app.authenticate(os.environ.get("NAVMCP_TOKEN") or None)
    out = {}
    for url in pages:
        times = []
        for n in range(calls + 1):
            started = time.perf_counter()
            page = app.workspace.page(user, url)
            _ = page.markdown
            if n:  # the first call warms the caches (the database's pages, compiled templates)
                times.append(time.perf_counter() - started)
        out[url] = statistics.median(times)
    json.dump(out, sys.stdout)
    return 0


def measure(fx, calls: int, pages: list[str]) -> dict[str, float]:
    done = subprocess.run([PYTHON, "-m", "bench.scale", "--inner", "--calls", str(calls), "--pages", json.dumps(pages)],
                          capture_output=True, env=server_env(fx), cwd=ROOT, timeout=3600)
    if done.returncode:
        raise SystemExit(f"measuring failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,1000000", help="the small size first")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=5, help="calls per page per round (their median)")
    parser.add_argument("--workdir", type=Path, default=Settings.workdir)
    parser.add_argument("--database-url", default=None, help="PostgreSQL, the owner's URL (else SQLite)")
    parser.add_argument("--pg-prefix", default=Settings.pg_prefix)
    parser.add_argument("--pages", default=None, help="a JSON list of URLs (default: the issue's pages)")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure here")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    pages = json.loads(args.pages) if args.pages else PAGES
    if args.inner:
        return inner(args.calls, pages)
    sizes = [int(s) for s in args.sizes.split(",")]
    settings = Settings(sizes=sizes, workdir=args.workdir, database_url=args.database_url, pg_prefix=args.pg_prefix)
    fixtures = {size: prepare(size, settings) for size in sizes}
    small, rounds = sizes[0], []
    for r in range(args.rounds):
        order = sizes if r % 2 == 0 else sizes[::-1]
        rounds.append({size: measure(fixtures[size], args.calls, pages) for size in order})
    store = "PostgreSQL" if args.database_url else "SQLite"
    print(f"# pages at {', '.join(f'{s:,}' for s in sizes)} items — {store} — {args.rounds} rounds × {args.calls} calls")
    result: dict = {"store": store, "sizes": sizes, "rounds": rounds, "pages": {}}
    for large in sizes[1:]:
        print(f"\n| page | {small:,} (ms) | {large:,} (ms) | ratio (per round) | ≤ {TARGET:g}× |")
        print("| --- | ---: | ---: | --- | --- |")
        for url in pages:
            a = statistics.median(r[small][url] for r in rounds) * 1000
            b = statistics.median(r[large][url] for r in rounds) * 1000
            per = [r[large][url] / r[small][url] for r in rounds]
            ratio = statistics.median(per)
            result["pages"].setdefault(url, {})[large] = {"small_ms": a, "large_ms": b, "ratio": ratio, "per_round": per}
            print(f"| `{url}` | {a:.2f} | {b:.2f} | {ratio:.1f} ({', '.join(f'{p:.1f}' for p in per)}) | "
                  f"{'met' if ratio <= TARGET else 'MISSED'} |")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
