"""`navmcp demo`: the newcomer's tour — walkthrough over real MCP, then the web app with a login link."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time

import httpx

from webclient import follow_login_link
from webproc import free_port


def demo_env(tmp_path):
    env = {**os.environ, "NAVMCP_HOME": str(tmp_path / "unused")}
    env.pop("NAVMCP_TOKEN", None)
    env.pop("NAVMCP_DATABASE_URL", None)
    return env


def test_demo_without_serving(tmp_path):
    # The caller's own rate limit is not the demo server's (it made the walkthrough crash).
    done = subprocess.run([sys.executable, "-m", "navmcp", "demo", "--no-serve", "--home", str(tmp_path / "demo")],
                          env={**demo_env(tmp_path), "NAVMCP_RATE_LIMIT": "2/1h"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"decision\s+/studios/demo/d/\w+", done.stdout)
    # the command to add it to Claude Code names the demo's workspace (without it: an empty one)
    assert f"claude mcp add navmcp -e NAVMCP_HOME={tmp_path / 'demo'} -- " in done.stdout
    # the commands it prints act on the demo's workspace, not the default one
    home = tmp_path / "demo"
    for command in (f"--home {home} web", f"--home {home} user add HANDLE", f"--home {home} login-link HANDLE",
                    f"--home {home} get /studios/demo/d/"):
        assert command in done.stdout, (command, done.stdout)


def test_demo_tour_serves_the_web_app(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "navmcp", "demo", "--home", str(tmp_path / "demo"),
                             "--port", str(port)], env=demo_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines, link, decision = [], None, None
        deadline = time.monotonic() + 120
        while decision is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("demo exited early:\n" + "".join(lines) + proc.stderr.read())
            lines.append(line)
            link = link or (m.group(1) if (m := re.search(r"(http://127\.0\.0\.1:\d+/login\?token=\S+)", line)) else None)
            if m := re.search(rf"(http://127\.0\.0\.1:{port}/studios/demo/d/\w+)", line):
                decision = m.group(1)
        output = "".join(lines)
        assert link and decision, output
        assert f"claude mcp add navmcp -e NAVMCP_HOME={tmp_path / 'demo'} -- " in output
        with httpx.Client(follow_redirects=False) as http:
            for _ in range(100):  # the server starts right after printing
                try:
                    http.get(f"http://127.0.0.1:{port}/healthz")
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)
            signed_in = follow_login_link(http, link)
            assert signed_in.status_code == 303 and signed_in.headers["location"] == decision.split(str(port), 1)[1]
            page = http.get(decision)
            assert page.status_code == 200 and "Where do we hold the offsite?" in page.text
            assert "Lisbon" in page.text and 'data-action="vote"' in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def demo_counts(home) -> dict[str, object]:
    """What the demo's database holds: items per title, people, votes and joins."""
    db = sqlite3.connect(home / "navmcp.db")
    try:
        return {
            "items": dict(db.execute("SELECT title, count(*) FROM items GROUP BY title").fetchall()),
            "members": db.execute("SELECT count(*) FROM memberships").fetchone()[0],
            "voters": dict(db.execute("SELECT i.title, count(DISTINCT v.user_id) FROM votes v JOIN items i"
                                      " ON i.id = v.decision_id GROUP BY i.title").fetchall()),
            "joined": dict(db.execute("SELECT title, participant_count FROM items WHERE kind = 'commitment'")
                           .fetchall()),
        }
    finally:
        db.close()


def test_demo_twice_adds_nothing_and_shows_a_team(tmp_path):
    home = tmp_path / "demo"
    command = [sys.executable, "-m", "navmcp", "demo", "--no-serve", "--home", str(home)]
    first = subprocess.run(command, env=demo_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    built = demo_counts(home)
    # three people, a few items each; others' votes, a commitment one short of its critical mass
    assert built["members"] == 3 and set(built["items"].values()) == {1} and len(built["items"]) == 6
    assert built["voters"] == {"Where do we hold the offsite?": 3, "Which day for the weekly demo?": 2}
    assert built["joined"] == {"Book the venue together": 2, "Run the Friday retro": 2}
    again = subprocess.run(command, env=demo_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert demo_counts(home) == built  # nothing duplicated, nothing voted or joined twice
    assert "from an earlier run" in again.stdout and "✓ Created" not in again.stdout and "Meanwhile" not in again.stdout
    # the same decision is offered both times
    decision = re.search(r"decision\s+(/studios/demo/d/\w+)", first.stdout).group(1)
    assert re.search(r"decision\s+(/studios/demo/d/\w+)", again.stdout).group(1) == decision
    # what the owner's home shows: a teammate's decision awaiting the vote, a commitment that needs them
    env = {**demo_env(tmp_path), "NAVMCP_HOME": str(home)}
    page = subprocess.run([sys.executable, "-m", "navmcp", "get", "/"], env=env, capture_output=True, text=True,
                          timeout=60).stdout
    assert "## Awaiting your vote" in page and "Which day for the weekly demo?" in page
    assert "Run the Friday retro" in page and "2 of 3 joined, 1 more needed" in page
