-- Mirrors navmcp/migrations/0201_cycle_order.sql: a cycle page's closed list orders each half by
-- (time DESC, id), a unique key; with the id in the index, in that order, each half is a walk that
-- stops at the page's end instead of sorting every item that shares the time of its last row.
DROP INDEX IF EXISTS items_studio_closed;
CREATE INDEX items_studio_closed ON items(studio_id, closed_at DESC, id) WHERE closed_at IS NOT NULL;
DROP INDEX IF EXISTS items_deadline_open;
CREATE INDEX items_deadline_open ON items(studio_id, deadline DESC, id) WHERE closed_at IS NULL AND deadline IS NOT NULL;
