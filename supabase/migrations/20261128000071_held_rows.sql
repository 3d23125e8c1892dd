-- A held action's request is written once (issue 46): what runs on approval (its URL, action,
-- params, preview, rule and approvers) is what the approvers read, so no member rewrites it by SQL
-- through the app role (20261128000070 let any member update any column). Only a decision is
-- written, on a pending row, and signed by the member who makes it; a decided row stays decided.
REVOKE UPDATE ON held_actions FROM navmcp_app;
GRANT UPDATE (status, reason, result_message, result_url, decided_at, decided_by) ON held_actions TO navmcp_app;
DROP POLICY IF EXISTS held_actions_update ON held_actions;
CREATE POLICY held_actions_update ON held_actions FOR UPDATE
    USING (status = 'pending' AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                AND (status = 'pending' OR decided_by = (SELECT navmcp.uid())));
