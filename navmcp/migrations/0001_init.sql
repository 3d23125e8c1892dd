-- navmcp schema, version 1 (SQLite). Ids are short opaque strings; times are ISO-8601 UTC text.
CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    handle      TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    deleted_at  TEXT
);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

CREATE TABLE studios (
    id          TEXT PRIMARY KEY,
    handle      TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL
);

CREATE TABLE memberships (
    studio_id   TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id),
    role        TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (studio_id, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);

-- Notes, decisions and commitments share one table: feed, cycles, tags and search treat them alike.
CREATE TABLE items (
    seq           INTEGER PRIMARY KEY,  -- stable rowid: the full-text index is keyed by it
    id            TEXT NOT NULL UNIQUE,
    studio_id     TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    kind          TEXT NOT NULL CHECK (kind IN ('note', 'decision', 'commitment')),
    title         TEXT NOT NULL,
    body          TEXT NOT NULL DEFAULT '',
    created_by    TEXT NOT NULL REFERENCES users(id),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    pinned        INTEGER NOT NULL DEFAULT 0,
    closed_at     TEXT,
    deadline      TEXT,
    critical_mass INTEGER,
    participant_limit INTEGER
);
CREATE INDEX items_studio_created ON items(studio_id, created_at, seq);
CREATE INDEX items_studio_updated ON items(studio_id, updated_at, seq);
CREATE INDEX items_studio_pinned ON items(studio_id, pinned) WHERE pinned = 1;

CREATE TABLE item_tags (
    item_id  TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    tag      TEXT NOT NULL,
    PRIMARY KEY (item_id, tag)
);
CREATE INDEX item_tags_tag ON item_tags(tag, item_id);

CREATE TABLE options (
    id          TEXT PRIMARY KEY,
    decision_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    UNIQUE (decision_id, title)
);

CREATE TABLE votes (
    decision_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    option_id   TEXT NOT NULL REFERENCES options(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id),
    accept      INTEGER NOT NULL,
    prefer      INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (option_id, user_id)
);
CREATE INDEX votes_decision_user ON votes(decision_id, user_id);

CREATE TABLE participants (
    commitment_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users(id),
    joined_at     TEXT NOT NULL,
    PRIMARY KEY (commitment_id, user_id)
);

CREATE TABLE comments (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    item_id     TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    studio_id   TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    body        TEXT NOT NULL,
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL
);
CREATE INDEX comments_item ON comments(item_id, created_at);
CREATE INDEX comments_studio_created ON comments(studio_id, created_at);

CREATE TABLE reads (
    note_id      TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id),
    confirmed_at TEXT NOT NULL,
    PRIMARY KEY (note_id, user_id)
);

CREATE TABLE links (
    from_item  TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    to_item    TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    PRIMARY KEY (from_item, to_item)
);
CREATE INDEX links_to ON links(to_item);

CREATE TABLE audit (
    id           INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    client       TEXT NOT NULL,
    studio_id    TEXT,
    url          TEXT NOT NULL,
    action       TEXT NOT NULL,
    param_names  TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    duration_ms  REAL NOT NULL
);
CREATE INDEX audit_studio ON audit(studio_id, id);

-- Full-text indexes over item titles and bodies and over comments: external-content FTS5 tables
-- keyed by the base tables' rowids, kept current by triggers (so an edit costs one index update).
CREATE VIRTUAL TABLE items_fts USING fts5(
    title, body, content = 'items', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
    INSERT INTO items_fts(rowid, title, body) VALUES (new.seq, new.title, new.body);
END;
CREATE TRIGGER items_au AFTER UPDATE OF title, body ON items BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
    INSERT INTO items_fts(rowid, title, body) VALUES (new.seq, new.title, new.body);
END;
CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
END;

CREATE VIRTUAL TABLE comments_fts USING fts5(
    body, content = 'comments', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER comments_ai AFTER INSERT ON comments BEGIN
    INSERT INTO comments_fts(rowid, body) VALUES (new.seq, new.body);
END;
CREATE TRIGGER comments_ad AFTER DELETE ON comments BEGIN
    INSERT INTO comments_fts(comments_fts, rowid, body) VALUES ('delete', old.seq, old.body);
END;
