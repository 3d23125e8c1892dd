"""`navmcp seed` on PostgreSQL: COPY as the owner, visible to members under row-level security."""

from __future__ import annotations

import json
import subprocess
import sys

from store_fixtures import PARTICIPANT_COUNTS
from tests.conftest import ROOT


def _navmcp(args, env, check=True):
    done = subprocess.run([sys.executable, "-m", "navmcp", *args], capture_output=True, env=env, cwd=ROOT, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done


def test_seed_on_postgres_fills_counts_and_pages_visible_to_the_owner(tmp_path, pg_url, pg_database):
    import psycopg

    env = {"NAVMCP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "NAVMCP_OWNER": "olive",
           "NAVMCP_DATABASE_URL": pg_database.admin_url}
    summary = json.loads(_navmcp(["seed", "--items", "300", "--json"], env).stdout)
    counts = summary["counts"]
    assert counts["items"] == 303 and min(counts["notes"], counts["decisions"], counts["commitments"]) > 20

    with psycopg.connect(pg_database.admin_url) as conn:
        def one(sql, *params):
            return conn.execute(sql, params).fetchone()[0]
        assert one("SELECT count(*) FROM items") == 303
        for table, key in (("options", "options"), ("votes", "votes"), ("participants", "participants"),
                           ("comments", "comments"), ("item_tags", "tags"), ("reads", "reads")):
            assert one(f"SELECT count(*) FROM {table}") == counts[key] > 0, table
        assert one("SELECT count(*) FROM memberships") == 41
        # The counter table matches the items (its trigger counts each COPY once).
        assert dict(conn.execute("SELECT kind, n FROM studio_item_counts").fetchall()) == {
            "note": counts["notes"], "decision": counts["decisions"], "commitment": counts["commitments"]}
        # Each commitment's participant count is its participants' (set once after the load), and
        # that trigger is on again too.
        kept = conn.execute(PARTICIPANT_COUNTS).fetchall()
        assert len(kept) == 303 and all(n == counted for _, n, counted in kept)
        assert one("SELECT count(*) FROM items WHERE participant_count > 0") > 20
        assert one("SELECT tgenabled FROM pg_trigger WHERE tgname = 'participants_count'") == "O"
        # So is each decision's option count, and its trigger.
        kept = conn.execute("SELECT i.option_count, (SELECT count(*) FROM options o WHERE o.decision_id = i.id)"
                            " FROM items i").fetchall()
        assert len(kept) == 303 and all(n == counted for n, counted in kept)
        assert one("SELECT sum(option_count) FROM items") == counts["options"]
        assert one("SELECT tgenabled FROM pg_trigger WHERE tgname = 'options_count'") == "O"
        # Same id and timestamp formats as the SQLite store writes.
        created = one("SELECT created_at FROM items ORDER BY seq LIMIT 1")
        assert created.endswith("Z") and created[10] == "T" and len(created) == 27
        assert len(one("SELECT id FROM items ORDER BY seq LIMIT 1")) == 10
        # The generated full-text columns were filled by COPY.
        assert one("SELECT count(*) FROM items WHERE fts @@ to_tsquery('english', 'benchmark')") >= 3

    # As navmcp_app, acting as the owner under RLS: the seeded studio and its items are visible.
    env["NAVMCP_DATABASE_URL"] = pg_url
    env["NAVMCP_TOKEN"] = _navmcp(["token", "olive"], env).stdout.decode().strip()
    feed = _navmcp(["get", "/studios/bench"], env).stdout.decode()
    assert f"| `bench` | admin | {counts['notes']} | {counts['decisions']} | {counts['commitments']} | [41]" in feed
    decision = _navmcp(["get", summary["urls"]["decision"]], env).stdout.decode()
    assert "# Benchmark decision: which launch date?" in decision and "March 10" in decision
    commitment = _navmcp(["get", summary["urls"]["commitment"]], env).stdout.decode()
    assert "**4 more needed** to reach critical mass (1 of 5)" in commitment

    env["NAVMCP_DATABASE_URL"] = pg_database.admin_url
    again = _navmcp(["seed", "--items", "10"], env, check=False)
    assert again.returncode == 1 and b"already exists" in again.stderr
