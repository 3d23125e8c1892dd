-- Mirrors navmcp/migrations/0018_home_lists.sql: home lists decisions by the soonest deadline and
-- commitments by the fewest joins still needed, each studio's first rows read down an index.
CREATE INDEX IF NOT EXISTS items_open_deadline ON items(studio_id, kind, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_open_needed ON items(studio_id, (critical_mass - participant_count), created_at DESC)
    WHERE closed_at IS NULL AND kind = 'commitment';
