-- Voting again updates your rows in place (INSERT ... ON CONFLICT DO UPDATE) instead of deleting
-- and re-inserting them: the app role may update its own votes, and only their accept, prefer and
-- created_at (a vote never moves to another option, decision or user).
CREATE POLICY votes_update ON votes FOR UPDATE
    USING (user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id))
    WITH CHECK (user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
REVOKE UPDATE ON votes FROM navmcp_app;
GRANT UPDATE (accept, prefer, created_at) ON votes TO navmcp_app;
