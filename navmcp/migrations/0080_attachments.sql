-- Attachments (navmcp/attachments.py): files on a note, decision or commitment, or on one of its
-- comments, kept in the store itself. A file goes with its item or its comment (ON DELETE
-- CASCADE); a comment kept as "[deleted]" loses its files in delete_comment. The size is kept
-- apart from the bytes, so that a studio's quota is summed without reading them.
CREATE TABLE attachments (
    id            TEXT PRIMARY KEY,
    studio_id     TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    comment_id    TEXT REFERENCES comments(id) ON DELETE CASCADE,  -- NULL: attached to the item
    filename      TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    data          BLOB NOT NULL,
    created_by    TEXT NOT NULL REFERENCES users(id),
    created_at    TEXT NOT NULL
);
CREATE INDEX attachments_item ON attachments(item_id, created_at);
CREATE INDEX attachments_studio ON attachments(studio_id);
