"""Ranked search that stops when the page is full (navmcp.store.ranked) lists what reading every
source's whole window lists: the same items, in the same order, at the same tiers, with the same
options and comments counted. The reference below is the whole-window query SQLite ran before
(issue 41, item 6); the window is narrowed so that a few hundred items cut every source, and
updated_at is scrambled against insertion order (old items touched last, ties of one instant).
On PostgreSQL the reference is the function it called before (`navmcp.find_items`).
The number found is exact when the search read everything, else a lower bound that still tells
whether a next page exists."""

from __future__ import annotations

import random
from typing import Any

import pytest

from navmcp.clock import now
from navmcp.content import search
from navmcp.identity import add_user
from navmcp.store.fulltext import fts5_any, fts5_match, tsquery, tsquery_any
from navmcp.store.postgres import _PostgresSources
from navmcp.store.sqlite_tx import search_filters

WORDS = "plan launch review budget risk ship alpha beta".split()
TAGS = ["plan", "launch-review", "risk", "q4"]


def whole_windows(tx, studio_ids: list[str], query: search.Query, at: str, limit: int,
                  offset: int) -> tuple[list[dict[str, Any]], int, bool]:
    """Every source's newest SEARCH_WINDOW matches, grouped per item and sorted (the former query)."""
    match, title = fts5_match(query), fts5_match(query, title_only=True)
    studios = ", ".join("?" * len(studio_ids))
    window = search.SEARCH_WINDOW
    hits = [f"""SELECT i.seq AS item, 0 AS tier, NULL AS part FROM items_fts CROSS JOIN items i
                  ON i.seq = items_fts.rowid WHERE items_fts MATCH ? AND i.studio_id IN ({studios})
                 ORDER BY items_fts.rowid DESC LIMIT ?""",
             f"""SELECT i.seq, 2, NULL FROM items_fts CROSS JOIN items i ON i.seq = items_fts.rowid
                 WHERE items_fts MATCH ? AND i.studio_id IN ({studios}) ORDER BY items_fts.rowid DESC LIMIT ?""",
             f"""SELECT i.seq, 3, o.id FROM options_fts CROSS JOIN options o ON o.rowid = options_fts.rowid
                  CROSS JOIN items i ON i.id = o.decision_id
                 WHERE options_fts MATCH ? AND i.studio_id IN ({studios}) ORDER BY options_fts.rowid DESC LIMIT ?""",
             f"""SELECT i.seq, 4, c.id FROM comments_fts CROSS JOIN comments c ON c.seq = comments_fts.rowid
                  CROSS JOIN items i ON i.id = c.item_id
                 WHERE comments_fts MATCH ? AND c.studio_id IN ({studios}) ORDER BY comments_fts.rowid DESC LIMIT ?"""]
    args: list[Any] = []
    for text in (title, match, match, match):
        args += [text, *studio_ids, window]
    if query.tag_word:
        hits.append(f"""SELECT t.seq, 1, NULL FROM item_tags t WHERE t.tag = ? AND t.studio_id IN ({studios})
                         ORDER BY t.seq DESC LIMIT ?""")
        args += [query.tag_word, *studio_ids, window]
    where, more = search_filters(query, at)
    if query.excluded:
        where.append("i.seq NOT IN (SELECT rowid FROM items_fts WHERE items_fts MATCH ?)")
        more.append(fts5_any(query.excluded))
    union = " UNION ALL ".join(f"SELECT * FROM ({sql})" for sql in hits)
    found = f"""
        WITH hits AS ({union}),
        best AS (SELECT item, min(tier) AS tier, min(CASE WHEN tier = 3 THEN part END) AS option_id,
                        min(CASE WHEN tier = 4 THEN part END) AS comment_id,
                        sum(CASE WHEN tier = 3 THEN 1 ELSE 0 END) AS options,
                        sum(CASE WHEN tier = 4 THEN 1 ELSE 0 END) AS comments FROM hits GROUP BY item)
        SELECT i.id AS item_id, b.tier, b.option_id, b.comment_id, b.options, b.comments,
               count(*) OVER () AS total, (SELECT max(n) FROM (SELECT count(*) AS n FROM hits GROUP BY tier)) AS widest
          FROM best b CROSS JOIN items i ON i.seq = b.item WHERE {" AND ".join(where)}
         ORDER BY b.tier, i.updated_at DESC, i.id"""
    rows = tx.all(found, (*args, *more))
    total, windowed = (rows[0]["total"], rows[0]["widest"] >= window) if rows else (0, False)
    for row in rows:
        del row["total"], row["widest"]
    return rows[offset:offset + limit], total, windowed


def find_items(tx, studio_ids: list[str], query: search.Query, at: str, limit: int,
               offset: int) -> tuple[list[dict[str, Any]], int, bool]:
    """PostgreSQL's whole-window function (navmcp.find_items, migrations 20261126000040 to
    20261130000280), which its search called before."""
    (found,) = tx.conn.execute(
        "SELECT * FROM navmcp.find_items(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (studio_ids, tsquery(query), tsquery(query, title_only=True),
         tsquery_any(query.excluded) if query.excluded else None, query.tag_word, query.kind, query.status,
         query.tag, at, limit, offset, search.SEARCH_WINDOW, query.decision_kind)).fetchall()
    rows = [{"item_id": i, "tier": t, "option_id": o, "comment_id": c, "options": no, "comments": nc}
            for i, t, o, c, no, nc in zip(found["item_ids"], found["tiers"], found["option_ids"],
                                          found["comment_ids"], found["option_counts"], found["comment_counts"])]
    return rows, found["total"], found["windowed"]


@pytest.fixture
def studio(any_app, store_kind):
    ws, owner = any_app.workspace, add_user(any_app.store, "owner")
    """On each store, studio `s` of 160 items whose words, tags, options and comments are drawn at random, with
    updated_at scrambled: a fifth touched long after they were made, some at one instant; and
    studio `t`, whose items come between them (the other studio's matches that a window skips)."""
    rng = random.Random(41)
    for handle in "st":
        ws.execute(owner, "/", "create_studio", {"handle": handle, "name": handle.upper()})

    def text(lo: int, hi: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))

    for n in range(200):
        tags = rng.sample(TAGS, rng.randint(0, 2))
        where = "/studios/t" if n % 5 == 4 else "/studios/s"
        if n % 4 == 0:
            url = ws.execute(owner, where, "create_decision",
                             {"question": text(1, 3) + "?", "description": text(0, 6) or "x",
                              "options": [text(1, 2) + f" {k}" for k in range(rng.randint(1, 3))],
                              **({"tags": tags} if tags else {})}).url
        else:
            url = ws.execute(owner, where, "create_note", {"title": text(1, 4), "body": text(0, 8) or "x",
                                                                  **({"tags": tags} if tags else {})}).url
        for _ in range(rng.choice((0, 0, 1, 2))):
            ws.execute(owner, url, "add_comment", {"body": text(1, 6)})
    with ws.store.write(owner["id"]) as tx:
        rows = tx.tuples("SELECT seq FROM items")
        for (seq,) in rows:
            if rng.random() < 0.2:
                tx.execute("UPDATE items SET updated_at = ? WHERE seq = ?",
                           (f"2030-01-0{rng.randint(1, 3)}T00:00:00.000000Z", seq))
            if rng.random() < 0.1:
                tx.execute("UPDATE items SET closed_at = updated_at WHERE seq = ?", (seq,))
    return ws, owner, (whole_windows if store_kind == "sqlite" else find_items)


QUERIES = ["plan", "launch review", "pl", "plan -risk", '"launch review"', "plan type:decision",
           "review status:open", "risk tag:q4", "launch type:note status:closed", "alpha beta", "ship",
           "q4", "launch-review", "budget -plan -ship", "beta kind:consent", "ri"]


@pytest.mark.parametrize("window", [3, 8, 40, 1000])
def test_the_page_is_the_whole_windows_page(studio, monkeypatch, window):
    ws, owner, whole = studio
    monkeypatch.setattr(search, "SEARCH_WINDOW", window)
    at = now()
    # PostgreSQL walks a source whose sample is dense, else reads its text index: each way, every source.
    for dense in (None,) if whole is whole_windows else (None, 0.0, 2.0):
        if dense is not None:
            monkeypatch.setattr(_PostgresSources, "DENSE", dense)
        with ws.store.read(owner["id"]) as tx:
            s, t = (tx.scalar("SELECT id FROM studios WHERE handle = ?", (h,)) for h in "st")
            compared = 0
            for text, studios in [(text, [s]) for text in QUERIES] + [(text, [s, t]) for text in QUERIES[:6]]:
                query = search.parse(text)
                for limit, offset in ((20, 0), (20, 20), (7, 14), (20, 60), (5, 400)):
                    want, total, windowed = whole(tx, studios, query, at, limit, offset)
                    got, found, lower_bound = tx.search(studios, query, at, limit, offset)
                    assert got == want, (text, limit, offset, dense)
                    if lower_bound:  # a lower bound, which still says whether a next page exists
                        assert found <= total and (found > offset + limit) == (total > offset + limit), (text, offset)
                    else:
                        assert (found, lower_bound) == (total, windowed), (text, offset)
                    compared += bool(want)
            assert compared >= 10  # the queries find things at every window


def test_an_outsider_finds_nothing_of_the_studio(studio):
    """Naming a studio one is no member of finds nothing in it (PostgreSQL: the functions answer
    for the acting user's studios only; SQLite: the pages pass only one's own)."""
    ws, owner, _ = studio
    outsider = add_user(ws.store, "outsider")
    with ws.store.read(owner["id"]) as tx:
        s = tx.scalar("SELECT id FROM studios WHERE handle = 's'")
        assert tx.search([s], search.parse("plan"), now(), 20, 0)[0]
    with ws.store.read(outsider["id"]) as tx:
        if tx.hosted:
            assert tx.search([s], search.parse("plan"), now(), 20, 0) == ([], 0, False)
