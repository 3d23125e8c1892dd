"""A varied workspace and a snapshot of every page type in it, to check that a change leaves pages alone.

    # once, before a change: build a workspace and save what its pages look like
    python tests/golden_pages.py build  HOME [--pg URL --pg-owner OWNER_URL]
    python tests/golden_pages.py save   HOME [--pg URL] OUT.json
    # after the change: the same pages, compared with the saved ones
    python tests/golden_pages.py check  HOME [--pg URL] OUT.json

A snapshot holds, per (user, URL): the markdown, the HTML rendition, the structured content, the
page's data dict (repr, so key order and types count), the JSON rendition, and what resolving the
page gives the action rules (role, studio, item, facts) in a read and in a write transaction; or
the error, for pages the user may not see. The workspace's rows are made once, so ids and times match between runs.
`tests/test_page_golden.py` builds it on both stores and checks that they give the same pages.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nav_helpers import add_member

USERS = ("alice", "bob", "carol")  # alice admin of `team`, bob member, carol in no studio


def build(app, leave: bool = True, owner_url: str | None = None) -> None:
    """Notes, decisions and commitments in every state a page distinguishes. `leave`: dave, who wrote
    some of them, leaves the studio at the end (a former member: his work stays, under his handle).
    `owner_url`: on PostgreSQL, the tables' owner, who sets what no action writes (past deadlines)."""
    from navmcp.identity import add_user

    if app.config.database_url and not owner_url:
        raise ValueError("on PostgreSQL, build needs the owner's URL: navmcp_app may not set a deadline")

    alice, bob, carol, dave = (add_user(app.store, h) for h in (*USERS, "dave"))
    ws = app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team", "description": "the *team*"})
    ws.execute(alice, "/", "create_studio", {"handle": "solo", "name": "Solo"})
    for who in ("bob", "dave"):
        add_member(ws, alice, "/studios/team/members", {"handle": who})
    new = lambda user, action, params: ws.execute(user, "/studios/team", action, params).url  # noqa: E731
    plan = new(alice, "create_note", {"title": "Plan [v1]", "body": "the plan\n" + "x" * 13000, "tags": ["a", "b"]})
    reply = new(bob, "create_note", {"title": "Reply", "body": f"re {plan}", "tags": ["a"]})
    for n in range(23):
        ws.execute(bob if n % 2 else dave, plan, "add_comment", {"body": f"comment {n} " + ("long " * 300 if n == 3 else "")})
    ws.execute(bob, plan, "confirm_read", {})
    ws.execute(dave, plan, "confirm_read", {})
    ws.execute(alice, plan, "pin", {})
    ws.execute(alice, reply, "pin", {})
    ws.execute(alice, reply, "unpin", {})
    dec = new(alice, "create_decision", {"question": "Which?", "description": f"see {plan}", "options": ["X", "Y", "Z"]})
    ws.execute(bob, dec, "vote", {"votes": [{"option": "X", "prefer": True}, {"option": "Y"}]})
    ws.execute(dave, dec, "vote", {"votes": [{"option": "Y", "prefer": True}]})
    closed = new(bob, "create_decision", {"question": "Closed?", "options": ["A", "B"]})
    ws.execute(alice, closed, "vote", {"votes": [{"option": "A"}, {"option": "B"}]})
    ws.execute(bob, closed, "close_decision", {})
    late = new(bob, "create_decision", {"question": "Late?", "options": ["P"]})
    ws.execute(dave, late, "vote", {"votes": [{"option": "P"}]})
    new(dave, "create_decision", {"question": "Empty?"})
    full = new(alice, "create_commitment", {"title": "Full", "critical_mass": 1, "limit": 2})
    ws.execute(bob, full, "join_commitment", {})
    ws.execute(dave, full, "join_commitment", {})
    mass = new(bob, "create_commitment", {"title": "Mass", "critical_mass": 2})
    ws.execute(alice, mass, "join_commitment", {})
    ws.execute(dave, mass, "join_commitment", {})
    short = new(dave, "create_commitment", {"title": "Short", "critical_mass": 5, "limit": 9})
    ws.execute(bob, short, "join_commitment", {})
    done = new(alice, "create_commitment", {"title": "Done", "critical_mass": 1})
    ws.execute(alice, done, "join_commitment", {})
    ws.execute(alice, done, "close_commitment", {})
    expired = new(bob, "create_commitment", {"title": "Expired", "critical_mass": 3})
    # Decision kinds (navmcp/kinds): a consent proposal amended after an objection, open, and one
    # closed; a dot vote; a time poll closed into a commitment; a quorum missed.
    prop = new(bob, "create_decision", {"question": "Proposal?", "description": "Move the sync to *Thursday*",
                                        "kind": "consent", "deadline": "2100-01-01", "tags": ["a"]})
    ws.execute(dave, prop, "object", {"reason": "Thursdays clash with the client call"})
    ws.execute(alice, prop, "consent", {})
    ws.execute(bob, prop, "amend", {"text": "Move the sync to Thursday 11:00", "note": "after the client call"})
    passed = new(alice, "create_decision", {"question": "Passed?", "kind": "consent", "max_objections": 1})
    ws.execute(bob, passed, "object", {"reason": "I would rather not, but go ahead"})
    ws.execute(alice, passed, "close_decision", {})
    dotted = new(alice, "create_decision", {"question": "Dots?", "kind": "dots", "dots": 4, "options": ["D1", "D2", "D3"]})
    ws.execute(bob, dotted, "allocate", {"dots": [{"option": "D2", "dots": 3}, {"option": 1, "dots": 1}]})
    ws.execute(dave, dotted, "allocate", {"dots": [{"option": "D1", "dots": 4}]})
    poll = new(bob, "create_decision", {"question": "When?", "kind": "times", "duration_minutes": 30,
                                        "options": ["2100-03-01T10:00+01:00", "2100-03-02 15:00 Europe/Lisbon"]})
    ws.execute(alice, poll, "add_time", {"start": "2100-03-03 08:00"})
    ws.execute(alice, poll, "answer", {"times": [{"option": 1, "answer": "yes"}, {"option": 2, "answer": "maybe"}]})
    ws.execute(dave, poll, "answer", {"times": [{"option": 1, "answer": "maybe"}, {"option": 3, "answer": "no"}]})
    ws.execute(bob, poll, "close_poll", {})
    polled = new(alice, "create_decision", {"question": "Open poll?", "kind": "times", "options": ["2100-04-01 09:00"]})
    ws.execute(bob, polled, "answer", {"times": [{"option": 1, "answer": "maybe"}]})
    unmet = new(alice, "create_decision", {"question": "Quorum?", "options": ["Q"], "quorum": "100%"})
    ws.execute(bob, unmet, "vote", {"votes": [{"option": "Q"}]})
    ws.execute(alice, unmet, "close_decision", {})
    for n in range(22):
        new(alice if n % 3 else bob, "create_note", {"title": f"Filler {n}", "body": f"n{n}", "tags": ["f"]})
    ws.execute(alice, "/studios/solo", "create_note", {"title": "Secret", "body": "solo only"})
    if leave:
        ws.execute(alice, "/studios/team/members", "remove_member", {"handle": "dave"})
    # Deadlines passed (an action would refuse a past deadline): set in the rows.
    past = "UPDATE items SET deadline = '2020-01-01T00:00:00.000000Z' WHERE id = ?"
    ids = [url.rsplit("/", 1)[1] for url in (late, expired)]
    if owner_url:
        import psycopg

        with psycopg.connect(owner_url) as owner:
            for item_id in ids:
                owner.execute(past.replace("?", "%s"), (item_id,))
    else:
        with app.store.write(user_id=alice["id"]) as tx:
            for item_id in ids:
                tx.execute(past, (item_id,))


def urls(app) -> list[str]:
    """Every page type, with the query variations each one reads."""
    with app.store.read() as tx:
        alice = tx.find_user("alice")
    with app.store.read(user_id=alice["id"]) as tx:
        items = tx.all("SELECT i.id, i.kind, i.title FROM items i JOIN studios s ON s.id = i.studio_id"
                       " WHERE s.handle = 'team' ORDER BY i.title")
        comment = tx.scalar("SELECT c.id FROM comments c JOIN items i ON i.id = c.item_id"
                            " WHERE i.title = 'Plan [v1]' ORDER BY c.created_at, c.seq LIMIT 1 OFFSET 3")
        solo = tx.scalar("SELECT id FROM items WHERE title = 'Secret'")
    from navmcp.content.domain import CYCLES, KIND_LETTER

    base = "/studios/team"
    found = ["/", "/whoami", "/inbox", "/inbox?page=9", "/help", "/help/urls", base, f"{base}?page=2", f"{base}?page=9", f"{base}/members",
             f"{base}/audit", f"{base}/audit?page=2", f"{base}/search?q=plan", f"{base}/search?q=comment&page=2",
             f"{base}/search?q=", f"{base}/tags/a", f"{base}/tags/f?page=2", f"{base}/tags/none", "/studios/solo",
             f"/studios/solo/n/{solo}", f"{base}/n/{solo}", "/studios/nope", f"{base}/n/nope",
             *(f"{base}/cycles/{c}" for c in CYCLES), f"{base}/cycles/never",
             # page numbers past the end of their lists (and of an empty one)
             f"{base}/members?page=2", f"{base}/audit?page=99", f"{base}/search?q=comment&page=9",
             f"{base}/tags/a?page=2", f"{base}/tags/none?page=2", f"{base}/cycles/today?page=9"]
    for item in items:
        url = f"{base}/{KIND_LETTER[item['kind']]}/{item['id']}"
        found.append(url)
        if item["title"] == "When?":
            found += [f"{url}?tz=Asia/Tokyo", f"{url}?tz=Nowhere/City"]
        if item["title"] == "Plan [v1]":
            found += [f"{url}?page=2", f"{url}?part=3", f"{url}?part=2&page=2", f"{url}?page=3", f"{url}?part=9",
                      f"{url}?comment={comment}",
                      f"{url}?comment=nope", f"{base}/d/{item['id']}"]
    return found


def snapshot(app) -> dict[str, object]:
    """What every page looks like to each user, plus Next links followed once (keyset pages)."""
    from navmcp.pages import make_request
    from navmcp.web.html import render_page

    with app.store.read() as tx:
        users = {handle: tx.find_user(handle) for handle in USERS}
    shots: dict[str, object] = {}
    todo = [(u, url) for u in USERS for url in urls(app)]
    while todo:
        handle, url = todo.pop(0)
        key = f"{handle} {url}"
        if key in shots:
            continue
        user = users[handle]
        try:
            page = app.workspace.page(user, url)
        except Exception as e:  # noqa: BLE001 — the refusal is part of the page's contract
            shots[key] = {"error": type(e).__name__, "message": str(e)}
            continue
        resolved = {}
        for mode in ("read", "write"):
            try:
                with getattr(app.store, mode)(user_id=user["id"]) as tx:
                    spec, req = make_request(tx, user, "golden", url)
                    spec.resolve(req)
                    resolved[mode] = repr((req.role, req.studio, req.item, req.facts))
                    raise _Rollback
            except _Rollback:
                pass
        shots[key] = {"markdown": page.markdown, "structured": page.structured(), "data": repr(page.data),
                      "json": page.as_json(),
                      "html": render_page(page, csrf="csrf", alternates={}), "resolved": resolved}
        pager = page.data.get("pager") or {}
        if pager.get("next") and "after=" in pager["next"]:
            todo.append((handle, pager["next"]))
    return shots


class _Rollback(Exception):
    pass


def _app(home: str, pg: str | None):
    from navmcp.app import App
    from navmcp.config import Config

    return App(Config(home=Path(home), database_url=pg, token=None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build", "save", "check"])
    parser.add_argument("home")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--pg", help="a PostgreSQL URL (navmcp_app) instead of the SQLite file in HOME")
    parser.add_argument("--pg-owner", help="build on PostgreSQL: the tables' owner (sets past deadlines)")
    args = parser.parse_args(argv)
    app = _app(args.home, args.pg)
    if args.command == "build":
        build(app, owner_url=args.pg_owner)
        return 0
    shots = snapshot(app)
    if args.command == "save":
        Path(args.out).write_text(json.dumps(shots, indent=1, sort_keys=True))
        print(f"saved {len(shots)} pages")
        return 0
    saved = json.loads(Path(args.out).read_text())
    shots = json.loads(json.dumps(shots))
    bad = [k for k in sorted(saved.keys() | shots.keys()) if saved.get(k) != shots.get(k)]
    for key in bad[:20]:
        for field in sorted((saved.get(key) or {}).keys() | (shots.get(key) or {}).keys()):
            if (saved.get(key) or {}).get(field) != (shots.get(key) or {}).get(field):
                print(f"DIFFERS: {key} [{field}]")
    print(f"{len(shots)} pages, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
