"""The benchmark keeps working: a tiny run (100 items, one round, a few requests) of `python -m bench`.

It spawns the real servers (bin/mcp-server and the SDK peer) like the full run does. Figures are
printed but not asserted: CI machines are too noisy for that. What is asserted: the run completes,
both servers serve the same pages, and every figure — of both eras of MCP — was measured for both
(the /mcp figures for navmcp only where `navmcp web` exists).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest

from bench.run import FIGURES
from tests.conftest import ROOT


def test_bench_runs_at_a_tiny_size(tmp_path):
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}  # SQLite here
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--sizes", "100", "--quick", "--workdir", str(tmp_path / "work"),
         "--json", str(out)],
        capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    printed = done.stdout.decode()
    assert "| cold_start_ms (ms) |" in printed and "| navigate_p50_ms (ms) |" in printed
    assert "| modern_cold_start_ms (ms) |" in printed and "| modern_http_4_clients_rps (req/s) |" in printed
    results = json.loads(out.read_text())
    size = results["sizes"]["100"]
    assert size["same_pages"] is True
    (round_,) = size["rounds"]
    http = results["http"] == "measured"
    for name in ("navmcp", "sdk"):
        for figure in FIGURES:
            if "http" in figure and name == "navmcp" and not http:
                assert figure not in round_[name]
                continue
            assert round_[name][figure] > 0, (name, figure)
    assert size["summary"]["cold_start_ms"]["ratio"] > 0


def test_the_scale_figure_comes_from_rounds_of_its_own(tmp_path):
    """With two sizes, navmcp's navigate p50 is measured on both in alternating rounds after the
    size parts, and the figure is the median of those rounds' ratios."""
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--sizes", "60,30", "--quick", "--rounds", "3", "--parts", "stdio",
         "--workdir", str(tmp_path / "work"), "--json", str(out)],
        capture_output=True, cwd=ROOT, timeout=300, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    scale = json.loads(out.read_text())["scale"]
    assert (scale["small"], scale["large"]) == (30, 60)
    assert len(scale["ratios"]) == 3 and all(r > 0 for r in scale["ratios"])
    assert scale["ratio"] == sorted(scale["ratios"])[1]
    assert "navmcp navigate p50 at 60 items vs 30:" in done.stdout.decode()


def test_bench_runs_on_postgres_at_a_tiny_size(tmp_path, pg_database):
    """With NAVMCP_DATABASE_URL (the owner's URL) the bench seeds its own database there and runs
    both servers on it as navmcp_app; stdio part only, to stay quick."""
    import psycopg

    from tests.store_fixtures import PG_ADMIN_URL

    prefix = f"navmcp_test_bench_{secrets.token_hex(3)}_"
    out = tmp_path / "results.json"
    env = {**os.environ, "NAVMCP_DATABASE_URL": PG_ADMIN_URL}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench", "--sizes", "50", "--quick", "--parts", "stdio", "--pg-prefix", prefix,
             "--workdir", str(tmp_path / "work"), "--json", str(out)],
            capture_output=True, cwd=ROOT, timeout=180, env=env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
        assert "store: PostgreSQL" in done.stdout.decode()
        results = json.loads(out.read_text())
        assert results["store"] == "postgresql" and "postgres@" not in json.dumps(results["settings"])
        size = results["sizes"]["50"]
        assert size["same_pages"] is True
        (round_,) = size["rounds"]
        for name in ("navmcp", "sdk"):
            assert round_[name]["navigate_p50_ms"] > 0 and round_[name]["execute_pipelined_rps"] > 0
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{prefix}50" WITH (FORCE)')


def test_bench_runs_the_floor_beside_the_two(tmp_path):
    """`--with-bare` adds bench/bare_server.py: it must serve the same pages and get its own column."""
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--sizes", "100", "--quick", "--parts", "stdio", "--with-bare",
         "--workdir", str(tmp_path / "work"), "--json", str(out)],
        capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert "bare ÷ sdk |" in done.stdout.decode()
    size = json.loads(out.read_text())["sizes"]["100"]
    assert size["same_pages"] is True
    (round_,) = size["rounds"]
    assert round_["bare"]["navigate_pipelined_rps"] > 0 and round_["bare"]["execute_pipelined_rps"] > 0
    assert size["summary"]["navigate_pipelined_rps"]["bare_ratio"] > 0


def test_a_votes_own_work_answers_as_navmcp_does(tmp_path):
    """bench/vote_work.py runs a vote's statements with nothing around them; it must keep giving
    navmcp's reply, byte for byte, or its figure would stop being the same vote's work."""
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.vote_work", "--size", "100", "--calls", "3", "--workdir", str(tmp_path / "work")],
        capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert "navmcp ÷ own work, group by group: median" in done.stdout.decode()


def test_the_instruction_targets_run_outside_valgrind(tmp_path):
    """`python -m bench.instructions` counts its targets under valgrind (minutes each: not here).
    What runs inside valgrind is checked: every default target is a call the inner process knows,
    and that process warms every target up and runs one (`page:cycle`, the work both servers share)."""
    from bench.instructions import targets_for

    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    command = [sys.executable, "-m", "bench.instructions", "--size", "100", "--workdir", str(tmp_path / "work")]
    listed = subprocess.run([*command, "--list"], capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert listed.returncode == 0, listed.stderr.decode(errors="replace")[-3000:]
    names = listed.stdout.decode().split()
    urls = [name[len("data:"):] for name in names if name.startswith("data:")]
    assert len(urls) == 5 and set(targets_for(urls)) <= set(names) and "page:cycle" in names
    done = subprocess.run([*command, "--inner", "--target", "page:cycle", "--calls", "2"],
                          capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]


def test_the_live_pages_bench_runs_small(tmp_path):
    """`python -m bench live` with 30 watchers on SQLite: every vote reaches every watcher, and
    every figure is measured (the targets are for 1,000 watchers on a quiet machine)."""
    out = tmp_path / "live.json"
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "live", "--stores", "sqlite", "--watchers", "30", "--changes", "3",
         "--idle", "1", "--workdir", str(tmp_path / "work"), "--json", str(out)],
        capture_output=True, cwd=ROOT, timeout=180, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert "| change → watcher, p95 over 90 deliveries" in done.stdout.decode()
    figures = json.loads(out.read_text())["stores"]["sqlite"]
    assert figures["missing"] == 0 and figures["deliveries"] == 90 and figures["users"] == 2
    assert figures["page_status_while_open"] == 200 and figures["stream_failures"] == []
    assert figures["latency_ms"]["p95"] > 0 and figures["rss_after_mib"] > 0 and figures["idle_cpu_percent"] >= 0


def test_the_do_nothing_servers_answer_alike_with_and_without_asgi():
    """`bench.null_http`'s two floors do the same work: on uvicorn (as `navmcp web` runs it) and with
    no ASGI server, the same answer to a request (twice on one connection) and 202 to a notification."""
    import http.client

    from bench.run import free_port, wait_for_port

    request = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {}})
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    answers = {}
    for flag in ("--serve", "--serve-raw"):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "bench.null_http", flag, str(port)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc, 30)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            got = []
            for body in (request, request, note):
                conn.request("POST", "/mcp", body, {"content-type": "application/json"})
                reply = conn.getresponse()
                got.append((reply.status, reply.getheader("content-type"), reply.read()))
            conn.close()
        finally:
            proc.terminate()
            proc.wait(10)
        answers[flag] = got
    status, kind, body = answers["--serve"][0]
    assert (status, kind) == (200, "application/json") and json.loads(body)["id"] == 7
    assert answers["--serve"][1] == answers["--serve"][0] and answers["--serve"][2][0] == 202
    assert answers["--serve-raw"] == answers["--serve"]


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2, reason="needs Linux and two CPUs")
def test_placement_pins_client_and_every_server_thread():
    """`bench.placement` puts the client (this process) and every thread of a server where each
    layout says, threads started before the pinning included, and `free` gives back every CPU."""
    from types import SimpleNamespace

    from bench.placement import place

    allowed = os.sched_getaffinity(0)
    first, second = sorted(allowed)[:2]
    # A server stand-in with a second thread already running, as the SDK's worker threads are.
    proc = subprocess.Popen([sys.executable, "-c", "import threading, time; threading.Thread(target=time.sleep, "
                             "args=(60,)).start(); print(flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()
        tasks = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]
        assert len(tasks) == 2
        servers = {"stand-in": SimpleNamespace(proc=proc)}
        for layout, client, server in (("same", {first}, {first}), ("apart", {first}, {second}),
                                       ("free", allowed, allowed)):
            place(layout, servers, allowed)
            assert os.sched_getaffinity(0) == client, layout
            assert [os.sched_getaffinity(t) for t in tasks] == [server, server], layout
    finally:
        os.sched_setaffinity(0, allowed)
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_the_placement_bench_runs_small(tmp_path):
    """`python -m bench.placement` measures the three servers' stdio p50 in every layout and both
    servers' /mcp figures in both eras in every layout (each pinned server checked by
    `measure_http`: all its threads on its CPU), and prints the tables."""
    done = subprocess.run([sys.executable, "-m", "bench.placement", "--rounds", "1", "--calls", "5", "--requests", "5",
                           "--size", "40", "--workdir", str(tmp_path / "work")],
                          capture_output=True, cwd=ROOT, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"})
    if len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2:
        assert done.returncode != 0 and (b"two CPUs" in done.stderr or b"needs Linux" in done.stderr)
        return
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in done.stdout.decode().splitlines()
            if line.startswith("| ") and "x |" in line]
    assert [row[0] for row in rows[:4]] == ["fresh", "same", "apart", "free"]
    assert all(float(cell) > 0 for row in rows[:4] for cell in row[1:4])
    assert [row[:2] for row in rows[4:]] == [[layout, era] for layout in ("free", "confined", "apart")
                                             for era in ("legacy", "modern")]
    assert all(float(cell.replace(",", "")) > 0 for row in rows[4:] for cell in row[2:4] + row[6:8])


def test_the_fairness_bench_runs_at_a_tiny_size_on_both_stores(tmp_path, pg_database):
    """`python -m bench fairness` (issue 40's attack shapes) at a tiny size, one command for both
    stores: it completes, and every request kind of both sides was answered on each. Figures are
    printed, not asserted. Its PostgreSQL database is a throwaway one beside the tests' own."""
    import secrets

    import psycopg

    from store_fixtures import PG_ADMIN_URL

    out = tmp_path / "fairness.json"
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    prefix = f"navmcp_test_fair{secrets.token_hex(3)}_"
    try:
        done = subprocess.run([sys.executable, "-m", "bench", "fairness", "--items", "300", "--attackers", "2",
                               "--seconds", "1", "--workdir", str(tmp_path / "work"), "--json", str(out),
                               "--database-url", PG_ADMIN_URL, "--pg-prefix", prefix],
                              capture_output=True, cwd=ROOT, timeout=300, env=env)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{prefix}300" WITH (FORCE)')
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    figures = json.loads(out.read_text())
    assert [f["store"] for f in figures] == ["sqlite", "postgresql"]
    for store in figures:
        assert set(store["bystander_attacked"]) == {"page", "search"}
        assert set(store["attackers_answered"]) == {"tags", "awaiting", "cycle", "search"}
        assert len(store["load_average"]) == 3
    printed = done.stdout.decode()
    assert "Fairness on sqlite" in printed and "Fairness on postgresql" in printed
    assert printed.count("| bystander, attacked | search |") == 2


def test_the_scale_bench_runs_at_two_tiny_sizes(tmp_path):
    """`python -m bench.scale` times every page at both sizes in one run and gives each its ratio."""
    from bench.scale import PAGES

    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    out = tmp_path / "scale.json"
    done = subprocess.run([sys.executable, "-m", "bench.scale", "--sizes", "40,80", "--rounds", "2", "--calls", "1",
                           "--workdir", str(tmp_path / "work"), "--json", str(out)],
                          capture_output=True, cwd=ROOT, timeout=300, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    figures = json.loads(out.read_text())["pages"]
    assert set(figures) == set(PAGES)
    for url in PAGES:
        row = figures[url]["80"] if "80" in figures[url] else figures[url][80]
        assert row["small_ms"] > 0 and row["large_ms"] > 0 and len(row["per_round"]) == 2
        assert f"| `{url}` |" in done.stdout.decode()


def test_the_inbox_bench_fills_the_inbox_and_times_it(tmp_path):
    """`python -m bench.inbox` gives the owner the entries asked (once) and times /inbox beside the feed."""
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    command = [sys.executable, "-m", "bench.inbox", "--size", "60", "--entries", "40", "--calls", "2", "--rounds", "1",
               "--workdir", str(tmp_path / "work")]
    for _ in range(2):  # the second run reuses the entries
        done = subprocess.run(command, capture_output=True, cwd=ROOT, timeout=300, env=env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
        assert "/inbox with 40 entries" in done.stdout.decode() and "/inbox ÷ feed" in done.stdout.decode()


def test_the_instruction_targets_without_the_inbox_run(tmp_path):
    """`:noinbox` runs a target with the inbox and mentions made no-ops (a call as before issue 43)."""
    env = {k: v for k, v in os.environ.items() if k != "NAVMCP_DATABASE_URL"}
    command = [sys.executable, "-m", "bench.instructions", "--size", "100", "--workdir", str(tmp_path / "work"),
               "--inner", "--calls", "2"]
    for target in ("comment:20", "comment:20:noinbox", "vote:noinbox"):
        done = subprocess.run([*command, "--target", target], capture_output=True, cwd=ROOT, timeout=180, env=env)
        assert done.returncode == 0, (target, done.stderr.decode(errors="replace")[-3000:])
