-- Performance at scale (issue 5: pages must cost the same at 1,000 and 1,000,000 items).
-- 1. Open items by studio, kind and age: the home page walks the newest open decisions and
--    commitments of each of your studios and stops after a page's worth, instead of sorting all.
CREATE INDEX items_open_kind_created ON items(studio_id, kind, created_at) WHERE closed_at IS NULL;

-- 2. Pinned items newest first: the feed's pinned list, without walking every item of the studio
--    (with only items_studio_pinned the planner prefers the updated_at index and filters all rows).
CREATE INDEX items_pinned_updated ON items(studio_id, updated_at) WHERE pinned = 1;

-- 3. What happened in a cycle (today, this week...): items closed, votes cast and commitments
--    joined in a time window, found by time instead of by walking every item of the studio.
CREATE INDEX items_closed ON items(studio_id, closed_at) WHERE closed_at IS NOT NULL;
CREATE INDEX votes_created ON votes(created_at);
CREATE INDEX participants_joined ON participants(joined_at);

-- 4. Item counts per studio and kind, kept by triggers: the studio feed's counts read one row
--    per kind instead of counting every item of the studio.
CREATE TABLE studio_item_counts (
    studio_id  TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (studio_id, kind)
);
INSERT INTO studio_item_counts (studio_id, kind, n) SELECT studio_id, kind, count(*) FROM items GROUP BY studio_id, kind;
CREATE TRIGGER items_count_ai AFTER INSERT ON items BEGIN
    INSERT INTO studio_item_counts (studio_id, kind, n) VALUES (new.studio_id, new.kind, 1)
        ON CONFLICT (studio_id, kind) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER items_count_ad AFTER DELETE ON items BEGIN
    UPDATE studio_item_counts SET n = n - 1 WHERE studio_id = old.studio_id AND kind = old.kind;
END;
