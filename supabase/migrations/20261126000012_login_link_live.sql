-- Whether a login link is live (not used, not expired), for a request from an address over its
-- bad-token limit (navmcp.web.limits): one indexed read, no lock, instead of a redemption. As
-- the other login-link functions, the caller must hold the token whose hash is `link_hash`.
CREATE FUNCTION navmcp.login_link_live(link_hash text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.login_links l
                    WHERE l.token_hash = link_hash AND l.used_at IS NULL
                      AND l.expires_at > navmcp.now_text() COLLATE "C")
$$;
REVOKE ALL ON FUNCTION navmcp.login_link_live(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.login_link_live(text) TO navmcp_app;
