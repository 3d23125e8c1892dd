"""Edits with revisions (navmcp/content/revisions.py, navmcp/actions/edits.py), on both stores: every edit
of a note, decision, commitment or comment keeps who, when, which client, the old and new value;
`base` refuses a lost update naming what changed since and by whom; `?history=1` lists them; the
rules of each role (author, creator, admin, member, former member) list what the executor accepts."""

from __future__ import annotations

import pytest

from mcp_rpc import Rpc
from nav_helpers import add_member
from navmcp.errors import ActionFailed, ActionUnavailable, InvalidActionParams, NotFound
from navmcp.identity import mint_token

STUDIO = "/studios/team"
EDITS = {"edit_note", "edit_decision", "edit_commitment", "edit_comment"}
PROBE = {"__probe__": 1}  # refused by every params model: finds what the rules allow without writing


@pytest.fixture
def team(any_app, new_user):
    """alice (admin), bob and carol (members), dave (a former member); bob wrote one of each."""
    ws = any_app.workspace
    users = {h: new_user(h)[0] for h in ("alice", "bob", "carol", "dave")}
    alice = users["alice"]
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    for h in ("bob", "carol", "dave"):
        add_member(ws, alice, f"{STUDIO}/members", {"handle": h})
    bob = users["bob"]
    urls = {
        "note": ws.execute(bob, STUDIO, "create_note", {"title": "Plan", "body": "one\ntwo\nthree", "tags": ["a"]}).url,
        "decision": ws.execute(bob, STUDIO, "create_decision", {"question": "Where?", "options": ["Here"]}).url,
        "commitment": ws.execute(bob, STUDIO, "create_commitment", {"title": "Run", "critical_mass": 2}).url,
    }
    ws.execute(users["carol"], urls["note"], "add_comment", {"body": "carol's first"})
    ws.execute(alice, f"{STUDIO}/members", "remove_member", {"handle": "dave"})
    return any_app, users, urls


def _comment_id(ws, user, url) -> str:
    return ws.page(user, url).data["comments"][0]["id"]


def _edits_accepted(ws, user, url) -> set[str]:
    found = set()
    for name in EDITS:
        try:
            ws.execute(user, url, name, PROBE)
        except InvalidActionParams:
            found.add(name)
        except ActionUnavailable:
            pass
    return found


def test_each_role_is_offered_exactly_the_edits_it_may_make(team):
    app, u, urls = team
    ws = app.workspace
    expected = {  # (user, page) → the edits listed, and accepted
        ("bob", "note"): {"edit_note"}, ("alice", "note"): set(), ("carol", "note"): {"edit_comment"},
        ("bob", "decision"): {"edit_decision"}, ("alice", "decision"): {"edit_decision"},
        ("carol", "decision"): set(),
        ("bob", "commitment"): {"edit_commitment"}, ("alice", "commitment"): {"edit_commitment"},
        ("carol", "commitment"): set(),
    }
    for (who, kind), edits in expected.items():
        listed = {a.name for a in ws.page(u[who], urls[kind]).actions} & EDITS
        assert listed == edits == _edits_accepted(ws, u[who], urls[kind]), (who, kind)
    for kind in urls:  # a former member sees nothing and edits nothing
        with pytest.raises(NotFound):
            ws.page(u["dave"], urls[kind])
        with pytest.raises(NotFound):
            ws.execute(u["dave"], urls[kind], "edit_" + kind, {"title": "mine"})
    # the admin edits neither a note nor someone's comment: the note is its author's
    with pytest.raises(ActionUnavailable, match="only the author"):
        ws.execute(u["alice"], urls["note"], "edit_note", {"title": "Admin's"})
    ws.execute(u["alice"], urls["note"], "add_comment", {"body": "alice's"})
    with pytest.raises(InvalidActionParams, match="only its author"):
        ws.execute(u["alice"], urls["note"], "edit_comment",
                   {"comment": _comment_id(ws, u["carol"], urls["note"]), "body": "rewritten"})
    # a closed decision is edited no more
    ws.execute(u["bob"], urls["decision"], "close_decision", {})
    with pytest.raises(ActionUnavailable, match="closed"):
        ws.execute(u["bob"], urls["decision"], "edit_decision", {"question": "Where now?"})


def test_a_stale_base_is_refused_naming_the_edit_since_and_the_latest_succeeds(team):
    app, u, urls = team
    ws, bob, note = app.workspace, u["bob"], urls["note"]
    assert "[Revision 1.]" in ws.page(bob, note).markdown
    first = ws.execute(bob, note, "edit_note", {"body": "one\n2\nthree", "base": 1}, client="claude-code")
    assert first.message == "Updated the note's body: revision 2."
    with pytest.raises(ActionFailed) as refused:
        ws.execute(bob, note, "edit_note", {"title": "Stale", "base": 1}, client="other-agent")
    said = refused.value.message
    assert "changed since revision 1" in said and "revision 2 by @bob via claude-code" in said
    assert "changed body" in said and "base 2" in said
    assert [f.field for f in refused.value.fields] == ["base"]
    with pytest.raises(InvalidActionParams, match="no revision 9"):
        ws.execute(bob, note, "edit_note", {"title": "Future", "base": 9})
    assert ws.page(bob, note).data["item"]["title"] == "Plan"  # nothing of the refused edits applied
    ws.execute(bob, note, "edit_note", {"title": "Plan B", "tags": ["b", "a"], "base": 2}, client="other-agent")
    page = ws.page(bob, note)
    assert page.data["item"]["revision"] == 3
    assert "[Revision 3; its history: `" + note + "?history=1`.]" in page.markdown
    history = ws.page(bob, f"{note}?history=1")
    text = history.markdown
    assert text.index("### Revision 3: @bob via other-agent") < text.index("### Revision 2: @bob via claude-code") \
        < text.index("### Revision 1: @bob wrote it")
    assert "- title: Plan → Plan B" in text and "-two\n+2" in text and "- tags: a → a" not in text
    assert [r["number"] for r in history.data["history"]["revisions"]] == [3, 2]
    tags = history.data["history"]["revisions"][0]["fields"][1]
    assert (tags["name"], tags["old"], tags["new"]) == ("tags", "a", "a\nb")
    # an edit that changes nothing is no revision
    same = ws.execute(bob, note, "edit_note", {"title": "Plan B", "base": 3})
    assert same.message.startswith("Nothing changed") and ws.page(bob, note).data["item"]["revision"] == 3


def test_decisions_commitments_and_comments_keep_revisions_too(team):
    app, u, urls = team
    ws, alice, bob, carol = app.workspace, u["alice"], u["bob"], u["carol"]
    r = ws.execute(alice, urls["decision"], "edit_decision",  # an admin edits bob's decision
                   {"question": "Where, finally?", "description": "pick one", "deadline": "2100-01-01", "tags": ["q"]})
    assert r.message == "Updated the decision's question, description, deadline, tags: revision 2."
    item = ws.page(bob, urls["decision"]).data["item"]
    assert (item["title"], item["body"], item["deadline"][:10]) == ("Where, finally?", "pick one", "2100-01-01")
    assert "### Revision 2: @alice" in ws.page(bob, urls["decision"] + "?history=1").markdown
    # a commitment's limit: not below who joined, nor its critical mass
    ws.execute(carol, urls["commitment"], "join_commitment", {})
    ws.execute(alice, urls["commitment"], "join_commitment", {})
    for limit, said in ((1, "2 people have joined"),):
        with pytest.raises(InvalidActionParams, match=said):
            ws.execute(bob, urls["commitment"], "edit_commitment", {"limit": limit})
    ws.execute(bob, urls["commitment"], "edit_commitment", {"limit": 3, "title": "Run twice"})
    assert ws.page(bob, urls["commitment"]).data["item"]["participant_limit"] == 3
    # a comment: its author edits it, with a base; the item page says it was edited
    cid = _comment_id(ws, carol, urls["note"])
    ws.execute(carol, urls["note"], "edit_comment", {"comment": cid, "body": "carol's second", "base": 1})
    with pytest.raises(ActionFailed, match="revision 2 by @carol"):
        ws.execute(carol, urls["note"], "edit_comment", {"comment": cid, "body": "third", "base": 1})
    page = ws.page(bob, urls["note"]).markdown
    assert f"· `{cid}` (edited: revision 2" in page and "carol's second" in page
    history = ws.page(bob, f"{urls['note']}?comment={cid}&history=1").markdown
    assert f"## History of comment `{cid}`" in history and "- body: carol's first → carol's second" in history
    assert "### Revision 1: @carol wrote it" in history
    with pytest.raises(InvalidActionParams, match="no comment"):
        ws.execute(carol, urls["note"], "edit_comment", {"comment": "nope", "body": "x"})
    # the edited text is what search finds
    assert urls["note"] in ws.page(bob, f"{STUDIO}/search?q=second").markdown


def test_over_mcp_a_stale_base_names_the_other_edit(team):
    app, u, urls = team
    rpc = Rpc(app, mint_token(app.secret, u["bob"]["id"]))

    def call(name, **arguments):
        return rpc.call("tools/call", name=name, arguments=arguments)

    note = urls["note"]
    assert not call("execute_action", action="edit_note", url=note, params={"title": "Agent's", "base": 1})["isError"]
    app.workspace.execute(u["bob"], note, "edit_note", {"body": "by hand", "base": 2}, client="browser")
    stale = call("execute_action", action="edit_note", url=note, params={"title": "Agent's again", "base": 2})
    assert stale["isError"] and "revision 3 by @bob via browser" in stale["content"][0]["text"]
    assert not call("execute_action", action="edit_note", url=note, params={"title": "Agent's again", "base": 3})["isError"]
    history = call("navigate", url=f"{note}?history=1")["content"][0]["text"]
    assert "### Revision 4: @bob via rpc-test" in history and "### Revision 3: @bob via browser" in history
    assert "### Revision 2: @bob via rpc-test" in history


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_keeps_every_edit_a_revision_by_who_may_make_it(team, pg_database):
    """On PostgreSQL, by SQL as the app role: a member changes nobody's text, even with the number
    raised; the author changes theirs only as one more revision; a revision row is written only by
    the edit it records; nobody rewrites or removes one."""
    import psycopg

    app, u, urls = team
    ws = app.workspace
    ids = {k: url.rsplit("/", 1)[1] for k, url in urls.items()}
    cid = _comment_id(ws, u["carol"], urls["note"])

    def as_(user, sql, params=()):
        with app.store.write(user_id=u[user]["id"]) as tx:
            return tx.execute(sql, params)

    def owner(sql, params=()):
        with psycopg.connect(pg_database.admin_url) as conn:
            return conn.execute(sql, params).fetchall()

    with app.store.read(user_id=u["bob"]["id"]) as tx:
        studio = tx.scalar("SELECT id FROM studios WHERE handle = 'team'")
    for who, item in (("carol", "note"), ("carol", "decision"), ("alice", "note")):
        assert as_(who, "UPDATE items SET title = 'defaced', revision = revision + 1 WHERE id = ?", (ids[item],)) == 0
    assert as_("carol", "UPDATE items SET deadline = '2000', participant_limit = 1, revision = revision + 1") == 0
    assert as_("bob", "UPDATE items SET title = 'silently' WHERE id = ?", (ids["note"],)) == 0  # no revision: no edit
    assert as_("bob", "UPDATE items SET title = 'leap', revision = revision + 2 WHERE id = ?", (ids["note"],)) == 0
    assert as_("carol", "UPDATE comments SET body = 'quietly' WHERE id = ?", (cid,)) == 0
    assert as_("bob", "UPDATE comments SET body = 'by bob', revision = revision + 1 WHERE id = ?", (cid,)) == 0
    assert owner("SELECT title FROM items WHERE id = %s", (ids["note"],)) == [("Plan",)]
    assert owner("SELECT body, revision FROM comments WHERE id = %s", (cid,)) == [("carol's first", 1)]
    forged = ("INSERT INTO revisions (item_id, comment_id, studio_id, number, created_by, client, created_at, changes)"
              " VALUES (?, ?, ?, ?, ?, 'x', 'now', '{}')")
    for who, args in (("carol", (ids["note"], None, studio, 2, u["carol"]["id"])),  # not hers to edit
                      ("bob", (ids["note"], None, studio, 2, u["bob"]["id"])),  # his, but no edit made it 2
                      ("carol", (ids["note"], None, studio, 2, u["bob"]["id"])),  # in bob's name
                      ("alice", (ids["note"], cid, studio, 2, u["alice"]["id"]))):  # carol's comment
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            as_(who, forged, args)
    # the admin edits bob's decision as one revision, through the action and by SQL alike
    ws.execute(u["alice"], urls["decision"], "edit_decision", {"question": "Where, then?", "tags": ["t"]})
    assert as_("alice", "UPDATE items SET body = 'by sql', revision = revision + 1 WHERE id = ?", (ids["decision"],)) == 1
    # a revision stays as written: nobody rewrites or removes one
    for who in ("alice", "bob"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            as_(who, "UPDATE revisions SET changes = '{}'")
        assert as_(who, "DELETE FROM revisions") == 0  # only a deleted comment's go (delete_comment)
    assert owner("SELECT number, created_by FROM revisions WHERE item_id = %s", (ids["decision"],)) == [
        (2, u["alice"]["id"])]
    # deleting a comment: its author or an admin, blanked, in their own name; then nothing changes it
    mark = "UPDATE comments SET body = '', deleted_at = 'now', deleted_by = ? WHERE id = ?"
    assert as_("bob", mark, (u["bob"]["id"], cid)) == 0  # not his
    assert as_("alice", mark, (u["carol"]["id"], cid)) == 0  # in carol's name
    assert as_("alice", "UPDATE comments SET deleted_at = 'now', deleted_by = ? WHERE id = ?",
               (u["alice"]["id"], cid)) == 0  # its text kept
    assert as_("alice", mark, (u["alice"]["id"], cid)) == 1  # the admin
    assert as_("carol", "UPDATE comments SET body = 'back', revision = revision + 1, deleted_at = NULL,"
               " deleted_by = NULL WHERE id = ?", (cid,)) == 0


def test_the_web_app_shows_a_readable_diff_and_the_revision(team):
    from navmcp.web.html import render_page

    app, u, urls = team
    ws, bob = app.workspace, u["bob"]
    ws.execute(bob, urls["note"], "edit_note", {"body": "one\n<b>two</b>\nthree"})
    html = render_page(ws.page(bob, urls["note"] + "?history=1"), csrf="x", alternates={})
    assert '<span class="del"><del>two</del></span>' in html
    assert '<span class="ins"><ins>&lt;b&gt;two&lt;/b&gt;</ins></span>' in html  # user text stays text
    assert '<span class="same">one</span>' in html and "Revision 1" in html
    page = render_page(ws.page(bob, urls["note"]), csrf="x", alternates={})
    assert f'<dt>Revision</dt><dd>2 · <a href="{urls["note"]}?history=1">history</a>' in page


def test_a_persons_own_comment_has_its_edit_and_delete_in_place(team):
    from navmcp.web.html import render_page

    app, u, urls = team
    ws = app.workspace
    cid = _comment_id(ws, u["carol"], urls["note"])
    listed = render_page(ws.page(u["carol"], urls["note"]), csrf="x", alternates={})
    assert f'<a href="?comment={cid}">Edit or delete</a>' in listed and "data-edit-comment" not in listed
    mine = render_page(ws.page(u["carol"], f"{urls['note']}?comment={cid}"), csrf="x", alternates={})
    assert f'data-edit-comment="{cid}"' in mine and f'data-delete-comment="{cid}"' in mine
    assert "carol&#39;s first</textarea>" in mine  # the edit starts from the text
    theirs = render_page(ws.page(u["bob"], urls["note"]), csrf="x", alternates={})
    assert "data-edit-comment" not in theirs and "Edit or delete" not in theirs


def test_options_nobody_voted_on_are_renamed_or_removed_and_voted_ones_stay(team):
    """edit_decision renames and removes options without votes, as one revision; an option with a
    vote keeps its title and place; who may is the decision's rule (creator or admin)."""
    app, u, urls = team
    ws, decision = app.workspace, urls["decision"]
    for title in ("There", "Elsewhere", "Nowhere"):
        ws.execute(u["carol"], decision, "add_option", {"title": title})
    ws.execute(u["carol"], decision, "vote", {"votes": [{"option": "Here"}]})
    for params in ({"rename_options": [{"option": "Here", "title": "Home"}]}, {"remove_options": ["1"]},
                   {"remove_options": ["There", "Here"]}):
        with pytest.raises(InvalidActionParams, match="has votes"):
            ws.execute(u["bob"], decision, "edit_decision", params)
    with pytest.raises(InvalidActionParams, match="no option"):
        ws.execute(u["bob"], decision, "edit_decision", {"remove_options": ["Atlantis"]})
    with pytest.raises(InvalidActionParams, match="look the same"):
        ws.execute(u["bob"], decision, "edit_decision", {"rename_options": [{"option": "There", "title": "Ｈｅｒｅ"}]})
    titles = [o["title"] for o in ws.page(u["bob"], decision).data["options"]]
    assert titles == ["Here", "There", "Elsewhere", "Nowhere"]  # a refused edit changed nothing
    done = ws.execute(u["bob"], decision, "edit_decision",
                      {"rename_options": [{"option": "2", "title": "Over there"}], "remove_options": ["Elsewhere"]})
    assert "options" in done.message and "revision 2" in done.message
    assert [o["title"] for o in ws.page(u["bob"], decision).data["options"]] == ["Here", "Over there", "Nowhere"]
    history = ws.page(u["bob"], f"{decision}?history=1").markdown
    assert "Over there" in history and "Elsewhere" in history
    assert decision in ws.page(u["carol"], f"{STUDIO}/search?q=over").markdown  # the new title is searched
    # the admin may too; a member or a former member may not
    ws.execute(u["alice"], decision, "edit_decision", {"remove_options": ["Nowhere"]})
    assert [o["title"] for o in ws.page(u["bob"], decision).data["options"]] == ["Here", "Over there"]
    for who in ("carol", "dave"):
        with pytest.raises((ActionUnavailable, NotFound)):
            ws.execute(u[who], decision, "edit_decision", {"remove_options": ["Over there"]})
    # once the option has a vote, it stays
    ws.execute(u["carol"], decision, "vote", {"votes": [{"option": "Here"}, {"option": "Over there", "accept": False}]})
    with pytest.raises(InvalidActionParams, match="has votes"):
        ws.execute(u["alice"], decision, "edit_decision", {"remove_options": ["Over there"]})


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_row_level_security_keeps_voted_options_and_others_decisions(team, pg_database):
    """By SQL as the app role: only the decision's creator or an admin renames or removes an option,
    and only one nobody voted on."""
    app, u, urls = team
    ws, decision = app.workspace, urls["decision"]
    ws.execute(u["carol"], decision, "add_option", {"title": "There"})
    ws.execute(u["carol"], decision, "vote", {"votes": [{"option": "Here"}]})
    with app.store.read(user_id=u["bob"]["id"]) as tx:
        ids = {r["title"]: r["id"] for r in tx.all("SELECT id, title FROM options")}

    def as_(user, sql, params=()):
        with app.store.write(user_id=u[user]["id"]) as tx:
            return tx.execute(sql, params)

    rename, remove = "UPDATE options SET title = 'X' WHERE id = ?", "DELETE FROM options WHERE id = ?"
    for who in ("carol", "dave"):  # a member (who added it) and a former member
        assert as_(who, rename, (ids["There"],)) == 0 and as_(who, remove, (ids["There"],)) == 0
    assert as_("bob", rename, (ids["Here"],)) == 0 and as_("alice", remove, (ids["Here"],)) == 0  # voted on
    assert as_("bob", rename, (ids["There"],)) == 1
    assert as_("alice", remove, (ids["There"],)) == 1
    assert [o["title"] for o in ws.page(u["bob"], decision).data["options"]] == ["Here"]
