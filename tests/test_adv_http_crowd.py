"""Crowds over HTTP: MCP sessions over /mcp of two `navmcp web` processes, browsers posting the
HTML forms with their cookie and CSRF token, and stdio server processes — all at once on one
SQLite file, voting, joining and commenting on the same items. The same script and the same
checks as the stdio crowd (test_adv_crowd.py): no acknowledged write lost, none doubled, the
commitment's limit holds, no busy/locked error reaches anyone, nothing logged at ERROR."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from adversarial import crowd, figures, world
from adversarial.drivers import StdioProcess
from adversarial.http import FormAgent, HttpAgent, WebProcess
from navmcp.web.auth import create_login_link
from test_adv_crowd import script, verify

MCP_AGENTS = figures.pick(14, 28)
FORM_AGENTS = figures.pick(4, 10)
STDIO_AGENTS = figures.pick(4, 10)
AGENTS = MCP_AGENTS + FORM_AGENTS + STDIO_AGENTS
LIMIT = AGENTS * 2 // 3


@pytest.fixture
def crowd_world(tmp_path):
    w, app = world.build_crowd(tmp_path / "home", AGENTS, LIMIT)
    w.links = {f"user{n}": create_login_link(app.store, w.users[f"user{n}"]["id"], "http://127.0.0.1")
               for n in range(MCP_AGENTS, MCP_AGENTS + FORM_AGENTS)}
    app.store.close()
    return w


def test_mixed_crowd_over_http_and_stdio(crowd_world):
    w = crowd_world
    names = [f"user{n}" for n in range(AGENTS)]
    servers = [WebProcess(w.home), WebProcess(w.home)]
    agents: dict = {}
    try:
        for n in range(MCP_AGENTS):  # user0 (who closes the race) is an MCP agent
            agents[f"user{n}"] = HttpAgent(servers[n % 2].base, w.tokens[f"user{n}"], f"crowd-user{n}")
        for n in range(MCP_AGENTS, MCP_AGENTS + FORM_AGENTS):
            link = w.links[f"user{n}"].replace("http://127.0.0.1", servers[n % 2].base)
            agents[f"user{n}"] = FormAgent(servers[n % 2].base, link)
        stdio_names = names[MCP_AGENTS + FORM_AGENTS:]
        with ThreadPoolExecutor(4) as pool:
            stdio = dict(zip(stdio_names, pool.map(lambda n: StdioProcess(w.env(n), timeout=120), stdio_names)))
        agents.update(stdio)
        for name, process in stdio.items():
            process.initialize(f"crowd-{name}")
        logs = crowd.run(agents, script(w))
    finally:
        codes = [a.close() for a in agents.values()]
        web_codes = [s.stop() for s in servers]
    assert web_codes == [0, 0] and [c for c in codes if c not in (None, 0)] == []
    for server in servers:
        assert not server.errors(), server.stderr_text()[-3000:]
    for name in names[MCP_AGENTS + FORM_AGENTS:]:
        text = agents[name].stderr_text(last=None)
        assert "Traceback" not in text and "ERROR" not in text, text[-2000:]
    assert not [f"{log.name}: {log.crashed}" for log in logs.values() if log.crashed]
    assert crowd.busy_failures(logs) == []
    verify(w, logs, names, LIMIT, prefix="crowd.http")
    figures.add("crowd.http.mcp_sessions", MCP_AGENTS)
    figures.add("crowd.http.form_sessions", FORM_AGENTS)
    figures.add("crowd.http.stdio_processes", STDIO_AGENTS)
