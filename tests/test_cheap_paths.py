"""The paths anyone may ask for as often as they like stay cheap however big a studio grows: tag
completion with an empty prefix and the whole /awaiting and /near-mass lists read a bounded number
of index entries (a loose index scan; each studio's first rows down its index, a capped count).
The evidence is the work SQLite does (virtual-machine instructions, counted by its progress
handler), at two sizes of one studio: it must not grow with the studio. Never the clock. On
PostgreSQL the same SQL is checked for the same answers."""

from __future__ import annotations

import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.demo import seed
from navmcp.identity import ensure_owner
from navmcp.mcp import completion
from navmcp.pages import home

SMALL, BIG = 1000, 3000  # items in the studio; a tenth are open decisions, a few hundred await the owner
STEP = 50  # instructions between two calls of the progress handler


class Reader:
    """What completion asks of its session: the app, and who is asking."""

    def __init__(self, app: App, user_id: str):
        self.app, self._user_id = app, user_id

    def user_id(self) -> str:
        return self._user_id


def _instructions(app: App, work) -> int:
    """The SQLite instructions `work()` runs on this thread's connection (to within STEP)."""
    conn = app.store.conn
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0

    conn.set_progress_handler(tick, STEP)
    try:
        work()
    finally:
        conn.set_progress_handler(None, 0)
    return ticks[0] * STEP


@pytest.fixture(scope="module")
def studios(tmp_path_factory):
    """Two workspaces, each one seeded studio `bench`: SMALL items and BIG items."""
    made = {}
    for items in (SMALL, BIG):
        app = App(Config(home=tmp_path_factory.mktemp(f"cheap{items}"), database_url=None, token=None))
        seed.seed(app.store, items, members=5)
        made[items] = (app, ensure_owner(app.store))
    yield made
    for app, _ in made.values():
        app.store.close()


def _cost(studios, work) -> tuple[int, int]:
    (small, small_owner), (big, big_owner) = studios[SMALL], studios[BIG]
    return (_instructions(small, lambda: work(small, small_owner)), _instructions(big, lambda: work(big, big_owner)))


def test_tag_completion_reads_one_index_entry_per_tag(studios):
    def tags(app, owner):
        values = completion._tags(Reader(app, owner["id"]), "bench", "")
        assert len(values) > 10
    small, big = _cost(studios, tags)
    assert big < small * 1.2, (small, big)  # a SELECT DISTINCT over the tag rows grew with them: 3x


@pytest.mark.parametrize("url", ["/awaiting", "/near-mass", "/awaiting?page=2"])
def test_the_whole_lists_read_what_a_page_shows(studios, url, monkeypatch):
    monkeypatch.setattr(home, "LIST_AHEAD", 5)  # the count stops below what either studio holds

    capped = []

    def page(app, owner):
        shown = app.workspace.page(owner, url, "test")
        assert shown.data["rows"]
        capped.append(shown.data["pager"]["capped"])
    small, big = _cost(studios, page)
    assert capped[-1]  # the big studio's count stopped short of its list
    assert big < small * 1.2, (small, big)  # counting and sorting every row grew with them: 3x


@pytest.fixture
def seeded(any_app, store_kind, request):
    if store_kind != "postgres":
        seed.seed(any_app.store, SMALL, members=5)
        return any_app, ensure_owner(any_app.store)
    import psycopg
    from psycopg.rows import dict_row

    admin_url = request.getfixturevalue("pg_database").admin_url
    seed.seed_postgres(admin_url, SMALL, members=5)  # as the database's owner (COPY past row-level security)
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        owner = conn.execute("SELECT u.* FROM settings s JOIN users u ON u.id = s.value WHERE s.key = 'owner'").fetchone()
    return any_app, owner


def test_the_cheap_paths_answer_as_the_plain_queries_did(seeded, monkeypatch):
    """Both stores: the tags completion gives what a SELECT DISTINCT gives; /awaiting and /near-mass
    pages list what one sort of the whole list gives, page by page, the count capped."""
    app, owner = seeded
    uid = owner["id"]
    with app.store.read(user_id=uid) as tx:
        every_tag = [t for (t,) in tx.tuples(
            "SELECT DISTINCT t.tag FROM item_tags t JOIN items i ON i.id = t.item_id JOIN studios s ON s.id = i.studio_id"
            " WHERE s.handle = ? ORDER BY t.tag", ("bench",))]
    assert every_tag
    for prefix in ("", every_tag[0][:1], every_tag[-1][:2], "zzz"):
        assert completion._tags(Reader(app, uid), "bench", prefix) == [t for t in every_tag if t.startswith(prefix)]

    from navmcp.clock import now

    monkeypatch.setattr(home, "LIST_AHEAD", 5)  # the count stops 5 past the page
    for url, (source, where, order) in {
            "/awaiting": (home._AWAITING_FROM, home._AWAITING_WHERE, "i.deadline IS NULL, i.deadline, i.created_at DESC, i.id"),
            "/near-mass": (home._NEAR_FROM, home._NEAR_WHERE, "i.critical_mass - i.participant_count, i.created_at DESC, i.id"),
    }.items():
        where = where.replace("i.studio_id = ?", "i.studio_id IN (SELECT studio_id FROM memberships WHERE user_id = ?)")
        with app.store.read(user_id=uid) as tx:
            whole = [r["id"] for r in tx.all(f"SELECT i.id FROM {source} WHERE {where} ORDER BY {order}", (uid, uid, now()))]
        assert len(whole) > 25, (url, len(whole))
        for number in (1, 2):
            page = app.workspace.page(owner, f"{url}?page={number}", "test")
            assert [r["id"] for r in page.data["rows"]] == whole[(number - 1) * 20:number * 20], (url, number)
            stop = 20 * number + 5
            assert (page.data["pager"]["total"], page.data["pager"]["capped"]) == (min(stop, len(whole)), len(whole) > stop)
        assert "25 or more in all" in app.workspace.page(owner, url, "test").markdown
