-- Storage bounds (issue 24, item 13). Mirrors navmcp/migrations/0011_storage_bounds.sql: ended MCP
-- sessions are deleted (a user deletes their own, under mcp_sessions_own), and a user's sessions
-- are read newest first by last_seen.
DELETE FROM mcp_sessions WHERE ended_at IS NOT NULL;
CREATE INDEX mcp_sessions_user_seen ON mcp_sessions(user_id, last_seen);

-- Audit retention (NAVMCP_AUDIT_RETENTION_DAYS): nobody may delete audit lines under row-level
-- security, so the app prunes through this function, as the owner. It takes a number of days, at
-- least one, never a time: the app role can't empty the log through it. Lines go oldest first (ids
-- grow with time), at most `most` per call, so a first prune of a long log is spread over calls.
CREATE FUNCTION navmcp.prune_audit(days integer, most integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    cutoff text;
BEGIN
    IF days IS NULL OR days < 1 THEN
        RAISE EXCEPTION 'navmcp.prune_audit: days must be at least 1';
    END IF;
    cutoff := to_char((now() AT TIME ZONE 'UTC') - make_interval(days => days), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    DELETE FROM public.audit
     WHERE id < LEAST(coalesce((SELECT a.id FROM public.audit a WHERE a.at >= cutoff ORDER BY a.id LIMIT 1),
                               (SELECT max(a.id) + 1 FROM public.audit a)),
                      (SELECT min(a.id) FROM public.audit a) + greatest(most, 1));
END $$;
REVOKE ALL ON FUNCTION navmcp.prune_audit(integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.prune_audit(integer, integer) TO navmcp_app;
