"""Deleted items (navmcp/content/deletion.py, navmcp/actions/deletion.py, pages/deleted.py), on both stores:
`delete_item` by the creator or an admin takes the item out of every list, count and search at
once; its page and the studio's Deleted list stay for those who may `restore_item` it for 30 days;
then the purge leaves no row of it in any table. The rules each role is offered are exactly what
the executor accepts; on PostgreSQL the store's own rules hold against plain SQL."""

from __future__ import annotations

import time as real_time

import pytest

from mcp_rpc import Rpc
from nav_helpers import add_member
from navmcp import clock
from navmcp.content import deletion
from navmcp.errors import ActionUnavailable, InvalidActionParams, NotFound
from navmcp.identity import mint_token

STUDIO = "/studios/team"
DELETED = f"{STUDIO}/deleted"
PROBE = {"__probe__": 1}  # refused by every params model: finds what the rules allow without writing
MINE = {"delete_item", "restore_item"}


@pytest.fixture
def team(any_app, new_user):
    """alice (admin), bob and carol (members), dave (a former member); bob wrote one of each."""
    ws = any_app.workspace
    users = {h: new_user(h)[0] for h in ("alice", "bob", "carol", "dave")}
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for h in ("bob", "carol", "dave"):
        add_member(ws, alice, f"{STUDIO}/members", {"handle": h})
    urls = {
        "note": ws.execute(bob, STUDIO, "create_note", {"title": "Zebra plan", "body": "stripes\nfor all",
                                                        "tags": ["zoo"]}).url,
        "decision": ws.execute(bob, STUDIO, "create_decision", {"question": "Zebra colour?", "options": ["Okapi"],
                                                                "deadline": "2100-01-01"}).url,
        "commitment": ws.execute(bob, STUDIO, "create_commitment", {"title": "Zebra run", "critical_mass": 3,
                                                                    "tags": ["zoo"]}).url,
    }
    ws.execute(carol, urls["note"], "add_comment", {"body": "quagga remark @bob"})
    ws.execute(alice, f"{STUDIO}/members", "remove_member", {"handle": "dave"})
    return any_app, users, urls


def _accepted(ws, user, url, names=MINE) -> set[str]:
    found = set()
    for name in names:
        try:
            ws.execute(user, url, name, PROBE)
        except InvalidActionParams:
            found.add(name)
        except ActionUnavailable:
            pass
    return found


def _listed(ws, user, url) -> set[str]:
    return {a.name for a in ws.page(user, url).actions}


def test_each_role_is_offered_exactly_the_deletes_and_restores_it_may_make(team):
    app, u, urls = team
    ws = app.workspace
    for kind, url in urls.items():
        for who, may in (("bob", {"delete_item"}), ("alice", {"delete_item"}), ("carol", set())):
            assert _listed(ws, u[who], url) & MINE == may == _accepted(ws, u[who], url), (who, kind)
        with pytest.raises(NotFound):
            ws.execute(u["dave"], url, "delete_item", {"confirm": "Zebra plan"})
    with pytest.raises(ActionUnavailable, match="only its creator or a studio admin"):
        ws.execute(u["carol"], urls["note"], "delete_item", {"confirm": "Zebra plan"})
    with pytest.raises(InvalidActionParams, match="title"):  # it must be named
        ws.execute(u["bob"], urls["note"], "delete_item", {"confirm": "some other"})
    for kind, url in urls.items():  # by the title (spaces and case aside) or the id
        confirm = url.rsplit("/", 1)[1] if kind == "decision" else ws.page(u["bob"], url).title.upper() + " "
        said = ws.execute(u["alice"] if kind == "commitment" else u["bob"], url, "delete_item", {"confirm": confirm})
        assert said.url == url and said.actions == ["restore_item"], said
    for kind, url in urls.items():
        # the creator and the admins see it, deleted, with restore_item alone; nobody else sees it
        for who in ("bob", "alice"):
            page = ws.page(u[who], url)
            assert {a.name for a in page.actions} == {"restore_item"} == _accepted(ws, u[who], url, {
                "restore_item", "delete_item", "add_comment", "edit_" + kind}), (who, kind)
            assert page.data["deleted"]["by"] == ("alice" if kind == "commitment" else "bob")
            assert "[Deleted by @" in page.markdown and "restore_item brings it back until" in page.markdown
        with pytest.raises(ActionUnavailable, match="is deleted"):
            ws.execute(u["bob"], url, "add_comment", {"body": "still here?"})
        for who in ("carol", "dave"):
            with pytest.raises(NotFound) as seen:
                ws.page(u[who], url)
            assert "Zebra" not in seen.value.message
            with pytest.raises(NotFound):
                ws.execute(u[who], url, "restore_item", {})
    # the Deleted list: an admin's has all three, bob's his two, carol's none (and no restore_item)
    listing = {who: [r["title"] for r in ws.page(u[who], DELETED).data["items"]] for who in ("alice", "bob", "carol")}
    assert sorted(listing["alice"]) == ["Zebra colour?", "Zebra plan", "Zebra run"]
    assert sorted(listing["bob"]) == ["Zebra colour?", "Zebra plan", "Zebra run"]  # he created all three
    assert listing["carol"] == [] and _listed(ws, u["carol"], DELETED) & MINE == set()
    note_id = urls["note"].rsplit("/", 1)[1]
    with pytest.raises(ActionUnavailable, match="nothing here is yours"):
        ws.execute(u["carol"], DELETED, "restore_item", {"item": note_id})
    with pytest.raises(NotFound):
        ws.page(u["dave"], DELETED)
    assert _listed(ws, u["bob"], DELETED) & MINE == {"restore_item"} == _accepted(ws, u["bob"], DELETED)
    with pytest.raises(InvalidActionParams, match="no deleted item"):
        ws.execute(u["bob"], DELETED, "restore_item", {"item": "nope"})
    said = ws.execute(u["bob"], DELETED, "restore_item", {"item": note_id})
    assert said.url == urls["note"] and "Restored the note" in said.message
    assert ws.page(u["carol"], urls["note"]).data["deleted"] is None  # back for everyone
    ws.execute(u["alice"], urls["decision"], "restore_item", {})  # an admin, from the item's page
    with pytest.raises(ActionUnavailable, match="not deleted"):
        ws.execute(u["alice"], urls["decision"], "restore_item", {})
    assert [r["title"] for r in ws.page(u["alice"], DELETED).data["items"]] == ["Zebra run"]


def _completed(app, user, kind: str, name: str, value: str) -> list[str]:
    rpc = Rpc(app, mint_token(app.secret, user["id"]))
    ref = {"type": "ref/resource", "uri": f"navmcp:///studios/{{studio}}/{kind}/{{{name}}}"}
    return rpc.call("completion/complete", ref=ref, argument={"name": name, "value": value},
                    context={"arguments": {"studio": "team"}})["completion"]["values"]


def _everything_bob_and_carol_see(app, u, urls) -> dict[str, object]:
    """Every place an item shows up, as seen by carol (a member) and bob (its creator)."""
    ws, carol, bob = app.workspace, u["carol"], u["bob"]
    studio = ws.page(carol, STUDIO).data
    cycle = ws.page(carol, f"{STUDIO}/cycles/today").data
    home = ws.page(carol, "/").data
    return {
        "feed": sorted(r["title"] for r in studio["recent"] + studio["pinned"]),
        "counts": studio["counts"],
        "search": sorted(r["title"] for r in ws.page(carol, f"{STUDIO}/search?q=zebra").data["results"]),
        "search_comment": len(ws.page(carol, "/search?q=quagga").data["results"]),
        "search_option": len(ws.page(carol, f"{STUDIO}/search?q=okapi").data["results"]),
        "search_tag": len(ws.page(carol, f"{STUDIO}/search?q=tag:zoo").data["results"]),
        "tag": sorted(r["title"] for r in ws.page(carol, f"{STUDIO}/tags/zoo").data["items"]),
        "tag_count": ws.page(carol, f"{STUDIO}/tags/zoo").data["pager"]["total"],
        "cycle": sorted(r["title"] for r in cycle["created"]), "activity": cycle["activity"],
        "awaiting": (home["awaiting_count"], [r["title"] for r in home["awaiting_votes"]]),
        "near": (home["near_count"], [r["title"] for r in home["near_mass"]]),
        "awaiting_list": len(ws.page(carol, "/awaiting").data["rows"]),
        "inbox": (ws.page(bob, "/").data["unread"], sorted(e["url"] for e in ws.page(bob, "/inbox").data["entries"])),
        "links": ws.page(carol, urls["linker"]).data["links_to"],
        "complete": (_completed(app, carol, "d", "item", "zebra"), _completed(app, carol, "tags", "tag", "z")),
        "resources": sorted(r["uri"] for r in Rpc(app, mint_token(app.secret, carol["id"])).call(
            "resources/list")["resources"]),
    }


def test_a_deleted_item_leaves_every_list_count_and_search_at_once_and_comes_back(team):
    app, u, urls = team
    ws, bob, carol = app.workspace, u["bob"], u["carol"]
    ws.execute(carol, urls["decision"], "vote", {"votes": [{"option": "Okapi", "accept": True}]})
    urls["linker"] = ws.execute(carol, STUDIO, "create_note", {"title": "Index", "body": urls["note"]}).url
    u_alice = u["alice"]
    ws.execute(u_alice, urls["decision"], "vote", {"votes": [{"option": "Okapi", "accept": True}]})
    before = _everything_bob_and_carol_see(app, u, urls)
    assert before["feed"] == ["Index", "Zebra colour?", "Zebra plan", "Zebra run"]
    assert before["counts"]["note"] == 2 and before["search"] == ["Zebra colour?", "Zebra plan", "Zebra run"]
    assert before["search_comment"] == before["search_option"] == 1 and before["search_tag"] == 2
    assert before["tag"] == ["Zebra plan", "Zebra run"] and before["tag_count"] == 2 and before["near"][0] == 1
    # the invitation he accepted (read); carol's comment mentioning him (unread)
    assert before["inbox"] == (1, ["/inbox", urls["note"]])
    assert before["activity"]["votes"] == 2 and before["activity"]["comments"] == 1 and before["activity"]["created"] == 4
    assert [r["title"] for r in before["links"]] == ["Zebra plan"]
    assert before["complete"][0] and before["complete"][1] == ["zoo"]
    assert any(urls["commitment"].rsplit("/", 1)[1] in r for r in before["resources"])  # near mass
    for kind in ("note", "decision", "commitment"):
        ws.execute(bob, urls[kind], "delete_item", {"confirm": urls[kind].rsplit("/", 1)[1]})
    after = _everything_bob_and_carol_see(app, u, urls)
    assert after["feed"] == ["Index"] and after["counts"] == {"note": 1, "decision": 0, "commitment": 0,
                                                              "members": 3}
    assert after["search"] == [] and after["search_comment"] == after["search_option"] == after["search_tag"] == 0
    assert after["tag"] == [] and after["tag_count"] == 0 and after["cycle"] == ["Index"]
    # votes on a deleted decision count nowhere, nor its comments, nor the items in the created count
    assert after["activity"] == {"created": 1, "closed": 0, "comments": 0, "votes": 0, "joins": 0}
    assert after["awaiting"] == (0, []) and after["near"] == (0, []) and after["awaiting_list"] == 0
    assert after["inbox"] == (0, ["/inbox"]) and after["links"] == []
    assert ws.page(carol, urls["linker"]).data["links_more"] == {"to": 0, "from": 0}
    assert after["complete"] == ([], [])
    assert not any(urls[k].rsplit("/", 1)[1] in " ".join(after["resources"]) for k in ("decision", "commitment"))
    for kind in ("note", "decision", "commitment"):
        ws.execute(bob, DELETED, "restore_item", {"item": urls[kind].rsplit("/", 1)[1]})
    assert _everything_bob_and_carol_see(app, u, urls) == before


def _shifted(monkeypatch, seconds: float) -> None:
    """The clock module's time moved by `seconds` (navmcp.clock reads `time` for every stamp)."""

    class Shifted:
        @staticmethod
        def time() -> float:
            return real_time.time() + seconds

        @staticmethod
        def time_ns() -> int:
            return real_time.time_ns() + int(seconds * 1e9)

        gmtime = staticmethod(real_time.gmtime)
        strftime = staticmethod(real_time.strftime)

    monkeypatch.setattr(clock, "time", Shifted)


def _rows_naming(app, pg_database, ids: set[str]) -> dict[str, int]:
    """Every table's rows that name one of `ids` in any column, by table (the audit aside: it keeps
    who deleted and restored what, by URL)."""
    found: dict[str, int] = {}
    if app.store.hosted:
        import psycopg

        with psycopg.connect(pg_database.admin_url) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                " AND table_type = 'BASE TABLE'")]
            for table in tables:
                for row in conn.execute(f'SELECT * FROM public."{table}"'):
                    if any(i in repr(row) for i in ids):
                        found[table] = found.get(table, 0) + 1
    else:
        import sqlite3

        conn = sqlite3.connect(app.config.home / "navmcp.db")
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                if any(i in repr(row) for i in ids):
                    found[table] = found.get(table, 0) + 1
        conn.close()
    found.pop("audit", None)
    return found


def test_after_30_days_the_purge_leaves_no_row_of_the_item_in_any_table(team, monkeypatch, request):
    app, u, urls = team
    ws, bob, carol, alice = app.workspace, u["bob"], u["carol"], u["alice"]
    pg = request.getfixturevalue("pg_database") if app.store.hosted else None
    note, decision = urls["note"], urls["decision"]
    ws.execute(carol, decision, "vote", {"votes": [{"option": "Okapi", "accept": True}]})
    ws.execute(carol, decision, "add_comment", {"body": "okapi thoughts"})
    ws.execute(bob, note, "edit_note", {"body": f"stripes, edited: see {decision}"})  # a link, a revision
    ws.execute(carol, note, "confirm_read", {})
    ws.execute(bob, note, "attach", {"filename": "a.txt", "content_type": "text/plain", "data": "aGk="})
    ws.execute(carol, urls["commitment"], "join_commitment", {})
    linker = ws.execute(carol, STUDIO, "create_note", {"title": "Index", "body": "plain"}).url
    ws.execute(carol, linker, "add_comment", {"body": f"see {urls['commitment']}"})  # links to what stays
    comments = {c["id"] for c in ws.page(bob, note).data["comments"]} | {
        c["id"] for c in ws.page(bob, decision).data["comments"]}
    options = {o["id"] for o in ws.page(bob, decision).data["options"]}
    ids = {note.rsplit("/", 1)[1], decision.rsplit("/", 1)[1]} | comments | options
    assert _rows_naming(app, pg, ids)  # there is plenty to purge
    _shifted(monkeypatch, -31 * 86400)  # deleted 31 days ago
    for url in (note, decision):
        ws.execute(bob, url, "delete_item", {"confirm": url.rsplit("/", 1)[1]})
    _shifted(monkeypatch, -29 * 86400)  # 29 days ago: the first two are not purged yet
    commitment = urls["commitment"]
    ws.execute(alice, commitment, "delete_item", {"confirm": "Zebra run"})  # a delete purges: nothing yet
    assert _rows_naming(app, pg, ids)
    monkeypatch.undo()  # today: past restoring, before any purge
    for url in (note, decision):
        for who in ("bob", "alice"):
            with pytest.raises(NotFound):
                ws.page(u[who], url)
    assert [r["title"] for r in ws.page(alice, DELETED).data["items"]] == ["Zebra run"]
    with app.store.write(user_id=bob["id"]) as tx:
        assert deletion.purge(tx) == 2
    assert _rows_naming(app, pg, ids) == {}
    # what was not deleted stays whole: the commitment still restorable, the note linking them
    ws.execute(bob, DELETED, "restore_item", {"item": commitment.rsplit("/", 1)[1]})
    assert ws.page(carol, commitment).data["item"]["participant_count"] == 1
    assert [r["title"] for r in ws.page(carol, linker).data["links_to"]] == ["Zebra run"]
    assert ws.page(carol, STUDIO).data["counts"]["note"] == 1 and ws.page(carol, STUDIO).data["counts"]["decision"] == 0
    assert ws.page(carol, f"{STUDIO}/search?q=okapi").data["results"] == []


def test_the_audit_keeps_who_deleted_and_restored_never_the_text(team):
    app, u, urls = team
    ws, alice = app.workspace, u["alice"]
    ws.execute(u["bob"], urls["note"], "delete_item", {"confirm": "Zebra plan"})
    ws.execute(alice, urls["note"], "restore_item", {})
    entries = ws.page(alice, f"{STUDIO}/audit").data["entries"]
    mine = [(e["handle"], e["action"], e["url"], e["param_names"]) for e in entries
            if e["action"] in MINE]
    assert mine == [("alice", "restore_item", urls["note"], "[]"), ("bob", "delete_item", urls["note"], '["confirm"]')]
    assert not any("Zebra" in repr(e) for e in entries)


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_lets_only_the_creator_or_an_admin_delete_or_restore(team, pg_database):
    """On PostgreSQL, by SQL as the app role: a member deletes or restores nobody's item; the creator
    deletes theirs in their own name only; a deleted item changes no more, but for its restore."""
    import psycopg

    app, u, urls = team
    note = urls["note"].rsplit("/", 1)[1]

    def as_(user, sql, params=()):
        with app.store.write(user_id=u[user]["id"]) as tx:
            return tx.execute(sql, params)

    def owner(sql, params=()):
        with psycopg.connect(pg_database.admin_url) as conn:
            return conn.execute(sql, params).fetchall()

    delete = "UPDATE items SET deleted_at = '2100', deleted_by = ? WHERE id = ?"
    assert as_("carol", delete, (u["carol"]["id"], note)) == 0  # not hers
    assert as_("bob", delete, (u["alice"]["id"], note)) == 0  # in another's name
    assert as_("bob", "UPDATE items SET deleted_at = '2100' WHERE id = ?", (note,)) == 0  # in nobody's
    assert as_("bob", delete, (u["bob"]["id"], note)) == 1
    assert owner("SELECT n FROM studio_item_counts WHERE kind = 'note'") == [(0,)]
    restore = "UPDATE items SET deleted_at = NULL, deleted_by = NULL WHERE id = ?"
    assert as_("carol", restore, (note,)) == 0
    assert as_("bob", "UPDATE items SET title = 'defaced', revision = revision + 1 WHERE id = ?", (note,)) == 0
    assert as_("bob", "UPDATE items SET deleted_by = ? WHERE id = ?", (u["alice"]["id"], note)) == 0
    assert as_("alice", restore, (note,)) == 1
    assert owner("SELECT title, deleted_at FROM items WHERE id = %s", (note,)) == [("Zebra plan", None)]
    assert owner("SELECT n FROM studio_item_counts WHERE kind = 'note'") == [(1,)]
    # the purge is the owner's, and judges by age alone: nothing deleted today goes, whatever is asked
    assert as_("bob", delete, (u["bob"]["id"], note)) == 1
    with app.store.write(user_id=u["carol"]["id"]) as tx:
        assert tx.purge_deleted("9999", 100) == 0
    assert owner("SELECT count(*) FROM items WHERE id = %s", (note,)) == [(1,)]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        as_("carol", "DELETE FROM changes")


def test_the_web_pages_show_the_deletion_and_the_restore_forms(team):
    from navmcp.web.html import render_page

    app, u, urls = team
    ws, bob = app.workspace, u["bob"]
    page = render_page(ws.page(bob, urls["note"]), csrf="x", alternates={})
    assert 'data-action="delete_item"' in page or "dlg-delete_item" in page
    ws.execute(bob, urls["note"], "delete_item", {"confirm": "Zebra plan"})
    page = render_page(ws.page(bob, urls["note"]), csrf="x", alternates={})
    assert 'class="alert deleted"' in page and "deleted by @bob" in page and "dlg-add_comment" not in page
    listing = render_page(ws.page(bob, DELETED), csrf="x", alternates={})
    note_id = urls["note"].rsplit("/", 1)[1]
    assert f'<input type="hidden" name="item" value="{note_id}"><button type="submit" class="linkish">Restore</button>' \
        in listing
    assert f'href="{urls["note"]}">Zebra plan</a>' in listing
    theirs = render_page(ws.page(u["carol"], DELETED), csrf="x", alternates={})
    assert "Nothing deleted here is yours to restore." in theirs and "Zebra" not in theirs
