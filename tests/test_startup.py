"""Cold start stays cheap: answering `initialize` imports no pydantic, Jinja, SQLite or OpenSSL (issue 5).

Claude Code spawns the server at every start; the workspace, its models and templates load on the
first tool call. `python -X importtime` lists every module the process imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def _embedded(home) -> dict[str, str]:
    """The environment of a server process on the embedded store in `home`."""
    env = {**os.environ, "NAVMCP_HOME": str(home)}
    env.pop("NAVMCP_DATABASE_URL", None)
    return env


def test_initialize_imports_nothing_heavy(home):
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}}
    env = _embedded(home)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "navmcp", "serve"],
                          input=json.dumps(request).encode() + b"\n", capture_output=True, env=env, cwd=ROOT,
                          timeout=60)
    assert done.returncode == 0
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "navmcp"
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert "navmcp.mcp.stdio" in imported  # the check sees the server's imports at all
    heavy = sorted(m for m in imported if m.split(".")[0] in {"pydantic", "pydantic_core", "jinja2", "sqlite3", "hashlib", "_hashlib"})
    assert heavy == []
    assert not (home / "navmcp.db").exists()  # nor opened the database


def test_the_first_page_builds_only_the_params_models_it_lists(home):
    """Params models are built on first use (pydantic's `defer_build`): the first navigate of a
    new process pays for the models of the actions its page lists, not for the whole table."""
    code = """
import json
from navmcp.app import App
from navmcp.actions import ACTIONS
app = App()
page = app.workspace.page(app.authenticate(None), "/")
models = {a.params for a in ACTIONS}
listed = {a.params for a in ACTIONS if a.name in {info.name for info in page.actions}}
print(json.dumps({"built": sorted(m.__name__ for m in models if m.__pydantic_complete__),
                  "listed": sorted(m.__name__ for m in listed), "models": len(models)}))
"""
    env = _embedded(home)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    seen = json.loads(done.stdout)
    assert seen["listed"] and set(seen["built"]) <= set(seen["listed"])
    assert len(seen["built"]) < seen["models"]


PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('ran: ' + __name__)\n"


def _planted_project(tmp_path):
    """A project folder as an MCP client starts the server in: modules there that would shadow the
    ones the server imports, each leaving a marker if it ever runs."""
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "marker"
    for name in ("logging", "jwt", "json", "sqlite3", "navmcp_cwd_probe"):
        (project / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))
    return project, marker


def test_the_stdio_server_runs_nothing_from_the_directory_it_is_started_in(tmp_path, home):
    """Issue 24, item 2: MCP clients start bin/mcp-server inside the user's project; `python -m` put
    that directory first on sys.path, so a planted logging.py or jwt.py ran inside the server."""
    from navmcp.app import App
    from navmcp.config import Config
    from navmcp.demo.walkthrough import StdioClient, text_of
    from navmcp.identity import ensure_owner, mint_token

    app = App(Config(home=home, database_url=None, token=None))
    token = mint_token(app.secret, ensure_owner(app.store)["id"])  # a token: the server imports jwt for it
    app.store.close()
    project, marker = _planted_project(tmp_path)
    # An empty entry and a relative one in PYTHONPATH name the working directory too.
    env = {**_embedded(home), "NAVMCP_TOKEN": token, "PYTHONPATH": ":."}
    with StdioClient(env=env, cwd=project) as client:
        assert client.initialize()["result"]["serverInfo"]["name"] == "navmcp"
        page = client.navigate("/whoami")
        assert not page["isError"] and "/whoami" in text_of(page)
    assert not marker.exists(), marker.read_text()


def test_the_console_script_runs_nothing_from_the_directory_it_is_started_in(tmp_path, home):
    project, marker = _planted_project(tmp_path)
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "navmcp"), "get", "/whoami"], cwd=project,
                          env=_embedded(home), capture_output=True, timeout=60)
    assert done.returncode == 0 and b"/whoami" in done.stdout, done.stderr.decode()[-2000:]
    assert not marker.exists(), marker.read_text()
