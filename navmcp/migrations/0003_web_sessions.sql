-- Web sign-in for humans: one-time login links and cookie sessions. Only SHA-256 hashes of the
-- secrets are stored, so reading the database does not let anyone sign in.
CREATE TABLE login_links (
    token_hash  TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE TABLE web_sessions (
    id_hash     TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    ended_at    TEXT,
    flash       TEXT
);
CREATE INDEX web_sessions_user ON web_sessions(user_id);
