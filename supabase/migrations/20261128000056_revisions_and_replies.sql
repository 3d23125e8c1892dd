-- Edits are revisions (navmcp/revisions.py), and replies answer a thread's comment on the same item:
-- the rules for the columns of 20261128000055.

-- items: what an edit changes (edit_note, edit_decision, edit_commitment) may be written by the
-- app role, and only as one revision: the text, the deadline or the limit change together with the
-- revision number, by one more. A note's author edits it; a decision or commitment, its creator or
-- an admin. As before, pinning is an admin's, and closing as 20261126000020 allows.
GRANT UPDATE (deadline, participant_limit, revision) ON items TO navmcp_app;
CREATE OR REPLACE FUNCTION navmcp.item_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.items'::regclass) THEN
        RETURN NEW;  -- the owner (or a role that bypasses row-level security)
    END IF;
    me := navmcp.uid();
    IF NEW.revision IS DISTINCT FROM OLD.revision
       OR (NEW.title, NEW.body, NEW.deadline, NEW.participant_limit)
          IS DISTINCT FROM (OLD.title, OLD.body, OLD.deadline, OLD.participant_limit) THEN
        IF NEW.revision IS DISTINCT FROM OLD.revision + 1
           OR NOT (OLD.created_by = me OR (OLD.kind <> 'note' AND navmcp.is_admin(OLD.studio_id))) THEN
            RETURN NULL;
        END IF;
    END IF;
    IF NEW.pinned IS DISTINCT FROM OLD.pinned AND NOT navmcp.is_admin(OLD.studio_id) THEN
        RETURN NULL;
    END IF;
    IF NEW.closed_at IS DISTINCT FROM OLD.closed_at AND NOT coalesce(
           OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL AND (
               (OLD.kind = 'decision' AND (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)))
               OR (OLD.kind = 'commitment' AND (
                   OLD.created_by = me
                   OR (navmcp.is_admin(OLD.studio_id)
                       AND NOT EXISTS (SELECT 1 FROM public.memberships m JOIN public.users u ON u.id = m.user_id
                                        WHERE m.studio_id = OLD.studio_id AND m.user_id = OLD.created_by
                                          AND u.deleted_at IS NULL))
                   OR (OLD.participant_limit IS NOT NULL AND OLD.participant_count >= OLD.participant_limit
                       AND EXISTS (SELECT 1 FROM public.participants p
                                    WHERE p.commitment_id = OLD.id AND p.user_id = me))))),
           false) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.item_update_allowed() FROM PUBLIC;
DROP TRIGGER IF EXISTS items_update_allowed ON items;
CREATE TRIGGER items_update_allowed
    BEFORE UPDATE OF title, body, pinned, closed_at, deadline, participant_limit, revision ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.item_update_allowed();

-- comments: their author edits them (edit_comment), one revision at a time; nothing else of a
-- comment changes.
REVOKE UPDATE ON comments FROM navmcp_app;
GRANT UPDATE (body, revision) ON comments TO navmcp_app;
CREATE POLICY comments_update ON comments FOR UPDATE
    USING (created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE OR REPLACE FUNCTION navmcp.comment_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
BEGIN
    IF pg_catalog.row_security_active('public.comments'::regclass)
       AND NEW.revision IS DISTINCT FROM OLD.revision + 1 THEN
        RETURN NULL;  -- an edit is a revision: its body changes with its number, by one more
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.comment_update_allowed() FROM PUBLIC;
CREATE TRIGGER comments_update_allowed BEFORE UPDATE ON comments
    FOR EACH ROW EXECUTE FUNCTION navmcp.comment_update_allowed();

-- Whoever may edit an item (its creator; for a decision or a commitment an admin too) writes its
-- tags and remakes its links, as edit_* does: the item's tags and links policies ask this.
CREATE OR REPLACE FUNCTION navmcp.may_edit_item(item text) RETURNS boolean LANGUAGE sql STABLE
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.items i WHERE i.id = item
                      AND (i.created_by = navmcp.uid() OR (i.kind <> 'note' AND navmcp.is_admin(i.studio_id))))
$$;
REVOKE ALL ON FUNCTION navmcp.may_edit_item(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.may_edit_item(text) TO navmcp_app;
DROP POLICY IF EXISTS item_tags_insert ON item_tags;
DROP POLICY IF EXISTS item_tags_update ON item_tags;
DROP POLICY IF EXISTS item_tags_delete ON item_tags;
CREATE POLICY item_tags_insert ON item_tags FOR INSERT
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[]) AND navmcp.may_edit_item(item_id));
CREATE POLICY item_tags_update ON item_tags FOR UPDATE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]) AND navmcp.may_edit_item(item_id))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[]) AND navmcp.may_edit_item(item_id));
CREATE POLICY item_tags_delete ON item_tags FOR DELETE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]) AND navmcp.may_edit_item(item_id));
DROP POLICY IF EXISTS links_delete ON links;
CREATE POLICY links_delete ON links FOR DELETE USING (navmcp.may_edit_item(from_item));
-- links: as 20261126000021, and by whoever may edit the linking item, from its text.
DROP POLICY IF EXISTS links_insert ON links;
CREATE POLICY links_insert ON links FOR INSERT WITH CHECK (
    EXISTS (SELECT 1 FROM items f JOIN items t ON t.studio_id = f.studio_id
             WHERE f.id = from_item AND t.id = to_item
               AND (((f.created_by = (SELECT navmcp.uid()) OR navmcp.may_edit_item(f.id))
                     AND (strpos(f.body, '/' || t.id) > 0
                          OR EXISTS (SELECT 1 FROM comments c WHERE c.item_id = f.id AND strpos(c.body, '/' || t.id) > 0)))
                    OR EXISTS (SELECT 1 FROM comments c WHERE c.item_id = f.id AND c.created_by = (SELECT navmcp.uid())
                                  AND strpos(c.body, '/' || t.id) > 0))));

-- Replies: a comment may answer another on the same item; threads are one level deep, so a
-- reply's parent is a comment that is no reply itself.

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
