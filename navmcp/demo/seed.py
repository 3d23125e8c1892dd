"""Fill a database with a realistic workspace, fast: `navmcp seed --items N [--studio bench]`.

Used by the benchmarks (bench/) and handy for trying pages at scale. One studio gets N items — a
mix of notes, decisions (with options and votes) and commitments (with participants) — spread over
the past year, with comments, tags and read confirmations, written by a few dozen members. All rows
go in with `executemany` inside one write transaction; the full-text indexes, the item counts,
each commitment's participant count and each decision's option count are kept by their triggers in
the same transaction. Generation is deterministic for a given `--seed`.

A few "fixture" items are created last, by the local owner: an open note, an open decision with
three options and an open commitment, each with two comments. Their URLs are printed (`--json`)
so a benchmark can navigate to the same pages on every database size.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from navmcp.clock import FORMAT, moment, now
from navmcp.content.domain import KIND_LETTER, cycle_window
from navmcp.identity import _ID_ALPHABET, ensure_owner

if TYPE_CHECKING:
    from navmcp.store.sqlite import SqliteStore

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


class Ids:
    """Unique 10-character ids in the store's alphabet from a seeded generator (50 random bits each)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.seen: set[str] = set()

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


def _seed_for(rng_seed: int, earlier_studios: int) -> int:
    """The random source's seed: `rng_seed` on an empty database (the same rows every time), another
    one for each studio already there, so that ids drawn for a second seeding do not repeat the
    first's (a UNIQUE-constraint failure, not a workspace)."""
    return rng_seed + 7919 * earlier_studios


def _plan(rng_seed: int):
    """What both stores' seeds start from: the clock, the random source and its ids, the year of
    timestamps the rows spread over (ending five minutes ago), and zeroed counts."""
    rng = random.Random(rng_seed)
    end = datetime.now(UTC) - timedelta(minutes=5)
    start = end - timedelta(days=365)
    counts = {"items": 0, "notes": 0, "decisions": 0, "commitments": 0, "options": 0, "votes": 0,
              "participants": 0, "comments": 0, "tags": 0, "reads": 0}
    return time.perf_counter(), rng, Ids(rng), start, (end - start).total_seconds(), counts


def seed(store: SqliteStore, items: int, studio: str = "bench", members: int = 40, rng_seed: int = 1,
         studios: int = 1, agent: bool = False) -> dict[str, Any]:
    """Create `studio` with `items` items and return a summary with the fixture URLs. With
    `studios` > 1 the items are shared out over that many studios (`studio`, `studio-2`, ...);
    with `agent`, the items the agent-task benchmark looks for are added (`agent_fixtures`)."""
    owner = ensure_owner(store)
    with store.read() as tx:
        earlier = tx.scalar("SELECT count(*) FROM studios")
    started, rng, new_id, start, span, counts = _plan(_seed_for(rng_seed, earlier))
    with store.write() as tx:
        conn = tx.conn  # bulk loading is SQLite-specific: executemany on the raw connection
        conn.execute("PRAGMA cache_size = -262144")  # 256 MiB of page cache while indexes grow
        fixtures = _fill_all(conn, rng, new_id, owner["id"], items, studio, members, start, span, counts,
                             studios, agent)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.conn.execute("PRAGMA optimize")
    counts["seconds"] = round(time.perf_counter() - started, 1)
    return {"studio": studio, "studio_url": f"/studios/{studio}", "counts": counts, "urls": fixtures}


def seed_postgres(url: str, items: int, studio: str = "bench", members: int = 40, rng_seed: int = 1,
                  studios: int = 1, agent: bool = False) -> dict[str, Any]:
    """`seed` on PostgreSQL, connected as the database owner (`url`): row-level security lets
    `navmcp_app` insert nothing in bulk, and COPY is only fast without per-row policies. Same rows,
    ids and timestamp formats as on SQLite, in one transaction: the rows go in with COPY; the
    participant and option counter triggers are switched off for the load (in this transaction
    only), and the commitments' `participant_count` and the decisions' `option_count` set from one
    count each (one update per item, not one per participant or option); the other counters'
    triggers run once per COPY statement (20261130000270);
    the generated `tsvector` columns fill themselves; ANALYZE at the end. The local owner (settings
    'owner', as `ensure_owner` makes it) is the studio's admin, and every seeded member a member, so
    the items are visible to them under RLS."""
    import psycopg
    from psycopg.rows import dict_row

    handles = studio_handles(studio, studios)
    with psycopg.connect(url, row_factory=dict_row) as raw:
        earlier = raw.execute("SELECT count(*) AS n FROM studios").fetchall()[0]["n"]
    started, rng, new_id, start, span, counts = _plan(_seed_for(rng_seed, earlier))
    with psycopg.connect(url, row_factory=dict_row) as raw:
        conn = _PgConn(raw)
        with raw.transaction():
            owner_id = _pg_owner(conn)
            raw.execute("ALTER TABLE participants DISABLE TRIGGER participants_count")
            raw.execute("ALTER TABLE options DISABLE TRIGGER options_count")
            fixtures = _fill_all(conn, rng, new_id, owner_id, items, studio, members, start, span, counts,
                                 studios, agent)
            raw.execute("ALTER TABLE participants ENABLE TRIGGER participants_count")
            raw.execute("ALTER TABLE options ENABLE TRIGGER options_count")
            # The studio is new: every participant and option of it was loaded above, with the
            # triggers off.
            for column, table, key in (("participant_count", "participants", "commitment_id"),
                                       ("option_count", "options", "decision_id")):
                raw.execute(f"""UPDATE items i SET {column} = c.n
                                  FROM (SELECT r.{key} AS item_id, count(*) AS n FROM {table} r
                                          JOIN items ri ON ri.id = r.{key}
                                         WHERE ri.studio_id IN (SELECT id FROM studios WHERE handle = ANY(%s))
                                         GROUP BY r.{key}) c
                                 WHERE i.id = c.item_id""", (handles,))
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
        from navmcp.store.postgres import translate

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


def studio_handles(studio: str, studios: int) -> list[str]:
    return [studio] + [f"{studio}-{n}" for n in range(2, studios + 1)]


# How the items are shared out over several studios: the first gets a little over a quarter, so that
# at 6,018 items it holds about 418 decisions, as the workspace of issue 28 did.
FIRST_SHARE = 0.24


def _fill_all(conn, rng: random.Random, new_id: Ids, owner_id: str, items: int, studio: str, members: int,
              start: datetime, span: float, counts: dict[str, int], studios: int, agent: bool) -> dict[str, str]:
    handles = studio_handles(studio, studios)
    for handle in handles:  # refuse before writing anything
        if conn.execute("SELECT 1 FROM studios WHERE handle = ?", (handle,)).fetchone():
            raise ValueError(f"studio {handle!r} already exists: seed a fresh database (another NAVMCP_HOME)"
                             " or pick another --studio")
    first = items if studios == 1 else round(items * FIRST_SHARE)
    shares = [first] + [(items - first) // (studios - 1) + (n < (items - first) % (studios - 1))
                        for n in range(studios - 1)]
    urls: dict[str, str] = {}
    for handle, share in zip(handles, shares):
        made = _fill(conn, rng, new_id, owner_id, share, handle, members, start, span, counts)
        urls = urls or made
    if agent:
        urls.update(agent_fixtures(conn, rng, new_id, owner_id, handles, counts))
    return urls


def _fill(conn, rng: random.Random, new_id: Ids, owner_id: str, items: int, studio: str, members: int,
          start: datetime, span: float, counts: dict[str, int]) -> dict[str, str]:
    """Write the studio, its members, `items` items and the fixtures through `conn` (the raw SQLite
    connection, or `_PgConn` on PostgreSQL): same rows, same ids and timestamp formats on both."""
    if conn.execute("SELECT 1 FROM studios WHERE handle = ?", (studio,)).fetchone():
        raise ValueError(f"studio {studio!r} already exists; seed a fresh database or pick --studio")
    owner = {"id": owner_id}
    stamp = start.strftime(FORMAT)
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
        created = datetime.fromtimestamp(base + span * (n + rng.random()) / max(total, 1), UTC)
        created_at = created.strftime(FORMAT)
        touched = created + timedelta(hours=rng.randint(1, 72))
        updated_at = created_at if rng.random() < 0.8 or touched > end else touched.strftime(FORMAT)
        iid, author = new_id(), rng.choice(users)
        closed_at = deadline = mass = limit = None
        title = texts.pick(texts.titles)
        if kind == "decision":
            title = title + "?"
            if rng.random() < 0.7:
                closed_at = min(created + timedelta(days=rng.randint(1, 14)), end).strftime(FORMAT)
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
                closed_at = min(created + timedelta(days=rng.randint(1, 30)), end).strftime(FORMAT)
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


# The agent-task benchmark (bench/agent_tasks.py) looks for these by what they say, as a person
# would ask for them: the titles and words are its contract with this module.
LONG_NOTE_TITLE = "Architecture handbook"
LONG_NOTE_CHARS = 27_700
LONG_NOTE_COMMENTS = 32
PRICING_TITLE = "How should we charge for the team plan?"
PRICING_OPTIONS = ("Per seat", "Usage based", "Flat fee")
KEYWORD = "kestrel"
NEAR_MASS_TITLE = "Staff the on-call rota"


def agent_fixtures(conn, rng: random.Random, new_id: Ids, owner_id: str, handles: list[str],
                   counts: dict[str, int]) -> dict[str, str]:
    """The items of issue 28's agent tasks, in the seeded studios: a pinned note of 27,700 characters
    with 32 comments; an older open decision on a pricing model among sixty newer ones whose options
    and comments talk of pricing models; a commitment one join from its critical mass, older than
    the twenty newest; and a keyword (`kestrel`) in a note, a decision's option, a comment and a
    commitment spread over the studios."""
    at = datetime.now(UTC) - timedelta(minutes=10)

    def stamp(days: float) -> str:
        return (at - timedelta(days=days)).strftime(FORMAT)

    sids = {h: conn.execute("SELECT id FROM studios WHERE handle = ?", (h,)).fetchone()["id"] for h in handles}
    people = {h: [r["user_id"] for r in conn.execute("SELECT user_id FROM memberships WHERE studio_id = ? AND user_id <> ?"
                                             " ORDER BY user_id", (sids[h], owner_id))] for h in handles}
    rows: dict[str, list[tuple[Any, ...]]] = {"items": [], "options": [], "comments": [], "participants": [], "votes": []}

    def item(handle: str, kind: str, title: str, body: str, days: float, pinned: int = 0, closed: bool = False,
             mass: int | None = None, due: float | None = None) -> str:
        iid = new_id()
        made = stamp(days)
        rows["items"].append((iid, sids[handle], kind, title, body, owner_id, made, made, pinned,
                              stamp(days - 1) if closed else None, None if due is None else stamp(-due), mass, None))
        counts["items"] += 1
        counts[kind + "s"] += 1
        return iid

    def comment(handle: str, item_id: str, body: str, days: float, n: int = 0) -> None:
        rows["comments"].append((new_id(), item_id, sids[handle], body, people[handle][n % len(people[handle])],
                                 stamp(days)))
        counts["comments"] += 1

    def option(item_id: str, title: str, days: float) -> str:
        oid = new_id()
        rows["options"].append((oid, item_id, title, owner_id, stamp(days)))
        counts["options"] += 1
        return oid

    first, urls = handles[0], {}
    # The long note: sections of paragraphs, cut at a sentence's end near the length wanted.
    lines: list[str] = []
    n = 0
    while sum(map(len, lines)) + len(lines) < LONG_NOTE_CHARS + 400:
        n += 1
        lines += [f"## Part {n}: {_sentence(rng, 2, 4).lower()}", ""]
        lines += [". ".join(_sentence(rng, 6, 14) for _ in range(rng.randint(3, 6))) + "." for _ in range(3)]
        lines.append("")
    body = "\n".join(lines)
    body = body[: body.rindex(".", 0, LONG_NOTE_CHARS) + 1]
    note = item(first, "note", LONG_NOTE_TITLE, body, 20, pinned=1)
    for k in range(LONG_NOTE_COMMENTS):
        comment(first, note, f"Section {k % 7 + 1}: " + _sentence(rng, 8, 24) + ".", 19 - k * 0.5, k)
    urls["long_note"] = f"/studios/{first}/n/{note}"
    # The pricing decision, older than the noise around it.
    decision = item(first, "decision", PRICING_TITLE, " ".join(
        [_body(rng), "We must pick the pricing model of the team plan before the launch review.", _body(rng), _body(rng)]), 120)
    for title in PRICING_OPTIONS:
        option(decision, title, 120)
    urls["pricing_decision"] = f"/studios/{first}/d/{decision}"
    # Newer decisions that talk of pricing models in their options (short texts, which rank high)
    # and in their comments.
    for k in range(150):
        days = 100 - k * 0.6
        other = item(first, "decision", _sentence(rng, 3, 6) + "?", _body(rng), days, closed=k % 3 != 0)
        for title in ("Pricing model A", "New pricing model", _sentence(rng, 2, 4)):
            option(other, title, days)
        if k % 2:
            comment(first, other, "What does this do to the pricing model?", days - 0.5, k)
    for k in range(80):  # and notes that mention them in passing
        item(first, "note", _sentence(rng, 3, 7), " ".join([_body(rng), "Mind the pricing model.", _body(rng)]),
             90 - k)
    # A busy week: items made this week, and older ones closed in it (more than a page of each).
    week = (at - moment(cycle_window("this-week")[0])).total_seconds() / 86400
    for k in range(45):
        item(first, KINDS[k % 3], _sentence(rng, 3, 7), _body(rng), week * (k + 0.5) / 46, mass=3 if k % 3 == 2 else None)
    for k in range(52):
        item(first, "decision" if k % 2 else "commitment", _sentence(rng, 3, 7), _body(rng), 20 + k * 0.2,
                      mass=None if k % 2 else 5)
        rows["items"][-1] = (*rows["items"][-1][:9], stamp(week * (k + 0.5) / 53), *rows["items"][-1][10:])
    # One join short of its critical mass, and older than what a list of the newest shows.
    near = item(first, "commitment", NEAR_MASS_TITLE, "We start once eight people are on the rota.", 200, mass=8)
    for uid in people[first][:7]:
        rows["participants"].append((near, uid, stamp(199)))
        counts["participants"] += 1
    urls["near_mass"] = f"/studios/{first}/c/{near}"
    # The keyword, spread over the studios: an item title, an option, a comment, a commitment's text.
    spread = [handles[k % len(handles)] for k in range(3)]
    kick = item(spread[0], "note", "Kestrel kickoff", "Project Kestrel starts next month.", 30)
    region = item(spread[1], "decision", "Which region hosts the new service?", "For the Kestrel pilot.", 29)
    option(region, "Kestrel in eu-west", 9)
    option(region, "Kestrel in us-east", 9)
    comment(spread[1], region, "Kestrel needs a staging database first.", 28)
    item(spread[2], "commitment", "Pilot the new service with two teams", "Kestrel pilot volunteers.", 27, mass=2)
    urls["keyword_note"] = f"/studios/{spread[0]}/n/{kick}"
    # What needs the owner within a day (issue 42): a vote and a commitment due in hours, in another
    # studio than the first, and a vote due in a day and a half (not yet).
    soon = handles[1 % len(handles)]
    for title, due in (("Which caterer for Friday?", 0.25), ("Which room for the retro?", 1.5)):
        vote = item(soon if due < 1 else first, "decision", title, "Pick before the order closes.", 0.1, due=due)
        option(vote, "The usual one", 0.1)
        option(vote, "The new one", 0.1)
    item(soon, "commitment", "Set up the demo stand", "Four people, before the fair opens.", 0.1, mass=4, due=0.5)
    write = getattr(conn, "copy_rows", None) or _sqlite_writer(conn)
    write("items", ("id", "studio_id", "kind", "title", "body", "created_by", "created_at", "updated_at", "pinned",
                    "closed_at", "deadline", "critical_mass", "participant_limit"), rows["items"])
    write("options", ("id", "decision_id", "title", "created_by", "created_at"), rows["options"])
    write("participants", ("commitment_id", "user_id", "joined_at"), rows["participants"])
    write("comments", ("id", "item_id", "studio_id", "body", "created_by", "created_at"), rows["comments"])
    return urls


def main(store: SqliteStore | None, items: int, studio: str, as_json: bool, url: str | None = None,
         studios: int = 1, agent: bool = False) -> str:
    if url:
        summary = seed_postgres(url, items, studio, studios=studios, agent=agent)
    else:
        assert store is not None, "the embedded store, or a PostgreSQL URL"
        summary = seed(store, items, studio, studios=studios, agent=agent)
    if as_json:
        return json.dumps(summary)
    c = summary["counts"]
    where = ", ".join(f"/studios/{h}" for h in studio_handles(studio, studios))
    lines = [f"seeded {where} in {c['seconds']} s: {c['items']} items ({c['notes']} notes, "
             f"{c['decisions']} decisions, {c['commitments']} commitments), {c['options']} options, {c['votes']} votes, "
             f"{c['participants']} participants, {c['comments']} comments, {c['tags']} tags, {c['reads']} reads"]
    lines += [f"  {kind:<11} {url}" for kind, url in summary["urls"].items()]
    return "\n".join(lines)
