-- Mirrors navmcp/migrations/0008_tag_order.sql: the tag rows carry their item's studio, time and
-- seq, so a tag page counts and lists its items by one index instead of joining every item of the
-- studio to the tags.
ALTER TABLE item_tags ADD COLUMN IF NOT EXISTS studio_id TEXT COLLATE "C",
                      ADD COLUMN IF NOT EXISTS updated_at TEXT COLLATE "C",
                      ADD COLUMN IF NOT EXISTS seq BIGINT;
UPDATE item_tags t SET studio_id = i.studio_id, updated_at = i.updated_at, seq = i.seq
  FROM items i WHERE i.id = t.item_id;
CREATE INDEX IF NOT EXISTS item_tags_studio_tag ON item_tags(studio_id, tag, updated_at, seq, item_id);
DROP INDEX IF EXISTS item_tags_tag;

-- The copies are always the item's, whatever a writer gives: a trigger sets them on every insert
-- and update of a tag row, reading the item as the table owner (a row-level policy cannot hide
-- it; the policy below then checks the studio found).
CREATE OR REPLACE FUNCTION navmcp.copy_item_to_tag() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    SELECT i.studio_id, i.updated_at, i.seq INTO NEW.studio_id, NEW.updated_at, NEW.seq
      FROM public.items i WHERE i.id = NEW.item_id;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.copy_item_to_tag() FROM PUBLIC;
DROP TRIGGER IF EXISTS item_tags_copy ON item_tags;
CREATE TRIGGER item_tags_copy BEFORE INSERT OR UPDATE ON item_tags
    FOR EACH ROW EXECUTE FUNCTION navmcp.copy_item_to_tag();

-- An item's new time (an edit, a comment, an option, closing it) reaches its tag rows. Touching an
-- item takes the right to update its updated_at, not its tag rows: the trigger writes as the owner.
CREATE OR REPLACE FUNCTION navmcp.copy_item_to_tags() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    UPDATE public.item_tags SET updated_at = NEW.updated_at WHERE item_id = NEW.id;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.copy_item_to_tags() FROM PUBLIC;
DROP TRIGGER IF EXISTS items_tags_copy ON items;
CREATE TRIGGER items_tags_copy AFTER UPDATE OF studio_id, updated_at ON items
    FOR EACH ROW WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at OR OLD.studio_id IS DISTINCT FROM NEW.studio_id)
    EXECUTE FUNCTION navmcp.copy_item_to_tags();

-- Reading a tag row now checks the studio it carries, as items and comments do, instead of looking
-- its item up (a count of a tag's 20,000 rows looked up 20,000 items). Writing one still needs the
-- item to be visible; the studio the trigger copied must be one of yours too.
DROP POLICY IF EXISTS item_tags_member ON item_tags;
CREATE POLICY item_tags_member ON item_tags FOR ALL
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id));
