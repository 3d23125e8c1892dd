-- Home lists what awaits you in order (navmcp/pages/home.py): decisions by the soonest deadline,
-- commitments by the fewest joins still needed. Each studio's first rows are read down these
-- indexes, however many open items the studio holds.
CREATE INDEX items_open_deadline ON items(studio_id, kind, deadline) WHERE closed_at IS NULL AND deadline IS NOT NULL;
CREATE INDEX items_open_needed ON items(studio_id, (critical_mass - participant_count), created_at DESC)
    WHERE closed_at IS NULL AND kind = 'commitment';
