"""A non-editable install finds its templates and migrations: build the wheel, run navmcp from it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from navmcp.demo.walkthrough import StdioClient

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)],
                           capture_output=True, timeout=300)
    if build.returncode != 0 and b"hatchling" in build.stderr and b"No matching distribution" in build.stderr:
        pytest.skip("no package index to fetch the build backend from")
    assert build.returncode == 0, build.stderr.decode()
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_carries_templates_and_migrations(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    # every template and static file of the package: markdown pages, HTML pages, their assets
    # the checkout's top-level templates/, shipped inside the package (pyproject.toml's force-include)
    templates = {n.removeprefix("navmcp/templates/") for n in names if n.startswith("navmcp/templates/")}
    shipped = {str(p.relative_to(ROOT / "templates")) for p in (ROOT / "templates").rglob("*") if p.is_file()}
    assert not (ROOT / "navmcp" / "templates").exists()
    assert templates == shipped and {"_layout.md.j2", "html/decision.html.j2", "static/app.css"} <= templates
    migrations = {n.rsplit("/", 1)[1] for n in names if n.startswith("navmcp/migrations/") and n.endswith(".sql")}
    assert migrations == {p.name for p in (ROOT / "navmcp" / "migrations").glob("*.sql")}
    assert not any("__pycache__" in n or n.startswith("tests/") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "navmcp = navmcp.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_pages_render_from_the_installed_wheel(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "NAVMCP_HOME": str(tmp_path / "home")}
    env.pop("NAVMCP_TOKEN", None)
    # From a folder outside the checkout, so only the wheel's files can be found.
    where = subprocess.run([sys.executable, "-c", "import navmcp.render as r; print(r.__file__); print(r.templates_dir())"],
                           capture_output=True, env=env, cwd=tmp_path, timeout=30)
    module, templates = where.stdout.decode().split()
    assert module.startswith(str(site)) and templates == str(site / "navmcp" / "templates")
    page = subprocess.run([sys.executable, "-m", "navmcp", "get", "/help"], capture_output=True, env=env,
                          cwd=tmp_path, timeout=30)
    assert page.returncode == 0, page.stderr.decode()
    assert page.stdout.startswith(b"# Help\n") and b"## Available actions" in page.stdout
    assert (tmp_path / "home" / "navmcp.db").exists()  # migrations ran from the wheel's package data


def test_the_demo_from_a_wheel_prints_a_server_command_that_exists(wheel, tmp_path):
    """Installed from a wheel, `navmcp demo` printed `claude mcp add … <site-packages>/bin/mcp-server`,
    a file no wheel ships: the command it prints now exists and answers MCP."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "NAVMCP_HOME": str(tmp_path / "unused")}
    env.pop("NAVMCP_TOKEN", None)
    env.pop("NAVMCP_DATABASE_URL", None)
    demo = subprocess.run([sys.executable, "-m", "navmcp", "demo", "--no-serve", "--home", str(tmp_path / "demo")],
                          capture_output=True, env=env, cwd=tmp_path, text=True, timeout=120)
    assert demo.returncode == 0, demo.stderr
    line = next(line for line in demo.stdout.splitlines() if line.startswith("Add this workspace to Claude Code:"))
    assert "mcp-server" not in line, line
    command = shlex.split(line.split(" -- ", 1)[1])
    assert Path(command[0]).is_file() and command[1:] == ["serve"], command
    with StdioClient(command=command, env={**env, "NAVMCP_HOME": str(tmp_path / "demo")}) as agent:
        assert agent.initialize()["result"]["serverInfo"]["name"] == "navmcp"
        assert "Where do we hold the offsite?" in agent.navigate("/studios/demo")["content"][0]["text"]
