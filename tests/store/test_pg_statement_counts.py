"""The PostgreSQL counter triggers run once per statement over its transition tables
(20261130000270): after multi-row INSERT ... SELECT, UPDATE and DELETE statements on items,
item_tags, comments and participants, and a studio's deletion, every counter row equals a fresh
count of the rows (a wrong grouped delta, or a row counted twice, shows as a difference)."""

from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg")

# What each counter table should hold, counted afresh (the formulas of the migrations' first fill).
FRESH = {
    "studio_item_counts": """
        SELECT studio_id, kind, count(*) AS n FROM items WHERE deleted_at IS NULL GROUP BY 1, 2""",
    "tag_counts": """
        SELECT studio_id, tag, count(*) AS n FROM item_tags WHERE studio_id IS NOT NULL GROUP BY 1, 2""",
    "filter_counts": """
        SELECT i.studio_id, '' AS tag, i.kind, navmcp.filter_decision_kind(i.kind, i.decision_kind),
               navmcp.filter_state(i.closed_at, i.deadline), count(*) AS n
          FROM items i WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5
        UNION ALL
        SELECT i.studio_id, t.tag, i.kind, navmcp.filter_decision_kind(i.kind, i.decision_kind),
               navmcp.filter_state(i.closed_at, i.deadline), count(*)
          FROM item_tags t JOIN items i ON i.id = t.item_id WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5""",
    "cycle_days": """
        SELECT studio_id, day, sum(created), sum(closed), sum(comments), sum(joins) FROM (
            SELECT studio_id, substr(created_at, 1, 10) AS day, 1 AS created, 0 AS closed, 0 AS comments, 0 AS joins
              FROM items
            UNION ALL SELECT studio_id, substr(closed_at, 1, 10), 0, 1, 0, 0 FROM items WHERE closed_at IS NOT NULL
            UNION ALL SELECT studio_id, substr(created_at, 1, 10), 0, 0, 1, 0 FROM comments
            UNION ALL SELECT i.studio_id, substr(p.joined_at, 1, 10), 0, 0, 0, 1
                        FROM participants p JOIN items i ON i.id = p.commitment_id) r GROUP BY 1, 2""",
}
KEPT = {
    "studio_item_counts": "SELECT studio_id, kind, n FROM studio_item_counts",
    "tag_counts": "SELECT studio_id, tag, n FROM tag_counts",
    "filter_counts": "SELECT studio_id, tag, kind, decision_kind, state, n FROM filter_counts",
    "cycle_days": "SELECT studio_id, day, created, closed, comments, joins FROM cycle_days",
}


def _counted(conn, sql, width):
    """{key: the last `width` columns}, without rows whose counts are all 0 (a count going down
    leaves its row)."""
    rows: dict[tuple, tuple] = {}
    for r in conn.execute(sql).fetchall():
        key, counts = tuple(r[:-width]), tuple(int(c) for c in r[-width:])
        if any(counts):
            rows[key] = counts
    return rows


def _check(conn, when):
    for table, fresh in FRESH.items():
        width = 4 if table == "cycle_days" else 1
        kept, want = _counted(conn, KEPT[table], width), _counted(conn, fresh, width)
        assert want, (table, when)  # the statements made rows to count
        assert kept == want, (table, when)


def test_multi_row_statements_keep_every_counter_exact(pg_url, pg_database):
    with psycopg.connect(pg_database.admin_url) as conn:
        conn.execute("INSERT INTO users (id, handle, name, created_at) SELECT 'u' || g, 'u' || g, 'u', "
                     "'2026-11-01T00:00:00Z' FROM generate_series(1, 5) g")
        conn.execute("INSERT INTO studios (id, handle, name, created_by, created_at) SELECT 's' || g, 's' || g, 's', "
                     "'u1', '2026-11-01T00:00:00Z' FROM generate_series(1, 3) g")
        # 600 items in three studios, of every kind and state, created over five days, in one statement
        # (none inserted deleted: the app never does, and studio_item_counts counts what is inserted)
        conn.execute("""
            INSERT INTO items (id, studio_id, kind, title, created_by, created_at, updated_at, closed_at,
                               deadline, decision_kind)
            SELECT 'i' || g, 's' || (g % 3 + 1), (ARRAY['note', 'decision', 'commitment'])[g % 4 % 3 + 1], 't', 'u1',
                   '2026-11-0' || (g % 5 + 1) || 'T10:00:00Z', '2026-11-0' || (g % 5 + 1) || 'T10:00:00Z',
                   CASE WHEN g % 6 = 0 THEN '2026-11-0' || (g % 4 + 5) || 'T11:00:00Z' END,
                   CASE WHEN g % 5 = 0 THEN '2026-12-01T00:00:00Z' WHEN g % 7 = 0 THEN '2026-10-01T00:00:00Z' END,
                   CASE WHEN g % 8 = 1 THEN 'consent' END
              FROM generate_series(1, 600) g""")
        conn.execute("INSERT INTO item_tags (item_id, tag) SELECT 'i' || g, 'a' FROM generate_series(1, 600) g")
        conn.execute("INSERT INTO item_tags (item_id, tag) SELECT 'i' || g, t FROM generate_series(1, 600) g, "
                     "unnest(ARRAY['b', 'c']) t WHERE g % 3 = 0")
        conn.execute("INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at) "
                     "SELECT 'c' || g, i.id, i.studio_id, 'x', 'u1', '2026-11-0' || (g % 7 + 1) || 'T09:00:00Z' "
                     "FROM generate_series(1, 400) g JOIN items i ON i.id = 'i' || (g % 600 + 1)")
        conn.execute("INSERT INTO participants (commitment_id, user_id, joined_at) "
                     "SELECT i.id, 'u' || u, '2026-11-0' || (u + 2) || 'T08:00:00Z' FROM items i, generate_series(1, 5) u "
                     "WHERE i.kind = 'commitment'")
        _check(conn, "inserted")

        # item states the filter counts track, many rows a statement: closed, reopened, a deadline
        # set or taken away, a decision's kind, deleted and restored; and an update moving no key
        conn.execute("UPDATE items SET closed_at = '2026-11-08T12:00:00Z' WHERE seq % 4 = 0 AND closed_at IS NULL")
        conn.execute("UPDATE items SET closed_at = NULL WHERE seq % 9 = 0")
        conn.execute("UPDATE items SET deadline = CASE WHEN deadline IS NULL THEN '2026-12-24T00:00:00Z' END "
                     "WHERE seq % 10 < 3")
        conn.execute("UPDATE items SET decision_kind = 'vote' WHERE kind = 'decision' AND seq % 3 = 1")
        conn.execute("UPDATE items SET deleted_at = '2026-11-09T00:00:00Z' WHERE seq % 13 = 0")
        conn.execute("UPDATE items SET deleted_at = NULL WHERE seq % 22 = 0")
        conn.execute("UPDATE items SET updated_at = '2026-11-10T00:00:00Z', title = 'u' WHERE seq % 2 = 0")
        _check(conn, "items updated")

        conn.execute("UPDATE item_tags SET tag = 'd' WHERE tag = 'b' AND item_id LIKE '%2'")
        conn.execute("UPDATE item_tags SET tag = 'e' || (length(item_id) % 2) WHERE tag = 'c'")
        conn.execute("UPDATE item_tags SET updated_at = '2026-11-11T00:00:00Z' WHERE tag = 'a'")
        _check(conn, "tags updated")

        conn.execute("DELETE FROM item_tags WHERE tag = 'a' AND item_id LIKE '%1'")
        conn.execute("DELETE FROM comments WHERE seq % 3 = 0")
        conn.execute("DELETE FROM participants WHERE user_id IN ('u2', 'u4')")
        # purged, as the app purges; a purged commitment's joins stay counted (its participants'
        # rows find it gone, as they did per row), so none is purged here
        conn.execute("DELETE FROM items WHERE deleted_at IS NOT NULL AND kind <> 'commitment'")
        _check(conn, "deleted")

        conn.execute("DELETE FROM studios WHERE id = 's2'")
        _check(conn, "a studio deleted")
        conn.commit()
        _check(conn, "committed")
