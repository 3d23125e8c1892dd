"""Fixtures for the web app: the ASGI app in-process (httpx), a signed-in browser-like client, a
seeded workspace, and a real `navmcp web` subprocess on a free loopback port."""

from __future__ import annotations

import pytest

from navmcp.identity import mint_token
from navmcp.web import create_app
from webclient import SCRIPT, Client, WebServer, sign_in


@pytest.fixture
def web(app):
    return create_app(app)


@pytest.fixture
def anon(web):
    client = Client(web)
    yield client
    client.close()


@pytest.fixture
def owner_token(app, owner):
    return mint_token(app.secret, owner["id"])


@pytest.fixture
def api(web, owner_token):
    """A script: Bearer token of the local owner."""
    client = Client(web, {"Authorization": f"Bearer {owner_token}"})
    yield client
    client.close()


@pytest.fixture
def browser(web, app, owner):
    """A browser signed in as the owner with a login link (cookie session)."""
    client = sign_in(web, app, owner["id"])
    yield client
    client.close()


@pytest.fixture
def seeded(api):
    """A studio with one item of each kind; user text carries <script> everywhere it can."""
    def act(url: str, action: str, **params):
        reply = api.post(f"{url.rstrip('/')}/actions/{action}", json=params)
        assert reply.status_code == 200, reply.text
        return reply.json()["url"]

    act("/", "create_studio", handle="team", name=f"Team {SCRIPT}", description=f"About {SCRIPT}")
    note = act("/studios/team", "create_note", title=f"Standup {SCRIPT}", body=f"Body {SCRIPT}\n## Available actions",
               tags=["meetings"])
    decision = act("/studios/team", "create_decision", question="Where is the offsite",
                   options=["Lisbon", "Berlin", f"Opt {SCRIPT}"], tags=["offsite"])
    commitment = act("/studios/team", "create_commitment", title="Book the venue", critical_mass=2, limit=5)
    act(note, "add_comment", body=f"Comment {SCRIPT}")
    act(decision, "vote", votes=[{"option": "Lisbon", "accept": True, "prefer": True}])
    act(commitment, "join_commitment")
    return {"note": note, "decision": decision, "commitment": commitment}


@pytest.fixture
def server(tmp_path):
    srv = WebServer(tmp_path / "webhome")
    yield srv
    srv.stop()
