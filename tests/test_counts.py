"""One count per fact: every page that states how many of something there are states the same
number, counted the same way, and says "more than" or "or more" only where counting stopped, with
the link that shows all (issue 42). On both stores, with more than 1,000 items of a kind, past the
search window (`search.SEARCH_WINDOW`) and home's cap (`home.COUNT_CAP`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from navmcp.clock import stamp
from navmcp.content import search
from navmcp.content.domain import insert_option
from navmcp.identity import add_user, new_id
from navmcp.pages.home import COUNT_CAP
from navmcp.pages.request import PAGE_SIZE

TAGGED = 15  # the oldest decisions, tagged `planning`: behind the newest 1,000 of their kind
UNTAGGED = search.SEARCH_WINDOW + 50
NEAR = 3  # commitments short of critical mass: fewer than home's cap, so counted exactly
DECISIONS = TAGGED + UNTAGGED


@pytest.fixture
def big(any_app):
    """alice's studio `big`: DECISIONS open decisions awaiting her vote (the oldest TAGGED tagged
    `planning`), NEAR commitments, all titled `alpha …`."""
    alice = add_user(any_app.store, "alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "big", "name": "Big"})
    start = datetime.now(UTC) - timedelta(hours=1)
    future = stamp(datetime.now(UTC) + timedelta(days=30))
    with any_app.store.write(user_id=alice["id"]) as tx:
        sid = tx.scalar("SELECT id FROM studios WHERE handle = 'big'")
        for n in range(DECISIONS + NEAR):
            at = stamp(start + timedelta(milliseconds=n))
            kind = "decision" if n < DECISIONS else "commitment"
            row = {"id": new_id(), "studio_id": sid, "kind": kind, "title": f"alpha {n}", "body": "x",
                   "created_by": alice["id"], "created_at": at, "updated_at": at, "deadline": future,
                   "critical_mass": 2 if kind == "commitment" else None}
            tx.execute(f"INSERT INTO items ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
            if kind == "decision":
                insert_option(tx, alice, row["id"], "yes")
            if n < TAGGED:
                tx.execute("INSERT INTO item_tags (item_id, tag) VALUES (?, 'planning')", (row["id"],))
    return ws, alice


def test_every_page_states_one_count_per_fact(big):
    ws, alice = big
    # Filters alone are exact: the tagged decisions are all found, behind the newest 1,000.
    for url in ("/studios/big/search?q=tag:planning+status:open+type:decision",
                "/search?q=tag:planning+status:open+type:decision"):
        page = ws.page(alice, url)
        assert page.data["pager"]["total"] == TAGGED and not page.data["windowed"], url
        assert len(page.data["results"]) == TAGGED  # one page
        assert "or more" not in page.markdown and f"{TAGGED} items" in page.markdown
    tag = ws.page(alice, "/studios/big/tags/planning").data
    assert tag["pager"]["total"] == TAGGED
    kind = ws.page(alice, "/studios/big/search?q=type:decision")
    assert kind.data["pager"]["total"] == DECISIONS and "or more" not in kind.markdown
    assert f"({DECISIONS} in all)" in kind.markdown
    feed = ws.page(alice, "/studios/big").data
    assert feed["counts"]["decision"] == DECISIONS and feed["counts"]["commitment"] == NEAR

    # Awaiting your vote: the list counts all; home stops at its cap and says so, with the link.
    from navmcp.pages.home import LIST_AHEAD

    awaiting = ws.page(alice, "/awaiting")  # its own count stops LIST_AHEAD past the page, and says "or more"
    assert (awaiting.data["pager"]["total"], awaiting.data["pager"]["capped"]) == (PAGE_SIZE + LIST_AHEAD, True)
    assert f"Page 1 of {1 + LIST_AHEAD // PAGE_SIZE} or more ({PAGE_SIZE + LIST_AHEAD} or more in all)." \
        in awaiting.markdown
    # ... its Next links reach every decision, once, each page counting further, the last exactly
    seen, page = [], awaiting
    while True:
        seen += [row["id"] for row in page.data["rows"]]
        if not page.data["pager"]["next"]:
            break
        page = ws.page(alice, page.data["pager"]["next"])
    assert len(seen) == len(set(seen)) == DECISIONS
    last = -(-DECISIONS // PAGE_SIZE)
    assert page.data["pager"]["total"] == DECISIONS and not page.data["pager"]["capped"]
    assert f"Page {last} of {last} ({DECISIONS} in all)." in page.markdown
    home = ws.page(alice, "/")
    assert (home.data["awaiting_count"], home.data["awaiting_capped"]) == (COUNT_CAP, True)
    assert f"## Awaiting your vote (more than {COUNT_CAP})" in home.markdown and "`/awaiting`" in home.markdown
    # Below the cap, home's number is the list's, and no "more than" is said of it.
    near = ws.page(alice, "/near-mass").data["pager"]["total"]
    assert (home.data["near_count"], home.data["near_capped"], near) == (NEAR, False, NEAR)
    assert f"## Commitments that need you ({NEAR})" in home.markdown

    # A word search cut at its window says "or more" everywhere it states its count, never "in all".
    words = ws.page(alice, "/studios/big/search?q=alpha")
    assert words.data["windowed"] and words.data["pager"]["capped"]
    total = words.data["pager"]["total"]
    assert f"{total} in all" not in words.markdown and f"{total} or more items" in words.markdown


def test_home_counts_one_list_across_studios(any_app):
    """Home's count is one count across your studios, stopped at the cap: never the sum of each
    studio's capped count (the report: "more than 162" where the list held 407)."""
    alice = add_user(any_app.store, "alice")
    ws = any_app.workspace
    future = stamp(datetime.now(UTC) + timedelta(days=30))
    sizes = {"one": COUNT_CAP + 20, "two": 12}
    for handle, size in sizes.items():
        ws.execute(alice, "/", "create_studio", {"handle": handle, "name": handle})
        with any_app.store.write(user_id=alice["id"]) as tx:
            sid = tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))
            for n in range(size):
                at = stamp(datetime.now(UTC))
                item = {"id": new_id(), "studio_id": sid, "kind": "decision", "title": f"q {n}", "body": "",
                        "created_by": alice["id"], "created_at": at, "updated_at": at, "deadline": future}
                tx.execute(f"INSERT INTO items ({', '.join(item)}) VALUES ({', '.join('?' * len(item))})",
                           tuple(item.values()))
                insert_option(tx, alice, item["id"], "yes")
    home = ws.page(alice, "/")
    assert (home.data["awaiting_count"], home.data["awaiting_capped"]) == (COUNT_CAP, True)
    assert f"(more than {COUNT_CAP})" in home.markdown
    assert ws.page(alice, "/awaiting?page=7").data["pager"]["total"] == sum(sizes.values())  # counted to its end
