-- Any member may leave a studio (the leave_studio action): delete their own membership. Before,
-- only admins could delete memberships, so a member had no way out of a studio they were added to.
-- The action keeps the last-admin rule, as remove_member does.
CREATE POLICY memberships_leave ON memberships FOR DELETE USING (user_id = navmcp.uid());
