"""Fill a database with a realistic workspace, fast: `navmcp seed --items N [--studio bench]`.

Used by the benchmarks (bench/) and handy for trying pages at scale. One studio gets N items — a
mix of notes, decisions (with options and votes) and commitments (with participants) — spread over
the past year, with comments, tags and read confirmations, written by a few dozen members. All rows
go in with `executemany` inside one write transaction; the full-text indexes, the item counts and
each commitment's participant count are kept by their triggers in the same transaction. Generation
is deterministic for a given `--seed`.

A few "fixture" items are created last, by the local owner: an open note, an open decision with
three options and an open commitment, each with two comments. Their URLs are printed (`--json`)
so a benchmark can navigate to the same pages on every database size.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from navmcp.domain import KIND_LETTER
from navmcp.identity import _ID_ALPHABET, ensure_owner, now
from navmcp.store import Store

WORDS = (
    "plan roadmap budget hiring launch review retro standup design api latency cache release beta "
    "customer feedback onboarding pricing security audit migration database schema index search "
    "backlog sprint cycle quarter goal metric dashboard incident postmortem deploy rollback test "
    "coverage docs guide meeting agenda notes decision vote option proposal draft final approve "
    "reject summary offsite travel vendor contract invoice support ticket bug fix feature flag "
    "experiment growth churn retention mobile web desktop accessibility performance memory storage"
).split()
TAGS = ("planning q1 q2 q3 q4 infra hiring design product ops security finance research growth "
        "support docs release retro mobile web data ml legal sales marketing onboarding").split()
KINDS = ("note", "decision", "commitment")
KIND_WEIGHTS = (60, 25, 15)
BATCH = 20_000  # rows generated and written per executemany call (bounded memory)
FMT = "%Y-%m-%dT%H:%M:%S.%fZ"


class Ids:
    """Unique 10-character ids in the store's alphabet from a seeded generator (50 random bits each)."""

    def __init__(self, rng: random.Random):
        self.rng, self.seen = rng, set()

    def __call__(self) -> str:
        while True:
            bits = self.rng.getrandbits(50)
            value = "".join(_ID_ALPHABET[(bits >> shift) & 31] for shift in range(0, 50, 5))
            if value not in self.seen:
                self.seen.add(value)
                return value


class Texts:
    """Titles, bodies and comments drawn from pools made once: generating every text word by word
    would take most of the seeding time, and a pool of thousands reads just as varied on a page."""

    def __init__(self, rng: random.Random, size: int = 4096):
        self.rng = rng
        self.titles = [_sentence(rng, 3, 8) for _ in range(size)]
        self.bodies = [_body(rng) for _ in range(size)]
        self.comments = [_sentence(rng, 4, 20) + "." for _ in range(size)]
        self.options = [_sentence(rng, 2, 4) for _ in range(size)]

    def pick(self, pool: list[str]) -> str:
        return pool[self.rng.getrandbits(12)]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(lo, hi))
    return " ".join(words).capitalize()


def _body(rng: random.Random) -> str:
    return ". ".join(_sentence(rng, 5, 12) for _ in range(rng.randint(1, 4))) + "."


def _plan(rng_seed: int):
    """What both stores' seeds start from: the clock, the random source and its ids, the year of
    timestamps the rows spread over (ending five minutes ago), and zeroed counts."""
    rng = random.Random(rng_seed)
    end = datetime.now(timezone.utc) - timedelta(minutes=5)
    start = end - timedelta(days=365)
    counts = {"items": 0, "notes": 0, "decisions": 0, "commitments": 0, "options": 0, "votes": 0,
              "participants": 0, "comments": 0, "tags": 0, "reads": 0}
    return time.perf_counter(), rng, Ids(rng), start, (end - start).total_seconds(), counts


def seed(store: Store, items: int, studio: str = "bench", members: int = 40, rng_seed: int = 1) -> dict[str, Any]:
    """Create `studio` with `items` items and return a summary with the fixture URLs."""
    started, rng, new_id, start, span, counts = _plan(rng_seed)
    owner = ensure_owner(store)
    with store.write() as tx:
        conn = tx.conn  # bulk loading is SQLite-specific: executemany on the raw connection
        conn.execute("PRAGMA cache_size = -262144")  # 256 MiB of page cache while indexes grow
        fixtures = _fill(conn, rng, new_id, owner["id"], items, studio, members, start, span, counts)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.conn.execute("PRAGMA optimize")
    counts["seconds"] = round(time.perf_counter() - started, 1)
    return {"studio": studio, "studio_url": f"/studios/{studio}", "counts": counts, "urls": fixtures}


def seed_postgres(url: str, items: int, studio: str = "bench", members: int = 40, rng_seed: int = 1) -> dict[str, Any]:
    """`seed` on PostgreSQL, connected as the database owner (`url`): row-level security lets
    `navmcp_app` insert nothing in bulk, and COPY is only fast without per-row policies. Same rows,
    ids and timestamp formats as on SQLite, in one transaction: the rows go in with COPY; the item
    and participant counter triggers are switched off for the load (in this transaction only), and
    `studio_item_counts` and the commitments' `participant_count` set from one count each (one
    update per commitment, not one per participant); the generated `tsvector` columns fill
    themselves; ANALYZE at the end. The local owner (settings 'owner', as `ensure_owner` makes it)
    is the studio's admin, and every seeded member a member, so the items are visible to them
    under RLS."""
    import psycopg
    from psycopg.rows import dict_row

    started, rng, new_id, start, span, counts = _plan(rng_seed)
    with psycopg.connect(url, row_factory=dict_row) as raw:
        conn = _PgConn(raw)
        with raw.transaction():
            owner_id = _pg_owner(conn)
            raw.execute("ALTER TABLE items DISABLE TRIGGER items_count")
            raw.execute("ALTER TABLE participants DISABLE TRIGGER participants_count")
            fixtures = _fill(conn, rng, new_id, owner_id, items, studio, members, start, span, counts)
            raw.execute("ALTER TABLE items ENABLE TRIGGER items_count")
            raw.execute("ALTER TABLE participants ENABLE TRIGGER participants_count")
            raw.execute("""INSERT INTO studio_item_counts (studio_id, kind, n)
                               SELECT studio_id, kind, count(*) FROM items
                                WHERE studio_id = (SELECT id FROM studios WHERE handle = %s) GROUP BY studio_id, kind
                           ON CONFLICT (studio_id, kind) DO UPDATE SET n = EXCLUDED.n""", (studio,))
            # The studio is new: every participant of it was loaded above, with the trigger off.
            raw.execute("""UPDATE items i SET participant_count = c.n
                             FROM (SELECT p.commitment_id, count(*) AS n FROM participants p
                                     JOIN items ci ON ci.id = p.commitment_id
                                    WHERE ci.studio_id = (SELECT id FROM studios WHERE handle = %s)
                                    GROUP BY p.commitment_id) c
                            WHERE i.id = c.commitment_id""", (studio,))
        raw.autocommit = True
        raw.execute("ANALYZE")
    counts["seconds"] = round(time.perf_counter() - started, 1)
    return {"studio": studio, "studio_url": f"/studios/{studio}", "counts": counts, "urls": fixtures}


class _PgConn:
    """The slice of sqlite3's connection interface `_fill` uses, on psycopg (owner connection)."""

    def __init__(self, raw):
        self.raw = raw

    @staticmethod
    def _sql(sql: str) -> str:
        from navmcp.pgstore import translate

        if sql.startswith("INSERT OR IGNORE"):
            sql = "INSERT" + sql[len("INSERT OR IGNORE"):] + " ON CONFLICT DO NOTHING"
        return translate(sql)

    def execute(self, sql: str, params=()):
        return self.raw.execute(self._sql(sql), params)

    def executemany(self, sql: str, rows) -> None:
        with self.raw.cursor() as cur:
            cur.executemany(self._sql(sql), rows)

    def copy_rows(self, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
        if not rows:
            return
        with self.raw.cursor() as cur:
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)


def _pg_owner(conn: _PgConn) -> str:
    """The local owner's id, made as `ensure_owner` makes it when there is none yet."""
    import os

    from navmcp.identity import owner_handle_default

    row = conn.execute("SELECT u.id FROM settings s JOIN users u ON u.id = s.value WHERE s.key = 'owner'").fetchone()
    if row:
        return row["id"]
    handle = os.environ.get("NAVMCP_OWNER") or owner_handle_default()
    row = conn.execute("SELECT id FROM users WHERE handle = ?", (handle,)).fetchone()
    user_id = row["id"] if row else _new_user_id()
    if not row:
        conn.execute("INSERT INTO users (id, handle, name, created_at) VALUES (?, ?, ?, ?)", (user_id, handle, handle, now()))
    conn.execute("INSERT INTO settings (key, value) VALUES ('owner', ?)", (user_id,))
    return user_id


def _new_user_id() -> str:
    from navmcp.identity import new_id

    return new_id(10)


def _fill(conn, rng: random.Random, new_id: "Ids", owner_id: str, items: int, studio: str, members: int,
          start: datetime, span: float, counts: dict[str, int]) -> dict[str, str]:
    """Write the studio, its members, `items` items and the fixtures through `conn` (the raw SQLite
    connection, or `_PgConn` on PostgreSQL): same rows, same ids and timestamp formats on both."""
    if conn.execute("SELECT 1 FROM studios WHERE handle = ?", (studio,)).fetchone():
        raise ValueError(f"studio {studio!r} already exists; seed a fresh database or pick --studio")
    owner = {"id": owner_id}
    stamp = start.strftime(FMT)
    sid = new_id()
    conn.execute("INSERT INTO studios (id, handle, name, description, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                 (sid, studio, studio.capitalize() + " studio", f"A seeded studio with {items} items.",
                  owner["id"], stamp))
    users = [owner["id"]]
    user_rows = []
    for n in range(members):
        handle = f"{studio}-member-{n + 1:02d}"[:32]
        uid = new_id()
        users.append(uid)
        user_rows.append((uid, handle, f"Member {n + 1}", stamp))
    conn.executemany("INSERT OR IGNORE INTO users (id, handle, name, created_at) VALUES (?, ?, ?, ?)", user_rows)
    # A re-used handle keeps its existing id: read the ids back rather than trusting ours.
    handles = [r[1] for r in user_rows]
    marks = ", ".join("?" * len(handles))
    users = [owner["id"]] + [r["id"] for r in conn.execute(f"SELECT id FROM users WHERE handle IN ({marks})", handles)]
    conn.executemany("INSERT INTO memberships (studio_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
                     [(sid, uid, "admin" if uid == owner["id"] else "member", stamp) for uid in users])
    texts = Texts(rng)
    for batch in _batches(items):
        _write_batch(conn, rng, new_id, texts, sid, users, batch, start, span, items, counts)
    return _fixtures(conn, new_id, sid, studio, owner["id"], users, counts)


def _batches(total: int) -> Iterator[range]:
    for first in range(0, total, BATCH):
        yield range(first, min(total, first + BATCH))


def _write_batch(conn, rng: random.Random, new_id: Ids, texts: Texts, sid: str, users: list[str], batch: range,
                 start: datetime, span: float, total: int, counts: dict[str, int]) -> None:
    item_rows, tag_rows, option_rows, vote_rows, part_rows, comment_rows, read_rows = [], [], [], [], [], [], []
    base, end = start.timestamp(), start + timedelta(seconds=span)
    for n in batch:
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
        created = datetime.fromtimestamp(base + span * (n + rng.random()) / max(total, 1), timezone.utc)
        created_at = created.strftime(FMT)
        touched = created + timedelta(hours=rng.randint(1, 72))
        updated_at = created_at if rng.random() < 0.8 or touched > end else touched.strftime(FMT)
        iid, author = new_id(), rng.choice(users)
        closed_at = deadline = mass = limit = None
        title = texts.pick(texts.titles)
        if kind == "decision":
            title = title + "?"
            if rng.random() < 0.7:
                closed_at = min(created + timedelta(days=rng.randint(1, 14)), end).strftime(FMT)
            opts = [new_id() for _ in range(3)]
            for k, oid in enumerate(opts):
                option_rows.append((oid, iid, f"Option {k + 1}: {texts.pick(texts.options)}", author, created_at))
            for voter in rng.sample(users, 3):
                for oid in rng.sample(opts, rng.randint(1, 2)):
                    vote_rows.append((iid, oid, voter, int(rng.random() < 0.7), int(rng.random() < 0.3), created_at))
        elif kind == "commitment":
            mass = rng.randint(3, 10)
            limit = mass + rng.randint(0, 10) if rng.random() < 0.3 else None
            if rng.random() < 0.6:
                closed_at = min(created + timedelta(days=rng.randint(1, 30)), end).strftime(FMT)
            for member in rng.sample(users, rng.randint(0, min(4, mass - 1))):
                part_rows.append((iid, member, created_at))
        else:
            for reader in rng.sample(users, rng.randint(0, 2)):
                read_rows.append((iid, reader, created_at))
        counts[kind + "s"] += 1
        item_rows.append((iid, sid, kind, title, texts.pick(texts.bodies), author, created_at, updated_at, 0, closed_at,
                          deadline, mass, limit))
        if rng.random() < 0.4:
            for tag in rng.sample(TAGS, rng.randint(1, 2)):
                tag_rows.append((iid, tag))
        if rng.random() < 0.3:
            comment_rows.append((new_id(), iid, sid, texts.pick(texts.comments), rng.choice(users), updated_at))
    write = getattr(conn, "copy_rows", None) or _sqlite_writer(conn)
    write("items", ("id", "studio_id", "kind", "title", "body", "created_by", "created_at", "updated_at", "pinned",
                    "closed_at", "deadline", "critical_mass", "participant_limit"), item_rows)
    write("item_tags", ("item_id", "tag"), tag_rows)
    write("options", ("id", "decision_id", "title", "created_by", "created_at"), option_rows)
    write("votes", ("decision_id", "option_id", "user_id", "accept", "prefer", "created_at"), vote_rows)
    write("participants", ("commitment_id", "user_id", "joined_at"), part_rows)
    write("comments", ("id", "item_id", "studio_id", "body", "created_by", "created_at"), comment_rows)
    write("reads", ("note_id", "user_id", "confirmed_at"), read_rows)
    for key, rows in (("items", item_rows), ("tags", tag_rows), ("options", option_rows), ("votes", vote_rows),
                      ("participants", part_rows), ("comments", comment_rows), ("reads", read_rows)):
        counts[key] += len(rows)


def _sqlite_writer(conn):
    def write(table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
        marks = ", ".join("?" * len(columns))
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
    return write


def _fixtures(conn, new_id: Ids, sid: str, studio: str, owner: str, users: list[str],
              counts: dict[str, int]) -> dict[str, str]:
    """The items a benchmark visits: newest in the feed, open, owned by the local owner."""
    stamp = now()
    urls = {}
    specs = [("note", "Benchmark note: weekly planning", None),
             ("decision", "Benchmark decision: which launch date?", None),
             ("commitment", "Benchmark commitment: write the release notes", 5)]
    for kind, title, mass in specs:
        iid = new_id()
        conn.execute(
            "INSERT INTO items (id, studio_id, kind, title, body, created_by, created_at, updated_at, critical_mass)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (iid, sid, kind, title, f"This {kind} is the page the benchmarks visit.\n\nIt has a short body.",
             owner, stamp, stamp, mass))
        conn.executemany("INSERT INTO item_tags (item_id, tag) VALUES (?, ?)", [(iid, "planning"), (iid, "release")])
        conn.executemany(
            "INSERT INTO comments (id, item_id, studio_id, body, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [(new_id(), iid, sid, f"Comment {k + 1} on the benchmark {kind}.", users[-1 - k], stamp) for k in range(2)])
        if kind == "decision":
            conn.executemany("INSERT INTO options (id, decision_id, title, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
                             [(new_id(), iid, title, owner, stamp) for title in ("March 3", "March 10", "March 17")])
        if kind == "commitment":
            conn.execute("INSERT INTO participants (commitment_id, user_id, joined_at) VALUES (?, ?, ?)",
                         (iid, users[-1], stamp))
        urls[kind] = f"/studios/{studio}/{KIND_LETTER[kind]}/{iid}"
        counts["items"] += 1
        counts[kind + "s"] += 1
        counts["tags"] += 2
        counts["comments"] += 2
        counts["options"] += 3 if kind == "decision" else 0
        counts["participants"] += 1 if kind == "commitment" else 0
    return urls


def main(store: Store | None, items: int, studio: str, as_json: bool, url: str | None = None) -> str:
    summary = seed_postgres(url, items, studio) if url else seed(store, items, studio)
    if as_json:
        return json.dumps(summary)
    c = summary["counts"]
    lines = [f"seeded /studios/{studio} in {c['seconds']} s: {c['items']} items ({c['notes']} notes, "
             f"{c['decisions']} decisions, {c['commitments']} commitments), {c['options']} options, {c['votes']} votes, "
             f"{c['participants']} participants, {c['comments']} comments, {c['tags']} tags, {c['reads']} reads"]
    lines += [f"  {kind:<11} {url}" for kind, url in summary["urls"].items()]
    return "\n".join(lines)
