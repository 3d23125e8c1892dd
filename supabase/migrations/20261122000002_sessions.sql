-- MCP sessions over HTTP (Mcp-Session-Id). Mirrors navmcp/migrations/0002_sessions.sql.
CREATE TABLE mcp_sessions (
    id                TEXT PRIMARY KEY,
    user_id           TEXT NOT NULL REFERENCES users(id),
    client            TEXT NOT NULL,
    protocol_version  TEXT NOT NULL,
    state             TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    last_seen         TEXT NOT NULL,
    ended_at          TEXT
);
CREATE INDEX mcp_sessions_user ON mcp_sessions(user_id);
