"""The deployment recipe (deploy/, docs/hosting.md) started on loopback as a team would run it: an
empty PostgreSQL database migrated with `navmcp migrate`, a user and a token made with the CLI, two
`navmcp web` processes started by deploy/navmcp-web@.service's own command line with the settings of
deploy/navmcp.env.example (the unit itself checked by `systemd-analyze verify`), and nginx with deploy/nginx.conf itself (its placeholders filled for
loopback) terminating TLS with a self-signed certificate. Through the proxy: an agent's walkthrough
over MCP, a person's live page in Chromium that follows the agent's vote (streams unbuffered), and
service on with one of the two processes stopped."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from pg_web import HttpMcp, PgWebServer, text_of
from store_fixtures import PG_ADMIN_URL, _url
from webproc import free_port

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
pytestmark = pytest.mark.skipif(NGINX is None or shutil.which("openssl") is None,
                                reason="needs nginx and openssl (.ci/run installs nginx)")


def nginx_config(directory: Path, https_port: int, http_port: int, upstreams: list[int]) -> Path:
    """deploy/nginx.conf with its placeholders filled, inside a main file of the test's own."""
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("listen 443 ssl", f"listen 127.0.0.1:{https_port} ssl")
    site = site.replace("listen 80;", f"listen 127.0.0.1:{http_port};")
    site = re.sub(r"    server 127\.0\.0\.1:8101.*\n    server 127\.0\.0\.1:8102.*\n",
                  "".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n" for p in upstreams), site)
    site = site.replace("/etc/ssl/navmcp/fullchain.pem", str(directory / "cert.pem"))
    site = site.replace("/etc/ssl/navmcp/privkey.pem", str(directory / "key.pem"))
    site = site.replace("navmcp.example.com", "127.0.0.1")
    assert str(directory) in site and f"127.0.0.1:{upstreams[1]}" in site
    (directory / "navmcp.conf").write_text(site)
    main = directory / "nginx.conf"
    user = "user root;\n" if os.geteuid() == 0 else ""
    main.write_text(f"""{user}worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    include {directory}/navmcp.conf;
}}
""")
    return main


UNIT = ROOT / "deploy" / "navmcp-web@.service"
INSTALLED = "/opt/navmcp/.venv/bin/navmcp"  # where the unit expects navmcp (docs/hosting.md)


def unit_environment(**values: str) -> dict[str, str]:
    """deploy/navmcp.env.example read as systemd reads an EnvironmentFile, with `values` in place of
    the example's (every key given must be one the example has)."""
    found = {}
    for line in (ROOT / "deploy" / "navmcp.env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    assert set(values) <= set(found), set(values) - set(found)
    return {**found, **values}


def unit_command(port: int, environment: dict[str, str]) -> list[str]:
    """The unit's ExecStart for instance `port`, as systemd expands it (`%i`, `${VAR}` as one word),
    running this checkout's navmcp in place of the installed one."""
    line = next(v for k, _, v in (ln.partition("=") for ln in UNIT.read_text().splitlines()) if k == "ExecStart")
    words = line.split()
    assert words[0] == INSTALLED, words[0]
    expanded = [re.sub(r"\$\{(\w+)\}", lambda m: environment[m.group(1)], w.replace("%i", str(port))) for w in words[1:]]
    return [str(Path(sys.executable).parent / "navmcp"), *expanded]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze (systemd)")
def test_the_service_unit_verifies(tmp_path):
    """systemd's own check of the unit (its sections, directives and ExecStart), with the installed
    navmcp's path pointing at this checkout's; an unknown directive or a typo fails it."""
    unit = tmp_path / "navmcp-web@8101.service"
    unit.write_text(UNIT.read_text().replace(INSTALLED, str(Path(sys.executable).parent / "navmcp")))
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0 and "navmcp-web@8101.service" not in done.stderr, done.stderr


@pytest.fixture
def empty_database():
    """An empty PostgreSQL database (no schema): what the recipe starts from."""
    name = f"navmcp_deploy_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    user = urlsplit(PG_ADMIN_URL).username or "postgres"
    try:
        yield _url(PG_ADMIN_URL, user, name), _url(PG_ADMIN_URL, "navmcp_app", name)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_recipe_on_loopback(empty_database, tmp_path):
    owner_url, app_url = empty_database
    home = tmp_path / "home"
    env = {**os.environ, "NAVMCP_HOME": str(home)}
    env.pop("NAVMCP_TOKEN", None)

    def navmcp(*args: str, url: str = app_url) -> str:
        return subprocess.run([sys.executable, "-m", "navmcp", *args], env={**env, "NAVMCP_DATABASE_URL": url},
                              capture_output=True, text=True, check=True, timeout=120).stdout.strip()

    navmcp("migrate", url=owner_url)  # the recipe's first step, as the database owner
    navmcp("user", "add", "alice")
    token = navmcp("token", "alice")

    directory = Path(tempfile.mkdtemp(prefix="navmcp-nginx-"))
    https_port, http_port = free_port(), free_port()
    base = f"https://127.0.0.1:{https_port}"
    # Each process as the service unit starts it, with the example's settings (loopback's values).
    settings = unit_environment(NAVMCP_HOME=str(home), NAVMCP_HOSTNAME="127.0.0.1", NAVMCP_PUBLIC_URL=base,
                                NAVMCP_DATABASE_URL=app_url, NAVMCP_PG_POOL_SIZE="4")
    ports = [free_port(), free_port()]
    servers = [PgWebServer(home, app_url, port=p, env=settings, command=unit_command(p, settings)) for p in ports]
    proxy = None
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-keyout", str(directory / "key.pem"), "-out", str(directory / "cert.pem")],
                       check=True, capture_output=True, timeout=60)
        main = nginx_config(directory, https_port, http_port, [s.port for s in servers])
        proxy = subprocess.Popen([NGINX, "-p", str(directory), "-c", str(main), "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        http = httpx.Client(verify=False, timeout=30)
        deadline = time.monotonic() + 30
        while True:
            try:
                if http.get(base + "/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proxy.poll() is None, proxy.stderr.read()
            assert time.monotonic() < deadline, (directory / "error.log").read_text()
            time.sleep(0.1)
        assert http.get(f"http://127.0.0.1:{http_port}/").status_code == 308  # plain HTTP sends to HTTPS

        # An agent's walkthrough over MCP, through the proxy.
        agent = HttpMcp(base, token, name="deploy-test", http=http)
        agent.initialize()
        assert not agent.act("create_studio", "/", handle="team", name="Team")["isError"]
        made = agent.act("create_decision", "/studios/team", question="Where to?", options=["Lisbon", "Berlin"])
        decision = made["structuredContent"]["url"]
        assert "Where to?" in text_of(agent.navigate(decision))

        # A person's live page in Chromium, through the proxy, follows the agent's vote.
        if Path("/usr/bin/chromium").exists():
            from playwright.sync_api import sync_playwright

            link = navmcp("login-link", "alice", "--base-url", base)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
                try:
                    page = browser.new_context(ignore_https_errors=True).new_page()
                    page.goto(link)
                    page.get_by_role("button", name=re.compile("^Sign in as")).click()
                    page.wait_for_url(base + "/")
                    page.goto(base + decision)
                    lisbon = page.locator(".ballot li", has_text="Lisbon").locator(".counts")
                    assert lisbon.inner_text() == "0 accept, 0 prefer"
                    page.wait_for_timeout(500)  # the page's event stream is open
                    assert not agent.act("vote", decision, votes=[{"option": "Lisbon", "accept": True}])["isError"]
                    page.wait_for_function("() => document.querySelector('#live-mark') !== null", timeout=30_000)
                    assert lisbon.inner_text() == "1 accept, 0 prefer"
                finally:
                    browser.close()

        # One process stops: the proxy serves from the other.
        assert servers[0].stop() == 0
        for _ in range(4):
            assert http.get(base + decision + ".json", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        http.close()
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=10)
            proxy.stderr.close()
        for server in servers:
            if server.proc and server.proc.poll() is None:
                server.stop()
        shutil.rmtree(directory, ignore_errors=True)
