"""The `navmcp` commands a newcomer meets first, run as a shell user runs them: what `get` tells a
shell user to do, what `token --help` says, which address `login-link` names, and a busy port
refused before any login link is printed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx

from webclient import WebServer, follow_login_link


def cli(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NAVMCP_HOME": str(home)}
    for name in ("NAVMCP_TOKEN", "NAVMCP_DATABASE_URL", "NAVMCP_RATE_LIMIT"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "navmcp", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_get_ends_with_what_a_shell_user_can_do_not_with_a_tool_call(tmp_path):
    home = tmp_path / "home"
    page = cli(home, "get", "/")
    assert page.returncode == 0, page.stderr
    assert "execute_action" not in page.stdout  # a shell has no tools to call
    last = page.stdout.rstrip().splitlines()[-1]
    assert last.startswith("From a shell: open http://127.0.0.1:8765/ in the web app") and "web`" in last
    assert "http://127.0.0.1:8765/actions/ACTION" in last and "token " in last
    # the agent's page over MCP keeps its own last line (the markdown rendition too)
    assert "/studios/" not in cli(home, "get", "/whoami").stdout.rsplit("## Available actions", 1)[1]
    assert cli(home, "get", "/", "--json").stdout.lstrip().startswith("{")


def test_token_help_describes_its_arguments(tmp_path):
    shown = cli(tmp_path / "home", "token", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "the user the token acts as" in text and "how long the token stays valid (default 30)" in text
    assert "NAVMCP_TOKEN" in text and "Authorization: Bearer" in text


def listening_port() -> socket.socket:
    """A loopback port another program is serving on."""
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    return blocker


def test_a_busy_port_is_refused_before_a_login_link_is_printed(tmp_path):
    with listening_port() as blocker:
        port = str(blocker.getsockname()[1])
        web = cli(tmp_path / "home", "web", "--port", port)
        assert web.returncode == 1 and "login" not in web.stdout and web.stdout == ""
        assert f"port {port} on 127.0.0.1 is already in use" in web.stderr and "--port" in web.stderr
        # the demo says so before its walkthrough, and builds nothing
        demo = cli(tmp_path / "unused", "demo", "--home", str(tmp_path / "demo"), "--port", port)
        assert demo.returncode == 1 and demo.stdout == "" and "already in use" in demo.stderr
        assert not (tmp_path / "demo").exists()


def test_login_link_names_the_running_servers_address(tmp_path):
    home = tmp_path / "home"
    server = WebServer(home)
    try:
        assert (home / "web.json").exists()
        link = cli(home, "login-link", server.owner_handle())
        assert link.returncode == 0 and link.stdout.startswith(f"{server.base}/login?token="), link.stdout
        with httpx.Client(follow_redirects=False) as http:
            assert follow_login_link(http, link.stdout.strip()).status_code == 303
            assert http.get(server.base + "/whoami").status_code == 200
        assert f"open {server.base}/ in the web app" in cli(home, "get", "/").stdout
        # --base-url still wins (a proxy's public name)
        named = cli(home, "login-link", server.owner_handle(), "--base-url", "https://navmcp.example")
        assert named.stdout.startswith("https://navmcp.example/login?token=")
    finally:
        server.stop()
    assert server.proc.returncode == 0 and not (home / "web.json").exists()
    # no server now: the default address
    assert cli(home, "login-link", server.owner_handle()).stdout.startswith("http://127.0.0.1:8765/login?token=")


def test_a_record_left_by_a_killed_server_is_not_used(tmp_path):
    home = tmp_path / "home"
    assert cli(home, "user", "add", "bob").returncode == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (home / "web.json").write_text(f'{{"base_url": "http://127.0.0.1:9", "pid": {dead.pid}}}')
    assert cli(home, "login-link", "bob").stdout.startswith("http://127.0.0.1:8765/login?token=")


def test_the_proxies_believed_come_from_either_variable(monkeypatch):
    """docs/oauth.md names uvicorn's FORWARDED_ALLOW_IPS, which navmcp ignored (cookies then lost
    `Secure` behind a proxy): both names are read, navmcp's own first; the flag beats both."""
    from navmcp.cli import build_parser

    for name in ("NAVMCP_FORWARDED_ALLOW_IPS", "FORWARDED_ALLOW_IPS"):
        monkeypatch.delenv(name, raising=False)
    assert build_parser().parse_args(["web"]).forwarded_allow_ips == ""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.5")
    assert build_parser().parse_args(["web"]).forwarded_allow_ips == "10.0.0.5"
    monkeypatch.setenv("NAVMCP_FORWARDED_ALLOW_IPS", "127.0.0.1")
    assert build_parser().parse_args(["web"]).forwarded_allow_ips == "127.0.0.1"
    assert build_parser().parse_args(["web", "--forwarded-allow-ips", "10.1.1.1"]).forwarded_allow_ips == "10.1.1.1"
