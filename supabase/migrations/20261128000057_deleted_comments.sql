-- A deleted comment (mirrors navmcp/migrations/0057_deleted_comments.sql): its text and revisions go
-- at once; one with replies keeps its row, blank, as "[deleted]", with who deleted it and when.
GRANT UPDATE (deleted_at, deleted_by) ON comments TO navmcp_app;

-- Its author edits a comment (one revision at a time, 20261128000056); its author or an admin of
-- its studio deletes it: the text blanked, the same revision, in their own name. A deleted comment
-- changes no more.
DROP POLICY IF EXISTS comments_update ON comments;
CREATE POLICY comments_update ON comments FOR UPDATE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
           AND (created_by = (SELECT navmcp.uid()) OR navmcp.is_admin(studio_id)))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                AND (created_by = (SELECT navmcp.uid()) OR navmcp.is_admin(studio_id)));
CREATE OR REPLACE FUNCTION navmcp.comment_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.comments'::regclass) THEN
        RETURN NEW;  -- the owner
    END IF;
    me := navmcp.uid();
    IF OLD.deleted_at IS NOT NULL THEN
        RETURN NULL;
    END IF;
    IF NEW.deleted_at IS NOT NULL THEN  -- a deletion: blank, by its author or an admin, in their name
        IF NEW.body <> '' OR NEW.revision IS DISTINCT FROM OLD.revision OR NEW.deleted_by IS DISTINCT FROM me
           OR NOT (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)) THEN
            RETURN NULL;
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.deleted_by IS NOT NULL OR OLD.created_by IS DISTINCT FROM me
       OR NEW.revision IS DISTINCT FROM OLD.revision + 1 THEN
        RETURN NULL;  -- an edit is its author's, and a revision: its body changes with its number, by one
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.comment_update_allowed() FROM PUBLIC;

-- A deleted comment's revisions go with its text; nobody removes a live comment's.
GRANT DELETE ON revisions TO navmcp_app;
CREATE POLICY revisions_delete ON revisions FOR DELETE USING (
    comment_id IS NOT NULL AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND EXISTS (SELECT 1 FROM comments c WHERE c.id = comment_id AND c.deleted_at IS NOT NULL));
