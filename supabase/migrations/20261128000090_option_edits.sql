-- edit_decision renames or removes options (navmcp/actions/edits.py): its creator or a studio admin,
-- on an open decision, and only an option nobody has voted on (a vote is for what the voter read).
-- Until now no policy let navmcp_app update or delete an option; only its title changes.
REVOKE UPDATE ON options FROM navmcp_app;
GRANT UPDATE (title) ON options TO navmcp_app;

-- Whether anybody voted on an option, whoever asks: a member may not see every vote (an anonymous
-- decision's), yet the rule is about all of them.
CREATE OR REPLACE FUNCTION navmcp.option_has_votes(option text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.votes v WHERE v.option_id = option)
        OR EXISTS (SELECT 1 FROM public.responses r WHERE r.option_id = option)
$$;
REVOKE ALL ON FUNCTION navmcp.option_has_votes(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.option_has_votes(text) TO navmcp_app;

-- The decision: open, and its creator's or an admin's of its studio.
CREATE OR REPLACE FUNCTION navmcp.may_edit_options(decision text) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.items i
                    WHERE i.id = decision AND i.kind = 'decision' AND i.closed_at IS NULL
                      AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))
                      AND i.studio_id = ANY ((SELECT navmcp.my_studios())::text[])
                      AND (i.created_by = (SELECT navmcp.uid()) OR navmcp.is_admin(i.studio_id)))
$$;
REVOKE ALL ON FUNCTION navmcp.may_edit_options(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.may_edit_options(text) TO navmcp_app;

DROP POLICY IF EXISTS options_update ON options;
CREATE POLICY options_update ON options FOR UPDATE
    USING (navmcp.may_edit_options(decision_id) AND NOT navmcp.option_has_votes(id))
    WITH CHECK (navmcp.may_edit_options(decision_id) AND NOT navmcp.option_has_votes(id));
DROP POLICY IF EXISTS options_delete ON options;
CREATE POLICY options_delete ON options FOR DELETE
    USING (navmcp.may_edit_options(decision_id) AND NOT navmcp.option_has_votes(id));
