-- Invitations (navmcp/invitations.py): a link an admin shares, which lets whoever opens it in a
-- browser join the studio with a role, up to `max_uses` times, until `expires_at`, unless revoked.
-- The link's secret is stored hashed; each use names who joined by it.
CREATE TABLE invitations (
    id          TEXT PRIMARY KEY,
    studio_id   TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    token_hash  TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('member', 'admin')),
    max_uses    INTEGER NOT NULL CHECK (max_uses >= 1),
    uses        INTEGER NOT NULL DEFAULT 0,
    created_by  TEXT REFERENCES users(id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX invitations_studio ON invitations (studio_id, created_at);
CREATE TABLE invitation_uses (
    invitation_id TEXT NOT NULL REFERENCES invitations(id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    used_at       TEXT NOT NULL,
    PRIMARY KEY (invitation_id, user_id)
);
