-- Held actions (issue 46): who may approve is now the database's rule too, not only the app's.
-- Through the app role a member could insert an approval row in their own name for a hold they may
-- not approve, mark a pending hold rejected, executed or failed in their own name, or insert a hold
-- already decided (20261128000071 only kept the request itself from being rewritten). The rules
-- below mirror navmcp/held/rules.py (`eligible`, `counted`) and navmcp/held/approval.py (`_end`).

-- Two facts kept from when a write was held (mirrors navmcp/migrations/0172_held_facts.sql): whether
-- it may be approved in the MCP client, as its rule said, and the target item's revision then.
ALTER TABLE held_actions ADD COLUMN IF NOT EXISTS in_client INTEGER NOT NULL DEFAULT 0;
ALTER TABLE held_actions ADD COLUMN IF NOT EXISTS target_revision INTEGER;

-- Whether `who` may approve a hold with these facts now: a member of its studio; the requester
-- only where the rule lets their own approval count ('self' is the requester alone); an admin for
-- 'admins'; one of the named ids for a list. Run as the owner: it reads memberships past their
-- policy, and answers only about the hold's own studio.
CREATE OR REPLACE FUNCTION navmcp.held_eligible(studio text, requester text, approvers text, own_counts integer,
                                                who text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.memberships m
         WHERE m.studio_id = studio AND m.user_id = who
           AND CASE WHEN approvers = 'self' THEN who = requester
                    ELSE (who <> requester OR own_counts <> 0)
                         AND CASE approvers WHEN 'admins' THEN m.role = 'admin'
                                            WHEN 'members' THEN true
                                            ELSE who = ANY (string_to_array(approvers, ',')) END
               END)
$$;
REVOKE ALL ON FUNCTION navmcp.held_eligible(text, text, text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.held_eligible(text, text, text, integer, text) TO navmcp_app;

-- Whether `who` gave the last approval a hold needs: they approved it, and enough approvals still
-- count (their givers eligible now, as rules.counted judges). Run as the owner: a policy of
-- held_actions that read held_approvals under its own policy (which reads held_actions) would recurse.
CREATE OR REPLACE FUNCTION navmcp.held_approved(held text, who text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.held_approvals a WHERE a.held_id = held AND a.user_id = who)
       AND (SELECT count(*) FROM public.held_approvals a JOIN public.held_actions h ON h.id = a.held_id
             WHERE a.held_id = held
               AND navmcp.held_eligible(h.studio_id, h.requester_id, h.approvers, h.own_counts, a.user_id))
           >= (SELECT h.approvals FROM public.held_actions h WHERE h.id = held)
$$;
REVOKE ALL ON FUNCTION navmcp.held_approved(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.held_approved(text, text) TO navmcp_app;

-- An approval: given in the giver's own name, to a pending hold they may approve.
DROP POLICY IF EXISTS held_approvals_insert ON held_approvals;
CREATE POLICY held_approvals_insert ON held_approvals FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM held_actions h WHERE h.id = held_id AND h.status = 'pending'
                   AND navmcp.held_eligible(h.studio_id, h.requester_id, h.approvers, h.own_counts, user_id)));

-- A hold: asked in the requester's own name, pending and undecided, under a rule of its studio
-- that binds the requester, with that rule's approvers (what the approvers read is what the rule says).
DROP POLICY IF EXISTS held_actions_insert ON held_actions;
CREATE POLICY held_actions_insert ON held_actions FOR INSERT WITH CHECK (
    requester_id = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND status = 'pending' AND decided_by IS NULL AND decided_at IS NULL
    AND reason = '' AND result_message = '' AND result_url = ''
    AND EXISTS (SELECT 1 FROM hold_rules r WHERE r.id = rule_id AND r.studio_id = held_actions.studio_id
                   AND (r.owner_id IS NULL OR r.owner_id = held_actions.requester_id)
                   AND r.approvers = held_actions.approvers AND r.approvals = held_actions.approvals
                   AND r.own_counts = held_actions.own_counts AND r.in_client = held_actions.in_client));

-- Whether the acting user just ran this hold and has yet to write what it did: executed by them,
-- its result still empty (approval.py writes the decision before the action runs, as the action
-- may take the approver out of the studio, and the result after it, once: the result it writes is
-- never empty).
CREATE OR REPLACE FUNCTION navmcp.held_running(held text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.held_actions h
                    WHERE h.id = held AND h.status = 'executed' AND h.decided_by = navmcp.uid()
                      AND h.result_message = '' AND h.result_url = '')
$$;
REVOKE ALL ON FUNCTION navmcp.held_running(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.held_running(text) TO navmcp_app;

-- A decision, on a pending row, in the decider's name: withdrawn by the requester; rejected by one
-- who may approve it; executed or failed (the last approval ran it, or tried) by one who may approve
-- it and approved it, with enough approvals that still count. A pending row stays undecided (the
-- app's row lock writes status = status). The one who ran it then writes its result, once.
-- ... and reads it to do so, though the action may have taken them out of the studio: the row as it
-- was (held_running reads the statement's snapshot), so the written row passes too, and after that
-- statement no more.
DROP POLICY IF EXISTS held_actions_running ON held_actions;
CREATE POLICY held_actions_running ON held_actions FOR SELECT
    USING (status = 'executed' AND decided_by = (SELECT navmcp.uid()) AND navmcp.held_running(id));
DROP POLICY IF EXISTS held_actions_update ON held_actions;
CREATE POLICY held_actions_update ON held_actions FOR UPDATE
    USING ((status = 'pending' AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
           OR (status = 'executed' AND decided_by = (SELECT navmcp.uid()) AND result_message = '' AND result_url = ''))
    WITH CHECK (CASE status
        WHEN 'pending' THEN studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                            AND decided_by IS NULL AND decided_at IS NULL
                            AND reason = '' AND result_message = '' AND result_url = ''
        WHEN 'withdrawn' THEN decided_by = (SELECT navmcp.uid()) AND decided_by = requester_id
                              AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
        WHEN 'rejected' THEN decided_by = (SELECT navmcp.uid())
                             AND navmcp.held_eligible(studio_id, requester_id, approvers, own_counts, decided_by)
        WHEN 'executed' THEN decided_by = (SELECT navmcp.uid())
                             AND (navmcp.held_running(held_actions.id)
                                  OR (navmcp.held_eligible(studio_id, requester_id, approvers, own_counts, decided_by)
                                      AND navmcp.held_approved(held_actions.id, decided_by)))
        WHEN 'failed' THEN decided_by = (SELECT navmcp.uid())
                           AND navmcp.held_eligible(studio_id, requester_id, approvers, own_counts, decided_by)
                           AND navmcp.held_approved(held_actions.id, decided_by)
        ELSE false END);

-- The approval's own audit line when the held action took the approver out of the studio (an
-- admin's agent's remove_member of the member who approved it): written after their membership is
-- gone, as leave_studio's is (20261126000021), and only by one who decided a hold there that ran.
-- Found by the held sweep on PostgreSQL (tests/test_held_sweep.py).
CREATE OR REPLACE FUNCTION navmcp.ran_a_hold_in(studio text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.held_actions h
                    WHERE h.studio_id = studio AND h.decided_by = navmcp.uid() AND h.status = 'executed')
$$;
REVOKE ALL ON FUNCTION navmcp.ran_a_hold_in(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.ran_a_hold_in(text) TO navmcp_app;
DROP POLICY IF EXISTS audit_insert ON audit;
CREATE POLICY audit_insert ON audit FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid())
    AND (studio_id IS NULL
         OR studio_id = ANY ((SELECT navmcp.my_studios())::text[])
         OR (action IN ('leave_studio', 'remove_member') AND navmcp.was_member(studio_id))
         OR (action = 'approve' AND navmcp.ran_a_hold_in(studio_id))));
