"""Every page type of a varied workspace (tests/golden_pages.py), the same on SQLite and PostgreSQL:
its markdown and its JSON rendition.

tests/golden_pages.py also saves a snapshot of those pages and compares a later one with it, which
is how a change that must leave pages alone is checked (markdown, HTML, data, JSON, resolved facts).
"""

from __future__ import annotations

import json
import re

import pytest

from golden_pages import build, snapshot
from navmcp.app import App
from navmcp.config import Config
from navmcp.errors import NotFound
from navmcp.store import row_maker
from test_store_contract import _normalize


def _order(kv: tuple[str, dict]) -> tuple[str, str]:
    """Pages in an order both stores share, which numbers the items' ids alike: by URL with its random
    ids left out, then by what the page says (an item page's title)."""
    key, shot = kv
    return re.sub(r"/([ndc])/[a-z0-9]{8}", r"/\1/", key), shot.get("markdown") or shot.get("message", "")


def _stable(shots: dict[str, dict]) -> dict[str, str]:
    ids: dict[str, str] = {}

    def norm(text: str) -> str:
        text = re.sub(r"(comment=)(?!nope)[a-z0-9]+", r"\1<c>", text)  # a real id; "nope" stays
        text = re.sub(r"(after=)[^)\s`'\"&]+", r"\1<pos>", text)
        text = re.sub(r"\b[0-9a-f]{16,24}\b", "<entry>", text)  # an inbox entry's id
        return _normalize(text, ids)

    stable = {norm(key): norm(shot.get("markdown") or f"{shot['error']}: {shot['message']}")
              for key, shot in sorted(shots.items(), key=_order)}
    # The JSON renditions, once every item's id is named: another row's id (an option's, a
    # comment's) is only "<id>", as the pages are not read in the same order on both stores.
    for key, shot in shots.items():
        if "json" in shot:
            text = json.dumps(shot["json"], sort_keys=True, ensure_ascii=False)
            text = re.sub(r'"duration_ms": [0-9.e-]+', '"duration_ms": <ms>', text)
            text = re.sub(r'("id": )"([a-z0-9]{8})"', lambda m: m.group(1) + ids.get(m.group(2), "<id>"), text)
            stable[norm(key)] += "\n" + norm(text)
    return stable


def test_every_page_type_is_the_same_on_both_stores(tmp_path, pg_url, pg_database):
    pages = []
    for url in (None, pg_url):
        app = App(Config(home=tmp_path / ("pg" if url else "sqlite"), database_url=url, token=None))
        try:
            # with dave, who wrote some of it, removed at the end: a former member
            build(app, owner_url=pg_database.admin_url if url else None)
            pages.append(_stable(snapshot(app)))
        finally:
            app.store.close()
    sqlite_pages, pg_pages = pages
    assert len(sqlite_pages) > 150
    assert sqlite_pages.keys() == pg_pages.keys()
    # Search ranks with bm25 on SQLite and ts_rank on PostgreSQL: its order may differ.
    assert [k for k in sqlite_pages if sqlite_pages[k] != pg_pages[k] and "/search?" not in k] == []


def test_row_maker_matches_dict_zip():
    for names in [("a",), ("id", "title", "id"), ("x y", "'q'", '"', "\\", "é")]:
        values = tuple(range(len(names)))
        assert row_maker(names)(values) == dict(zip(names, values))
        assert list(row_maker(names)(values)) == list(dict(zip(names, values)))


def test_record_gives_joined_columns_by_position(any_app, new_user):
    alice, _ = new_user("alice")
    with any_app.store.read(user_id=alice["id"]) as tx:
        names, row = tx.record("SELECT 1 AS id, 'a' AS name, 2 AS id")
        assert tx.record("SELECT 1 AS id WHERE 1 = 0") is None
    assert tuple(names) == ("id", "name", "id") and tuple(row) == (1, "a", 2)


def test_a_bare_path_splits_as_urlsplit_would_split_it():
    import random

    from navmcp import pages

    def plain_way(url: str):
        raw = url.strip()
        if not pages._SCHEME.match(raw):
            raw = pages._LEADING_SLASHES.sub("/", raw)
        parts = pages.urlsplit(raw)
        return pages._canonical_path(parts.path or "/"), dict(pages.parse_qsl(parts.query))

    rng = random.Random(5)
    alphabet = "/ab.-_~md9Z:?#%&= \t"
    urls = ["/", "//", "/studios/x/", "/studios/x.md", "/.md", "/a//b/", "/studios/team/n/k3f9q2"]
    urls += ["/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    for url in urls:
        if not url.strip():
            continue
        host = pages.urlsplit(url.strip() if pages._SCHEME.match(url.strip())
                              else pages._LEADING_SLASHES.sub("/", url.strip())).hostname
        if host and host not in pages._THIS_MACHINE:  # another server's URL: refused, with its path
            with pytest.raises(NotFound, match="is another server"):
                pages.split_url(url)
            continue
        assert pages.split_url(url) == plain_way(url), url
