-- Replies (mirrors navmcp/migrations/0056_replies.sql): a comment may answer another on the same
-- item; threads are one level deep, so a reply's parent is a comment that is no reply itself.
ALTER TABLE comments ADD COLUMN parent_id TEXT COLLATE "C" REFERENCES comments(id) ON DELETE CASCADE;
CREATE INDEX comments_parent ON comments(parent_id, created_at, seq) WHERE parent_id IS NOT NULL;

-- Whether a comment of one's studios on `item` is no reply: what a reply may answer. Run as the
-- owner, as a policy on comments may not read comments again (PostgreSQL refuses the recursion).
CREATE OR REPLACE FUNCTION navmcp.thread_on(parent text, item text) RETURNS boolean LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.comments p WHERE p.id = parent AND p.item_id = item AND p.parent_id IS NULL
                      AND p.studio_id = ANY (navmcp.my_studios()))
$$;
REVOKE ALL ON FUNCTION navmcp.thread_on(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.thread_on(text, text) TO navmcp_app;

-- A comment is written in one's own name, in a studio of one's own, on an item of that studio (as
-- 20261122000003), and a reply answers a comment of the same item that is no reply.
DROP POLICY IF EXISTS comments_write ON comments;
CREATE POLICY comments_write ON comments FOR INSERT WITH CHECK (
    created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.studio_id = comments.studio_id)
    AND (parent_id IS NULL OR navmcp.thread_on(parent_id, item_id)));
