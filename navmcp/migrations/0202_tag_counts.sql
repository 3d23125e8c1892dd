-- A tag page states how many items carry the tag (pages/studio.py view_tag). It counted the tag's
-- rows in their index: 23,000 rows for a common tag at a million items, 5-7 ms where the page is
-- 0.2 ms at a thousand. The number is now kept per studio and tag by triggers on the tag rows, in
-- the write's transaction; a count going down only updates (a studio's rows go with it).
CREATE TABLE tag_counts (
    studio_id TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    tag       TEXT NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (studio_id, tag)
) WITHOUT ROWID;
INSERT INTO tag_counts (studio_id, tag, n)
    SELECT studio_id, tag, count(*) FROM item_tags WHERE studio_id IS NOT NULL GROUP BY studio_id, tag;

-- A new row's studio is its item's (the copy of migration 0008 is set by another AFTER trigger).
CREATE TRIGGER tag_counts_new AFTER INSERT ON item_tags BEGIN
    INSERT INTO tag_counts (studio_id, tag, n) SELECT i.studio_id, new.tag, 1 FROM items i WHERE i.id = new.item_id
        ON CONFLICT (studio_id, tag) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tag_counts_gone AFTER DELETE ON item_tags BEGIN
    UPDATE tag_counts SET n = n - 1 WHERE studio_id = old.studio_id AND tag = old.tag;
END;
CREATE TRIGGER tag_counts_renamed AFTER UPDATE OF tag ON item_tags WHEN old.tag IS NOT new.tag BEGIN
    UPDATE tag_counts SET n = n - 1 WHERE studio_id = old.studio_id AND tag = old.tag;
    INSERT INTO tag_counts (studio_id, tag, n) SELECT i.studio_id, new.tag, 1 FROM items i WHERE i.id = new.item_id
        ON CONFLICT (studio_id, tag) DO UPDATE SET n = n + 1;
END;
