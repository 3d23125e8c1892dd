"""Export and import of a studio (navmcp/archive/), on both stores and from SQLite into PostgreSQL:
the round trip gives the same archive apart from ids and dates; a wrong checksum, an unknown format
or an archive over the limit is refused before anything is written; people are matched by handle
(or by verified e-mail on Supabase) or made placeholders; nothing of what an archive must never
hold is in it, and nothing is told on the change feed; files go in and out one at a time. On
PostgreSQL an import runs as the database's owner: with the app role's URL it is refused, nothing
written."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import tracemalloc
import uuid
import zipfile

import pytest

from nav_helpers import add_member
from navmcp import archive
from navmcp.app import App
from navmcp.archive import ArchiveError
from navmcp.archive.export import export_studio
from navmcp.archive.importer import import_studio
from navmcp.cli import main
from navmcp.config import Config
from navmcp.errors import NavError
from navmcp.identity import add_user

DATES = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?( UTC)?")


def make_team(app):
    """A studio `team` with a note, a decision, a commitment, comments, a reply, an edit, a read
    and a file whose URL a comment names; and a studio `elsewhere` that is not in its archive."""
    alice, bob = add_user(app.store, "alice"), add_user(app.store, "bob")
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, "/studios/team/members", {"handle": "bob"})
    note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "the plan", "tags": ["q1"]}).url
    decision = ws.execute(alice, "/studios/team", "create_decision",
                          {"question": "Where?", "options": ["Lisbon", "Berlin"], "description": f"see {note}"}).url
    ws.execute(bob, decision, "vote", {"votes": [{"option": "Lisbon", "prefer": True}]})
    commitment = ws.execute(bob, "/studios/team", "create_commitment", {"title": "Book it", "critical_mass": 2}).url
    ws.execute(alice, commitment, "join_commitment", {})
    ws.execute(bob, note, "add_comment", {"body": f"see {decision} and /studios/team"})
    thread = ws.page(bob, note).data["comments"][0]["id"]
    ws.execute(alice, note, "add_comment", {"body": "agreed", "reply_to": thread})
    ws.execute(alice, note, "edit_note", {"body": f"the plan, edited: {commitment}"})
    ws.execute(bob, note, "confirm_read", {})
    csv = ws.execute(bob, note, "attach", {"filename": "a.csv", "content_type": "text/csv", "data": "YSxi"}).url
    ws.execute(bob, decision, "add_comment", {"body": f"the numbers: {csv}"})  # a file's URL, rewritten too
    ws.execute(bob, "/", "create_studio", {"handle": "elsewhere", "name": "E"})
    return alice, bob


@pytest.fixture
def team(store_kind, tmp_path, request):
    """`make_team` on either store; on PostgreSQL through the owner's URL, as the operator runs
    `navmcp import` (the app still works as navmcp_app: navmcp.store.postgres)."""
    url = None
    if store_kind == "postgres":
        request.getfixturevalue("pg_url")  # emptied
        url = request.getfixturevalue("pg_database").admin_url
    app = App(Config(home=tmp_path / "home", database_url=url, token=None))
    alice, bob = make_team(app)
    yield app, alice, bob
    app.store.close()


def canonical(path) -> dict:
    """An archive with every id replaced by its place of first appearance and every date blanked:
    what must be equal after a round trip."""
    z = zipfile.ZipFile(path)
    manifest = json.loads(z.read("manifest.json"))
    ids: dict[str, str] = {}  # people by handle: an account's id is the store's, not the studio's
    for line in z.read("people.jsonl").decode().splitlines():
        person = json.loads(line)
        ids[person["id"]] = f"<@{person['handle']}>"
    for table, _where, refs, _ in archive.TABLES:
        for line in z.read(f"data/{table}.jsonl").decode().splitlines():
            row = json.loads(line)
            for column, kind in refs.items():
                if row.get(column) is not None and kind != "user":
                    ids.setdefault(row[column], f"<{kind}{len(ids)}>")
    handle = manifest["studio"]

    def norm(text: str) -> str:
        text = text.replace(f"/studios/{handle}", "/studios/<handle>").replace(f"`{handle}`", "`<handle>`")
        text = text.replace(f'"handle": "{handle}"', '"handle": "<handle>"')  # the one an import is given
        for old, new in ids.items():
            text = text.replace(old, new)
        return DATES.sub("<date>", text)

    out = {"counts": manifest["counts"]}
    for name in sorted(z.namelist()):
        if name == "manifest.json":
            continue
        data = z.read(name)
        key = norm(name)
        out[key] = norm(data.decode()) if not name.startswith("files/") else data
    return out


def test_export_import_export_is_the_same_apart_from_ids_and_dates(team, tmp_path):
    app, alice, bob = team
    first = export_studio(app.workspace, "team", tmp_path / "team.zip")
    assert first["counts"]["items"] == 3 and first["counts"]["comments"] == 3 and first["counts"]["attachments"] == 1
    with app.store.owner(readonly=True) as tx:
        feed = tx.scalar("SELECT count(*) FROM changes")
    with listening(app) as heard:
        made = import_studio(app.store, tmp_path / "team.zip", "team-copy")
    assert heard == []  # no NOTIFY either (PostgreSQL)
    assert made["matched"] == ["alice", "bob"] and made["placeholders"] == []
    with app.store.owner(readonly=True) as tx:
        assert tx.scalar("SELECT count(*) FROM changes") == feed  # nothing announced
        old_ids = {r["id"] for r in tx.all("SELECT i.id FROM items i JOIN studios s ON s.id = i.studio_id"
                                           " WHERE s.handle = 'team'")}
        new_ids = {r["id"] for r in tx.all("SELECT i.id FROM items i JOIN studios s ON s.id = i.studio_id"
                                           " WHERE s.handle = 'team-copy'")}
    assert len(new_ids) == 3 and not old_ids & new_ids  # new ids
    export_studio(app.workspace, "team-copy", tmp_path / "copy.zip")
    assert canonical(tmp_path / "team.zip") == canonical(tmp_path / "copy.zip")
    # the copy reads as the studio did, its links to its own items
    note = next(u for u in (f"/studios/team-copy/n/{i}" for i in new_ids) if _exists(app, alice, u))
    page = app.workspace.page(bob, note)
    assert "/studios/team-copy/c/" in page.markdown and "/studios/team/" not in page.markdown
    assert "## Files (1)" in page.markdown and page.data["comments"][0]["replies"][0]["body"] == "agreed"
    assert app.workspace.page(alice, "/studios/team-copy").data["studio"]["name"] == "Team"
    decision = next(u for u in (f"/studios/team-copy/d/{i}" for i in new_ids) if _exists(app, alice, u))
    linked = app.workspace.page(bob, decision).data["comments"][0]["body"].split(": ", 1)[1]
    assert linked.startswith(note + "/files/") and app.workspace.file(bob, linked)[1] == b"a,b"


@contextlib.contextmanager
def listening(app):
    """What the change feed's channel carried meanwhile, on PostgreSQL (a list, filled at the end);
    on SQLite the feed is its table alone."""
    heard: list[str] = []
    if not app.store.hosted:
        yield heard
        return
    import psycopg

    with psycopg.connect(app.config.database_url, autocommit=True) as conn:
        conn.execute("LISTEN navmcp_changes")
        yield heard
        heard += [n.payload for n in conn.notifies(timeout=0.5, stop_after=1)]


def _exists(app, user, url) -> bool:
    try:
        app.workspace.page(user, url)
    except Exception:  # noqa: BLE001 - a kind letter that is not this item's
        return False
    return True


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_people_unknown_here_become_named_placeholders(team, tmp_path):
    app, alice, bob = team
    export_studio(app.workspace, "team", tmp_path / "team.zip")
    other = App(Config(home=tmp_path / "other", database_url=None, token=None))
    try:
        add_user(other.store, "alice")
        made = import_studio(other.store, tmp_path / "team.zip", "team")
        assert made["matched"] == ["alice"] and made["placeholders"] == ["bob"]
        with other.store.read() as tx:
            placeholder = tx.one("SELECT * FROM users WHERE handle = 'bob'")
        assert placeholder["name"] == "bob (imported)" and not placeholder["findable"]
        with pytest.raises(ArchiveError, match="exists already"):
            import_studio(other.store, tmp_path / "team.zip", "team")
    finally:
        other.store.close()


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in z.namelist():
            out.writestr(name, change(name, z.read(name)))


def _table_counts(app) -> dict:
    with app.store.owner(readonly=True) as tx:
        return {t: tx.scalar(f"SELECT count(*) FROM {t}") for t, *_ in archive.TABLES} | {
            "users": tx.scalar("SELECT count(*) FROM users")}


def test_a_wrong_checksum_an_unknown_format_or_a_huge_archive_is_refused_before_writing(team, tmp_path, monkeypatch):
    app, alice, bob = team
    export_studio(app.workspace, "team", tmp_path / "team.zip")
    before = _table_counts(app)
    _rewrite(tmp_path / "team.zip", tmp_path / "bad.zip",
             lambda n, d: d.replace(b"Where?", b"Where!") if n == "data/items.jsonl" else d)
    with pytest.raises(ArchiveError, match="SHA-256"):
        import_studio(app.store, tmp_path / "bad.zip", "bad")

    def future(name, data):
        return data.replace(archive.FORMAT.encode(), b"navmcp-export/2") if name == "manifest.json" else data
    _rewrite(tmp_path / "team.zip", tmp_path / "future.zip", future)
    with pytest.raises(ArchiveError, match="navmcp-export/2"):
        import_studio(app.store, tmp_path / "future.zip", "future")
    huge = tmp_path / "huge.zip"
    with huge.open("wb") as f:  # 1 GiB, sparse: refused by its size, never read
        f.truncate(1024 ** 3)
    with pytest.raises(ArchiveError, match="at most 805,306,368 bytes"):
        import_studio(app.store, huge, "huge")
    _rewrite(tmp_path / "team.zip", tmp_path / "bomb.zip", lambda n, d: d + b" " * 200_000 if n == "people.jsonl" else d)
    # what it unpacks to counts too: a small file that unpacks past the limit is refused unread
    monkeypatch.setattr("navmcp.archive.importer.MAX_ARCHIVE_BYTES", (tmp_path / "bomb.zip").stat().st_size + 1)
    with pytest.raises(ArchiveError, match="unpacks to more than"):
        import_studio(app.store, tmp_path / "bomb.zip", "bomb")
    assert _table_counts(app) == before  # nothing written by any of them


def test_an_archive_holds_the_studio_and_never_sessions_tokens_audit_or_inbox(team, tmp_path):
    app, alice, bob = team
    export_studio(app.workspace, "team", tmp_path / "team.zip")
    names = zipfile.ZipFile(tmp_path / "team.zip").namelist()
    tables = {n[5:-6] for n in names if n.startswith("data/")}
    assert tables == {t for t, *_ in archive.TABLES}
    assert not tables & {"audit", "inbox", "mcp_sessions", "web_sessions", "login_links", "oauth_grants",
                         "oauth_refresh_tokens", "oauth_codes", "invitations", "changes", "idempotency_keys"}
    pages = [n for n in names if n.startswith("pages/")]
    assert len(pages) == 3 and all(n.endswith(".md") for n in pages)
    text = zipfile.ZipFile(tmp_path / "team.zip").read(next(p for p in pages if p.startswith("pages/d-"))).decode()
    assert text.startswith("# Where?") and "Lisbon" in text  # the page as it read on export day
    assert "elsewhere" not in json.dumps(canonical(tmp_path / "team.zip"), default=str)  # another studio: not in it


def test_the_commands(team, tmp_path, monkeypatch, capsys):
    app, alice, bob = team
    monkeypatch.setenv("NAVMCP_HOME", str(tmp_path / "home"))
    if app.config.database_url:
        monkeypatch.setenv("NAVMCP_DATABASE_URL", app.config.database_url)
    else:
        monkeypatch.delenv("NAVMCP_DATABASE_URL", raising=False)
    assert main(["export", "team", str(tmp_path / "t.zip")]) == 0
    assert "exported @team" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "t.zip"), "--as", "team-two"]) == 0
    assert "imported @team as /studios/team-two" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "t.zip"), "--as", "team-two"]) == 1
    assert "nothing imported" in capsys.readouterr().err


def test_a_sqlite_studio_moves_into_postgresql_and_reads_back_the_same(tmp_path, pg_database, pg_url):
    embedded = App(Config(home=tmp_path / "home", database_url=None, token=None))
    try:
        make_team(embedded)
        export_studio(embedded.workspace, "team", tmp_path / "team.zip")
    finally:
        embedded.store.close()
    hosted = App(Config(home=tmp_path / "hosted", database_url=pg_database.admin_url, token=None))
    try:
        alice = add_user(hosted.store, "alice")  # bob has no account here: a placeholder
        with listening(hosted) as heard:
            made = import_studio(hosted.store, tmp_path / "team.zip", "moved")
        assert heard == [] and made["matched"] == ["alice"] and made["placeholders"] == ["bob"]
        export_studio(hosted.workspace, "moved", tmp_path / "moved.zip")
        before, after = canonical(tmp_path / "team.zip"), canonical(tmp_path / "moved.zip")
        # the same apart from ids and dates, and the placeholder's name, which says so
        assert after.pop("people.jsonl") == before.pop("people.jsonl").replace('"bob"}', '"bob (imported)"}')
        assert before == after
        # what row-level security shows alice is the whole studio, files too
        home = hosted.workspace.page(alice, "/studios/moved")
        assert home.data["studio"]["name"] == "Team"
        note = next(i["url"] for i in home.data["recent"] if i["kind"] == "note")
        files = hosted.workspace.page(alice, note).data["files"]
        assert hosted.workspace.file(alice, files[0]["url"])[1] == b"a,b"
        found = hosted.workspace.page(alice, "/studios/moved/search?q=edited").data["results"]  # PostgreSQL's own index
        assert [r["url"] for r in found] == [note]
    finally:
        hosted.store.close()


def test_on_postgresql_an_import_through_the_app_roles_url_is_refused_with_nothing_written(tmp_path, pg_database,
                                                                                           pg_url):
    owner = App(Config(home=tmp_path / "home", database_url=pg_database.admin_url, token=None))
    try:
        make_team(owner)
        export_studio(owner.workspace, "team", tmp_path / "team.zip")
        before = _table_counts(owner)
    finally:
        owner.store.close()
    bound = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))  # navmcp_app
    try:
        with pytest.raises(NavError, match="needs the database owner.*connects as navmcp_app"):
            import_studio(bound.store, tmp_path / "team.zip", "copy")
        with pytest.raises(NavError, match="needs the database owner"):
            export_studio(bound.workspace, "team", tmp_path / "again.zip")
        assert not (tmp_path / "again.zip").exists()
    finally:
        bound.store.close()
    owner = App(Config(home=tmp_path / "home", database_url=pg_database.admin_url, token=None))
    try:
        assert _table_counts(owner) == before
    finally:
        owner.store.close()


def test_an_admin_exports_under_row_level_security_what_the_owner_exports_and_a_member_nothing(team, tmp_path):
    app, alice, bob = team
    export_studio(app.workspace, "team", tmp_path / "owner.zip")
    export_studio(app.workspace, "team", tmp_path / "alice.zip", by=alice)  # alice made it: its admin
    with zipfile.ZipFile(tmp_path / "owner.zip") as a, zipfile.ZipFile(tmp_path / "alice.zip") as b:
        data = [n for n in a.namelist() if not n.startswith("pages/") and n != "manifest.json"]
        assert data == [n for n in b.namelist() if not n.startswith("pages/") and n != "manifest.json"]
        assert all(a.read(n) == b.read(n) for n in data)  # every row and file, people included
    with pytest.raises(ArchiveError, match="no studio @team"):  # a member, not an admin
        export_studio(app.workspace, "team", tmp_path / "bob.zip", by=bob)
    with pytest.raises(ArchiveError, match="no studio @elsewhere"):  # not a member
        export_studio(app.workspace, "elsewhere", tmp_path / "alice2.zip", by=alice)
    assert not (tmp_path / "bob.zip").exists() and not (tmp_path / "alice2.zip").exists()


def test_files_go_into_and_out_of_an_archive_one_at_a_time_not_all_at_once(team, tmp_path):
    """Memory holds one file at a time while a studio is exported or imported, not all of them (a
    studio holds up to 500 MiB): the Python memory traced at its peak stays under a third of the
    files' bytes."""
    app, alice, bob = team
    note = app.workspace.page(alice, "/studios/team").data["recent"][-1]["url"]
    size, count = 900_000, 16
    for n in range(count):  # text that deflate cannot shrink much: ~5.5 bits a character
        data = base64.b64encode(secrets.token_bytes(size * 3 // 4))[:size]
        app.workspace.execute(alice, note, "attach", {"filename": f"f{n}.txt", "content_type": "text/plain",
                                                      "data": base64.b64encode(data).decode()})
    tracemalloc.start()
    try:
        manifest = export_studio(app.workspace, "team", tmp_path / "team.zip")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert manifest["counts"]["attachments"] == count + 1
    assert peak < size * count / 3, f"export: {peak:,} bytes traced at the peak for {size * count:,} bytes of files"
    tracemalloc.start()  # and back: checked, then written, a file at a time
    try:
        made = import_studio(app.store, tmp_path / "team.zip", "copy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert made["counts"]["attachments"] == count + 1
    assert peak < size * count / 3, f"import: {peak:,} bytes traced at the peak for {size * count:,} bytes of files"
    with app.store.owner(readonly=True) as tx:
        data = {h: sorted(bytes(r["data"]) for r in tx.all("SELECT a.data FROM attachments a JOIN studios s"
                                                             " ON s.id = a.studio_id WHERE s.handle = ?", (h,)))
                for h in ("team", "copy")}
    assert data["copy"] == data["team"] and len(data["team"]) == count + 1


def test_a_failed_export_leaves_no_file(team, tmp_path):
    app, alice, bob = team
    with pytest.raises(ArchiveError, match="no studio @nowhere"):
        export_studio(app.workspace, "nowhere", tmp_path / "x.zip")
    assert list(tmp_path.glob("x.zip*")) == []


@contextlib.contextmanager
def supabase_accounts(db):
    """Supabase Auth's `auth.users` (the columns navmcp reads, as a Supabase project has them) in
    the test database, for as long as the test runs."""
    import psycopg

    with psycopg.connect(db.admin_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE auth.users (id uuid PRIMARY KEY, email varchar(255))")
    try:
        yield
    finally:
        with psycopg.connect(db.admin_url, autocommit=True) as conn:
            conn.execute("DROP TABLE auth.users")


def test_on_supabase_people_are_found_by_their_verified_email_and_a_namesake_is_not_them(tmp_path, pg_database,
                                                                                          pg_url):
    """On PostgreSQL with Supabase Auth, the operator's export carries the addresses Supabase
    verified, a studio admin's never; an import finds each person by address first (bob, who is
    @robert here), by handle only if the handle's holder has no other address (dave, made by
    `navmcp user add`), and makes a placeholder of carol, whose handle here is someone else's."""
    from test_supabase_auth import SECRET, supabase_token

    with supabase_accounts(pg_database):
        app = App(Config(home=tmp_path / "home", database_url=pg_database.admin_url, token=None,
                         supabase_jwt_secret=SECRET))
        try:
            people = {}
            for handle in ("alice", "bob", "carol"):  # signed in through Supabase: their ids are its uuids
                sub = str(uuid.uuid4())
                people[handle] = app.authenticate(supabase_token(SECRET, sub=sub, email=f"{handle}@example.com",
                                                                 user_metadata={"user_name": handle}))
                with app.store.owner() as tx:
                    tx.execute("INSERT INTO auth.users (id, email) VALUES (?, ?)", (sub, f"{handle.title()}@Example.com"))
            dave = add_user(app.store, "dave")  # an operator's account: no address
            ws, alice = app.workspace, people["alice"]
            ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
            for handle in ("bob", "carol", "dave"):
                with app.store.owner() as tx:  # not findable until they choose: the operator adds them
                    tx.execute("INSERT INTO memberships (studio_id, user_id, role, created_at) SELECT id, ?, 'member', "
                               "created_at FROM studios WHERE handle = 'team'", (people.get(handle, dave)["id"],))
            note = ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "the plan"}).url
            for person in (people["bob"], people["carol"], dave):
                ws.execute(person, note, "add_comment", {"body": f"{person['handle']} agrees"})
            export_studio(ws, "team", tmp_path / "operator.zip")
            export_studio(ws, "team", tmp_path / "admin.zip", by=alice)
            listed = {p["handle"]: p.get("email") for p in _people(tmp_path / "operator.zip")}
            assert listed == {"alice": "alice@example.com", "bob": "bob@example.com", "carol": "carol@example.com",
                              "dave": None}
            assert all("email" not in p for p in _people(tmp_path / "admin.zip"))  # an admin sees no address
            # Here and now: bob has become @robert; the carol here is another person, with another address.
            with app.store.owner() as tx:
                tx.execute("UPDATE users SET handle = 'robert' WHERE id = ?", (people["bob"]["id"],))
                tx.execute("UPDATE auth.users SET email = 'carol@elsewhere.example' WHERE id::text = ?",
                           (people["carol"]["id"],))
            made = import_studio(app.store, tmp_path / "operator.zip", "moved")
            assert made["by_email"] == ["alice", "bob"] and made["matched"] == ["alice", "bob", "dave"]
            assert made["placeholders"] == ["carol-1"]
            with app.store.owner(readonly=True) as tx:
                wrote = dict(tx.tuples("SELECT c.body, u.handle FROM comments c JOIN users u ON u.id = c.created_by"
                                       " JOIN studios s ON s.id = c.studio_id WHERE s.handle = 'moved'"))
            assert wrote == {"bob agrees": "robert", "carol agrees": "carol-1", "dave agrees": "dave"}
            # the admin's archive, without addresses: by handle, as anywhere else
            made = import_studio(app.store, tmp_path / "admin.zip", "moved-again")
            assert made["by_email"] == [] and made["matched"] == ["alice", "carol", "dave"]
            assert made["placeholders"] == ["bob"]
        finally:
            app.store.close()


def _people(path) -> list[dict]:
    return [json.loads(line) for line in zipfile.ZipFile(path).read("people.jsonl").decode().splitlines()]


def test_a_deleted_item_and_everything_of_it_stay_out_of_the_archive(team, tmp_path):
    """An item deleted and not yet purged is not the studio's: its row, comments, revisions, files and
    the links to it stay out, and the archive still imports (its deleter is no reference to map)."""
    app, alice, bob = team
    ws = app.workspace
    gone = ws.execute(bob, "/studios/team", "create_note", {"title": "Draft", "body": "scratch"}).url
    ws.execute(alice, gone, "add_comment", {"body": "hm"})
    ws.execute(bob, gone, "edit_note", {"body": "scratch, edited"})
    ws.execute(bob, gone, "attach", {"filename": "d.txt", "content_type": "text/plain", "data": "ZA=="})
    ws.execute(alice, "/studios/team", "create_note", {"title": "Pointer", "body": f"see {gone}"})
    before = export_studio(app.workspace, "team", tmp_path / "before.zip")["counts"]
    ws.execute(alice, gone, "delete_item", {"confirm": "Draft"})
    counts = export_studio(app.workspace, "team", tmp_path / "team.zip")["counts"]
    for table, less in (("items", 1), ("comments", 1), ("revisions", 1), ("attachments", 1), ("links", 1)):
        assert counts[table] == before[table] - less, table
    z = zipfile.ZipFile(tmp_path / "team.zip")
    text = "".join(z.read(n).decode(errors="replace") for n in z.namelist())
    assert "scratch" not in text and "d.txt" not in text
    items = z.read("data/items.jsonl").decode()
    assert "deleted_at" not in items and "deleted_by" not in items
    import_studio(app.store, tmp_path / "team.zip", "team-copy")
    assert ws.page(alice, "/studios/team-copy").data["studio"]["name"] == "Team"
