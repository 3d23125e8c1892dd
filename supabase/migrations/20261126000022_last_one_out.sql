-- The last member of a studio who leaves it deletes it (leave_studio, naming it in `confirm`):
-- a studio nobody is in answered 404 to everyone and kept its handle taken for ever. Deleting a
-- studio was an admin's right in the database though no action did it; it is now that of the
-- studio's last member whose account works (whatever their role: its admins may all be deleted
-- accounts), as the action does it. Its rows go with it (ON DELETE CASCADE, as the owner).
CREATE OR REPLACE FUNCTION navmcp.alone_in(studio text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.memberships m WHERE m.studio_id = studio AND m.user_id = navmcp.uid())
       AND NOT EXISTS (SELECT 1 FROM public.memberships m JOIN public.users u ON u.id = m.user_id
                        WHERE m.studio_id = studio AND m.user_id <> navmcp.uid() AND u.deleted_at IS NULL)
$$;
REVOKE ALL ON FUNCTION navmcp.alone_in(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.alone_in(text) TO navmcp_app;
DROP POLICY IF EXISTS studios_delete ON studios;
CREATE POLICY studios_delete ON studios FOR DELETE USING (navmcp.alone_in(id));
