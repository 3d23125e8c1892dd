"""Instructions per call, counted by valgrind: a figure that does not move with the machine's load.

    .venv/bin/python -m bench.instructions --size 1000             # every target (200 and 400 calls)
    .venv/bin/python -m bench.instructions --targets vote,render:/ # some of them

Wall-clock medians on this shared two-core machine move by ±30% between runs; callgrind's
instruction count for the same code and inputs repeats to a fraction of a percent, so a change
to the per-call path can be judged by it alone. Each target runs in two processes under
`valgrind --tool=callgrind`, with the same set-up and warm-up and then N or 2N calls; its figure
is the difference ÷ N. (A baseline process with no calls was tried first: its start and end differ
from a working process's enough that it once moved a figure by half.) Targets:

- `call:URL` — one `navigate` tools/call through navmcp's protocol core (bytes in, bytes out)
- `data:URL` — `Workspace.page` only (the page's SQL and Python); any URL (a search's too)
- `render:URL` — the Jinja render of that page only
- `vote` — one `execute_action` vote tools/call (the benchmarked action)
- `vote:group`, `call:cycle:group` — the same calls as `vote` and `call:cycle`, received as a
  pipelining client's are: GROUP at a time in one `Connection.group()` (one transaction); the
  figure is per call
- `vote:stdio`, `vote:stdio:modern` — the bench's pipelined vote itself: a burst of 64 of the
  bench's two-ballot votes (`bench.run.vote_args`), one group, read from a pipe's worth of bytes
  by `navmcp.mcp.stdio.serve` and answered into one (legacy: an initialized connection; modern: each
  request with its `_meta`); the figure is per vote
- `vote:work` — the same vote's own work with nothing of navmcp's around it, GROUP at a time in
  one transaction (`bench.vote_work`): `vote:group` minus this is what navmcp's layers cost
- `comment` — one `add_comment` tools/call on one of the studio's newest notes in turn (which tells
  its author and commenters, in the inbox); `comment:20` — one whose text @mentions 20 members of
  the studio (20 inbox entries, or 20 unread ones folded into)
- any target with `:noinbox` after it — the same calls with the inbox and mentions made no-ops in
  that process (`inbox.notify`, `inbox.related`, `mentions.mentioned`): what the call cost before
  issue 43, so `comment:20` ÷ `comment:noinbox` and `vote` ÷ `vote:noinbox` are that issue's targets
  (≤ 1.3× and ≤ 1.03×)
- `call:cycle`, `mcp:cycle` — one `navigate` cycling over the benchmarked URLs (the session moves
  on every call, as in the bench's /mcp figure): through the protocol core, and as a whole `/mcp`
  POST through `navmcp web`'s ASGI app in-process (Bearer token, Mcp-Session-Id; no sockets, no
  uvicorn). Their difference is what the HTTP layer adds per call.
- `page:cycle` — the work both servers' `navigate` does alike, cycling over the same URLs: the
  page's data, its markdown and its structured content (`Workspace.page` and the `Page`), no
  protocol and no HTTP. A server with nothing of its own around it would cost this much: the
  SDK's count (`sdk:modern`) over it is the highest ratio any server could reach on this work.
- `mcp:modern:cycle` — the same, as a stateless MCP 2026-07-28 request (its `_meta` and the headers
  that mirror it; no session read or written): the bench's modern /mcp figure
- `mcp:URL` — one `/mcp` navigate of that URL, in-process as above (the session stays on the page)
- `web:h11`, `web:httptools` — one `/mcp` navigate cycling over the benchmarked URLs, counted in
  a real `navmcp web` process (uvicorn, its HTTP parser, the event loop; the client outside
  valgrind) with NAVMCP_WEB_HTTP set to that parser; `web:httptools:modern` the same in the
  modern era
- `sdk:legacy`, `sdk:modern` — the same /mcp navigates counted in the SDK's server as the bench
  runs it (`bench/sdk_server.py --http`, `--stateless` in the modern era): the peer's instructions
  beside navmcp's, which the machine's load cannot move

Instructions are not seconds (a cache miss or a syscall costs more than its count), but for the
Python-bound per-call path they track time closely, and they compare two versions of it exactly.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from bench.run import PYTHON, ROOT

GROUP = 50  # calls per group in the `:group` targets (a pipelined burst; navmcp.mcp.stdio.MAX_GROUP bounds it)
BURST = 64  # votes per `vote:stdio` burst: one group of navmcp.mcp.stdio.MAX_GROUP


def targets_for(urls: list[str]) -> list[str]:
    return [f"{kind}:{url}" for url in urls for kind in ("call", "data", "render")] + [
        "vote", "vote:group", "comment", "comment:20", "vote:stdio", "vote:stdio:modern", "vote:work", "call:cycle",
        "call:cycle:group",
        "page:cycle", "mcp:cycle", "mcp:modern:cycle"]


def per_call(target: str) -> int:
    """How many calls one run of `target` makes."""
    if target.startswith("vote:stdio"):
        return BURST
    return GROUP if target.endswith((":group", ":work")) else 1


def stdio_burst(app, fx, era: str):
    """A function answering BURST pipelined votes, as `navmcp.mcp.stdio.serve` reads them from a pipe,
    on one connection of `app` that stays open (its `close` only ends subscriptions: none here)."""
    import io
    import json

    from bench.run import MODERN_META, vote_args
    from navmcp.mcp import stdio
    from navmcp.mcp.tools import connect

    conn = connect(app, None)
    extra = {"_meta": MODERN_META} if era == "modern" else {}
    if era == "legacy":
        conn.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "instructions"}}})
    burst = b"".join(json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {
        "name": "execute_action", "arguments": vote_args(fx, n), **extra}}).encode() + b"\n" for n in range(BURST))

    def run() -> None:
        out = io.BytesIO()
        stdio.serve(conn, io.BytesIO(burst), out)
        if out.getvalue().count(b'"isError":false') != BURST:
            raise SystemExit(f"a pipelined vote failed: {out.getvalue()[:300]!r}")

    return run


def shared_work(page) -> None:
    """What both servers' `navigate` computes alike: the page's data (done), its markdown and its
    structured content (the SDK's tool calls `structured()`, navmcp's the same, pre-encoded)."""
    _ = page.markdown, page.structured_preencoded()


def inner(args) -> int:
    """Set up, warm up every target, then run `--calls` calls of `--target`."""
    from bench.profile import connected, frame, seeded_workspace
    from bench.profile_http import McpClient, navigate_call, navigate_frame
    from bench.vote_work import work_group

    _, fx = seeded_workspace("bench.instructions", __doc__, ["--size", str(args.size), "--workdir", args.workdir])
    if args.target and args.target.endswith(":noinbox"):
        without_inbox()
        args.target = args.target.removesuffix(":noinbox")
    app, conn, user = connected("instructions")
    vote = frame("execute_action", {"action": "vote", "url": fx.vote_url,
                                    "params": {"votes": [{"option": "March 3", "accept": True}]}})
    calls = {"vote": lambda: conn.receive_bytes(vote)}
    with app.store.read(user_id=user["id"]) as tx:  # 20 members to mention, the owner left out; notes
        handles = [r["handle"] for r in tx.all(
            "SELECT u.handle FROM memberships m JOIN users u ON u.id = m.user_id JOIN studios s ON s.id = m.studio_id"
            " WHERE s.handle = 'bench' AND u.id != ? ORDER BY u.handle LIMIT 20", (user["id"],))]
        notes = [fx.urls[1] + "/n/" + r["id"] for r in tx.all(
            "SELECT i.id FROM items i JOIN studios s ON s.id = i.studio_id WHERE s.handle = 'bench' AND i.kind = 'note'"
            " ORDER BY i.seq DESC LIMIT 500")]
    # Each comment goes to the next of the newest notes in turn: on one note, every run would add to
    # the comments the next call reads (who the note concerns, how many there are).
    for name, body in (("comment", "Agreed, let's go ahead."),
                       ("comment:20", "Agreed, let's go ahead: " + " ".join("@" + h for h in handles))):
        messages = [frame("execute_action", {"action": "add_comment", "url": url, "params": {"body": body}})
                    for url in notes]
        turns = iter(range(1 << 62))
        calls[name] = lambda m=messages, n=turns: conn.receive_bytes(m[next(n) % len(m)])
    for url in fx.urls:
        message = frame("navigate", {"url": url})
        calls[f"call:{url}"] = lambda m=message: conn.receive_bytes(m)
        calls[f"data:{url}"] = lambda u=url: app.workspace.page(user, u)
        page = app.workspace.page(user, url)
        calls[f"render:{url}"] = lambda p=page: (setattr(p, "_markdown", None), p.markdown)
    client = McpClient(app)
    for url in fx.urls:
        calls[f"mcp:{url}"] = lambda m=navigate_frame(url): client.call(m)  # noqa: B008 — each frame made once, bound per url
    modern = McpClient(app, era="modern")
    cycle = {"call": [lambda m=frame("navigate", {"url": u}): conn.receive_bytes(m) for u in fx.urls],  # noqa: B008 — each frame made once, bound per url
             "page": [lambda u=u: shared_work(app.workspace.page(user, u)) for u in fx.urls],
             "mcp": [lambda m=navigate_frame(u): client.call(m) for u in fx.urls],  # noqa: B008 — each frame made once, bound per url
             "mcp:modern": [navigate_call(modern, u, "modern") for u in fx.urls]}
    turn = dict.fromkeys(cycle, 0)

    def cycling(kind: str) -> None:
        turn[kind] += 1
        cycle[kind][turn[kind] % len(fx.urls)]()

    for kind in cycle:
        calls[f"{kind}:cycle"] = lambda k=kind: cycling(k)

    def grouped(call) -> None:
        with conn.group():
            for _ in range(GROUP):
                call()

    calls["vote:group"] = lambda: grouped(calls["vote"])
    calls["vote:work"] = work_group(app, fx, vote, GROUP)
    calls["vote:stdio"] = stdio_burst(app, fx, "legacy")
    calls["vote:stdio:modern"] = stdio_burst(app, fx, "modern")
    calls["call:cycle:group"] = lambda: grouped(calls["call:cycle"])
    if args.target and args.target.startswith("data:") and args.target not in calls:  # any page's data: a search
        calls[args.target] = lambda u=args.target[5:]: app.workspace.page(user, u)
    if args.list:
        print("\n".join(calls))
        return 0
    for _ in range(3):  # the same warm-up in every process, so the difference cancels it
        for call in calls.values():
            call()
    if args.target:
        call = calls[args.target]
        for _ in range(args.calls):
            call()
    return 0


def without_inbox() -> None:
    """Make the inbox and mentions no-ops in this process: a call as it was before issue 43."""
    from navmcp.content import mentions
    from navmcp.feeds import inbox

    inbox.notify = lambda req, kind, user_ids, item_id=None: []
    inbox.related = lambda tx, item: set()
    mentions.mentioned = lambda tx, studio_id, role, text: []


VALGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def count(args, target: str, calls: int) -> int:
    if target.startswith("web:"):
        parser, _, era = target[len("web:"):].partition(":")
        return count_web(args, parser, calls, era or "legacy")
    if target.startswith("sdk:"):
        return count_web(args, "httptools", calls, target[len("sdk:"):], server="sdk")
    # Each process starts from its own copy of the seeded database: a write (a comment's full-text
    # segments, the inbox) costs what the database holds, and the counted processes must not see
    # what an earlier one wrote: comments piled up from run to run.
    with tempfile.TemporaryDirectory(prefix="navmcp-instructions-") as workdir:
        seeded = f"items-{args.size}"
        shutil.copytree(os.path.join(args.workdir, seeded), os.path.join(workdir, seeded))
        command = [*VALGRIND, PYTHON, "-m", "bench.instructions", "--inner", "--size", str(args.size),
                   "--workdir", workdir, "--calls", str(calls), "--target", target]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    return collected(done.returncode, done.stderr, target)


def count_web(args, parser: str, calls: int, era: str = "legacy", server: str = "navmcp") -> int:
    """A real `navmcp web` (or the SDK's server, as the bench runs it: stateless in the modern era)
    under valgrind, answering a warm-up and then `calls` /mcp navigates."""
    from bench.run import SERVERS, HttpSession, Settings, free_port, mint_token, navigate_args, prepare, server_env, wait_for_port

    settings = Settings(sizes=[args.size])
    settings.workdir = type(settings.workdir)(args.workdir)
    fx = prepare(args.size, settings)
    port = free_port()
    command = [part.replace("{port}", str(port)) for part in SERVERS[server]["http"]]
    if server == "sdk" and era == "modern":
        command.append("--stateless")
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([*VALGRIND, *command], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
                                env=server_env(fx, {"NAVMCP_WEB_HTTP": parser, "PYTHONHASHSEED": "0"}))
        try:
            wait_for_port(port, proc, 600)
            session = HttpSession(port, mint_token(fx) if server == "navmcp" else None, era)
            for n in range(3 * len(fx.urls) + calls):  # the warm-up, then the counted calls
                session.call("navigate", navigate_args(fx.urls[n % len(fx.urls)]))
            session.close()
        finally:
            proc.terminate()
            proc.wait(600)
        log.seek(0)
        # uvicorn under the SDK ends by raising the SIGTERM it was stopped with again, once it has shut down
        ended = 0 if proc.returncode == -signal.SIGTERM else proc.returncode
        return collected(ended, log.read().decode(errors="replace"), f"{server}:{parser}:{era}")


def collected(returncode: int, stderr: str, target: str) -> int:
    found = re.search(r"Collected : (\d+)", stderr)
    if returncode != 0 or not found:
        raise SystemExit(f"valgrind run failed for {target}:\n{stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--targets", default="", help="comma-separated; default: all (see --list)")
    parser.add_argument("--workdir", default="/tmp/navmcp-bench")
    parser.add_argument("--list", action="store_true", help="print the target names and exit")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner or args.list:
        return inner(args)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    from bench.profile import seeded_workspace  # seed (or reuse) the database outside valgrind

    _, fx = seeded_workspace("bench.instructions", __doc__, ["--size", str(args.size), "--workdir", args.workdir])
    targets = [t for t in args.targets.split(",") if t] or targets_for(fx.urls)
    print(f"{args.size:,} items, instructions per call (callgrind: {2 * args.calls} calls − {args.calls} calls)")
    for target in targets:
        runs = max(1, args.calls // per_call(target))  # a `:group` run makes GROUP calls
        figure = (count(args, target, 2 * runs) - count(args, target, runs)) / (runs * per_call(target))
        print(f"{target:<44} {figure:>12,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
