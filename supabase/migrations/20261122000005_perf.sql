-- Mirrors navmcp/migrations/0004_perf.sql: indexes that keep pages flat at a million items, and
-- per-studio item counts kept by a trigger so the studio feed never counts every item.
CREATE INDEX IF NOT EXISTS items_open_kind_created ON items(studio_id, kind, created_at) WHERE closed_at IS NULL;
CREATE INDEX IF NOT EXISTS items_pinned_updated ON items(studio_id, updated_at) WHERE pinned = 1;
CREATE INDEX IF NOT EXISTS votes_created ON votes(created_at);
CREATE INDEX IF NOT EXISTS participants_joined ON participants(joined_at);

CREATE TABLE IF NOT EXISTS studio_item_counts (
    studio_id  TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    kind       TEXT COLLATE "C" NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (studio_id, kind)
);
INSERT INTO studio_item_counts (studio_id, kind, n)
    SELECT studio_id, kind, count(*) FROM items GROUP BY studio_id, kind
    ON CONFLICT (studio_id, kind) DO NOTHING;

-- The trigger writes as the table owner: members never write counts directly, and the counts
-- can't drift from what RLS would let a caller insert.
CREATE OR REPLACE FUNCTION navmcp.count_items() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO studio_item_counts (studio_id, kind, n) VALUES (NEW.studio_id, NEW.kind, 1)
            ON CONFLICT (studio_id, kind) DO UPDATE SET n = studio_item_counts.n + 1;
    ELSE
        UPDATE studio_item_counts SET n = n - 1 WHERE studio_id = OLD.studio_id AND kind = OLD.kind;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_items() FROM PUBLIC;

DROP TRIGGER IF EXISTS items_count ON items;
CREATE TRIGGER items_count AFTER INSERT OR DELETE ON items FOR EACH ROW EXECUTE FUNCTION navmcp.count_items();

ALTER TABLE studio_item_counts ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS studio_item_counts_read ON studio_item_counts;
CREATE POLICY studio_item_counts_read ON studio_item_counts FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
GRANT SELECT ON studio_item_counts TO navmcp_app;
