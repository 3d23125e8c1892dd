"""Peak memory of a studio's export (issue 48): a SQLite studio with `--files` files of 1 MiB each
(random text, which deflate shrinks little), exported by each navmcp tree named on the command line,
each run in a fresh process: `export_studio` as `navmcp export` calls it, and the web app's
download (`POST /studios/{h}/export`, the admin's session, through the ASGI app with a client that
keeps nothing). What is reported is the child's peak resident set (`ru_maxrss`) and its rise over
the same process before the export, median over `--rounds`.

    python -m bench.export_memory --files 200 --rounds 3 before=/tmp/old-tree after=.

Each tree is a checkout's root (its `navmcp/` is imported via PYTHONPATH); the store is made once,
by this checkout, and copied for every run."""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import asyncio, json, resource, sys, tempfile
from pathlib import Path
from navmcp.app import App
from navmcp.config import Config

home, how = Path(sys.argv[1]), sys.argv[2]
app = App(Config(home=home, database_url=None, token=None))
with app.store.read() as tx:
    admin = tx.one("SELECT * FROM users WHERE handle = 'admin'")
_ = app.workspace, app.secret
import navmcp, navmcp.archive.export, navmcp.web  # noqa: E401 - loaded before the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if how == "cli":
    from navmcp.archive.export import export_studio
    export_studio(app.workspace, "team", Path(tempfile.mkdtemp()) / "team.zip")
else:
    from navmcp.web import create_app
    from navmcp.web import auth
    web = create_app(app)
    link = auth.create_login_link(app.store, admin["id"], "http://127.0.0.1")
    session = auth.redeem_login_link(app.store, link.split("token=")[1], auth.instance_id(app.secret))
    body = ("csrf_token=" + auth.csrf_token(app.secret, session)).encode()
    cookie = auth.cookie_name(auth.instance_id(app.secret), False) + "=" + session
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/studios/team/export", "raw_path": b"/studios/team/export", "query_string": b"",
             "root_path": "", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
             "headers": [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1"), (b"cookie", cookie.encode()),
                         (b"content-type", b"application/x-www-form-urlencoded"),
                         (b"content-length", str(len(body)).encode())]}
    got = {"status": 0, "bytes": 0}
    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}
    async def send(message):
        if message["type"] == "http.response.start":
            got["status"] = message["status"]
        elif message["type"] == "http.response.body":
            got["bytes"] += len(message.get("body", b""))
    asyncio.run(web(scope, receive, send))
    assert got["status"] == 200 and got["bytes"] > 0, got
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kib": base, "peak_kib": peak}))
"""


def make_store(home: Path, files: int) -> None:
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.identity import add_user

    app = App(Config(home=home, database_url=None, token=None))
    try:
        admin = add_user(app.store, "admin")
        ws = app.workspace
        ws.execute(admin, "/", "create_studio", {"handle": "team", "name": "Team"})
        note = ws.execute(admin, "/studios/team", "create_note", {"title": "Files", "body": "many"}).url
        for n in range(files):
            data = base64.b64encode(secrets.token_bytes(786_000))[:1_048_000]
            ws.execute(admin, note, "attach", {"filename": f"f{n}.txt", "content_type": "text/plain",
                                               "data": base64.b64encode(data).decode()})
    finally:
        app.store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.export_memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("trees", nargs="+", help="NAME=PATH of a checkout's root")
    args = parser.parse_args(argv)
    trees = dict(t.split("=", 1) for t in args.trees)
    work = Path(tempfile.mkdtemp(prefix="navmcp-export-memory-"))
    try:
        make_store(work / "made", args.files)
        results: dict[str, dict[str, list[int]]] = {}
        for _ in range(args.rounds):
            for name, root in trees.items():  # alternated, round by round
                for how in ("cli", "web"):
                    home = work / f"{name}-{how}"
                    shutil.rmtree(home, ignore_errors=True)
                    shutil.copytree(work / "made", home)
                    env = {**os.environ, "PYTHONPATH": str(Path(root).resolve())}
                    out = subprocess.run([sys.executable, "-c", CHILD, str(home), how], env=env, check=True, cwd=work,
                                         capture_output=True, text=True).stdout
                    got = json.loads(out.strip().splitlines()[-1])
                    runs = results.setdefault(f"{name} {how}", {"peak": [], "rise": []})
                    runs["peak"].append(got["peak_kib"])
                    runs["rise"].append(got["peak_kib"] - got["base_kib"])
        files_mib = args.files * 1_048_000 / 2**20
        print(f"{args.files} files, {files_mib:.0f} MiB; peak RSS, and its rise during the export, median of "
              f"{args.rounds} (MiB):")
        for key, runs in results.items():
            print(f"  {key:12} peak {statistics.median(runs['peak']) / 1024:7.1f}   "
                  f"rise {statistics.median(runs['rise']) / 1024:7.1f}   (rises {[r // 1024 for r in runs['rise']]})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
