-- An inbox entry about a held action (navmcp.held) names the hold, so it links the held action's own
-- page (/studios/{h}/held/{id}), not the studio's queue. Gone with the hold.
ALTER TABLE inbox ADD COLUMN held_id TEXT REFERENCES held_actions(id) ON DELETE CASCADE;
