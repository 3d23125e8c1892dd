-- Mirrors navmcp/migrations/0171_held_expiry.sql: a watched change feed asks every second which held
-- actions expired meanwhile (navmcp.changes, `Source.expired`), to tell the held page's watchers.
CREATE INDEX IF NOT EXISTS held_actions_expiry ON held_actions(expires_at) WHERE status = 'pending';

-- The feed reads as nobody, so through this, as the owner: ids only (the hold's and its studio's),
-- as the change feed's own rows are; who may hear of it is judged per watcher afterwards.
CREATE OR REPLACE FUNCTION navmcp.held_expired(after text, until text) RETURNS TABLE (id text, studio_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT h.id, h.studio_id FROM public.held_actions h
     WHERE h.status = 'pending' AND h.expires_at > after AND h.expires_at <= until
     ORDER BY h.expires_at, h.id
$$;
REVOKE ALL ON FUNCTION navmcp.held_expired(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.held_expired(text, text) TO navmcp_app;
