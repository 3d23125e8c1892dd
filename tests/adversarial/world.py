"""A small workspace to attack: one studio `adv` with an admin, an author, a plain member, and an
outsider with a studio of their own (`other`), plus one item of each kind written by the author.

`build(home)` creates it through the real workspace (the same code path agents use) and returns
the URLs and tokens; `copy(world, dest)` clones it (database and secret) for a test that writes.
On PostgreSQL, `build(home, database=(app URL, owner URL))` writes it there, as the app role under
row-level security, and `copy(world, dest, database)` points the clone at a copy of that database
(the caller makes it, from the first as a template).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user, create_user, ensure_owner, mint_token

ROLES = ("admin", "author", "member", "outsider")


@dataclass
class World:
    home: Path
    tokens: dict[str, str]
    users: dict[str, dict[str, Any]]
    urls: dict[str, str] = field(default_factory=dict)
    database: tuple[str, str] | None = None  # PostgreSQL: (app URL, owner URL); None: SQLite in `home`

    def app(self, **config: Any) -> App:
        return App(Config(home=self.home, database_url=self.database[0] if self.database else None, token=None,
                          **config))

    def env(self, role: str | None) -> dict[str, str | None]:
        return {"NAVMCP_HOME": str(self.home), "NAVMCP_TOKEN": self.tokens.get(role) if role else None,
                "NAVMCP_DATABASE_URL": None}


def act(app: App, user, url: str, action: str, **params: Any) -> str:
    return app.workspace.execute(user, url, action, params, "world-builder").url


def build(home: Path, extra_users: int = 0, database: tuple[str, str] | None = None) -> World:
    app = App(Config(home=home, database_url=database[0] if database else None, token=None))
    users = {}
    if database is None:
        ensure_owner(app.store)
        with app.store.write() as tx:
            for role in ROLES:
                users[role] = create_user(tx, role, findable=True)
            for n in range(extra_users):
                users[f"user{n}"] = create_user(tx, f"user{n}", findable=True)
    else:  # each user inserts only themselves there
        for name in (*ROLES, *[f"user{n}" for n in range(extra_users)]):
            users[name] = add_user(app.store, name)
    tokens = {name: mint_token(app.secret, u["id"]) for name, u in users.items()}
    w = World(home=home, tokens=tokens, users=users, database=database)
    admin, author = users["admin"], users["author"]
    w.urls["studio"] = act(app, admin, "/", "create_studio", handle="adv", name="Adversarial", description="a studio")
    for handle in ["author", "member", *[f"user{n}" for n in range(extra_users)]]:
        add_member(app.workspace, admin, "/studios/adv/members", {"handle": handle}, client="world-builder")
    w.urls["other"] = act(app, users["outsider"], "/", "create_studio", handle="other", name="Other studio",
                          description="secret plans")
    w.urls["other_note"] = act(app, users["outsider"], "/studios/other", "create_note", title="Secret other note",
                               body="the other studio's secret")
    w.urls["note"] = act(app, author, "/studios/adv", "create_note", title="A note", body="note body", tags=["x"])
    w.urls["pinned_note"] = act(app, author, "/studios/adv", "create_note", title="Pinned note", body="pinned")
    act(app, admin, w.urls["pinned_note"], "pin")
    # something unread for the author (a comment on their note) and the member (a mention): mark_read's
    # to mark (they joined by accepting an invitation, which left nothing unread)
    act(app, admin, w.urls["pinned_note"], "add_comment", body="pinned, for @member too")
    w.urls["decision"] = act(app, author, "/studios/adv", "create_decision", question="Which?",
                             options=["Red", "Blue"])
    w.urls["commitment"] = act(app, author, "/studios/adv", "create_commitment", title="Do it", critical_mass=2,
                               limit=1000)
    for kind in ("note", "decision", "commitment"):  # the author's comment on each: edit_comment's to edit
        act(app, author, w.urls[kind], "add_comment", body=f"the author on the {kind}")
        with app.store.read(user_id=author["id"]) as tx:
            w.urls[f"{kind}_comment"] = tx.scalar("SELECT id FROM comments WHERE item_id = ?",
                                                  (w.urls[kind].rsplit("/", 1)[1],))  # an id, not a URL
        # the author's file on each: remove_attachment's to remove, and a file's page
        w.urls[f"{kind}_file"] = act(app, author, w.urls[kind], "attach", filename=f"{kind}.txt",
                                     content_type="text/plain", data="aGVsbG8=")
        w.urls[f"{kind}_file_id"] = w.urls[f"{kind}_file"].rsplit("/", 1)[1]  # an id, not a URL
    # one decision of each other kind (navmcp/kinds), by the author
    w.urls["proposal"] = act(app, author, "/studios/adv", "create_decision", question="Proposal?", kind="consent",
                             description="the proposal")
    w.urls["dotted"] = act(app, author, "/studios/adv", "create_decision", question="Dots?", kind="dots",
                           options=["Red", "Blue"])
    w.urls["poll"] = act(app, author, "/studios/adv", "create_decision", question="When?", kind="times",
                         options=["2100-01-01 10:00"])
    # a note the author deleted: on the studio's Deleted list, restore_item's to restore (navmcp.content.deletion)
    deleted = act(app, author, "/studios/adv", "create_note", title="Deleted note", body="gone")
    act(app, author, deleted, "delete_item", confirm="Deleted note")
    w.urls["deleted_note"], w.urls["deleted_note_id"] = deleted, deleted.rsplit("/", 1)[1]
    act(app, admin, "/studios/adv/members", "create_invitation")
    owner_sql(w, app, "UPDATE invitations SET id = 'w0rld1nv' WHERE invitee_id IS NULL")  # the open link the tests know
    # a held action (navmcp/held): the author's agent's remind, waiting for an admin; the rule that
    # held it is removed again, so no other write of the world's is held
    ws = app.workspace
    ws.execute(admin, "/studios/adv/held", "set_hold_rule", {"actions": "remind", "approvers": "admins"}, browser=True)
    w.urls["held"] = act(app, author, w.urls["decision"], "remind")
    owner_sql(w, app, "DELETE FROM hold_rules")
    app.store.close()
    return w


def owner_sql(w: World, app: App, sql: str, params: tuple = ()) -> list[tuple]:
    """A statement past any row-level security (the world's own set-up and a test's checks): on
    SQLite through the app's store, on PostgreSQL as the database's owner. `?` placeholders."""
    if w.database is None:
        with app.store.write() as tx:
            cursor = tx.cursor.execute(sql, params)
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
    import psycopg

    with psycopg.connect(w.database[1], autocommit=True) as conn:
        cur = conn.execute(sql.replace("%", "%%").replace("?", "%s"), params)
        return cur.fetchall() if cur.description else []


def copy(world: World, dest: Path, database: tuple[str, str] | None = None) -> World:
    shutil.copytree(world.home, dest)
    return World(home=dest, tokens=dict(world.tokens), users=dict(world.users), urls=dict(world.urls),
                 database=database)


def build_crowd(home: Path, agents: int, limit: int) -> tuple[World, App]:
    """A world for crowds: `agents` extra users, a decision everyone votes on, one raced by its
    creator's closing, and a commitment with `limit` places. Returns the open app too (close it)."""
    w = build(home, extra_users=agents)
    app = w.app()
    admin = w.users["admin"]
    w.urls["crowd_decision"] = act(app, admin, "/studios/adv", "create_decision", question="Crowd?",
                                   options=["A", "B", "C"])
    w.urls["race_decision"] = act(app, w.users["user0"], "/studios/adv", "create_decision", question="Race?",
                                  options=["Now", "Later"])
    w.urls["crowd_commitment"] = act(app, admin, "/studios/adv", "create_commitment", title="Crowd",
                                     critical_mass=agents // 2, limit=limit)
    return w, app
