-- Mirrors navmcp/migrations/0009_deadline_closed.sql: a cycle page finds the items whose deadline
-- closed them in its window by deadline, within the studio.
CREATE INDEX IF NOT EXISTS items_deadline_open ON items(studio_id, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL;
