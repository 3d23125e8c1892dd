-- Items whose deadline closes them: a cycle page lists and counts the items closed in its window,
-- and an item nobody closed by hand closes when its deadline passes (no write marks it). Found by
-- deadline, within the studio, instead of walking every open item of the studio.
CREATE INDEX items_deadline_open ON items(studio_id, deadline) WHERE closed_at IS NULL AND deadline IS NOT NULL;
