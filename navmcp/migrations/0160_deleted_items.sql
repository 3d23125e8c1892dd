-- Deleted items (delete_item, restore_item): a deleted note, decision or commitment keeps its row,
-- with who deleted it and when, for 30 days (its creator or an admin may restore it), then it is
-- purged with everything of it (navmcp/content/deletion.py). Meanwhile it is in no list, count or search.
ALTER TABLE items ADD COLUMN deleted_at TEXT;
ALTER TABLE items ADD COLUMN deleted_by TEXT REFERENCES users(id);

-- The studio's Deleted list, newest first, and the purge's walk over those past their 30 days.
CREATE INDEX items_deleted ON items(studio_id, deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX items_deleted_at ON items(deleted_at) WHERE deleted_at IS NOT NULL;

-- The lists of open items (home, /awaiting, /near-mass, a cycle's deadlines) read these indexes
-- alone: a deleted item is left out of them, and their queries say `deleted_at IS NULL` too.
DROP INDEX items_open_kind;
CREATE INDEX items_open_kind ON items(studio_id, kind, created_at, deadline, id, critical_mass, participant_count,
                                      option_count)
    WHERE closed_at IS NULL AND deleted_at IS NULL;
DROP INDEX items_open_needed;
CREATE INDEX items_open_needed ON items(studio_id, (critical_mass - participant_count), created_at DESC)
    WHERE closed_at IS NULL AND kind = 'commitment' AND deleted_at IS NULL;
DROP INDEX items_open_deadline;
CREATE INDEX items_open_deadline ON items(studio_id, kind, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL AND deleted_at IS NULL;
DROP INDEX items_deadline_open;
CREATE INDEX items_deadline_open ON items(studio_id, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL AND deleted_at IS NULL;

-- A studio's counts are of its items not deleted: a deletion takes one off, a restore puts it back,
-- and the purge of a deleted item takes nothing more.
DROP TRIGGER items_count_ad;
CREATE TRIGGER items_count_ad AFTER DELETE ON items WHEN old.deleted_at IS NULL BEGIN
    UPDATE studio_item_counts SET n = n - 1 WHERE studio_id = old.studio_id AND kind = old.kind;
END;
CREATE TRIGGER items_count_deleted AFTER UPDATE OF deleted_at ON items
    WHEN (new.deleted_at IS NULL) IS NOT (old.deleted_at IS NULL) BEGIN
    UPDATE studio_item_counts SET n = n + CASE WHEN new.deleted_at IS NULL THEN 1 ELSE -1 END
     WHERE studio_id = new.studio_id AND kind = new.kind;
END;

-- A deleted item's tag rows carry no studio: tag pages, tag counts, tag completion and search by
-- tag (which all read the rows by their studio, migration 0008) leave it out; a restore gives the
-- studio back.
DROP TRIGGER item_tags_copy_ai;
CREATE TRIGGER item_tags_copy_ai AFTER INSERT ON item_tags BEGIN
    UPDATE item_tags SET (studio_id, updated_at, seq) =
           (SELECT CASE WHEN i.deleted_at IS NULL THEN i.studio_id END, i.updated_at, i.seq FROM items i
             WHERE i.id = new.item_id)
     WHERE item_id = new.item_id AND tag = new.tag;
END;
DROP TRIGGER item_tags_copy_au;
CREATE TRIGGER item_tags_copy_au AFTER UPDATE ON item_tags
    WHEN (new.studio_id, new.updated_at, new.seq) IS NOT
         (SELECT CASE WHEN i.deleted_at IS NULL THEN i.studio_id END, i.updated_at, i.seq FROM items i
           WHERE i.id = new.item_id) BEGIN
    UPDATE item_tags SET (studio_id, updated_at, seq) =
           (SELECT CASE WHEN i.deleted_at IS NULL THEN i.studio_id END, i.updated_at, i.seq FROM items i
             WHERE i.id = new.item_id)
     WHERE item_id = new.item_id AND tag = new.tag;
END;
DROP TRIGGER items_tags_copy_au;
CREATE TRIGGER items_tags_copy_au AFTER UPDATE OF studio_id, updated_at, deleted_at ON items
    WHEN new.updated_at IS NOT old.updated_at OR new.studio_id IS NOT old.studio_id
         OR new.deleted_at IS NOT old.deleted_at BEGIN
    UPDATE item_tags SET studio_id = CASE WHEN new.deleted_at IS NULL THEN new.studio_id END,
                         updated_at = new.updated_at
     WHERE item_id = new.id;
END;

-- A studio's tag counts (kept per studio and tag by migration 0202's triggers, created after this
-- one) leave a deleted item's tags out, and count them again when it is restored.
CREATE TRIGGER items_tag_counts_deleted AFTER UPDATE OF deleted_at ON items
    WHEN (new.deleted_at IS NULL) IS NOT (old.deleted_at IS NULL) BEGIN
    UPDATE tag_counts SET n = n - 1
     WHERE new.deleted_at IS NOT NULL AND studio_id = new.studio_id
       AND tag IN (SELECT tag FROM item_tags WHERE item_id = new.id);
    INSERT INTO tag_counts (studio_id, tag, n) SELECT new.studio_id, t.tag, 1 FROM item_tags t
     WHERE new.deleted_at IS NULL AND t.item_id = new.id
        ON CONFLICT (studio_id, tag) DO UPDATE SET n = n + 1;
END;
