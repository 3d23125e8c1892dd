-- The fold's lookup keyed by the item first, as on SQLite (navmcp/migrations/0191_inbox_pages.sql):
-- one item's recipients sit side by side. Pruning stays navmcp.note_inbox's, for the recipients
-- only (down inbox_user_age): a caller names the cut-off time, and must not reach everyone's entries.
DROP INDEX inbox_fold;
CREATE INDEX inbox_fold ON inbox (item_id, kind, user_id) WHERE read_at IS NULL AND dismissed_at IS NULL;
