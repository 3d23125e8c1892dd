-- Mirrors navmcp/migrations/0090_time_zone.sql: a person's time zone (set_time_zone on /whoami,
-- navmcp/zones.py). They write it on their own row, as findable (users_update, 20261126000023).
ALTER TABLE users ADD COLUMN IF NOT EXISTS time_zone TEXT;
GRANT UPDATE (time_zone) ON users TO navmcp_app;

-- A web session's user row carries it too (its pages show deadlines in it).
DROP FUNCTION navmcp.web_session_user(text);
CREATE FUNCTION navmcp.web_session_user(session_hash text)
RETURNS TABLE (id text, handle text, name text, created_at text, deleted_at text, findable integer, time_zone text,
               flash text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT u.id, u.handle, u.name, u.created_at, u.deleted_at, u.findable, u.time_zone, s.flash
      FROM public.web_sessions s JOIN public.users u ON u.id = s.user_id
     WHERE s.id_hash = session_hash AND s.ended_at IS NULL AND s.expires_at > navmcp.now_text() COLLATE "C"
       AND u.deleted_at IS NULL
$$;
REVOKE ALL ON FUNCTION navmcp.web_session_user(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.web_session_user(text) TO navmcp_app;
