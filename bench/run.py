"""The benchmark: navmcp against the same workspace served by the MCP SDK, side by side, from outside.

    .venv/bin/python -m bench                      # the full run (1K, 100K, 1M items, 3 rounds)
    .venv/bin/python -m bench --sizes 1000 --rounds 1 --quick   # a quick look

Each server is a real process spawned the way an MCP client spawns it (`bin/mcp-server`, or
`python bench/sdk_server.py`), driven over stdio with raw JSON-RPC lines, and over Streamable HTTP
at /mcp for the HTTP figure. Both eras of MCP are measured: the legacy rows (initialize, then plain
requests; over HTTP a session per client) and the `modern_` rows (MCP 2026-07-28: every request
carries its `_meta`, no handshake; over HTTP stateless requests, against the SDK's stateless JSON
mode). Rounds alternate A/B (odd rounds navmcp first, even rounds the SDK
first) and the table reports medians and each round's ratio, because the machine is shared.
Every loop is bounded; servers bind 127.0.0.1 only and are killed at the end of each part.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
NAVMCP = [PYTHON, "-m", "navmcp"]
SERVERS = {
    "navmcp": {"stdio": [str(ROOT / "bin" / "mcp-server")],
               "http": NAVMCP + ["web", "--host", "127.0.0.1", "--port", "{port}"]},
    "sdk": {"stdio": [PYTHON, str(ROOT / "bench" / "sdk_server.py")],
            "http": [PYTHON, str(ROOT / "bench" / "sdk_server.py"), "--http", "--port", "{port}"]},
    "bare": {"stdio": [PYTHON, str(ROOT / "bench" / "bare_server.py")]},  # --with-bare: the floor, stdio only
}
PROTOCOL = "2025-11-25"
MODERN = "2026-07-28"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "navmcp-bench", "version": "1"}}
TIMEOUT = 120.0  # no single read may hang the bench longer than this

# figure → (unit, better, target ratio navmcp/sdk or None)
FIGURES = {
    "cold_start_ms": ("ms", "lower", 0.2),
    "navigate_p50_ms": ("ms", "lower", 0.25),
    "navigate_p99_ms": ("ms", "lower", None),
    "help_p50_ms": ("ms", "lower", None),  # navigate('/help'): almost no page work, the stack's own cost
    "execute_p50_ms": ("ms", "lower", None),
    "execute_p99_ms": ("ms", "lower", None),
    "navigate_pipelined_rps": ("req/s", "higher", 8.0),
    "execute_pipelined_rps": ("req/s", "higher", 15.0),
    "peak_rss_mb": ("MiB", "lower", 0.45),
    "http_4_sessions_rps": ("req/s", "higher", 3.0),
    # The server's CPU time (user + system) per /mcp request in that run: what its throughput
    # follows while it is the bottleneck (both servers run at ~100% of a core there).
    "http_cpu_ms_per_request": ("ms", "lower", None),
    # The load generator's own CPU time per request meanwhile (this process: the 4 client threads),
    # to see whether the client, which shares the machine's cores, could be what bounds the figure.
    "http_client_cpu_ms_per_request": ("ms", "lower", None),
    # MCP 2026-07-28: the same work with per-request `_meta` and no session (cold start: to the
    # first server/discover answer; HTTP: 4 concurrent clients, stateless, against the SDK's
    # stateless JSON mode).
    "modern_cold_start_ms": ("ms", "lower", 0.2),
    "modern_navigate_p50_ms": ("ms", "lower", 0.25),
    "modern_navigate_p99_ms": ("ms", "lower", None),
    "modern_execute_p50_ms": ("ms", "lower", None),
    "modern_navigate_pipelined_rps": ("req/s", "higher", 8.0),
    "modern_execute_pipelined_rps": ("req/s", "higher", 15.0),
    "modern_peak_rss_mb": ("MiB", "lower", 0.45),
    "modern_http_4_clients_rps": ("req/s", "higher", 3.5),
    "modern_http_cpu_ms_per_request": ("ms", "lower", None),
    "modern_http_client_cpu_ms_per_request": ("ms", "lower", None),
}
ERAS = ("legacy", "modern")
SCALE_TARGET = 1.5  # navmcp navigate p50 at the largest size / at the smallest


@dataclass
class Settings:
    sizes: list[int]
    rounds: int = 3
    cold: int = 5
    sequential: int = 200
    sequential_execute: int = 100
    pipelined: int = 500
    # Bursts per pipelined figure, its median kept: a burst of navmcp's lasts ~0.1 s, so one pause
    # of the shared machine moved a single burst's figure by a fifth (4,094 votes/s against 4,864–5,664).
    bursts: int = 3
    http_per_session: int = 500  # 100 made navmcp's window ~0.2 s, where thread start-up and the tail weighed
    sessions: int = 4
    workdir: Path = Path(tempfile.gettempdir()) / "navmcp-bench"
    servers: tuple[str, ...] = ("navmcp", "sdk")
    database_url: str | None = None  # PostgreSQL (the owner's URL, as for `navmcp migrate`): bench there
    pg_prefix: str = "navmcp_bench_"  # PostgreSQL: the database for N items is <prefix>N
    parts: tuple[str, ...] = ("stdio", "http")
    eras: tuple[str, ...] = ERAS


@dataclass
class Fixture:
    home: Path
    urls: list[str]
    vote_url: str
    owner: str
    seed_seconds: float | None = None
    env: dict[str, str] = field(default_factory=dict)  # on PostgreSQL: the database URL and the owner's token


# --- stdio ----------------------------------------------------------------------------------------


class StdioServer:
    """A spawned stdio MCP server with raw JSON-RPC lines in and out."""

    def __init__(self, command: list[str], env: dict[str, str], stderr_path: Path, era: str = "legacy"):
        self.era = era
        self.stderr = open(stderr_path, "ab")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=env)
        self.next_id = 0

    def message(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> bytes:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        if self.era == "modern" and not notify:
            params = {**(params or {}), "_meta": MODERN_META}
        if params is not None:
            msg["params"] = params
        return json.dumps(msg).encode() + b"\n"

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"server {self.proc.args} closed stdout (exit {self.proc.poll()})")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.write(self.message(method, params))
        reply = self.read()
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def initialize(self) -> dict[str, Any]:
        """The handshake; in the modern era, which has none, the first server/discover."""
        if self.era == "modern":
            return self.request("server/discover")
        result = self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                             "clientInfo": {"name": "navmcp-bench", "version": "1"}})
        self.write(self.message("notifications/initialized", notify=True))
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool} {arguments} failed: {result['content'][0]['text']}")
        return result

    def call_timed(self, tool: str, arguments: dict[str, Any]) -> float:
        """Milliseconds for one call. The reply is checked by a byte search, not decoded: the client's
        own JSON parsing would otherwise be a visible part of a sub-millisecond figure."""
        frame = self.message("tools/call", {"name": tool, "arguments": arguments})
        started = time.perf_counter()
        self.write(frame)
        line = self.proc.stdout.readline()
        elapsed = (time.perf_counter() - started) * 1000
        if failed(line):
            raise RuntimeError(f"{tool} {arguments} failed: {line[:300]!r}")
        return elapsed

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM in /proc status")

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
        finally:
            self.stderr.close()


def failed(line: bytes) -> bool:
    """A reply line that is an error, a failed tool call, or missing. (The benchmarked pages hold no
    user text that could contain these byte strings.)"""
    return not line or b'"isError":true' in line or b'"error":{' in line


def server_env(home: Path | Fixture, extra: dict[str, str] | None = None) -> dict[str, str]:
    if isinstance(home, Fixture):
        home, extra = home.home, {**home.env, **(extra or {})}
    env = {k: v for k, v in os.environ.items() if not k.startswith("NAVMCP_")}
    env["NAVMCP_HOME"] = str(home)
    env.update(extra or {})
    return env


def navigate_args(url: str) -> dict[str, Any]:
    return {"url": url}


def vote_args(fx: Fixture, n: int) -> dict[str, Any]:
    # Voting again replaces your vote: the same action is valid on every call, and the rows stay few.
    return {"action": "vote", "url": fx.vote_url,
            "params": {"votes": [{"option": "March 3", "accept": True, "prefer": n % 2 == 0},
                                 {"option": "March 10", "accept": n % 3 != 0}]}}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def measure_cold_start(name: str, fx: Fixture, settings: Settings, log: Path, era: str = "legacy") -> float:
    samples = []
    for _ in range(settings.cold):
        server = StdioServer(SERVERS[name]["stdio"], server_env(fx), log, era)
        try:
            server.initialize()
            samples.append((time.perf_counter() - server.started) * 1000)
        finally:
            server.close()
    return statistics.median(samples)


def pipelined(server: StdioServer, tool: str, args: list[dict[str, Any]]) -> float:
    """Requests per second when all `args` are written before the replies are read (a writer thread
    keeps writing while the main thread reads, so neither pipe can fill up and stall the other)."""
    frames = [server.message("tools/call", {"name": tool, "arguments": a}) for a in args]
    errors: list[BaseException] = []

    data = b"".join(frames)

    def writer():
        try:
            server.proc.stdin.write(data)
            server.proc.stdin.flush()
        except BaseException as e:  # surfaced below
            errors.append(e)

    started = time.perf_counter()
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    bad = 0
    for _ in frames:
        bad += failed(server.proc.stdout.readline())
    elapsed = time.perf_counter() - started
    thread.join(TIMEOUT)
    if errors:
        raise RuntimeError(f"pipelined writer failed: {errors[0]!r}")
    if bad:
        raise RuntimeError(f"{bad} of {len(frames)} pipelined {tool} calls failed")
    return len(frames) / elapsed


def measure_stdio(name: str, fx: Fixture, settings: Settings, log: Path, era: str = "legacy") -> dict[str, float]:
    """The stdio figures of one server in one era (the modern ones named `modern_...`)."""
    figures = {"cold_start_ms": measure_cold_start(name, fx, settings, log, era)}
    server = StdioServer(SERVERS[name]["stdio"], server_env(fx), log, era)
    try:
        server.initialize()
        for url in fx.urls:  # warm-up: the first call loads the workspace, templates, pydantic models
            server.call("navigate", navigate_args(url))
        server.call("execute_action", vote_args(fx, 0))
        times = navigate_times(server, fx, settings)
        figures["navigate_p50_ms"] = statistics.median(times)
        figures["navigate_p99_ms"] = percentile(times, 0.99)
        times = [server.call_timed("navigate", navigate_args("/help")) for n in range(settings.sequential // 2)]
        figures["help_p50_ms"] = statistics.median(times)
        times = [server.call_timed("execute_action", vote_args(fx, n)) for n in range(settings.sequential_execute)]
        figures["execute_p50_ms"] = statistics.median(times)
        figures["execute_p99_ms"] = percentile(times, 0.99)
        navigates = [navigate_args(fx.urls[n % len(fx.urls)]) for n in range(settings.pipelined)]
        figures["navigate_pipelined_rps"] = statistics.median(
            pipelined(server, "navigate", navigates) for _ in range(settings.bursts))
        votes = [vote_args(fx, n) for n in range(settings.pipelined)]
        figures["execute_pipelined_rps"] = statistics.median(
            pipelined(server, "execute_action", votes) for _ in range(settings.bursts))
        figures["peak_rss_mb"] = server.peak_rss_mb()
    finally:
        server.close()
    if era == "modern":
        return {f"modern_{k}": v for k, v in figures.items() if f"modern_{k}" in FIGURES}
    return figures


def navigate_times(server: StdioServer, fx: Fixture, settings: Settings) -> list[float]:
    """Sequential navigates over the benchmarked URLs, each one's round trip in ms."""
    return [server.call_timed("navigate", navigate_args(fx.urls[n % len(fx.urls)])) for n in range(settings.sequential)]


def warmed_up(name: str, fx: Fixture, log: Path) -> StdioServer:
    """A new stdio process of server `name`, initialized and past one navigate of each benchmarked
    URL (closed again if any of that fails)."""
    server = StdioServer(SERVERS[name]["stdio"], server_env(fx), log)
    try:
        server.initialize()
        for url in fx.urls:
            server.call("navigate", navigate_args(url))
    except BaseException:
        server.close()
        raise
    return server


def navigate_p50(fx: Fixture, settings: Settings, log: Path, name: str = "navmcp") -> float:
    """A server's sequential navigate p50 on its own, in a new process warmed up as in
    `measure_stdio` (navmcp's: the scale rounds)."""
    server = warmed_up(name, fx, log)
    try:
        return statistics.median(navigate_times(server, fx, settings))
    finally:
        server.close()


def page_texts(name: str, fx: Fixture, log: Path) -> dict[str, str]:
    server = StdioServer(SERVERS[name]["stdio"], server_env(fx), log)
    try:
        server.initialize()
        return {url: server.call("navigate", navigate_args(url))["content"][0]["text"] for url in fx.urls}
    finally:
        server.close()


# --- HTTP -----------------------------------------------------------------------------------------


def navmcp_web_available() -> bool:
    try:
        done = subprocess.run(NAVMCP + ["web", "--help"], capture_output=True, timeout=60, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpSession:
    """One MCP client over Streamable HTTP. Legacy: initialize (takes Mcp-Session-Id), then tools/call
    posts in that session. Modern: no handshake; each post carries its `_meta` and the headers that
    mirror it (MCP-Protocol-Version, Mcp-Method, Mcp-Name)."""

    def __init__(self, port: int, token: str | None, era: str = "legacy"):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.next_id = 0
        self.era = era
        if era == "modern":
            self.headers["MCP-Protocol-Version"] = MODERN
            return
        body, headers = self.post({"method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "navmcp-bench", "version": "1"}}})
        reply = json.loads(body)
        session = headers.get("mcp-session-id")
        if not session:
            raise RuntimeError("initialize gave no Mcp-Session-Id")
        self.headers["Mcp-Session-Id"] = session
        self.headers["MCP-Protocol-Version"] = reply["result"]["protocolVersion"]
        self.post({"method": "notifications/initialized"}, notify=True)

    def post(self, msg: dict[str, Any], notify: bool = False) -> tuple[bytes | None, dict[str, str]]:
        msg = {"jsonrpc": "2.0", **msg}
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        headers = self.headers
        if self.era == "modern" and not notify:
            msg["params"] = {**msg.get("params", {}), "_meta": MODERN_META}
            headers = {**headers, "Mcp-Method": msg["method"]}
            if "name" in msg["params"]:
                headers["Mcp-Name"] = msg["params"]["name"]
        body = json.dumps(msg).encode()
        try:
            self.conn.request("POST", "/mcp", body=body, headers=headers)
            response = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closed an idle keep-alive connection (uvicorn does after 5 s, and a loaded
            # machine can idle a session that long between warm-up steps): reconnect once, as HTTP clients do.
            self.conn.close()
            self.conn.request("POST", "/mcp", body=body, headers=headers)
            response = self.conn.getresponse()
        body = response.read()
        headers = {k.lower(): v for k, v in response.getheaders()}
        if notify:
            if response.status not in (200, 202, 204):
                raise RuntimeError(f"notification answered {response.status}: {body[:200]!r}")
            return None, headers
        if response.status != 200:
            raise RuntimeError(f"POST /mcp answered {response.status}: {body[:300]!r}")
        if not headers.get("content-type", "").startswith("application/json"):
            raise RuntimeError(f"expected a JSON response, got {headers.get('content-type')}")
        if failed(body):  # a byte search, as on stdio: the client's own json.loads stays out of the figure
            raise RuntimeError(f"{msg.get('method')} failed: {body[:300]!r}")
        return body, headers

    def call(self, tool: str, arguments: dict[str, Any]) -> None:
        self.post({"method": "tools/call", "params": {"name": tool, "arguments": arguments}})

    def close(self) -> None:
        self.conn.close()


def wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"HTTP server exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"HTTP server did not listen on {port} within {seconds} s")


def cpu_seconds(pid: int) -> float:
    """The CPU time of a process's live threads so far, user and system, to the nanosecond
    (/proc/PID/task/*/schedstat; /proc/PID/stat counts in 10 ms ticks, too coarse for a short run).
    The SDK server runs its tools in worker threads, which live as long as it does."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended just now
            pass
    return total / 1e9


@contextlib.contextmanager
def forking_on(cpus: set[int] | None):
    """Processes started inside run on `cpus` from their first instruction (a child inherits the
    CPU mask of the thread that forks it, and its threads their creator's); this thread's own
    mask is put back after."""
    if cpus is None:
        yield
        return
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, mine)


def thread_cpus(pid: int) -> set[frozenset[int]]:
    """The CPU masks of a process's live threads."""
    masks = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            masks.add(frozenset(os.sched_getaffinity(int(task))))
        except ProcessLookupError:  # a thread that ended just now
            pass
    return masks


def measure_http(name: str, fx: Fixture, settings: Settings, log: Path, token: str | None,
                 era: str = "legacy", cpus: set[int] | None = None) -> dict[str, float]:
    """Requests per second over `sessions` concurrent clients on /mcp, each navigating in a loop,
    and the server's CPU milliseconds per request meanwhile. The SDK serves the modern era in its
    stateless JSON mode (`--stateless`), navmcp the same `navmcp web` in both. With `cpus`, the
    server runs on those CPUs only (`bench.placement`; the client threads run where this one may)."""
    port = free_port()
    command = [part.replace("{port}", str(port)) for part in SERVERS[name]["http"]]
    if era == "modern" and name == "sdk":
        command.append("--stateless")
    with open(log, "ab") as stderr, forking_on(cpus):
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                                env=server_env(fx), cwd=ROOT)
    try:
        wait_for_port(port, proc)
        sessions = [HttpSession(port, token if name == "navmcp" else None, era) for _ in range(settings.sessions)]
        for s in sessions:  # warm-up
            for url in fx.urls:
                s.call("navigate", navigate_args(url))
        if cpus is not None and thread_cpus(proc.pid) != {frozenset(cpus)}:
            raise RuntimeError(f"{name}'s threads are not all on CPUs {sorted(cpus)}: {thread_cpus(proc.pid)}")
        barrier = threading.Barrier(len(sessions) + 1)
        errors: list[BaseException] = []

        def work(s: HttpSession, offset: int) -> None:
            barrier.wait()
            try:
                for n in range(settings.http_per_session):
                    s.call("navigate", navigate_args(fx.urls[(n + offset) % len(fx.urls)]))
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(s, k), daemon=True) for k, s in enumerate(sessions)]
        for t in threads:
            t.start()
        cpu = cpu_seconds(proc.pid)
        client = time.process_time()
        barrier.wait()
        started = time.perf_counter()
        for t in threads:
            t.join(TIMEOUT)
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(proc.pid) - cpu
        client = time.process_time() - client
        if errors:
            raise RuntimeError(f"HTTP session failed: {errors[0]!r}")
        for s in sessions:
            s.close()
        requests = settings.sessions * settings.http_per_session
        if era == "modern":
            return {"modern_http_4_clients_rps": requests / elapsed,
                    "modern_http_cpu_ms_per_request": cpu * 1000 / requests,
                    "modern_http_client_cpu_ms_per_request": client * 1000 / requests}
        return {"http_4_sessions_rps": requests / elapsed, "http_cpu_ms_per_request": cpu * 1000 / requests,
                "http_client_cpu_ms_per_request": client * 1000 / requests}
    finally:
        stop(proc, timeout=10)


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """End a server process: SIGTERM, and SIGKILL if it has not ended within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --- fixtures -------------------------------------------------------------------------------------


def prepare(size: int, settings: Settings) -> Fixture:
    """A database with `size` items (seeded once and reused: seeding 1M items takes minutes)."""
    if settings.database_url:
        return prepare_postgres(size, settings)
    home = settings.workdir / f"items-{size}"
    summary_path = home / "seed.json"
    seconds = None
    if not summary_path.exists():
        if home.exists():
            for leftover in home.iterdir():
                leftover.unlink()
        home.mkdir(parents=True, exist_ok=True)
        seconds = run_seed(size, server_env(home), summary_path, timeout=3600)
    with sqlite3.connect(home / "navmcp.db") as db:
        owner = db.execute(OWNER_HANDLE_SQL).fetchone()[0]
    return fixture(home, summary_path, owner, seconds)


OWNER_HANDLE_SQL = "SELECT u.handle FROM settings s JOIN users u ON u.id = s.value WHERE s.key = 'owner'"


def run_seed(size: int, env: dict[str, str], summary_path: Path, timeout: float) -> float:
    """`navmcp seed --items size` into the database `env` names; keeps its JSON summary; seconds taken."""
    started = time.perf_counter()
    done = subprocess.run(NAVMCP + ["seed", "--items", str(size), "--json"], capture_output=True,
                          env=env, cwd=ROOT, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"seeding failed: {done.stderr.decode(errors='replace')}")
    summary_path.write_bytes(done.stdout)
    return time.perf_counter() - started


def fixture(home: Path, summary_path: Path, owner: str, seconds: float | None, **extra) -> Fixture:
    """The benchmarked URLs of a seeded database: home, the studio feed, a note, a decision, a commitment."""
    summary = json.loads(summary_path.read_text())
    urls = summary["urls"]
    return Fixture(home=home, urls=["/", summary["studio_url"], urls["note"], urls["decision"], urls["commitment"]],
                   vote_url=urls["decision"], owner=owner, seed_seconds=seconds, **extra)


def prepare_postgres(size: int, settings: Settings) -> Fixture:
    """On PostgreSQL: database `navmcp_bench_<size>` on the server of `database_url` (created,
    migrated and seeded as the owner once, then reused). The servers connect as `navmcp_app` (row-level
    security on, as in production) and act as the seeded owner through a token (`NAVMCP_TOKEN`)."""
    import psycopg

    home = settings.workdir / f"pg-items-{size}"
    home.mkdir(parents=True, exist_ok=True)
    summary_path = home / "seed.json"
    dbname = f"{settings.pg_prefix}{size}"
    owner_url, app_url = pg_url(settings.database_url, None, dbname), pg_url(settings.database_url, "navmcp_app", dbname)
    with psycopg.connect(settings.database_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists or not summary_path.exists():
            if exists:
                admin.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{dbname}"')
            summary_path.unlink(missing_ok=True)
    seconds = None
    owner_env = server_env(home, {"NAVMCP_DATABASE_URL": owner_url})
    if not summary_path.exists():
        subprocess.run(NAVMCP + ["migrate"], capture_output=True, env=owner_env, cwd=ROOT, timeout=600, check=True)
        seconds = run_seed(size, owner_env, summary_path, timeout=7200)
    with psycopg.connect(owner_url) as db:
        owner = db.execute(OWNER_HANDLE_SQL).fetchone()[0]
    fx = fixture(home, summary_path, owner, seconds, env={"NAVMCP_DATABASE_URL": app_url})
    fx.env["NAVMCP_TOKEN"] = mint_token(fx)
    return fx


def pg_url(base: str, user: str | None, dbname: str) -> str:
    """`base` with another database (and user, if given)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base)
    netloc = parts.netloc
    if user is not None:
        netloc = user + "@" + netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, "/" + dbname, parts.query, ""))


def mint_token(fx: Fixture) -> str:
    if "NAVMCP_TOKEN" in fx.env:
        return fx.env["NAVMCP_TOKEN"]
    done = subprocess.run(NAVMCP + ["token", fx.owner], capture_output=True, env=server_env(fx), cwd=ROOT,
                          timeout=60, check=True)
    return done.stdout.decode().strip()


# --- the run --------------------------------------------------------------------------------------


def run(settings: Settings, out=sys.stdout) -> dict[str, Any]:
    settings.workdir.mkdir(parents=True, exist_ok=True)
    log = settings.workdir / "servers.log"
    http_ok = navmcp_web_available()
    results: dict[str, Any] = {"machine": machine(),
                               "settings": {k: str(v) for k, v in vars(settings).items() if k != "database_url"},
                               "store": "postgresql" if settings.database_url else "sqlite",
                               "http": "measured" if http_ok else "not available: `navmcp web --help` failed",
                               "sizes": {}}
    store = f"PostgreSQL {_pg_version(settings.database_url)}" if settings.database_url else "SQLite"
    print(f"# navmcp benchmark — {results['machine']['summary']} — store: {store}", file=out)
    if not http_ok:
        print("HTTP: not available (`navmcp web --help` failed on this branch); the /mcp figure is skipped.", file=out)
    fixtures: dict[int, Fixture] = {}
    for size in settings.sizes:
        fx = fixtures[size] = prepare(size, settings)
        seeded = f" (seeded in {fx.seed_seconds:.1f} s)" if fx.seed_seconds else " (reused)"
        print(f"\n## {size:,} items{seeded}", file=out, flush=True)
        texts = {name: page_texts(name, fx, log) for name in settings.servers}
        same = len({json.dumps(t, sort_keys=True) for t in texts.values()}) == 1
        print(f"same pages from {', '.join(settings.servers)} for {len(fx.urls)} URLs: {'yes' if same else 'NO'}", file=out)
        token = mint_token(fx) if http_ok else None
        rounds: list[dict[str, dict[str, float]]] = []
        for r in range(settings.rounds):
            order = list(settings.servers) if r % 2 == 0 else list(reversed(settings.servers))
            figures: dict[str, dict[str, float]] = {}
            for name in order:
                figures[name] = {}
            for era in settings.eras:
                if "stdio" in settings.parts:
                    for name in order:
                        if era == "modern" and name == "bare":  # the floor speaks the legacy era only
                            continue
                        figures[name].update(measure_stdio(name, fx, settings, log, era))
                if "http" in settings.parts and (http_ok or "sdk" in settings.servers):
                    for name in order:
                        if (name == "navmcp" and not http_ok) or "http" not in SERVERS[name]:
                            continue
                        figures[name].update(measure_http(name, fx, settings, log, token, era))
            rounds.append(figures)
            print(f"round {r + 1}/{settings.rounds} done ({' then '.join(order)})", file=out, flush=True)
        results["sizes"][str(size)] = {"rounds": rounds, "same_pages": same, "seed_seconds": fx.seed_seconds,
                                       "summary": summarize(rounds, settings.servers)}
        print(table(results["sizes"][str(size)]["summary"], settings.servers), file=out, flush=True)
    results["scale"] = scale(fixtures, settings, log)
    if results["scale"]:
        s = results["scale"]
        print(f"\nnavmcp navigate p50 at {s['large']:,} items vs {s['small']:,}: {s['ratio']:.2f}x "
              f"(target <= {SCALE_TARGET}x: {'met' if s['met'] else 'MISSED'}; per-round ratios "
              f"{', '.join(f'{r:.2f}' for r in s['ratios'])})", file=out)
    return results


def summarize(rounds: list[dict[str, dict[str, float]]], servers: tuple[str, ...]) -> dict[str, Any]:
    summary = {}
    for figure, (unit, better, target) in FIGURES.items():
        row: dict[str, Any] = {"unit": unit, "better": better, "target": target}
        for name in servers:
            values = [r[name][figure] for r in rounds if figure in r.get(name, {})]
            row[name] = statistics.median(values) if values else None
        if "navmcp" in servers and "sdk" in servers:
            row["ratios"] = ratios = _ratios(rounds, "navmcp", figure)
            row["ratio"] = statistics.median(ratios) if ratios else None
            if target is not None and row["ratio"] is not None:
                row["met"] = row["ratio"] <= target if better == "lower" else row["ratio"] >= target
        if "bare" in servers and "sdk" in servers:
            bare = _ratios(rounds, "bare", figure)
            row["bare_ratio"] = statistics.median(bare) if bare else None
        summary[figure] = row
    return summary


def _ratios(rounds: list[dict[str, dict[str, float]]], name: str, figure: str) -> list[float]:
    """`name`'s figure ÷ the SDK's, round by round."""
    return [r[name][figure] / r["sdk"][figure] for r in rounds if figure in r.get(name, {}) and figure in r.get("sdk", {})]


def table(summary: dict[str, Any], servers: tuple[str, ...]) -> str:
    bare = "bare" in servers
    lines = ["| figure | " + " | ".join(f"{n} (median)" for n in servers) + " | ratio (median) | per-round ratios | target |"
             + (" bare ÷ sdk |" if bare else ""),
             "| --- | " + " | ".join("---:" for _ in servers) + " | ---: | --- | --- |" + (" ---: |" if bare else "")]
    for figure, row in summary.items():
        cells = [fmt(row.get(n)) for n in servers]
        ratio = f"{row['ratio']:.3f}x" if row.get("ratio") is not None else "n/a"
        per_round = ", ".join(f"{x:.3f}" for x in row.get("ratios", [])) or "n/a"
        if row["target"] is None:
            target = "—"
        else:
            sign = "≤" if row["better"] == "lower" else "≥"
            verdict = "" if "met" not in row else (" met" if row["met"] else " MISSED")
            target = f"{sign} {row['target']}x{verdict}"
        if all(row.get(n) is None for n in servers[:1]) and figure.startswith("http"):
            cells[0] = "not available"
        floor = (f" {row['bare_ratio']:.3f}x |" if row.get("bare_ratio") is not None else " n/a |") if bare else ""
        lines.append(f"| {figure} ({row['unit']}) | " + " | ".join(cells) + f" | {ratio} | {per_round} | {target} |" + floor)
    return "\n".join(lines)


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def scale(fixtures: dict[int, Fixture], settings: Settings, log: Path) -> dict[str, Any] | None:
    """navmcp's navigate p50 on the largest database ÷ on the smallest, measured in rounds of their
    own that alternate which goes first, like the A/B rounds: the size parts run minutes apart, and
    the machine's speed drifts by more than this target's margin in that time."""
    sizes = sorted(fixtures)
    if len(sizes) < 2 or "navmcp" not in settings.servers or "stdio" not in settings.parts:
        return None
    small, large = sizes[0], sizes[-1]
    ratios, p50s = [], {small: [], large: []}
    for r in range(settings.rounds):
        for size in (small, large) if r % 2 == 0 else (large, small):
            p50s[size].append(navigate_p50(fixtures[size], settings, log))
        ratios.append(p50s[large][-1] / p50s[small][-1])
    ratio = statistics.median(ratios)
    return {"small": small, "large": large, "ratio": ratio, "ratios": ratios, "met": ratio <= SCALE_TARGET,
            "p50_ms": {str(size): statistics.median(values) for size, values in p50s.items()}}


def _pg_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SHOW server_version").fetchone()[0]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:  # the first processor's name, family and model (a VM's name alone may say only "AMD EPYC")
        first = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
        fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}
        cpu = fields.get("model name", "unknown")
        if "cpu family" in fields:
            cpu += f", family {fields['cpu family']} model {fields.get('model', '?')}"
    except OSError:
        pass
    info = {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version, "platform": platform.platform()}
    info["summary"] = f"{info['nproc']} CPUs ({cpu}), Python {info['python']}, SQLite {info['sqlite']}"
    return info


def parse_args(argv: list[str] | None = None) -> tuple[Settings, Path | None]:
    parser = argparse.ArgumentParser(prog="python -m bench", description="navmcp vs the MCP SDK, side by side.")
    parser.add_argument("--sizes", default="1000,100000,1000000", help="comma-separated item counts")
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 3; 1 with --quick)")
    parser.add_argument("--cold", type=int, default=5, help="cold starts per server per round")
    parser.add_argument("--sequential", type=int, default=200, help="sequential navigate calls per round")
    parser.add_argument("--sequential-execute", type=int, default=100, help="sequential execute_action calls")
    parser.add_argument("--pipelined", type=int, default=500, help="requests per pipelined burst")
    parser.add_argument("--bursts", type=int, default=Settings.bursts,
                        help="pipelined bursts per figure and round (their median is the figure)")
    parser.add_argument("--http-requests", type=int, default=Settings.http_per_session,
                        help="navigate calls per HTTP session")
    parser.add_argument("--sessions", type=int, default=4, help="concurrent HTTP sessions")
    parser.add_argument("--workdir", type=Path, default=Settings.workdir, help="where seeded databases live (reused)")
    parser.add_argument("--parts", default="stdio,http", help="which parts to run: stdio, http or both")
    parser.add_argument("--eras", default=",".join(ERAS),
                        help="which eras of MCP: legacy (initialize, sessions), modern (2026-07-28) or both")
    parser.add_argument("--pg-prefix", default=Settings.pg_prefix,
                        help="PostgreSQL (NAVMCP_DATABASE_URL set): databases are named PREFIX<items>")
    parser.add_argument("--json", type=Path, help="also write all figures as JSON to this file")
    parser.add_argument("--quick", action="store_true", help="tiny run for CI: 1 round unless --rounds, few requests")
    parser.add_argument("--with-bare", action="store_true",
                        help="also run bench/bare_server.py, the barest loop over the same work (stdio only)")
    args = parser.parse_args(argv)
    settings = Settings(database_url=os.environ.get("NAVMCP_DATABASE_URL") or None,
                        sizes=[int(s) for s in args.sizes.split(",")], cold=args.cold,
                        rounds=args.rounds or (1 if args.quick else 3),
                        sequential=args.sequential, sequential_execute=args.sequential_execute,
                        pipelined=args.pipelined, bursts=args.bursts, http_per_session=args.http_requests,
                        sessions=args.sessions,
                        workdir=args.workdir, parts=tuple(args.parts.split(",")), pg_prefix=args.pg_prefix,
                        eras=tuple(args.eras.split(",")))
    if args.with_bare:
        settings.servers = (*settings.servers, "bare")
    if args.quick:
        settings.cold, settings.sequential, settings.sequential_execute = 1, 10, 5
        settings.pipelined, settings.bursts, settings.http_per_session = 20, 1, 5
    return settings, args.json


def main(argv: list[str] | None = None) -> int:
    settings, json_path = parse_args(argv)
    results = run(settings)
    if json_path:
        json_path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
