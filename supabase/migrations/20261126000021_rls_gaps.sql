-- Row-level security gaps, closed as the actions' own rules read (defence in depth: each of these
-- was reachable only by a query the app does not make, or a bug in one):
--   audit:   a member could record lines in any studio, one they were never in included;
--   votes:   could be cast, changed or withdrawn on a closed decision;
--   options: could be added to a closed decision;
--   links:   any member could link any two items of a studio, text or no text;
--   users:   a user could rewrite their own row (handle, name) and undo their account's deletion.

-- A decision is open while nobody closed it and its deadline has not passed, by navmcp.now_text()
-- (20261122000004: the transaction's start, as the app writes times). The app judges later in the
-- transaction, so what it allows this allows too.

-- audit: your own lines, in a studio you are in, or with no studio (a refusal on one you can't
-- see); or in a studio you were in, for the act that took you out of it (leave_studio, or
-- remove_member of yourself), which is audited after its membership is gone.
CREATE OR REPLACE FUNCTION navmcp.was_member(studio text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.studio_people p WHERE p.studio_id = studio AND p.user_id = navmcp.uid())
$$;
REVOKE ALL ON FUNCTION navmcp.was_member(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.was_member(text) TO navmcp_app;
DROP POLICY IF EXISTS audit_insert ON audit;
CREATE POLICY audit_insert ON audit FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid())
    AND (studio_id IS NULL
         OR studio_id = ANY ((SELECT navmcp.my_studios())::text[])
         OR (action IN ('leave_studio', 'remove_member') AND navmcp.was_member(studio_id))));

-- votes: your own, on an open decision, to cast, change or withdraw.
DROP POLICY IF EXISTS votes_write ON votes;
DROP POLICY IF EXISTS votes_update ON votes;
DROP POLICY IF EXISTS votes_delete ON votes;
CREATE POLICY votes_write ON votes FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                   AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));
CREATE POLICY votes_update ON votes FOR UPDATE
    USING (user_id = (SELECT navmcp.uid())
           AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                          AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))))
    WITH CHECK (user_id = (SELECT navmcp.uid())
                AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                               AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));
CREATE POLICY votes_delete ON votes FOR DELETE USING (
    user_id = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                   AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));

-- options: added in your own name, to an open decision.
DROP POLICY IF EXISTS options_insert ON options;
CREATE POLICY options_insert ON options FOR INSERT WITH CHECK (
    created_by = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                   AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));

-- links: made from what someone wrote (domain.link_mentions): the linking item's author, whose
-- item or a comment on it mentions the target (edit_note links again what its comments mention),
-- or the author of a comment on the linking item that mentions it (add_comment). Both ends in one
-- studio, as before. A mention is the target's URL, which ends in '/' and its id.
DROP POLICY IF EXISTS links_insert ON links;
CREATE POLICY links_insert ON links FOR INSERT WITH CHECK (
    EXISTS (SELECT 1 FROM items f JOIN items t ON t.studio_id = f.studio_id
             WHERE f.id = from_item AND t.id = to_item
               AND ((f.created_by = (SELECT navmcp.uid())
                     AND (strpos(f.body, '/' || t.id) > 0
                          OR EXISTS (SELECT 1 FROM comments c WHERE c.item_id = f.id AND strpos(c.body, '/' || t.id) > 0)))
                    OR EXISTS (SELECT 1 FROM comments c WHERE c.item_id = f.id AND c.created_by = (SELECT navmcp.uid())
                                  AND strpos(c.body, '/' || t.id) > 0))));

-- users: the only change navmcp makes to a user's row is marking it deleted, as that user
-- (identity.delete_user); nothing undoes it. The app role writes that column alone, on a row that
-- is not deleted yet, and only to delete it.
REVOKE UPDATE ON users FROM navmcp_app;
GRANT UPDATE (deleted_at) ON users TO navmcp_app;
DROP POLICY IF EXISTS users_update ON users;
CREATE POLICY users_update ON users FOR UPDATE
    USING (id = (SELECT navmcp.uid()) AND deleted_at IS NULL)
    WITH CHECK (id = (SELECT navmcp.uid()) AND deleted_at IS NOT NULL);
