"""The `navmcp` commands a newcomer meets first, run as a shell user runs them: what `get` tells a
shell user to do, what `token --help` says, which address `login-link` names, and a busy port
refused before any login link is printed."""

from __future__ import annotations

import os
import re
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


def test_commands_say_which_workspace_they_act_on_and_take_home(tmp_path):
    """`user add`, `token` and `login-link` acted on the default workspace while `navmcp demo` served
    another, silently: each names its workspace, `--home` chooses it, and the hints they print carry
    the same `--home` (a hint without it would act on the default workspace again)."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    added = cli(elsewhere, "--home", str(home), "user", "add", "bob")  # --home beats NAVMCP_HOME
    assert added.returncode == 0 and f"in the workspace at {home};" in added.stderr, added.stderr
    assert f"--home {home} login-link bob" in added.stderr and f"--home {home} token bob" in added.stderr
    assert not (elsewhere / "navmcp.db").exists()
    token = cli(elsewhere, "--home", str(home), "token", "bob")
    assert token.returncode == 0 and token.stdout.count(".") == 2 and f"the workspace at {home}" in token.stderr
    missing = cli(elsewhere, "token", "bob")  # bob lives in `home`, not in NAVMCP_HOME's workspace
    assert missing.returncode == 1 and f"no user 'bob' in the workspace at {elsewhere}" in missing.stderr
    assert f"--home {elsewhere} user add bob" in missing.stderr
    # no server serves this workspace: the link is printed, and the reason it leads nowhere yet
    link = cli(elsewhere, "--home", str(home), "login-link", "bob")
    assert link.returncode == 0 and link.stdout.startswith("http://127.0.0.1:8765/login?token=")
    assert f"no `navmcp web` serves the workspace at {home} now" in link.stderr
    assert f"--home {home} web" in link.stderr
    # given an address, it is the caller's word: no warning
    named = cli(home, "login-link", "bob", "--base-url", "https://navmcp.example")
    assert "no `navmcp web` serves" not in named.stderr


def test_an_empty_handle_says_what_to_type(tmp_path):
    """`navmcp token "$USER"` with USER empty said "create one with `navmcp user add `"."""
    home = tmp_path / "home"
    owner = cli(home, "get", "/whoami")
    handle = re.search(r"\| Handle \| @([\w-]+) \|", owner.stdout).group(1)
    for command in ("token", "login-link"):
        out = cli(home, command, "")
        assert out.returncode == 1 and out.stdout == ""
        assert "no handle given (is $USER empty?)" in out.stderr and "user add" not in out.stderr
        assert f"--home {home} {command} {handle}`" in out.stderr, out.stderr


def test_the_sign_in_page_gives_the_exact_command_for_a_link(tmp_path):
    """A signed-out owner is told the command that makes a link on this instance: the navmcp beside
    the server's Python, this workspace's --home, and (to a browser on the same machine) their handle."""
    from types import SimpleNamespace

    from navmcp.web.signin import link_command

    home = tmp_path / "home"
    server = WebServer(home)
    try:
        handle = server.owner_handle()
        page = httpx.get(server.base + "/login")
        assert page.status_code == 200
        assert f"--home {home} login-link {handle}</code>" in page.text, page.text
        # The command it shows works: it prints a link that signs this browser in.
        command = re.search(r'<pre class="cmd"><code>([^<]+)</code>', page.text).group(1).split()
        assert command[0].endswith("navmcp") and command[1:3] == ["--home", str(home)]
        made = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env={k: v for k, v in os.environ.items() if k not in ("NAVMCP_HOME", "NAVMCP_TOKEN")})
        assert made.returncode == 0 and made.stdout.startswith(server.base + "/login?token="), made.stderr
        with httpx.Client(follow_redirects=False) as http:
            assert follow_login_link(http, made.stdout.strip()).status_code == 303
    finally:
        server.stop()
    # From another machine nobody's handle is shown to a signed-out visitor.
    from navmcp.app import App
    from navmcp.config import Config

    site = SimpleNamespace(app=App(Config(home=home, database_url=None, token=None)))
    assert link_command(site, SimpleNamespace(client_ip="203.0.113.9")).endswith(" login-link YOUR-HANDLE")
    assert link_command(site, SimpleNamespace(client_ip="127.0.0.1")).endswith(f" login-link {handle}")
