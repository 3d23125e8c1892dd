-- OAuth 2.1 (navmcp/oauth): registered clients, the grants people approve on the consent page,
-- their authorization codes and their rotating refresh tokens. Stored here, not in a process, so
-- any `navmcp web` process serves any step. Only SHA-256 hashes of codes, refresh tokens and client
-- secrets are stored. Access tokens are signed JWTs and are not stored at all.
CREATE TABLE oauth_clients (              -- clients registered by RFC 7591 (Dynamic Client Registration)
    client_id    TEXT PRIMARY KEY,
    secret_hash  TEXT,                    -- NULL: a public client (token_endpoint_auth_method "none")
    name         TEXT NOT NULL,
    metadata     TEXT NOT NULL,           -- the registered client metadata, JSON
    created_at   TEXT NOT NULL
);

CREATE TABLE oauth_grants (               -- one approval on the consent page: a refresh-token family
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id),
    client_id     TEXT NOT NULL,          -- a registered client's id, or a metadata document's URL
    client_name   TEXT NOT NULL,
    scope         TEXT NOT NULL,
    resource      TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    issued_at     TEXT,                   -- when its code was exchanged for tokens
    last_used_at  TEXT,
    revoked_at    TEXT
);
CREATE INDEX oauth_grants_user ON oauth_grants(user_id, client_id);

CREATE TABLE oauth_codes (
    code_hash       TEXT PRIMARY KEY,
    grant_id        TEXT NOT NULL REFERENCES oauth_grants(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    redirect_uri    TEXT NOT NULL,        -- as sent in the authorization request ('' when left out)
    code_challenge  TEXT NOT NULL,        -- PKCE, S256 only
    expires_at      TEXT NOT NULL,
    used_at         TEXT
);

CREATE TABLE oauth_refresh_tokens (
    token_hash  TEXT PRIMARY KEY,
    grant_id    TEXT NOT NULL REFERENCES oauth_grants(id),
    user_id     TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    spent_at    TEXT                      -- rotated: presenting it again revokes the whole grant
);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens(grant_id);
