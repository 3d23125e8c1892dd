"""`?full=1` is whole (issue 42): an item's body and every comment and reply, uncut, in reading order,
once, on one page, within the page bound (`render.FULL_BODY_CHARS` characters of text); where the
comments pass it, the page says so with the one URL that continues. On both stores."""

from __future__ import annotations

import re

import pytest

from navmcp.pages.items import COMMENT_CHARS
from navmcp.render import FULL_BODY_CHARS

STUDIO = "/studios/team"
_SHOWN = re.compile(r"^(?:↳ reply from )?@\w+ at [^\n]*· `(\w+)`[^\n]*:\n\n(`{3,})text\n(.*?)\n\2$", re.M | re.S)


@pytest.fixture
def ann(any_app, new_user):
    user = new_user("ann")[0]
    any_app.workspace.execute(user, "/", "create_studio", {"handle": "team", "name": "Team"})
    return user


def _shown(page: str) -> list[tuple[str, str]]:
    """The comments and replies a page shows: (id, text), in the page's order."""
    return [(m.group(1), m.group(3)) for m in _SHOWN.finditer(page)]


def test_full_gives_every_comment_and_reply_uncut_in_order_once(any_app, ann):
    ws = any_app.workspace
    body = "".join(f"line {i:05d} of the handbook\n" for i in range(400))  # ~10k characters: two parts
    url = ws.execute(ann, STUDIO, "create_note", {"title": "Handbook", "body": body}).url
    expected: list[str] = []
    for n in range(26):  # more than a page of 20, one longer than a comment shows in the list
        expected.append((f"remark {n:02d} " + ("long " * 400 if n == 3 else "")).strip())
        ws.execute(ann, url, "add_comment", {"body": expected[-1]})
    # Replies to the first thread, written last: shown under their thread, not at the end.
    first = ws.page(ann, url + "?full=1").markdown
    thread_id = _shown(first)[0][0]
    for r in range(5):
        ws.execute(ann, url, "add_comment", {"body": f"reply {r}", "reply_to": thread_id})
    page = ws.page(ann, url + "?full=1").markdown
    shown = _shown(page)
    texts = [t for _, t in shown]
    assert texts == [expected[0], *(f"reply {r}" for r in range(5)), *expected[1:]]
    assert len({i for i, _ in shown}) == len(shown) == 31  # each once
    assert len(texts[6 + 2]) > COMMENT_CHARS and "[cut:" not in page  # uncut
    assert "Next page" not in page and "?page=2" not in page.split("## Available actions")[0]
    assert "[Every comment and reply, uncut, each thread followed by its replies.]" in page
    assert body.strip() in page  # and the body whole
    # Without ?full=1 the list is a page at a time, as before.
    assert "Next page" in ws.page(ann, url).markdown


def test_full_stops_at_the_page_bound_with_the_one_url_that_continues(any_app, ann):
    ws = any_app.workspace
    url = ws.execute(ann, STUDIO, "create_note", {"title": "Busy", "body": "short"}).url
    size = 4000
    count = FULL_BODY_CHARS // size + 5  # more comment text than one page holds
    for n in range(count):
        ws.execute(ann, url, "add_comment", {"body": f"c{n:03d} " + "x" * size})
    seen: list[str] = []
    next_url: str | None = url + "?full=1"
    pages = 0
    while next_url:
        page = ws.page(ann, next_url).markdown
        pages += 1
        shown = [t.split()[0] for _, t in _shown(page)]
        assert shown and sum(len(t) for _, t in _shown(page)) <= FULL_BODY_CHARS + size
        seen += shown
        found = re.search(r"the comments continue at `([^`]+)`", page)
        next_url = found.group(1) if found else None
        if next_url:
            assert f"[The page holds {FULL_BODY_CHARS:,} characters of text" in page
            assert re.fullmatch(rf"{re.escape(url)}\?full=1&from=\w+", next_url)
            assert pages > 1 or "short" in page  # the body on the first page only
    assert pages == 2
    assert seen == [f"c{n:03d}" for n in range(count)]  # every one, in order, once


def test_full_from_a_comment_that_is_not_there_is_not_found(any_app, ann):
    from navmcp.errors import NotFound

    ws = any_app.workspace
    url = ws.execute(ann, STUDIO, "create_note", {"title": "N", "body": "b"}).url
    with pytest.raises(NotFound):
        ws.page(ann, url + "?full=1&from=nope")
