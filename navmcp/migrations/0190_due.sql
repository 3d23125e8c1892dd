-- Deadlines within a day (navmcp/feeds/due.py): one inbox entry per item per person, ever, so an entry
-- read or dismissed does not come back; and the sweep's walk of open items by their deadline,
-- across studios.
CREATE UNIQUE INDEX inbox_deadline ON inbox (item_id, user_id) WHERE kind = 'deadline';
CREATE INDEX items_due ON items (deadline) WHERE closed_at IS NULL AND deadline IS NOT NULL;
