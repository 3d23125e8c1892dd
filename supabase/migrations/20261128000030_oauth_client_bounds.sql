-- Registration bounds (issue 40, item 2): a registered client that never obtained a grant expires.
-- navmcp.oauth.clients.save_registered calls navmcp.oauth_prune_clients as each new client is
-- registered (in the same transaction): it deletes at most p_most clients made before p_before that
-- no grant names. Nobody is known when a client registers, so, like registering, it is a SECURITY
-- DEFINER function; it deletes only clients nobody ever approved.
CREATE INDEX oauth_clients_created ON oauth_clients(created_at);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);

CREATE OR REPLACE FUNCTION navmcp.oauth_prune_clients(p_before text, p_most integer)
RETURNS integer LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    WITH gone AS (
        DELETE FROM public.oauth_clients c WHERE c.client_id IN (
            SELECT x.client_id FROM public.oauth_clients x
             WHERE x.created_at < p_before COLLATE "C"
               AND NOT EXISTS (SELECT 1 FROM public.oauth_grants g WHERE g.client_id = x.client_id)
             ORDER BY x.created_at LIMIT greatest(least(p_most, 1000), 0))
        RETURNING 1)
    SELECT count(*)::integer FROM gone
$$;

REVOKE ALL ON FUNCTION navmcp.oauth_prune_clients(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.oauth_prune_clients(text, integer) TO navmcp_app;
