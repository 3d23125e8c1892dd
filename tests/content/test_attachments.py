"""Attachments (navmcp/content/attachments.py, actions/attachments.py, pages/files.py), on both stores:
attach and remove, the stated limits, the file page and its resource, who may see a file, and
files going with their comment or item."""

from __future__ import annotations

import base64
import json

import pytest

from nav_helpers import add_member
from navmcp.content import attachments
from navmcp.errors import ActionUnavailable, InvalidActionParams, NotFound
from navmcp.mcp.tools import Session

STUDIO = "/studios/team"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
CSV = b"city,votes\nLisbon,3\nBerlin,2\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
def team(any_app, new_user):
    ws = any_app.workspace
    alice, bob, eve = new_user("alice")[0], new_user("bob")[0], new_user("eve")[0]
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "bob"})
    ws.execute(eve, "/", "create_studio", {"handle": "other", "name": "Other"})
    note = ws.execute(alice, STUDIO, "create_note", {"title": "Budget", "body": "see the files"}).url
    return any_app, alice, bob, eve, note


def attach(ws, user, url, filename, content_type, data, **more):
    return ws.execute(user, url, "attach", {"filename": filename, "content_type": content_type, "data": b64(data),
                                            **more})


def test_files_are_listed_on_the_item_and_read_as_pages(team):
    app, alice, bob, eve, note = team
    ws = app.workspace
    png = attach(ws, bob, note, "chart.png", "image/png", PNG).url
    csv = attach(ws, alice, note, "votes.csv", "text/csv", CSV).url
    assert png.startswith(f"{note}/files/") and csv.startswith(f"{note}/files/")
    md = ws.page(alice, note).markdown
    assert "## Files (2)" in md
    assert f"- [chart.png]({png}) — image/png, 72 B, by @bob" in md
    assert f"- [votes.csv]({csv}) — text/csv, 29 B, by @alice" in md
    assert b64(PNG) not in md and "Lisbon" not in md  # listed, never embedded
    page = ws.page(bob, csv)
    assert page.name == "file" and "Lisbon,3" in page.markdown and "| votes.csv | text/csv |" in page.markdown
    meta, data = ws.file(bob, png)
    assert (meta["content_type"], meta["size"], data) == ("image/png", len(PNG), PNG)


def test_a_file_is_a_resource_text_as_text_images_as_blobs_and_an_image_block(team):
    app, alice, bob, eve, note = team
    ws = app.workspace
    png = attach(ws, alice, note, "chart.png", "image/png", PNG).url
    csv = attach(ws, alice, note, "votes.csv", "text/csv", CSV).url
    session = Session(app, None, user=bob)
    from navmcp.mcp import resources

    text = resources.read(session, "navmcp://" + csv)["contents"]
    assert text == [{"uri": "navmcp://" + csv, "mimeType": "text/csv", "text": CSV.decode()}]
    blob = resources.read(session, "navmcp://" + png)["contents"][0]
    assert blob["mimeType"] == "image/png" and base64.b64decode(blob["blob"]) == PNG and "text" not in blob
    result = session.call_tool("navigate", {"url": png})
    kinds = [c["type"] for c in result["content"]]
    assert kinds == ["text", "image"] and base64.b64decode(result["content"][1]["data"]) == PNG
    assert [c["type"] for c in session.call_tool("navigate", {"url": csv})["content"]] == ["text"]


def test_a_non_member_gets_nothing_by_url_resource_or_guessed_id(team):
    app, alice, bob, eve, note = team
    ws = app.workspace
    png = attach(ws, alice, note, "chart.png", "image/png", PNG).url
    file_id = png.rsplit("/", 1)[1]
    from navmcp.mcp import resources
    from navmcp.mcp.jsonrpc import InvalidParams

    for url in (png, png + "?raw=1"):
        with pytest.raises(NotFound):
            ws.page(eve, url)
        with pytest.raises(NotFound):
            ws.file(eve, url)
    with pytest.raises(InvalidParams):
        resources.read(Session(app, None, user=eve), "navmcp://" + png)
    # eve's own note, with alice's file's id under it: no file there
    own = ws.execute(eve, "/studios/other", "create_note", {"title": "Mine", "body": "x"}).url
    with pytest.raises(NotFound):
        ws.file(eve, f"{own}/files/{file_id}")
    # nor under another kind's letter, or another item of alice's studio
    other = ws.execute(alice, STUDIO, "create_note", {"title": "Other", "body": "x"}).url
    for url in (png.replace("/n/", "/d/"), f"{other}/files/{file_id}", png.replace("/n/", "/x/")):
        with pytest.raises(NotFound):
            ws.file(alice, url)
    with pytest.raises(NotFound):  # nor attach there: not even the studio exists for her
        attach(ws, eve, note, "x.csv", "text/csv", CSV)


@pytest.mark.parametrize(("filename", "content_type", "data", "field", "words"), [
    ("a.png", "image/png", b"GIF89a not a png", "data", "not a image/png file"),
    ("a.pdf", "application/pdf", PNG, "data", "not a application/pdf"),
    ("a.csv", "text/csv", b"\xff\xfe\x00binary", "data", "UTF-8 text"),
    ("a.html", "text/html", b"<script>alert(1)</script>", "content_type", "not accepted"),
    ("a.svg", "image/svg+xml", b"<svg onload=alert(1)>", "content_type", "not accepted"),
    ("e.txt", "text/plain", b"", "data", "must not be empty"),
])
def test_a_file_not_of_its_type_or_of_no_accepted_type_is_refused(team, filename, content_type, data, field, words):
    app, alice, bob, eve, note = team
    ws = app.workspace
    with pytest.raises(InvalidActionParams, match=words) as refused:
        ws.execute(alice, note, "attach", {"filename": filename, "content_type": content_type, "data": b64(data)})
    assert [f.field for f in refused.value.fields] == [field]
    assert not ws.page(alice, note).data["files"]


def test_limits_size_quota_and_base64_are_stated_and_enforced(team, monkeypatch):
    app, alice, bob, eve, note = team
    ws = app.workspace
    with pytest.raises(InvalidActionParams, match="not base64"):
        ws.execute(alice, note, "attach", {"filename": "a.txt", "content_type": "text/plain", "data": "!!!!"})
    big = b"a" * (attachments.MCP_MAX_BYTES + 1)
    with pytest.raises(InvalidActionParams, match="at most 1,048,576 bytes"):
        attach(ws, alice, note, "big.txt", "text/plain", big)
    attach(ws, alice, note, "max.txt", "text/plain", big[:-1])  # exactly the limit is accepted
    monkeypatch.setattr(attachments, "STUDIO_QUOTA_BYTES", attachments.MCP_MAX_BYTES + 10)
    with pytest.raises(InvalidActionParams, match="quota"):
        attach(ws, bob, note, "more.txt", "text/plain", b"x" * 11)
    attach(ws, bob, note, "fits.txt", "text/plain", b"x" * 10)
    assert "1,048,576 bytes of file" in ws.page(alice, note).markdown  # the listing states the limit


@pytest.mark.parametrize(("given", "kept"), [
    ("../../etc/passwd", "passwd"), ("C:\\x\\report.pdf", "report.pdf"), ("<img src=x>.png", "img src_x_.png"),
    ("...hidden", "hidden"), ("", "file"), ("a\u202eb.txt", "ab.txt"), ("x" * 300 + ".csv", "x" * 116 + ".csv"),
])
def test_filenames_are_made_safe(given, kept):
    assert attachments.safe_filename(given) == kept


def test_the_uploader_or_an_admin_removes_a_file_and_no_one_else(team, new_user):
    app, alice, bob, eve, note = team
    ws = app.workspace
    new_user("carol")
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "carol"})
    from navmcp.identity import user_by_handle

    with app.store.read() as tx:
        carol = user_by_handle(tx, "carol")
    bobs = attach(ws, bob, note, "b.csv", "text/csv", CSV).url.rsplit("/", 1)[1]
    alices = attach(ws, alice, note, "a.csv", "text/csv", CSV).url.rsplit("/", 1)[1]
    with pytest.raises(ActionUnavailable, match="no file here you may remove"):
        ws.execute(carol, note, "remove_attachment", {"file": bobs})
    with pytest.raises(InvalidActionParams, match="only its uploader"):
        ws.execute(bob, note, "remove_attachment", {"file": alices})
    assert ws.execute(bob, note, "remove_attachment", {"file": bobs}).message == "Removed b.csv."
    ws.execute(alice, f"{note}/files/{alices}", "remove_attachment", {"file": alices})
    assert not ws.page(alice, note).data["files"]
    with pytest.raises(NotFound):
        ws.file(alice, f"{note}/files/{alices}")


def test_a_comments_files_go_with_it_whichever_way_it_is_deleted(team):
    app, alice, bob, eve, note = team
    ws = app.workspace
    ws.execute(bob, note, "add_comment", {"body": "with a file"})
    ws.execute(bob, note, "add_comment", {"body": "with replies"})
    lone, threaded = (c["id"] for c in ws.page(bob, note).data["comments"])
    ws.execute(alice, note, "add_comment", {"body": "a reply", "reply_to": threaded})
    attach(ws, bob, note, "one.csv", "text/csv", CSV, comment=lone)
    attach(ws, bob, note, "two.csv", "text/csv", CSV, comment=threaded)
    files = ws.page(bob, note).data["files"]
    assert [(f["filename"], f["comment_id"]) for f in files] == [("one.csv", lone), ("two.csv", threaded)]
    assert f"on comment `{lone}`" in ws.page(bob, note).markdown
    ws.execute(bob, note, "delete_comment", {"comment": lone})  # deleted outright: by cascade
    ws.execute(bob, note, "delete_comment", {"comment": threaded})  # kept as "[deleted]": by delete_comment
    assert ws.page(bob, note).data["files"] == []
    with app.store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM attachments") == 0
    with pytest.raises(InvalidActionParams, match="no comment"):
        attach(ws, bob, note, "x.csv", "text/csv", CSV, comment=threaded)


def test_an_items_files_go_with_the_studio_that_deletes_it(team):
    """No action deletes an item yet (issue 44 brings it); the table's cascade is what takes its
    files, checked here by deleting the item's row as its deletion will."""
    app, alice, bob, eve, note = team
    ws = app.workspace
    attach(ws, alice, note, "a.csv", "text/csv", CSV)
    item_id = note.rsplit("/", 1)[1]
    with app.store.write(user_id=alice["id"]) as tx:
        tx.execute("DELETE FROM items WHERE id = ?", (item_id,))
    with app.store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM attachments") == 0


def test_structured_content_of_a_file_page_carries_no_bytes(team):
    app, alice, bob, eve, note = team
    ws = app.workspace
    png = attach(ws, alice, note, "chart.png", "image/png", PNG).url
    as_json = json.dumps(ws.page(alice, png).as_json(), default=str)
    assert b64(PNG) not in as_json and "chart.png" in as_json


def test_row_level_security_keeps_files_to_their_studio_and_removal_to_uploader_or_admin(team, store_kind):
    """On PostgreSQL the rows themselves follow the studio's rules, whatever the app's SQL asks."""
    if store_kind != "postgres":
        pytest.skip("row-level security is the hosted store's")
    import psycopg

    app, alice, bob, eve, note = team
    ws = app.workspace
    file_id = attach(ws, alice, note, "a.csv", "text/csv", CSV).url.rsplit("/", 1)[1]
    with app.store.read(user_id=eve["id"]) as tx:  # not a member: no row, not even its size
        assert tx.scalar("SELECT count(*) FROM attachments") == 0
    with app.store.read(user_id=bob["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM attachments") == 1
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    with app.store.write(user_id=bob["id"]) as tx:  # a member, not its uploader nor an admin: deletes nothing
        assert tx.execute("DELETE FROM attachments WHERE id = ?", (file_id,)) == 0
    insert = ("INSERT INTO attachments (id, studio_id, item_id, filename, content_type, size, sha256, data, created_by,"
              " created_at) VALUES ('forged', ?, ?, 'x.txt', 'text/plain', 1, 'x', ?, ?, 'now')")
    for who, as_whom in ((eve, eve), (bob, alice)):  # into a studio not hers; in another's name
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.store.write(user_id=who["id"]) as tx:
                tx.execute(insert, (studio, note.rsplit("/", 1)[1], b"x", as_whom["id"]))
    with app.store.write(user_id=alice["id"]) as tx:
        assert tx.execute("DELETE FROM attachments WHERE id = ?", (file_id,)) == 1
