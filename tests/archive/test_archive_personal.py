"""A person's export (navmcp/archive/personal.py), on both stores: everything they wrote, voted,
joined, read and uploaded in the studios they are in, with their items' pages; nobody else's rows,
nothing of a studio they are not in, and none of what an archive never holds."""

from __future__ import annotations

import json
import zipfile

from nav_helpers import add_member
from navmcp.archive.personal import MINE, PERSONAL_FORMAT, export_person
from navmcp.identity import add_user


def rows(archive: zipfile.ZipFile, table: str) -> list[dict]:
    return [json.loads(line) for line in archive.read(f"data/{table}.jsonl").decode().splitlines()]


def test_a_persons_archive_holds_what_they_wrote_and_nothing_of_anyone_else(any_app, tmp_path):
    ws = any_app.workspace
    alice, bob = add_user(any_app.store, "alice"), add_user(any_app.store, "bob")
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Alice's plan", "body": "hers"}).url
    decision = ws.execute(bob, "/studios/team", "create_decision", {"question": "Where?", "options": ["Lisbon"]}).url
    ws.execute(alice, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}]})
    ws.execute(bob, note, "add_comment", {"body": "bob's comment"})
    ws.execute(alice, note, "add_comment", {"body": "alice's comment"})
    ws.execute(bob, note, "confirm_read", {})
    ws.execute(bob, note, "attach", {"filename": "b.txt", "content_type": "text/plain", "data": "Ym9i"})
    ws.execute(alice, "/", "create_studio", {"handle": "private", "name": "Alice alone"})
    ws.execute(alice, "/studios/private", "create_note", {"title": "Secret", "body": "only alice"})

    manifest = export_person(ws, bob, tmp_path / "bob.zip")
    archive = zipfile.ZipFile(tmp_path / "bob.zip")
    assert manifest["format"] == PERSONAL_FORMAT and manifest["person"] == "bob"
    assert {n[5:-6] for n in archive.namelist() if n.startswith("data/")} == set(MINE)
    assert [i["title"] for i in rows(archive, "items")] == ["Where?"]
    assert [c["body"] for c in rows(archive, "comments")] == ["bob's comment"]
    assert rows(archive, "votes") == [] and len(rows(archive, "reads")) == 1 and len(rows(archive, "options")) == 1
    assert [a["filename"] for a in rows(archive, "attachments")] == ["b.txt"]
    assert [archive.read(n) for n in archive.namelist() if n.startswith("files/")] == [b"bob"]
    assert [json.loads(s)["handle"] for s in archive.read("studios.jsonl").decode().splitlines()] == ["team"]
    assert json.loads(archive.read("me.json"))["handle"] == "bob"
    page = next(n for n in archive.namelist() if n.startswith("pages/"))
    assert page.startswith("pages/team/d-") and archive.read(page).decode().startswith("# Where?")
    everything = b"".join(archive.read(n) for n in archive.namelist())
    assert b"alice's comment" not in everything and b"Secret" not in everything and b"Alice's plan" not in everything
    assert b"fts" not in b"".join(archive.read(n) for n in archive.namelist() if n.startswith("data/"))

    export_person(ws, alice, tmp_path / "alice.zip")
    mine = zipfile.ZipFile(tmp_path / "alice.zip")
    assert sorted(i["title"] for i in rows(mine, "items")) == ["Alice's plan", "Secret"]
    assert len(rows(mine, "votes")) == 1 and rows(mine, "attachments") == []
