-- Revisions: every edit of an item or a comment keeps who made it, when, through which client, and
-- the old and new value of each field it changed (navmcp/revisions.py). An item or a comment carries
-- the number of its latest revision (1: as written); an edit names the one it read (`base`), and
-- one whose base is not the latest is refused. Deleting the item or the comment takes its revisions.
ALTER TABLE items ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
ALTER TABLE comments ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;

CREATE TABLE revisions (
    seq         INTEGER PRIMARY KEY,
    item_id     TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    comment_id  TEXT REFERENCES comments(id) ON DELETE CASCADE,  -- NULL: the item's own revision
    studio_id   TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    number      INTEGER NOT NULL,  -- the revision this edit made (an item's first edit makes 2)
    created_by  TEXT NOT NULL REFERENCES users(id),
    client      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    changes     TEXT NOT NULL  -- JSON: {field: [old, new]}
);
-- One revision per number: two edits from the same base cannot both be kept.
CREATE UNIQUE INDEX revisions_number ON revisions(item_id, coalesce(comment_id, ''), number);

-- An edited comment's words are searched as they read now.
CREATE TRIGGER comments_au AFTER UPDATE OF body ON comments BEGIN
    INSERT INTO comments_fts(comments_fts, rowid, body) VALUES ('delete', old.seq, old.body);
    INSERT INTO comments_fts(rowid, body) VALUES (new.seq, new.body);
END;
