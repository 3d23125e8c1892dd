"""Every paged list is complete: walked page by page (by its Next links, and by page number), each
row appears exactly once, however many rows share a time (issue 42). On both stores.

Hypothesis makes the ties: groups of items created, updated, closed and due at the same instant.
Each example gets a user and a studio of its own, so the lists that span your studios (awaiting,
near critical mass, /search) hold that example's rows alone.
"""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from navmcp.clock import stamp
from navmcp.content.domain import cycle_window, insert_option
from navmcp.identity import add_user, new_id

_examples = itertools.count()

# A group of items sharing one instant: how many, and what they are at that instant.
GROUPS = st.lists(st.tuples(st.integers(1, 24), st.sampled_from(["open", "hand", "deadline"])),
                  min_size=1, max_size=4)


def _instants(n: int) -> list[str]:
    """`n` distinct past instants inside this week (the cycle page's window), oldest first."""
    start, _ = cycle_window("this-week")
    begin = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    middle = begin + (datetime.now(UTC) - begin) / 2
    return [stamp(middle + timedelta(milliseconds=i)) for i in range(n)]


def build(app, groups: list[tuple[int, str]]) -> dict:
    """A user and their studio holding `groups` of tied items (all tagged `tie`, titled `alpha …`),
    and a note with as many comments as there are items, all written at one instant."""
    n = next(_examples)
    user = add_user(app.store, f"pager{n}")
    handle = f"ties{n}"
    app.workspace.execute(user, "/", "create_studio", {"handle": handle, "name": f"Ties {n}"})
    future = stamp(datetime.now(UTC) + timedelta(days=30))
    made: dict[str, list[str]] = {"all": [], "closed": [], "awaiting": [], "near": [], "comments": []}
    with app.store.write(user_id=user["id"]) as tx:
        sid = tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))
        for (size, state), at in zip(groups, _instants(len(groups)), strict=True):
            for j in range(size):
                kind = ("note", "decision", "commitment")[j % 3]
                row = {"id": new_id(), "studio_id": sid, "kind": kind, "title": f"alpha {at} {j}", "body": "tied",
                       "created_by": user["id"], "created_at": at, "updated_at": at,
                       "deadline": at if state == "deadline" else future if kind != "note" else None,
                       "critical_mass": 3 if kind == "commitment" else None}
                tx.execute(f"INSERT INTO items ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                           tuple(row.values()))
                closes = state == "deadline" or state == "hand" and kind != "note"  # a note is not closed by hand
                if state == "hand" and closes:  # apart: the hosted store's app role closes by an update
                    tx.execute("UPDATE items SET closed_at = ? WHERE id = ?", (at, row["id"]))
                tx.execute("INSERT INTO item_tags (item_id, tag) VALUES (?, 'tie')", (row["id"],))
                made["all"].append(row["id"])
                if closes:
                    made["closed"].append(row["id"])
                elif state == "open" and kind == "decision":
                    insert_option(tx, user, row["id"], "yes")
                    made["awaiting"].append(row["id"])
                elif state == "open" and kind == "commitment":
                    made["near"].append(row["id"])
        note = made["all"][0]  # the first of each group is a note
        for _ in made["all"]:
            cid = new_id()
            tx.execute("INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at)"
                       " VALUES (?, ?, ?, 'same time', ?, ?)", (cid, note, sid, user["id"], at))
            made["comments"].append(cid)
    return {"user": user, "base": f"/studios/{handle}", "note": f"/studios/{handle}/n/{note}", **made}


def walk(ws, user, url: str, rows: str, pager: str = "pager") -> list[str]:
    """Every row's id on the list at `url`, following its Next links to the end."""
    seen: list[str] = []
    for _ in range(1000):
        data = ws.page(user, url).data
        seen += [r["id"] for r in data[rows]]
        url = data[pager]["next"]
        if url is None:
            return seen
    raise AssertionError(f"no end to {url}")


def by_number(ws, user, url: str, rows: str, pager: str = "pager", key: str = "page") -> list[str]:
    """Every row's id on the list at `url`, asking for each page by its number (no `after=`): up to
    the last page the page before counts, and past it while that count was only a lower bound
    ("or more": a word search that stopped reading once its page was known)."""
    data = ws.page(user, url).data
    seen = [r["id"] for r in data[rows]]
    sep = "&" if "?" in url else "?"
    number = 1
    while number < data[pager]["pages"] or data[pager].get("capped"):
        number += 1
        assert number < 1000, f"no end to {url}"
        data = ws.page(user, f"{url}{sep}{key}={number}").data
        if not data[rows]:
            break
        seen += [r["id"] for r in data[rows]]
    return seen


def once_each(seen: list[str], expected: list[str], url: str = "") -> None:
    twice = [i for i, n in Counter(seen).items() if n > 1]
    missing = set(expected) - set(seen)
    assert not twice and not missing and set(seen) == set(expected), (url, len(twice), len(missing))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(groups=GROUPS)
def test_every_paged_list_lists_each_row_once(any_app, groups):
    ws, made = any_app.workspace, build(any_app, groups)
    user, base = made["user"], made["base"]
    lists = [  # url, the rows' key, the pager's key, the page number's key, the rows expected
        (base, "recent", "pager", "page", made["all"]),
        (f"{base}/cycles/this-week", "created", "pager", "page", made["all"]),
        (f"{base}/tags/tie", "items", "pager", "page", made["all"]),
        (f"{base}/search?q=alpha", "results", "pager", "page", made["all"]),
        (f"{base}/search?q=tag:tie", "results", "pager", "page", made["all"]),
        ("/search?q=tag:tie+status:closed", "results", "pager", "page", made["closed"]),
        ("/awaiting", "rows", "pager", "page", made["awaiting"]),
        ("/near-mass", "rows", "pager", "page", made["near"]),
        (made["note"], "comments", "pager", "page", made["comments"]),
    ]
    for url, rows, pager, key, expected in lists:
        once_each(walk(ws, user, url, rows, pager), expected, url)
        once_each(by_number(ws, user, url, rows, pager, key), expected, url)
    # The cycle's closed list has pages of its own (?closed=N): page 1 shows its first rows.
    closed = f"{base}/cycles/this-week"
    once_each(walk(ws, user, closed, "closed", "closed_pager"), made["closed"])
    once_each(by_number(ws, user, closed, "closed", "closed_pager", "closed"), made["closed"])


def test_home_shows_the_first_rows_of_its_full_lists(any_app):
    """Home's first rows of what awaits you are the first rows of /awaiting and /near-mass, in their
    order, when every row ties on time (home reads them studio by studio, the lists all at once)."""
    from navmcp.pages.home import HOME_ROWS

    made = build(any_app, [(12, "open"), (9, "open")])
    ws, user = any_app.workspace, made["user"]
    home = ws.page(user, "/").data
    assert [r["id"] for r in home["awaiting_votes"]] == [r["id"] for r in ws.page(user, "/awaiting").data["rows"]][:HOME_ROWS]
    assert [r["id"] for r in home["near_mass"]] == [r["id"] for r in ws.page(user, "/near-mass").data["rows"]][:HOME_ROWS]


@pytest.mark.parametrize("size", [41])
def test_a_cycle_closed_in_one_instant_pages_whole(any_app, size):
    """The report of issue 42: many items closed in the same instant, the closed list walked."""
    made = build(any_app, [(size, "hand"), (size, "deadline")])
    closed = f"{made['base']}/cycles/this-week"
    once_each(walk(any_app.workspace, made["user"], closed, "closed", "closed_pager"), made["closed"])
