"""Replies (add_comment's `reply_to`), on both stores: threads one level deep, each shown with its
newest replies and a link to the whole thread (`?comment=ID`); paging never repeats a comment."""

from __future__ import annotations

import re

import pytest

from nav_helpers import add_member
from navmcp.errors import ActionUnavailable, InvalidActionParams

STUDIO = "/studios/team"


@pytest.fixture
def team(any_app, new_user):
    ws = any_app.workspace
    alice, bob = new_user("alice")[0], new_user("bob")[0]
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "bob"})
    note = ws.execute(alice, STUDIO, "create_note", {"title": "N", "body": "b"}).url
    other = ws.execute(alice, STUDIO, "create_note", {"title": "O", "body": "b"}).url
    return any_app, alice, bob, note, other


def _ids(markdown: str) -> list[str]:
    return re.findall(r"(?:UTC · |comment )`(\w+)`:", markdown)


def test_a_reply_joins_its_thread_one_level_deep(team):
    app, alice, bob, note, other = team
    ws = app.workspace
    ws.execute(alice, note, "add_comment", {"body": "first"})
    root = ws.page(bob, note).data["comments"][0]["id"]
    reply = ws.execute(bob, note, "add_comment", {"body": "answer", "reply_to": root})
    assert (reply.message, reply.url) == ("Reply added.", f"{note}?comment={root}")
    answer = ws.page(bob, note).data["comments"][0]["replies"][0]["id"]
    deeper = ws.execute(alice, note, "add_comment", {"body": "answer to the answer", "reply_to": answer})
    assert deeper.url == f"{note}?comment={root}"  # a reply to a reply joins the thread
    thread = ws.page(bob, note).data["comments"]
    assert len(thread) == 1 and [r["body"] for r in thread[0]["replies"]] == ["answer", "answer to the answer"]
    assert {r["parent_id"] for r in thread[0]["replies"]} == {root}
    for wrong in ("nope", ws.execute(alice, other, "add_comment", {"body": "elsewhere"}) and
                  ws.page(alice, other).data["comments"][0]["id"]):
        with pytest.raises(InvalidActionParams, match="no comment") as refused:
            ws.execute(bob, note, "add_comment", {"body": "x", "reply_to": wrong})
        assert [f.field for f in refused.value.fields] == ["reply_to"]
    md = ws.page(bob, note).markdown
    assert "## Comments (1)" in md and "↳ reply from @alice at" in md  # threads are counted


def test_threads_show_their_newest_replies_and_link_the_whole_thread(team):
    app, alice, bob, note, _ = team
    ws = app.workspace
    ws.execute(alice, note, "add_comment", {"body": "thread"})
    root = ws.page(bob, note).data["comments"][0]["id"]
    for n in range(5):
        ws.execute(bob, note, "add_comment", {"body": f"reply {n}", "reply_to": root})
    page = ws.page(bob, note)
    thread = page.data["comments"][0]
    assert [r["body"] for r in thread["replies"]] == ["reply 2", "reply 3", "reply 4"]  # the newest 3, in order
    assert thread["reply_count"] == 5
    assert f"> 2 earlier replies: the whole thread is at `{note}?comment={root}`." in page.markdown
    whole = ws.page(bob, f"{note}?comment={root}")
    assert [r["body"] for r in whole.data["thread"]["replies"]] == [f"reply {n}" for n in range(5)]
    assert "One thread in full: its comment and 5 replies" in whole.markdown
    reply = thread["replies"][0]["id"]
    one = ws.page(bob, f"{note}?comment={reply}").markdown
    assert f"One reply in full, in the thread at `{note}?comment={root}`" in one


def test_paging_threads_never_repeats_a_comment(team):
    app, alice, bob, note, _ = team
    ws = app.workspace
    for n in range(25):
        ws.execute(alice, note, "add_comment", {"body": f"thread {n}"})
    roots = [c["id"] for c in ws.page(bob, note).data["comments"]] + \
            [c["id"] for c in ws.page(bob, f"{note}?page=2").data["comments"]]
    for root in roots[:2] + roots[-2:]:
        for n in range(4):
            ws.execute(bob, note, "add_comment", {"body": f"r{n}", "reply_to": root})
    new = ws.execute(alice, note, "add_comment", {"body": "thread 25"})
    assert new.url == f"{note}?page=2"  # a new thread lands on the last page of threads
    seen: list[str] = []
    url = note
    while url:
        page = ws.page(bob, url)
        seen += _ids(page.markdown)
        url = page.data["pager"]["next"]
    assert len(seen) == len(set(seen)) == 26 + 4 * 3  # each thread once, with its newest 3 of 4 replies
    assert set(roots) <= set(seen)


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_keeps_threads_one_level_on_one_item(team):
    import psycopg

    app, alice, bob, note, other = team
    ws = app.workspace
    ws.execute(alice, note, "add_comment", {"body": "root"})
    ws.execute(alice, other, "add_comment", {"body": "elsewhere"})
    root = ws.page(bob, note).data["comments"][0]["id"]
    elsewhere = ws.page(bob, other).data["comments"][0]["id"]
    ws.execute(bob, note, "add_comment", {"body": "reply", "reply_to": root})
    reply = ws.page(bob, note).data["comments"][0]["replies"][0]["id"]
    with app.store.read(user_id=bob["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    insert = ("INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at, parent_id)"
              " VALUES (?, ?, ?, 'x', ?, 'now', ?)")
    for n, parent in enumerate((elsewhere, reply)):  # another item's comment; a reply
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.store.write(user_id=bob["id"]) as tx:
                tx.execute(insert, (f"forged{n}", note.rsplit("/", 1)[1], studio, bob["id"], parent))


def test_a_deleted_comment_leaves_its_replies_under_deleted_and_no_text(team, new_user):
    app, alice, bob, note, _ = team
    ws = app.workspace
    carol = new_user("carol")[0]
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "carol"})
    ws.execute(bob, note, "add_comment", {"body": "secret walrus plan"})
    root = ws.page(bob, note).data["comments"][0]["id"]
    ws.execute(bob, note, "edit_comment", {"comment": root, "body": "secret walrus plan, v2"})
    ws.execute(carol, note, "add_comment", {"body": "a reply", "reply_to": root})
    ws.execute(carol, note, "add_comment", {"body": "lonely walrus"})
    lonely = ws.page(bob, note).data["comments"][1]["id"]
    # who is offered delete_comment: an author of a live comment here, or an admin
    assert "delete_comment" in {a.name for a in ws.page(alice, note).actions}  # the admin
    with pytest.raises(InvalidActionParams, match="only its author or a studio admin"):
        ws.execute(carol, note, "delete_comment", {"comment": root})
    done = ws.execute(bob, note, "delete_comment", {"comment": root})
    assert done.message.startswith("Comment deleted: its replies stay")
    md = ws.page(carol, note).markdown
    assert f"comment `{root}`: [deleted] by @bob at" in md and "↳ reply from @carol" in md
    assert "walrus plan" not in md and "walrus plan" not in ws.page(carol, f"{note}?comment={root}&history=1").markdown
    assert note not in ws.page(carol, f"{STUDIO}/search?q=plan").markdown  # its text is searched no more
    with app.store.read(user_id=bob["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM revisions WHERE comment_id = ?", (root,)) == 0
        assert "walrus plan" not in repr(tx.all("SELECT * FROM audit")) + repr(tx.all("SELECT * FROM comments"))
    for action, params in (("edit_comment", {"comment": root, "body": "back"}),
                           ("delete_comment", {"comment": root}),
                           ("add_comment", {"body": "to nothing", "reply_to": root})):
        with pytest.raises((InvalidActionParams, ActionUnavailable)):
            ws.execute(bob, note, action, params)
    # the admin deletes carol's comment that nobody answered: gone, row and all
    ws.execute(alice, note, "delete_comment", {"comment": lonely})
    with app.store.read(user_id=bob["id"]) as tx:
        assert tx.scalar("SELECT count(*) FROM comments WHERE id = ?", (lonely,)) == 0
    assert "lonely" not in ws.page(bob, note).markdown


def test_a_reply_tells_the_author_of_the_comment_it_answers_once(team, new_user):
    app, alice, bob, note, _ = team
    ws = app.workspace
    carol = new_user("carol")[0]
    add_member(ws, alice, f"{STUDIO}/members", {"handle": "carol"})
    ws.execute(carol, note, "add_comment", {"body": "a thought"})
    root = ws.page(bob, note).data["comments"][0]["id"]
    ws.execute(carol, "/inbox", "dismiss", {"all": True})  # being added
    ws.execute(bob, note, "add_comment", {"body": "an answer", "reply_to": root})
    entries = ws.page(carol, "/inbox").data["entries"]
    assert [(e["kind"], e["count"]) for e in entries] == [("comment", 1)]  # one entry, not two
    ws.execute(carol, "/inbox", "dismiss", {"all": True})
    ws.execute(bob, note, "add_comment", {"body": "@carol see this", "reply_to": root})
    assert [e["kind"] for e in ws.page(carol, "/inbox").data["entries"]] == ["mention"]  # mentioned: told once
    assert "comment" not in [e["kind"] for e in ws.page(bob, "/inbox").data["entries"]]  # never the actor
