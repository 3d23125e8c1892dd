-- Replies: a comment may answer another on the same item. Threads are one level deep: a reply's
-- parent is always a comment that is no reply itself (actions/notes.py joins a reply to a reply
-- to its thread). Deleting a comment takes its replies.
ALTER TABLE comments ADD COLUMN parent_id TEXT REFERENCES comments(id) ON DELETE CASCADE;
CREATE INDEX comments_parent ON comments(parent_id, created_at, seq) WHERE parent_id IS NOT NULL;
