-- Nobody is added to a studio without agreeing (issue 43): add_member now invites, and a person joins
-- by their own answer (navmcp.answer_invitation) or by a link they open (navmcp.redeem_invitation),
-- both SECURITY DEFINER. So the app role no longer inserts anyone's membership but the founder's
-- own first one: an admin's insert of another's, findable or not, is refused whatever the query.
DROP POLICY IF EXISTS memberships_insert ON memberships;
CREATE POLICY memberships_insert ON memberships FOR INSERT WITH CHECK (
    user_id = navmcp.uid() AND role = 'admin' AND navmcp.may_found(studio_id));
