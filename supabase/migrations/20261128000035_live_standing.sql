-- Which of the credentials behind a process's open event streams still hold (navmcp.web.standing):
-- users not deleted, cookie sessions neither ended nor expired, OAuth grants not revoked. The asker
-- is a web process checking many users' streams at once, so it is no one user: like
-- web_session_user, this answers about rows named by values only their holders know (a session's
-- hash, a grant's id from its access token) and says no more than "still live".
CREATE FUNCTION navmcp.live_standing(user_ids text[], session_hashes text[], grant_ids text[])
RETURNS TABLE (kind text, id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT 'user', u.id FROM public.users u
     WHERE u.id = ANY (user_ids) AND u.deleted_at IS NULL
    UNION ALL
    SELECT 'session', s.id_hash FROM public.web_sessions s
     WHERE s.id_hash = ANY (session_hashes) AND s.ended_at IS NULL
       AND s.expires_at > navmcp.now_text() COLLATE "C"
    UNION ALL
    SELECT 'grant', g.id FROM public.oauth_grants g
     WHERE g.id = ANY (grant_ids) AND g.revoked_at IS NULL
$$;
REVOKE ALL ON FUNCTION navmcp.live_standing(text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.live_standing(text[], text[], text[]) TO navmcp_app;
