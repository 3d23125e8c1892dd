-- Web sign-in for humans: one-time login links and cookie sessions. Mirrors
-- navmcp/migrations/0003_web_sessions.sql. Only SHA-256 hashes of the secrets are stored.
CREATE TABLE login_links (
    token_hash  TEXT COLLATE "C" PRIMARY KEY,
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    used_at     TEXT COLLATE "C"
);
CREATE INDEX login_links_user ON login_links(user_id);

CREATE TABLE web_sessions (
    id_hash     TEXT COLLATE "C" PRIMARY KEY,
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    ended_at    TEXT COLLATE "C",
    flash       TEXT COLLATE "C"
);
CREATE INDEX web_sessions_user ON web_sessions(user_id);

GRANT SELECT, INSERT, UPDATE, DELETE ON login_links, web_sessions TO navmcp_app;
ALTER TABLE login_links ENABLE ROW LEVEL SECURITY;
ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;

-- Row-level security. Two steps happen before the server knows who is asking: redeeming a login
-- link, and finding the user behind a session cookie. Neither opens a policy to "nobody in
-- particular": each is a SECURITY DEFINER function that takes the hash of a secret the caller
-- holds and answers about that one row only. Without the secret nothing is reachable; a query
-- that forgets its filter still sees only the acting user's own rows.

-- login_links: you may create links for yourself (`navmcp login-link` acts as the user it signs
-- in, as `navmcp token` does); nobody reads or changes them except through redemption below.
CREATE POLICY login_links_insert ON login_links FOR INSERT WITH CHECK (user_id = navmcp.uid());

-- web_sessions: your own sessions (flash messages, logging out). New ones are opened only by
-- redeeming a link.
CREATE POLICY web_sessions_read ON web_sessions FOR SELECT USING (user_id = navmcp.uid());
CREATE POLICY web_sessions_update ON web_sessions FOR UPDATE
    USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
CREATE POLICY web_sessions_delete ON web_sessions FOR DELETE USING (user_id = navmcp.uid());

-- Now, as the app writes times (ISO-8601 UTC text with microseconds), by the database's clock:
-- every server process judges expiry by the same clock.
CREATE OR REPLACE FUNCTION navmcp.now_text() RETURNS text LANGUAGE sql STABLE SET search_path = '' AS $$
    SELECT to_char(pg_catalog.now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Spend a login link (single use, row-locked so two redemptions can't both win) and open a web
-- session for its user under `session_hash`, valid until `session_expires`. Answers one row:
-- (user_id, problem) where problem is NULL on success, else 'invalid', 'used' or 'expired'.
CREATE OR REPLACE FUNCTION navmcp.redeem_login_link(link_hash text, session_hash text, session_expires text)
RETURNS TABLE (user_id text, problem text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    link public.login_links%ROWTYPE;
    stamp text := navmcp.now_text();
BEGIN
    SELECT * INTO link FROM public.login_links l WHERE l.token_hash = link_hash FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, 'invalid'::text;
        RETURN;
    END IF;
    IF link.used_at IS NOT NULL THEN
        RETURN QUERY SELECT NULL::text, 'used'::text;
        RETURN;
    END IF;
    IF link.expires_at <= stamp COLLATE "C" THEN
        RETURN QUERY SELECT NULL::text, 'expired'::text;
        RETURN;
    END IF;
    UPDATE public.login_links l SET used_at = stamp WHERE l.token_hash = link_hash;
    INSERT INTO public.web_sessions (id_hash, user_id, created_at, expires_at)
        VALUES (session_hash, link.user_id, stamp, session_expires);
    RETURN QUERY SELECT link.user_id, NULL::text;
END
$$;

-- The user behind a live (not ended, not expired) web session, with the session's pending flash
-- message: the caller must hold the cookie value whose hash is `session_hash`.
CREATE OR REPLACE FUNCTION navmcp.web_session_user(session_hash text)
RETURNS TABLE (id text, handle text, name text, created_at text, deleted_at text, flash text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT u.id, u.handle, u.name, u.created_at, u.deleted_at, s.flash
      FROM public.web_sessions s JOIN public.users u ON u.id = s.user_id
     WHERE s.id_hash = session_hash AND s.ended_at IS NULL AND s.expires_at > navmcp.now_text() COLLATE "C"
       AND u.deleted_at IS NULL
$$;

REVOKE ALL ON FUNCTION navmcp.redeem_login_link(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION navmcp.web_session_user(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.now_text(), navmcp.redeem_login_link(text, text, text),
    navmcp.web_session_user(text) TO navmcp_app;
