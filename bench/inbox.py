"""`/inbox` with many entries, beside a studio page in the same run (issue 43's target).

    .venv/bin/python -m bench.inbox [--size 100000] [--entries 10000] [--calls 50] [--rounds 3]

SQLite. Seeds (or reuses) a workspace of `--size` items as `python -m bench` does, then gives its
owner `--entries` inbox entries (once; a third of them read), written as actions write them: about
the studio's items, by its members, of the kinds an action writes; `--packed` of them (a share)
as packs telling the owner and 19 others (a large fan-out, migration 0320), and `--others` packs
telling 20 others but not the owner, which a reader of packs tests and passes over. Each round then takes `--calls`
calls of each page in turn (`Workspace.page` and its markdown, as the owner): `/inbox`, the studio
feed and home. It prints each page's p50 over all rounds and `/inbox` ÷ the feed. Target: `/inbox`
p50 ≤ 15 ms at 100,000 items with 10,000 entries; home stays within its budget.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sqlite3
import statistics
import sys
import time
from pathlib import Path

from bench.run import Settings, prepare
from navmcp.feeds.inbox import ROW_EACH

TARGET_MS = 15.0
KINDS = ("mention", "comment", "decision_closed", "commitment_mass", "commitment_closed", "reminder")
PACKED = tuple(k for k in KINDS if k not in ROW_EACH)  # a comment keeps a row each (navmcp.feeds.inbox)


def fill(db_path: Path, entries: int, packed: float, others: int) -> int:
    """Give the owner `entries` inbox entries in all (those there count); how many there are."""
    with sqlite3.connect(db_path) as db:
        owner = db.execute("SELECT value FROM settings WHERE key = 'owner'").fetchone()[0]
        have = db.execute("SELECT count(*) FROM inbox WHERE user_id = ? AND dismissed_at IS NULL", (owner,)).fetchone()[0]
        have += db.execute("SELECT count(*) FROM inbox_packs WHERE instr(recipients, ?)", (f",{owner},",)).fetchone()[0]
        if have >= entries:
            return have
        studio = db.execute("SELECT id FROM studios WHERE handle = 'bench'").fetchone()[0]
        items = [r[0] for r in db.execute("SELECT id FROM items WHERE studio_id = ? ORDER BY seq DESC LIMIT ?",
                                          (studio, entries))]
        actors = [r[0] for r in db.execute("SELECT user_id FROM memberships WHERE studio_id = ? AND user_id != ?",
                                           (studio, owner))]
        rng = random.Random(43)
        now = time.time()
        rows, packs, marks = [], [], []

        def when() -> str:
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now - rng.uniform(0, 80 * 86400))) + "Z"

        def pack(told: list[str], n: int, at: str) -> None:
            packs.append((len(packs) + 1, PACKED[n % len(PACKED)], studio, items[n % len(items)], rng.choice(actors),
                          "bench", rng.randint(1, 3), at, at, f",{','.join(sorted(told))},"))

        first = (db.execute("SELECT max(id) FROM inbox_packs").fetchone()[0] or 0)
        for n in range(entries - have):
            at = when()
            read = at if n % 3 == 0 else None
            if rng.random() < packed:
                pack([owner, *rng.sample(actors, 19)], n, at)
                if read:
                    marks.append((first + len(packs), owner, read))
            else:
                rows.append((secrets.token_hex(8), owner, KINDS[n % len(KINDS)], studio, items[n % len(items)],
                             rng.choice(actors), "bench", rng.randint(1, 3), at, at, read))
        for n in range(others):
            pack(rng.sample(actors, 20), n, when())
        db.executemany("INSERT INTO inbox (id, user_id, kind, studio_id, item_id, actor_id, client, count, created_at,"
                       " updated_at, read_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO inbox_packs (id, kind, studio_id, item_id, actor_id, client, count, created_at,"
                       " updated_at, recipients) VALUES (? + ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(first, *p) for p in packs])
        db.executemany("INSERT INTO inbox_marks (pack_id, user_id, read_at) VALUES (?, ?, ?)", marks)
        return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.inbox", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--packed", type=float, default=0.5, help="the share of entries written as packs")
    parser.add_argument("--others", type=int, default=10_000, help="packs that do not tell the owner")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Settings.workdir)
    args = parser.parse_args(argv)
    fx = prepare(args.size, Settings(sizes=[args.size], workdir=args.workdir))
    entries = fill(fx.home / "navmcp.db", args.entries, args.packed, args.others)
    os.environ["NAVMCP_HOME"] = str(fx.home)
    os.environ.pop("NAVMCP_DATABASE_URL", None)
    os.environ.pop("NAVMCP_TOKEN", None)
    from navmcp.app import App

    app = App()
    user = app.authenticate(None)
    pages = {"/inbox": "/inbox", "feed": fx.urls[1], "home": "/"}
    times: dict[str, list[float]] = {name: [] for name in pages}
    sizes = {}
    for name, url in pages.items():  # warm-up
        sizes[name] = len(app.workspace.page(user, url).markdown)
    for _ in range(args.rounds):
        for _ in range(args.calls):
            for name, url in pages.items():
                started = time.perf_counter()
                _ = app.workspace.page(user, url).markdown
                times[name].append(time.perf_counter() - started)
    p50 = {name: statistics.median(t) * 1000 for name, t in times.items()}
    print(f"# /inbox with {entries:,} entries ({args.packed:.0%} packed; {args.others:,} packs for others),"
          f" {args.size:,} items, SQLite — {args.rounds} rounds × {args.calls} calls")
    for name in pages:
        print(f"{name:<8} p50 {p50[name]:7.2f} ms   p95 {statistics.quantiles(times[name], n=20)[-1] * 1000:7.2f} ms"
              f"   {sizes[name]:,} characters")
    print(f"/inbox ÷ feed: {p50['/inbox'] / p50['feed']:.1f}×;  /inbox p50 ≤ {TARGET_MS:g} ms: "
          f"{'met' if p50['/inbox'] <= TARGET_MS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
