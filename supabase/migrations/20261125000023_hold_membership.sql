-- An action reads the acting user's role once, when it resolves its page, and acts on it later in
-- the transaction. Under READ COMMITTED a demotion or removal could commit in between: an admin's
-- close or pin was then skipped by the items trigger (20261125000022) yet reported done, and a
-- removed member's insert failed row-level security as an internal error. navmcp.hold_membership
-- takes a share lock on the acting user's own membership row before the role is read: a role
-- change or a removal (an update or delete of that row) waits for the action, and an action that
-- comes second waits for it, then reads the new role. Row-level security would hide the row from a
-- member's FOR SHARE (it checks the UPDATE policy, admins only), so the lock is taken as the owner,
-- and only ever on the caller's own row.
CREATE OR REPLACE FUNCTION navmcp.hold_membership(studio_handle text) RETURNS text
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    SELECT m.role FROM public.memberships m JOIN public.studios s ON s.id = m.studio_id
     WHERE s.handle = studio_handle AND m.user_id = navmcp.uid()
       FOR SHARE OF m
$$;
REVOKE ALL ON FUNCTION navmcp.hold_membership(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.hold_membership(text) TO navmcp_app;
