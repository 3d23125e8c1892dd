-- A tag page lists its studio's items with that tag, most recently updated first, and counts them.
-- Both joined every item of the studio to the tags: at a million items the count walked the whole
-- studio, and so did a rare tag's list (a page took ~0.8 s for a common tag, ~1.1 s for a rare
-- one). The tag rows now carry what the page filters and sorts on, copied from their item by
-- triggers, and one index answers the count and each page of the list in the order shown.
ALTER TABLE item_tags ADD COLUMN studio_id TEXT;
ALTER TABLE item_tags ADD COLUMN updated_at TEXT;
ALTER TABLE item_tags ADD COLUMN seq INTEGER;
UPDATE item_tags SET (studio_id, updated_at, seq) =
       (SELECT i.studio_id, i.updated_at, i.seq FROM items i WHERE i.id = item_tags.item_id);
CREATE INDEX item_tags_studio_tag ON item_tags(studio_id, tag, updated_at, seq, item_id);
-- Only the tag page read the old index; the item page reads an item's tags by the primary key.
DROP INDEX item_tags_tag;
-- Whatever a writer gives, the copies are the item's: set on insert, and put back on an update
-- that changed them (recursive triggers are off, so the put-back does not fire its own trigger).
CREATE TRIGGER item_tags_copy_ai AFTER INSERT ON item_tags BEGIN
    UPDATE item_tags SET (studio_id, updated_at, seq) =
           (SELECT i.studio_id, i.updated_at, i.seq FROM items i WHERE i.id = new.item_id)
     WHERE item_id = new.item_id AND tag = new.tag;
END;
CREATE TRIGGER item_tags_copy_au AFTER UPDATE ON item_tags
    WHEN (new.studio_id, new.updated_at, new.seq) IS NOT
         (SELECT i.studio_id, i.updated_at, i.seq FROM items i WHERE i.id = new.item_id) BEGIN
    UPDATE item_tags SET (studio_id, updated_at, seq) =
           (SELECT i.studio_id, i.updated_at, i.seq FROM items i WHERE i.id = new.item_id)
     WHERE item_id = new.item_id AND tag = new.tag;
END;
CREATE TRIGGER items_tags_copy_au AFTER UPDATE OF studio_id, updated_at ON items
    WHEN new.updated_at IS NOT old.updated_at OR new.studio_id IS NOT old.studio_id BEGIN
    UPDATE item_tags SET studio_id = new.studio_id, updated_at = new.updated_at WHERE item_id = new.id;
END;
