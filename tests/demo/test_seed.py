"""`navmcp seed` and the scale-minded queries it exists to exercise (migration 0004)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from navmcp.clock import now
from navmcp.content.search import parse
from navmcp.demo import seed
from store_fixtures import PARTICIPANT_COUNTS
from tests.conftest import ROOT


def test_seed_fills_a_studio_with_a_realistic_mix(app, owner):
    summary = seed.seed(app.store, 400)
    counts = summary["counts"]
    assert counts["items"] == 403  # 400 + the three fixtures
    assert counts["notes"] + counts["decisions"] + counts["commitments"] == 403
    assert min(counts["notes"], counts["decisions"], counts["commitments"]) > 20
    with app.store.read() as tx:
        assert tx.scalar("SELECT count(*) FROM items") == 403
        assert tx.scalar("SELECT count(*) FROM options") == counts["options"] > 0
        assert tx.scalar("SELECT count(*) FROM votes") == counts["votes"] > 0
        assert tx.scalar("SELECT count(*) FROM comments") == counts["comments"] > 0
        assert tx.scalar("SELECT count(*) FROM item_tags") == counts["tags"] > 0
        assert tx.scalar("SELECT count(*) FROM memberships") == 41
        # Each commitment's kept participant count is its participants' (the triggers ran in the load).
        kept = tx.all(PARTICIPANT_COUNTS)
        assert kept and all(r["kept"] == r["counted"] for r in kept)
        assert tx.scalar("SELECT count(*) FROM items WHERE participant_count > 0") > 20
        # The full-text index was filled in the same transaction (triggers), so search finds seeded words.
        rows, total, _ = tx.search([tx.scalar("SELECT id FROM studios WHERE handle = 'bench'")], parse("benchmark"), now(),
                                20, 0)
        assert total >= 3
        # No seeded time lies in the future: the fixtures (created now) lead the feed.
        assert tx.scalar("SELECT count(*) FROM items WHERE updated_at > ? OR closed_at > ?", (now(), now())) == 0
    assert app.store.integrity_check() == "ok"


def test_seeded_fixture_pages_render_and_vote(app, owner):
    urls = seed.seed(app.store, 50)["urls"]
    for url in urls.values():
        page = app.workspace.page(owner, url)
        assert page.title.startswith("Benchmark")
    feed = app.workspace.page(owner, "/studios/bench")
    assert {r["url"] for r in feed.data["recent"][:3]} == set(urls.values())
    result = app.workspace.execute(owner, urls["decision"], "vote", {"votes": [{"option": "March 3"}]})
    assert result.ok and "vote" in result.actions


def test_seed_refuses_an_existing_studio(app, owner):
    seed.seed(app.store, 10)
    with pytest.raises(ValueError, match="already exists"):
        seed.seed(app.store, 10)


def test_seed_command_prints_json_summary(tmp_path):
    env = {"NAVMCP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "navmcp", "seed", "--items", "30", "--studio", "perf", "--json"],
                          capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["studio_url"] == "/studios/perf"
    assert summary["urls"]["decision"].startswith("/studios/perf/d/")


def test_studio_counts_follow_inserts(app, owner):
    seed.seed(app.store, 120)
    with app.store.read() as tx:
        expected = {r["kind"]: r["n"] for r in tx.all("SELECT kind, count(*) AS n FROM items GROUP BY kind")}
    counts = app.workspace.page(owner, "/studios/bench").data["counts"]
    assert {k: counts[k] for k in expected} == expected
    app.workspace.execute(owner, "/studios/bench", "create_note", {"title": "One more", "body": "x"})
    after = app.workspace.page(owner, "/studios/bench").data["counts"]
    assert after["note"] == expected["note"] + 1 and after["decision"] == expected["decision"]


def _home_the_plain_way(tx, uid):
    """What awaits the user, by one plain sort over all open items of all their studios: decisions
    with options not voted on (soonest deadline first, then newest), commitments short of critical
    mass not joined (fewest joins to go first, then newest)."""
    open_clause = "i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > ?)"
    votes = tx.all(
        f"""SELECT i.id FROM items i JOIN memberships m ON m.studio_id = i.studio_id AND m.user_id = ?
             WHERE i.kind = 'decision' AND {open_clause}
               AND EXISTS (SELECT 1 FROM options o WHERE o.decision_id = i.id)
               AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = i.id AND v.user_id = ?)
             ORDER BY i.deadline IS NULL, i.deadline, i.created_at DESC, i.id""", (uid, now(), uid))
    near = tx.all(
        f"""SELECT i.id, i.critical_mass,
                   (SELECT count(*) FROM participants p WHERE p.commitment_id = i.id) AS joined,
                   EXISTS (SELECT 1 FROM participants p WHERE p.commitment_id = i.id AND p.user_id = ?) AS you_joined,
                   i.created_at
              FROM items i JOIN memberships m ON m.studio_id = i.studio_id AND m.user_id = ?
             WHERE i.kind = 'commitment' AND {open_clause}""", (uid, uid, now()))
    near = [c for c in near if c["joined"] < c["critical_mass"] and not c["you_joined"]]
    near.sort(key=lambda c: c["created_at"], reverse=True)
    near.sort(key=lambda c: c["critical_mass"] - c["joined"])
    return [v["id"] for v in votes], [c["id"] for c in near]


def test_home_lists_what_awaits_you_in_order_with_counts_across_studios(app, owner):
    from navmcp.pages.home import HOME_ROWS

    seed.seed(app.store, 150, "alpha", rng_seed=2)
    seed.seed(app.store, 150, "beta", rng_seed=3)
    page = app.workspace.page(owner, "/")
    data = page.data
    with app.store.read() as tx:
        votes, near = _home_the_plain_way(tx, owner["id"])
    assert [d["id"] for d in data["awaiting_votes"]] == votes[:HOME_ROWS]
    assert [c["id"] for c in data["near_mass"]] == near[:HOME_ROWS]
    assert (data["awaiting_count"], data["near_count"]) == (len(votes), len(near))
    assert f"## Awaiting your vote ({len(votes)})" in page.markdown
    assert f"all {len(near)}: `/near-mass`" in page.markdown and f"all {len(votes)}: `/awaiting`" in page.markdown
    # The full lists, in the same order, every item once over their pages.
    for url, expected in (("/awaiting", votes), ("/near-mass", near)):
        seen, next_url = [], url
        while next_url:
            listing = app.workspace.page(owner, next_url)
            seen += [r["id"] for r in listing.data["rows"]]
            next_url = listing.data["pager"]["next"]
        assert seen == expected, url
        assert f"({len(expected)} in all)" in app.workspace.page(owner, url).markdown


def test_cycle_and_search_pages_count_the_same_as_plain_joins(app, owner):
    seed.seed(app.store, 300)
    page = app.workspace.page(owner, "/studios/bench/cycles/this-month")
    start, end = page.data["start"], page.data["end"]
    with app.store.read() as tx:
        sid = tx.scalar("SELECT id FROM studios WHERE handle = 'bench'")
        votes = tx.scalar("""SELECT count(DISTINCT v.decision_id || ':' || v.user_id) FROM votes v
                               JOIN items i ON i.id = v.decision_id
                              WHERE i.studio_id = ? AND v.created_at >= ? AND v.created_at < ?""", (sid, start, end))
        joins = tx.scalar("""SELECT count(*) FROM participants p JOIN items i ON i.id = p.commitment_id
                              WHERE i.studio_id = ? AND p.joined_at >= ? AND p.joined_at < ?""", (sid, start, end))
        hits = tx.scalar("""SELECT count(*) FROM items_fts JOIN items i ON i.seq = items_fts.rowid
                             WHERE items_fts MATCH '"plan"*' AND i.studio_id = ?""", (sid,))
    assert page.data["activity"]["votes"] == votes and page.data["activity"]["joins"] == joins
    search = app.workspace.page(owner, "/studios/bench/search?q=plan")
    pager = search.data["pager"]
    if pager["capped"]:  # it stopped reading once the page was full: a lower bound that has a next page
        assert hits > 20 and len(search.data["results"]) == 20 and pager["total"] > 20 and pager["next"]
    else:
        assert pager["total"] >= hits > 0


def test_seeding_twice_stops_with_a_clear_message_before_writing(tmp_path):
    """`navmcp seed` run twice on one database: a plain message and exit 1, no traceback, nothing added."""
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("NAVMCP_")}
    env["NAVMCP_HOME"] = str(tmp_path)
    run = lambda *more: subprocess.run([sys.executable, "-m", "navmcp", "seed", "--items", "30", *more],  # noqa: E731
                                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert run("--studios", "2").returncode == 0
    again = run("--studios", "3")
    assert again.returncode == 1 and "Traceback" not in again.stderr
    assert "studio 'bench' already exists: seed a fresh database" in again.stderr
    import sqlite3

    db = sqlite3.connect(tmp_path / "navmcp.db")
    assert db.execute("SELECT handle FROM studios ORDER BY handle").fetchall() == [("bench",), ("bench-2",)]
    db.close()
    assert run("--studio", "other").returncode == 0  # another studio's name adds it
