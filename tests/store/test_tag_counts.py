"""A tag page's count comes from a row the stores keep per studio and tag by trigger (migration
0202): it must equal the count of the tag's rows after tags are given, changed and taken away,
items deleted with their studio, on both stores."""

from __future__ import annotations

from navmcp.identity import add_user


def _check(app, user, sid: str) -> None:
    with app.store.read(user_id=user["id"]) as tx:
        exact = {(r["tag"], r["n"]) for r in tx.all(
            "SELECT tag, count(*) AS n FROM item_tags WHERE studio_id = ? GROUP BY tag", (sid,))}
        kept = {(r["tag"], r["n"]) for r in tx.all("SELECT tag, n FROM tag_counts WHERE studio_id = ? AND n > 0", (sid,))}
        assert kept == exact
        assert tx.scalar("SELECT count(*) FROM tag_counts WHERE studio_id = ? AND n < 0", (sid,)) == 0


def test_the_tag_counts_follow_every_write(any_app):
    ws = any_app.workspace
    alice = add_user(any_app.store, "alice")
    for handle in ("one", "two"):
        ws.execute(alice, "/", "create_studio", {"handle": handle, "name": handle})
    with any_app.store.read(user_id=alice["id"]) as tx:
        one, two = (tx.scalar("SELECT id FROM studios WHERE handle = ?", (h,)) for h in ("one", "two"))
    a = ws.execute(alice, "/studios/one", "create_note", {"title": "A", "body": "x", "tags": ["q1", "ops"]}).url
    ws.execute(alice, "/studios/one", "create_note", {"title": "B", "body": "x", "tags": ["q1"]})
    ws.execute(alice, "/studios/two", "create_note", {"title": "C", "body": "x", "tags": ["q1"]})
    ws.execute(alice, "/studios/one", "create_decision", {"question": "D?", "tags": ["ops", "q2"]})
    _check(any_app, alice, one)
    _check(any_app, alice, two)
    page = ws.page(alice, "/studios/one/tags/q1")
    assert page.data["pager"]["total"] == 2 and len(page.data["items"]) == 2
    assert ws.page(alice, "/studios/two/tags/q1").data["pager"]["total"] == 1  # each studio its own
    ws.execute(alice, a, "edit_note", {"tags": ["q2"]})  # q1 and ops taken away, q2 given
    _check(any_app, alice, one)
    assert ws.page(alice, "/studios/one/tags/q1").data["pager"]["total"] == 1
    assert ws.page(alice, "/studios/one/tags/ops").data["pager"]["total"] == 1
    assert ws.page(alice, "/studios/one/tags/q2").data["pager"]["total"] == 2
    assert ws.page(alice, "/studios/one/tags/none").data["pager"]["total"] == 0
    ws.execute(alice, "/studios/two/members", "delete_studio", {"confirm": "two"})
    with any_app.store.read(user_id=alice["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM tag_counts WHERE studio_id = ?", (two,)) == 0
    _check(any_app, alice, one)
