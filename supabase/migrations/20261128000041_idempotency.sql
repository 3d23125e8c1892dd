-- Idempotency keys (issue 41; mirrors navmcp/migrations/0040_idempotency.sql): a write sent with a
-- key is applied at most once per user and key. The key's row is claimed first in the action's
-- transaction (INSERT … ON CONFLICT DO NOTHING: a second call with the key waits for the first to
-- commit or roll back) and holds the answer the first call gave. A user reaches their own keys only.
CREATE TABLE idempotency_keys (
    user_id  TEXT COLLATE "C" NOT NULL,
    key      TEXT COLLATE "C" NOT NULL,
    at       TEXT COLLATE "C" NOT NULL,
    action   TEXT NOT NULL,
    url      TEXT NOT NULL,
    result   TEXT,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_at ON idempotency_keys (user_id, at);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_own ON idempotency_keys FOR ALL
    USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO navmcp_app;

-- As for every table (20261124000016_no_data_api.sql): Supabase's Data API reaches none of it.
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE idempotency_keys FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;
