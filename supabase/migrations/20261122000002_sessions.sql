-- MCP sessions over HTTP (Mcp-Session-Id). Mirrors navmcp/migrations/0002_sessions.sql.
CREATE TABLE mcp_sessions (
    id                TEXT COLLATE "C" PRIMARY KEY,
    user_id           TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client            TEXT COLLATE "C" NOT NULL,
    protocol_version  TEXT COLLATE "C" NOT NULL,
    state             TEXT COLLATE "C" NOT NULL,
    created_at        TEXT COLLATE "C" NOT NULL,
    last_seen         TEXT COLLATE "C" NOT NULL,
    ended_at          TEXT COLLATE "C"
);
CREATE INDEX mcp_sessions_user ON mcp_sessions(user_id);
