-- OAuth 2.1 (navmcp/oauth). Mirrors navmcp/migrations/0016_oauth.sql: registered clients, grants,
-- authorization codes and rotating refresh tokens; only SHA-256 hashes of secrets are stored.
CREATE TABLE oauth_clients (
    client_id    TEXT COLLATE "C" PRIMARY KEY,
    secret_hash  TEXT COLLATE "C",
    name         TEXT COLLATE "C" NOT NULL,
    metadata     TEXT COLLATE "C" NOT NULL,
    created_at   TEXT COLLATE "C" NOT NULL
);

CREATE TABLE oauth_grants (
    id            TEXT COLLATE "C" PRIMARY KEY,
    user_id       TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client_id     TEXT COLLATE "C" NOT NULL,
    client_name   TEXT COLLATE "C" NOT NULL,
    scope         TEXT COLLATE "C" NOT NULL,
    resource      TEXT COLLATE "C" NOT NULL,
    created_at    TEXT COLLATE "C" NOT NULL,
    issued_at     TEXT COLLATE "C",
    last_used_at  TEXT COLLATE "C",
    revoked_at    TEXT COLLATE "C"
);
CREATE INDEX oauth_grants_user ON oauth_grants(user_id, client_id);

CREATE TABLE oauth_codes (
    code_hash       TEXT COLLATE "C" PRIMARY KEY,
    grant_id        TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants(id),
    user_id         TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    redirect_uri    TEXT COLLATE "C" NOT NULL,
    code_challenge  TEXT COLLATE "C" NOT NULL,
    expires_at      TEXT COLLATE "C" NOT NULL,
    used_at         TEXT COLLATE "C"
);

CREATE TABLE oauth_refresh_tokens (
    token_hash  TEXT COLLATE "C" PRIMARY KEY,
    grant_id    TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants(id),
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    spent_at    TEXT COLLATE "C"
);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens(grant_id);

GRANT SELECT, INSERT, UPDATE ON oauth_grants TO navmcp_app;
GRANT INSERT ON oauth_codes, oauth_refresh_tokens TO navmcp_app;  -- read and spent only by the functions below
ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_refresh_tokens ENABLE ROW LEVEL SECURITY;

-- Row-level security. A person approves, lists and revokes only their own grants; the codes and
-- refresh tokens of a grant are written as its person, and the app role can't read them back. The steps taken before anyone is known
-- (registering a client, looking one up, exchanging a code, rotating a refresh token) go through
-- the SECURITY DEFINER functions below, each answering about the one row whose secret (or public
-- client id) the caller names. oauth_clients has no policy: only those functions reach it.
CREATE POLICY oauth_grants_read ON oauth_grants FOR SELECT USING (user_id = navmcp.uid());
CREATE POLICY oauth_grants_insert ON oauth_grants FOR INSERT WITH CHECK (user_id = navmcp.uid());
CREATE POLICY oauth_grants_update ON oauth_grants FOR UPDATE
    USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
CREATE POLICY oauth_codes_insert ON oauth_codes FOR INSERT WITH CHECK (user_id = navmcp.uid());
CREATE POLICY oauth_refresh_insert ON oauth_refresh_tokens FOR INSERT WITH CHECK (user_id = navmcp.uid());

-- Dynamic Client Registration (RFC 7591) is open: anyone may register a client.
CREATE OR REPLACE FUNCTION navmcp.oauth_register_client(p_client_id text, p_secret_hash text, p_name text,
                                                        p_metadata text)
RETURNS void LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    INSERT INTO public.oauth_clients (client_id, secret_hash, name, metadata, created_at)
    VALUES (p_client_id, p_secret_hash, p_name, p_metadata, navmcp.now_text())
$$;

CREATE OR REPLACE FUNCTION navmcp.oauth_client(p_client_id text)
RETURNS TABLE (client_id text, secret_hash text, name text, metadata text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.client_id, c.secret_hash, c.name, c.metadata FROM public.oauth_clients c WHERE c.client_id = p_client_id
$$;

-- Exchange an authorization code (single use, row-locked). A code presented again revokes the
-- grant it was issued for (OAuth 2.1 §4.1.3). problem: NULL, 'invalid', 'used', 'expired' or 'revoked'.
CREATE OR REPLACE FUNCTION navmcp.oauth_take_code(p_code_hash text)
RETURNS TABLE (grant_id text, user_id text, client_id text, client_name text, scope text, resource text,
               redirect_uri text, code_challenge text, problem text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    code public.oauth_codes%ROWTYPE;
    g public.oauth_grants%ROWTYPE;
    stamp text := navmcp.now_text();
BEGIN
    SELECT * INTO code FROM public.oauth_codes c WHERE c.code_hash = p_code_hash FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::text, 'invalid'::text;
        RETURN;
    END IF;
    SELECT * INTO g FROM public.oauth_grants x WHERE x.id = code.grant_id FOR UPDATE;
    IF code.used_at IS NOT NULL THEN
        UPDATE public.oauth_grants x SET revoked_at = stamp WHERE x.id = g.id AND x.revoked_at IS NULL;
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::text, 'used'::text;
        RETURN;
    END IF;
    UPDATE public.oauth_codes c SET used_at = stamp WHERE c.code_hash = p_code_hash;
    IF code.expires_at <= stamp COLLATE "C" THEN
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::text, 'expired'::text;
        RETURN;
    END IF;
    IF g.revoked_at IS NOT NULL THEN
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::text, 'revoked'::text;
        RETURN;
    END IF;
    UPDATE public.oauth_grants x SET issued_at = stamp, last_used_at = stamp WHERE x.id = g.id;
    RETURN QUERY SELECT g.id, g.user_id, g.client_id, g.client_name, g.scope, g.resource, code.redirect_uri,
                        code.code_challenge, NULL::text;
END
$$;

-- Rotate a refresh token: spend it (row-locked). One presented again, already spent, revokes its
-- whole grant (OAuth 2.1 §4.3.1). problem: NULL, 'invalid', 'reused', 'expired' or 'revoked'.
CREATE OR REPLACE FUNCTION navmcp.oauth_spend_refresh(p_token_hash text)
RETURNS TABLE (grant_id text, user_id text, client_id text, client_name text, scope text, resource text,
               problem text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    t public.oauth_refresh_tokens%ROWTYPE;
    g public.oauth_grants%ROWTYPE;
    stamp text := navmcp.now_text();
BEGIN
    SELECT * INTO t FROM public.oauth_refresh_tokens r WHERE r.token_hash = p_token_hash FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, 'invalid'::text;
        RETURN;
    END IF;
    SELECT * INTO g FROM public.oauth_grants x WHERE x.id = t.grant_id FOR UPDATE;
    IF t.spent_at IS NOT NULL THEN
        UPDATE public.oauth_grants x SET revoked_at = stamp WHERE x.id = g.id AND x.revoked_at IS NULL;
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, 'reused'::text;
        RETURN;
    END IF;
    IF g.revoked_at IS NOT NULL THEN
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, 'revoked'::text;
        RETURN;
    END IF;
    IF t.expires_at <= stamp COLLATE "C" THEN
        RETURN QUERY SELECT g.id, g.user_id, g.client_id, NULL::text, NULL::text, NULL::text, 'expired'::text;
        RETURN;
    END IF;
    UPDATE public.oauth_refresh_tokens r SET spent_at = stamp WHERE r.token_hash = p_token_hash;
    UPDATE public.oauth_grants x SET last_used_at = stamp WHERE x.id = g.id;
    RETURN QUERY SELECT g.id, g.user_id, g.client_id, g.client_name, g.scope, g.resource, NULL::text;
END
$$;

-- Whose grant a refresh token belongs to, for revocation (RFC 7009) by the client holding it.
CREATE OR REPLACE FUNCTION navmcp.oauth_refresh_owner(p_token_hash text)
RETURNS TABLE (grant_id text, user_id text, client_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT g.id, g.user_id, g.client_id FROM public.oauth_refresh_tokens r
      JOIN public.oauth_grants g ON g.id = r.grant_id WHERE r.token_hash = p_token_hash
$$;

REVOKE ALL ON FUNCTION navmcp.oauth_register_client(text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION navmcp.oauth_client(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION navmcp.oauth_take_code(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION navmcp.oauth_spend_refresh(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION navmcp.oauth_refresh_owner(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.oauth_register_client(text, text, text, text), navmcp.oauth_client(text),
    navmcp.oauth_take_code(text), navmcp.oauth_spend_refresh(text), navmcp.oauth_refresh_owner(text)
    TO navmcp_app;

-- As for every table (20261124000016_no_data_api.sql): Supabase's Data API reaches none of these.
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE oauth_clients, oauth_grants, oauth_codes, oauth_refresh_tokens FROM %I',
                           api_role);
        END IF;
    END LOOP;
END
$$;
