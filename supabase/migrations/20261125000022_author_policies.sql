-- Authors' rights as a backstop, not only studio membership. Before this, `items_member` (FOR ALL)
-- let any member of a studio UPDATE or DELETE any of its items at the database level, and
-- `comments_delete` let any member delete any comment: a query bug in the app (a wrong id, a
-- forgotten filter) could rewrite someone else's note and row-level security would not stop it.
-- The app's own rules (navmcp/actions) are now mirrored here, as narrowly as its real write paths
-- allow. What each of its writes does, and as whom:
--   items INSERT        create_note/decision/commitment: the author, in a studio of theirs;
--   items lock          every action on an item page (`SELECT ... FOR NO KEY UPDATE`, which needs
--                       the UPDATE policy): any member;
--   items updated_at    domain.touch after add_comment, add_option, join/leave_commitment: any member;
--   items title, body   edit_note: its author only (not an admin);
--   items pinned        pin/unpin: a studio admin;
--   items closed_at     close_decision: its creator or an admin; close_commitment: its creator;
--                       join_commitment by the member whose join fills a commitment's limit;
--   items DELETE        no action; deleting a studio cascades (as the owner);
--   comments INSERT     add_comment: the author (already so); no action updates or deletes one;
--   item_tags           insert_item and edit_note: the item's author (the tag copies are written
--                       by their SECURITY DEFINER triggers, as the owner);
--   options INSERT      create_decision (its creator) and add_option (any member), in their name;
--   links INSERT        mentions in an item's body (its author) or in a comment (any member), both
--                       ends in one studio; links DELETE: edit_note (the author of the linking item).
-- (participant_count and studio_item_counts are the owner's triggers'; votes, participants and
-- reads were already the writer's own: 20261122000003, 20261124000015.)
--
-- A policy sees the new row only, never which columns an UPDATE changes, and every member must be
-- able to lock an item and touch its updated_at. So the items UPDATE policy stays membership, and
-- a BEFORE UPDATE trigger decides per column, from OLD and NEW, as a USING clause would: an update
-- the acting user may not make is skipped (0 rows), not applied. It acts only where row-level
-- security does (the app role), never for the owner (migrations, `navmcp seed`, the count
-- triggers). The column grants of 20261124000014 and 20261124000015 stay as they are.
-- Function calls that do not depend on the row are wrapped in (SELECT ...): planned once per
-- statement, not per row.

-- items: members read, insert in their own name, lock and update (per column, below); only the
-- creator or an admin deletes. `items_member` keeps its name, now for SELECT alone.
DROP POLICY IF EXISTS items_member ON items;
CREATE POLICY items_member ON items FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY items_insert ON items FOR INSERT
    WITH CHECK (created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY items_update ON items FOR UPDATE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY items_delete ON items FOR DELETE
    USING ((created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
           OR navmcp.is_admin(studio_id));

-- Who may change which column of an item (as the actions allow): title and body its author; pinned
-- an admin; closed_at, once, from open to closed: a decision's creator or an admin, a commitment's
-- creator, or a participant once its limit is reached. updated_at: any member (the policy above).
CREATE OR REPLACE FUNCTION navmcp.item_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.items'::regclass) THEN
        RETURN NEW;  -- the owner (or a role that bypasses row-level security)
    END IF;
    me := navmcp.uid();
    IF (NEW.title, NEW.body) IS DISTINCT FROM (OLD.title, OLD.body)
       AND OLD.created_by IS DISTINCT FROM me THEN
        RETURN NULL;
    END IF;
    IF NEW.pinned IS DISTINCT FROM OLD.pinned AND NOT navmcp.is_admin(OLD.studio_id) THEN
        RETURN NULL;
    END IF;
    IF NEW.closed_at IS DISTINCT FROM OLD.closed_at AND NOT coalesce(
           OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL AND (
               (OLD.kind = 'decision' AND (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)))
               OR (OLD.kind = 'commitment' AND (
                   OLD.created_by = me
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
CREATE TRIGGER items_update_allowed BEFORE UPDATE OF title, body, pinned, closed_at ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.item_update_allowed();

-- comments: only their author, or an admin of their studio, deletes them (no action does yet).
DROP POLICY IF EXISTS comments_delete ON comments;
CREATE POLICY comments_delete ON comments FOR DELETE
    USING ((created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
           OR navmcp.is_admin(studio_id));

-- item_tags: members read (by the studio the row carries, as 20261124000017); the item's author
-- writes them. (items' own policy filters the subqueries: the item is in a studio of yours.)
DROP POLICY IF EXISTS item_tags_member ON item_tags;
CREATE POLICY item_tags_member ON item_tags FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY item_tags_insert ON item_tags FOR INSERT
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.created_by = (SELECT navmcp.uid())));
CREATE POLICY item_tags_update ON item_tags FOR UPDATE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
           AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.created_by = (SELECT navmcp.uid())))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.created_by = (SELECT navmcp.uid())));
CREATE POLICY item_tags_delete ON item_tags FOR DELETE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
           AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.created_by = (SELECT navmcp.uid())));

-- options: members read them and add them to a decision, in their own name; nobody changes or
-- removes one (deleting the decision cascades).
DROP POLICY IF EXISTS options_member ON options;
CREATE POLICY options_member ON options FOR SELECT
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY options_insert ON options FOR INSERT
    WITH CHECK (created_by = (SELECT navmcp.uid())
                AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision'));

-- links: members read them; a member links two items of one studio (a mention in a comment links
-- the commented item); the linking item's author removes its links (edit_note makes them again).
DROP POLICY IF EXISTS links_member ON links;
CREATE POLICY links_member ON links FOR SELECT
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = from_item) AND EXISTS (SELECT 1 FROM items i WHERE i.id = to_item));
CREATE POLICY links_insert ON links FOR INSERT
    WITH CHECK (EXISTS (SELECT 1 FROM items f JOIN items t ON t.studio_id = f.studio_id
                         WHERE f.id = from_item AND t.id = to_item));
CREATE POLICY links_delete ON links FOR DELETE
    USING (EXISTS (SELECT 1 FROM items f WHERE f.id = from_item AND f.created_by = (SELECT navmcp.uid())));
