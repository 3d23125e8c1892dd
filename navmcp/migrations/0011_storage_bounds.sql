-- Storage bounds (issue 24, item 13): an ended MCP session is deleted now (navmcp.sessions), so
-- the rows of sessions ended before go too; a user's sessions are kept newest first by last_seen
-- (the bound per user deletes the oldest), read from this index.
DELETE FROM mcp_sessions WHERE ended_at IS NOT NULL;
CREATE INDEX mcp_sessions_user_seen ON mcp_sessions(user_id, last_seen);
