"""Filters alone (`type:decision status:open tag:planning`) state an exact count, kept per studio,
tag, type, decision kind and state by triggers (migrations 0240 / 20261130000240), and list the
newest items first from a walk that stops at the page's end. Both must agree with the items as
they are after every kind of write: created, tagged, retagged, closed and reopened, a deadline set
in the past or the future or taken away, deleted, restored, purged, and a studio deleted. On both
stores, for every combination of the filters, in one studio and across two."""

from __future__ import annotations

import contextlib
import itertools
from datetime import UTC, datetime, timedelta

from navmcp.clock import now, stamp
from navmcp.content import search
from navmcp.identity import add_user, new_id

KINDS = (None, "note", "decision", "commitment")
STATUSES = (None, "open", "closed")
TAGS = (None, "a", "b")


def _expected(tx, studio_ids, query, at):
    """The items the filters select, newest first, read from the rows themselves."""
    marks = ", ".join("?" * len(studio_ids))
    tags: dict[str, set[str]] = {}
    for r in tx.all("SELECT item_id, tag FROM item_tags", ()):
        tags.setdefault(r["item_id"], set()).add(r["tag"])
    found = []
    for i in tx.all(f"SELECT * FROM items WHERE studio_id IN ({marks}) AND deleted_at IS NULL", tuple(studio_ids)):
        is_open = i["closed_at"] is None and (i["deadline"] is None or i["deadline"] > at)
        if ((query.kind is None or i["kind"] == query.kind)
                and (query.status is None or (query.status == "open") == is_open)
                and (query.tag is None or query.tag in tags.get(i["id"], ()))
                and (query.decision_kind is None
                     or (i["kind"] == "decision" and (i["decision_kind"] or "acceptance") == query.decision_kind))):
            found.append(i)
    found.sort(key=lambda i: i["id"])
    found.sort(key=lambda i: i["updated_at"], reverse=True)
    return [i["id"] for i in found]


def _check(app, user, studio_sets):
    at = now()
    with app.store.read(user_id=user["id"]) as tx:
        for studio_ids in studio_sets:
            for kind, status, tag in itertools.product(KINDS, STATUSES, TAGS):
                words = " ".join(f"{k}:{v}" for k, v in (("type", kind), ("status", status), ("tag", tag)) if v)
                for text in filter(None, (words, "kind:consent " + words if kind in (None, "decision") else "")):
                    query = search.parse(text)
                    want = _expected(tx, studio_ids, query, at)
                    for limit, offset in ((5, 0), (5, 5)):
                        rows, total, windowed = tx.search(studio_ids, query, at, limit, offset)
                        assert (total, windowed) == (len(want), False), (text, studio_ids)
                        assert [r["item_id"] for r in rows] == want[offset:offset + limit], (text, studio_ids)
                        assert all(r["tier"] == 0 and r["options"] == r["comments"] == 0 for r in rows)


@contextlib.contextmanager
def _rows_written(app, user, request):
    """A transaction that writes the rows themselves; on PostgreSQL as the owner (the app's role
    may not set a closing time or a deletion by hand), so the triggers are what is under test."""
    if not app.store.hosted:
        with app.store.write(user_id=user["id"]) as tx:
            yield tx.execute
        return
    import psycopg

    with psycopg.connect(request.getfixturevalue("pg_database").admin_url) as conn:
        yield lambda sql, params=(): conn.execute(sql.replace("?", "%s"), params).rowcount


def test_filters_alone_count_and_list_what_the_rows_say(any_app, request):
    ws = any_app.workspace
    alice = add_user(any_app.store, "alice")
    for handle in ("one", "two"):
        ws.execute(alice, "/", "create_studio", {"handle": handle, "name": handle})
    start = datetime.now(UTC) - timedelta(hours=1)
    past, future = stamp(start - timedelta(days=1)), stamp(datetime.now(UTC) + timedelta(days=30))
    ids: list[str] = []
    with any_app.store.read(user_id=alice["id"]) as tx:
        one, two = (tx.scalar("SELECT id FROM studios WHERE handle = ?", (h,)) for h in ("one", "two"))
    with _rows_written(any_app, alice, request) as execute:
        for n in range(36):
            kind = ("note", "decision", "commitment")[n % 3]
            at = stamp(start + timedelta(seconds=n // 2))  # pairs share an instant: ties go by id
            row = {"id": new_id(), "studio_id": (one, two)[n % 4 == 3], "kind": kind, "title": f"t{n}", "body": "x",
                   "created_by": alice["id"], "created_at": at, "updated_at": at,
                   "deadline": (None, past, future)[n % 5 % 3] if kind != "note" else None,
                   "closed_at": at if n % 7 == 0 and kind != "note" else None,
                   "decision_kind": "consent" if kind == "decision" and n % 2 else None,
                   "critical_mass": 2 if kind == "commitment" else None}
            execute(f"INSERT INTO items ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
            for tag in ("a", "b")[: n % 3]:
                execute("INSERT INTO item_tags (item_id, tag) VALUES (?, ?)", (row["id"], tag))
            ids.append(row["id"])
    studio_sets = ([one], [two], [one, two])
    _check(any_app, alice, studio_sets)

    later = stamp(datetime.now(UTC))
    with _rows_written(any_app, alice, request) as execute:
        for n, item_id in enumerate(ids):
            if n % 3 == 1 and n % 4 == 0:  # closed
                execute("UPDATE items SET closed_at = ?, updated_at = ? WHERE id = ?", (later, later, item_id))
            elif n % 3 == 1 and n % 7 == 0:  # reopened with a deadline ahead
                execute("UPDATE items SET closed_at = NULL, deadline = ? WHERE id = ?", (future, item_id))
            elif n % 3 == 2 and n % 5 == 2:  # the deadline taken away, or moved into the past
                execute("UPDATE items SET deadline = ? WHERE id = ?", (None if n % 2 else past, item_id))
            if n % 6 == 1:  # retagged: b taken away, a given
                execute("DELETE FROM item_tags WHERE item_id = ? AND tag = 'b'", (item_id,))
                execute("INSERT INTO item_tags (item_id, tag) VALUES (?, 'a') ON CONFLICT DO NOTHING", (item_id,))
            if n % 9 == 4:  # a tag renamed
                execute("UPDATE item_tags SET tag = 'b' WHERE item_id = ? AND tag = 'a' AND NOT EXISTS"
                        " (SELECT 1 FROM item_tags u WHERE u.item_id = ? AND u.tag = 'b')", (item_id, item_id))
            if n % 8 == 5:  # deleted
                execute("UPDATE items SET deleted_at = ?, deleted_by = ? WHERE id = ?", (later, alice["id"], item_id))
    _check(any_app, alice, studio_sets)

    with _rows_written(any_app, alice, request) as execute:
        for n, item_id in enumerate(ids):
            if n % 16 == 5:  # restored
                execute("UPDATE items SET deleted_at = NULL, deleted_by = NULL WHERE id = ?", (item_id,))
            if n % 8 == 2:  # tagged while deleted, then restored
                execute("UPDATE items SET deleted_at = ?, deleted_by = ? WHERE id = ?", (later, alice["id"], item_id))
                execute("INSERT INTO item_tags (item_id, tag) VALUES (?, 'b') ON CONFLICT DO NOTHING", (item_id,))
                execute("UPDATE items SET deleted_at = NULL, deleted_by = NULL WHERE id = ?", (item_id,))
    with any_app.store.write(user_id=alice["id"]) as tx:  # the rest deleted for good
        tx.purge_deleted(stamp(datetime.now(UTC) + timedelta(days=1)), 100)
    _check(any_app, alice, studio_sets)

    ws.execute(alice, "/studios/two/members", "delete_studio", {"confirm": "two"})
    _check(any_app, alice, ([one],))
