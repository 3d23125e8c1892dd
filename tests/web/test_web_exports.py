"""Exports in the web app (navmcp/web/exports.py): a studio's admin downloads its archive from the
members page, anyone what they wrote from /whoami; in their browser session only. A token's caller
(even the admin's own token), a member who is not an admin and a stranger get the page that does not
exist; the download needs the page's CSRF token and a POST from this site. In Chromium: a person
attaches a PNG through the form and sees it inline, downloads a CSV; the admin downloads the export;
a member cannot."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

import httpx
import pytest

from nav_helpers import accepts, accepts_at, add_member
from navmcp.app import App
from navmcp.archive.importer import import_studio
from navmcp.config import Config
from navmcp.identity import add_user
from navmcp.web import create_app
from navmcp.web.response import Download
from test_web_files import ARGS, CHROMIUM, CSV, attach, png
from webclient import BASE, csrf_of, sign_in


@pytest.fixture
def team(api, app):
    """A studio `team` made by the owner (its admin), with bob a member, a note with a CSV, and a
    comment of bob's."""
    assert api.post("/actions/create_studio", json={"handle": "team", "name": "Team"}).status_code == 200
    note = api.post("/studios/team/actions/create_note", json={"title": "Plan", "body": "the plan"}).json()["url"]
    attach(api, note, "votes.csv", "text/csv", CSV)
    bob = add_user(app.store, "bob")
    assert api.post("/studios/team/members/actions/add_member", json={"handle": "bob"}).status_code == 200
    accepts(app.workspace, "bob")
    app.workspace.execute(bob, note, "add_comment", {"body": "bob's word"})
    return {"note": note, "bob": bob}


def download(client, path: str, csrf: str, origin: str | None = BASE):
    return client.post(path, data={"csrf_token": csrf}, headers={"Origin": origin} if origin else {})


def test_an_admin_downloads_the_studio_from_the_members_page(browser, team, app, tmp_path):
    members = browser.get("/studios/team/members").text
    assert '<a href="/studios/team/export">Export this studio</a>' in members
    page = browser.get("/studios/team/export")
    assert page.status_code == 200 and "Download the archive" in page.text and "Never in it" in page.text
    got = download(browser, "/studios/team/export", csrf_of(page.text))
    assert got.status_code == 200 and got.headers["content-type"] == "application/zip"
    assert got.headers["content-disposition"].startswith('attachment; filename="team-')
    archive = zipfile.ZipFile(io.BytesIO(got.content))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["format"] == "navmcp-export/1" and manifest["counts"]["attachments"] == 1
    assert CSV in [archive.read(n) for n in archive.namelist() if n.startswith("files/")]
    (tmp_path / "team.zip").write_bytes(got.content)  # it imports as a new studio
    assert import_studio(app.store, tmp_path / "team.zip", "team-copy")["counts"]["items"] == 1
    audit = browser.get("/studios/team/audit").text  # its admins see who took a copy
    assert "exported the studio" in audit and "attached a file" in audit


def test_no_token_no_member_and_no_stranger_exports_and_a_download_needs_the_pages_form(browser, api, anon, web, app,
                                                                                       team):
    csrf = csrf_of(browser.get("/studios/team/export").text)
    assert download(browser, "/studios/team/export", "0" * 32).status_code == 403  # a wrong CSRF token
    assert download(browser, "/studios/team/export", csrf, origin=None).status_code == 403  # not from our page
    assert download(browser, "/studios/team/export", csrf, origin="https://evil.example").status_code == 403
    # the admin's own token: an agent's call, never a person's act
    assert api.get("/studios/team/export").status_code == 404
    assert api.post("/studios/team/export", data={"csrf_token": csrf}).status_code == 404
    assert api.get("/whoami/export").status_code == 404
    assert "export" not in api.get("/studios/team/members").text  # no link for a token either
    assert api.get("/studios/team/members.json").json()["data"]["export"] is None
    bob = sign_in(web, app, team["bob"]["id"])
    eve = sign_in(web, app, add_user(app.store, "eve")["id"])
    try:
        for person in (bob, eve):  # a member who is not an admin; someone not in the studio
            assert person.get("/studios/team/export").status_code == 404
            assert download(person, "/studios/team/export", csrf_of(person.get("/whoami").text)).status_code == 404
        assert "Export this studio" not in bob.get("/studios/team/members").text
    finally:
        bob.close()
        eve.close()
    assert browser.get("/studios/nowhere/export").status_code == 404
    assert browser.get("/studios/team/export.json").status_code == 404  # not a page of another rendition
    away = anon.get("/studios/team/export")  # signed out: sign in first, then back here
    assert away.status_code == 303 and away.headers["location"] == "/login?next=/studios/team/export"
    assert anon.post("/studios/team/export", data={"csrf_token": csrf}).status_code == 404


def test_a_person_downloads_everything_they_wrote_from_whoami(web, app, team):
    bob = sign_in(web, app, team["bob"]["id"])
    try:
        with app.store.read() as tx:
            assert tx.all("SELECT * FROM audit WHERE action = 'export_person'") == []
        whoami = bob.get("/whoami").text
        assert '<a href="/whoami/export">Export what you wrote</a>' in whoami
        got = download(bob, "/whoami/export", csrf_of(bob.get("/whoami/export").text))
        assert got.status_code == 200 and got.headers["content-disposition"].startswith('attachment; filename="bob-')
        archive = zipfile.ZipFile(io.BytesIO(got.content))
        manifest = json.loads(archive.read("manifest.json"))
        assert manifest["format"] == "navmcp-personal/1" and manifest["person"] == "bob"
        comments = [json.loads(line) for line in archive.read("data/comments.jsonl").decode().splitlines()]
        assert [c["body"] for c in comments] == ["bob's word"]
        assert archive.read("data/items.jsonl") == b"" and archive.read("data/attachments.jsonl") == b""  # the owner's
        with app.store.read() as tx:  # a line of bob's own, in no studio: no studio's admins see it
            lines = tx.all("SELECT user_id, client, studio_id, url, outcome FROM audit WHERE action = 'export_person'")
        assert lines == [{"user_id": team["bob"]["id"], "client": "web", "studio_id": None, "url": "/whoami/export",
                          "outcome": "unchanged"}]
    finally:
        bob.close()


def test_an_export_is_sent_from_a_temporary_file_a_part_at_a_time_then_deleted(web, app, owner, team, tmp_path,
                                                                             monkeypatch):
    """The archive is written to a file and sent from it in parts (response.Download), never read
    whole into memory; the file is gone once sent."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(Download, "CHUNK", 1024)
    parts: list[dict] = []

    async def recording(scope, receive, send):
        async def sent(message):
            if message["type"] == "http.response.body":
                parts.append(message)
            await send(message)
        await web(scope, receive, sent)

    admin = sign_in(recording, app, owner["id"])  # the studio's admin
    try:
        csrf = csrf_of(admin.get("/studios/team/export").text)
        parts.clear()
        got = download(admin, "/studios/team/export", csrf)
    finally:
        admin.close()
    assert got.status_code == 200 and int(got.headers["content-length"]) == len(got.content) > 3 * 1024
    assert len(parts) > 3 and all(p.get("more_body") and len(p["body"]) <= 1024 for p in parts[:-1])
    assert parts[-1]["body"] == b"" and not parts[-1].get("more_body")
    assert json.loads(zipfile.ZipFile(io.BytesIO(got.content)).read("manifest.json"))["counts"]["attachments"] == 1
    assert list(tmp_path.glob("navmcp-export-*")) == []  # deleted once sent


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_in_chromium_a_person_uploads_and_downloads_and_the_admin_exports_and_a_member_cannot(server, tmp_path):
    from playwright.sync_api import sync_playwright

    def navmcp(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "navmcp", *args], env=server.env, capture_output=True,
                              text=True, check=True).stdout.strip()

    navmcp("user", "add", "alice")
    navmcp("user", "add", "bob")
    agent = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
    assert agent.post("/actions/create_studio", json={"handle": "team", "name": "Team"}).status_code == 200
    note = agent.post("/studios/team/actions/create_note", json={"title": "Plan", "body": "files"}).json()["url"]
    for handle, role in (("alice", "admin"), ("bob", "member")):
        added = agent.post("/studios/team/members/actions/add_member", json={"handle": handle, "role": role})
        assert added.status_code == 200, added.text
        accepts_at(server.home, handle)
    agent.close()
    (tmp_path / "red.png").write_bytes(png())
    (tmp_path / "votes.csv").write_bytes(CSV)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            def person(handle: str):
                context = browser.new_context(accept_downloads=True)
                page = context.new_page()
                page.goto(navmcp("login-link", handle, "--base-url", server.base))
                page.get_by_role("button", name=f"Sign in as @{handle}").click()
                page.wait_for_load_state()
                return page

            alice = person("alice")
            for name in ("red.png", "votes.csv"):  # through the item page's form, as a person attaches
                alice.goto(server.base + note)
                alice.get_by_role("button", name="Attach", exact=True).click()
                alice.set_input_files("#attach-file", str(tmp_path / name))
                alice.locator("#action-attach button[type=submit]").click()
                alice.wait_for_load_state()
                assert f"Attached {name}" in alice.locator("body").inner_text()
            alice.goto(server.base + note)
            alice.wait_for_function("() => document.querySelector('img.thumb') !== null && document.querySelector('img.thumb').complete")
            assert alice.evaluate("document.querySelector('img.thumb').naturalWidth") == 3  # inline, decoded
            with alice.expect_download() as got:
                alice.locator("ul.files li", has_text="votes.csv").get_by_role("link", name="download").click()
            assert got.value.suggested_filename == "votes.csv" and Path(got.value.path()).read_bytes() == CSV

            alice.goto(server.base + "/studios/team/members")
            alice.get_by_role("link", name="Export this studio").click()
            with alice.expect_download() as got:
                alice.get_by_role("button", name="Download the archive").click()
            assert got.value.suggested_filename.startswith("team-")
            archive = zipfile.ZipFile(got.value.path())
            assert json.loads(archive.read("manifest.json"))["counts"]["attachments"] == 2
            assert sorted(archive.read(n) for n in archive.namelist() if n.startswith("files/")) == sorted([png(), CSV])

            bob = person("bob")
            bob.goto(server.base + "/studios/team/members")
            assert bob.get_by_role("link", name="Export this studio").count() == 0
            shown = bob.goto(server.base + "/studios/team/export")
            assert shown is not None and shown.status == 404
        finally:
            browser.close()


def test_on_postgresql_both_exports_download_under_row_level_security_with_their_audit_lines(tmp_path, pg_database,
                                                                                           pg_url):
    """As navmcp_app, under row-level security: the admin's export of the studio and a member's of
    what they wrote, each sent from its file, each a line of the audit (the person's in no studio)."""
    import psycopg

    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    try:
        alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
        app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
        add_member(app.workspace, alice, "/studios/team/members", {"handle": "bob"})
        note = app.workspace.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "the plan"}).url
        app.workspace.execute(bob, note, "attach", {"filename": "votes.csv", "content_type": "text/csv",
                                                    "data": base64.b64encode(CSV).decode()})
        web = create_app(app)
        for person, path in ((alice, "/studios/team/export"), (bob, "/whoami/export")):
            client = sign_in(web, app, person["id"])
            try:
                got = download(client, path, csrf_of(client.get(path).text))
            finally:
                client.close()
            assert got.status_code == 200
            files = zipfile.ZipFile(io.BytesIO(got.content))
            assert [files.read(n) for n in files.namelist() if n.startswith("files/")] == [CSV]
        with psycopg.connect(pg_database.admin_url) as conn:
            lines = conn.execute("SELECT u.handle, a.action, a.studio_id IS NULL, a.outcome FROM audit a"
                                 " JOIN users u ON u.id = a.user_id WHERE a.action LIKE 'export%' ORDER BY 1").fetchall()
        assert lines == [("alice", "export_studio", False, "unchanged"), ("bob", "export_person", True, "unchanged")]
    finally:
        app.store.close()


def test_an_export_is_written_in_a_thread_for_costly_requests_not_on_the_event_loop(browser, team, monkeypatch):
    """A studio's export reads all of it (up to 500 MiB of files): it runs where costly pages do
    (navmcp.web.workers), so every other request on the process is answered meanwhile."""
    from navmcp.web import exports

    threads: list[str] = []
    real = exports.export_studio

    def export_studio(*args, **kw):
        threads.append(threading.current_thread().name)
        return real(*args, **kw)

    monkeypatch.setattr(exports, "export_studio", export_studio)
    got = download(browser, "/studios/team/export", csrf_of(browser.get("/studios/team/export").text))
    assert got.status_code == 200 and threads and threads[0].startswith("navmcp-costly")
