-- Mirrors navmcp/migrations/0053_mail.sql: a person's e-mail address for the daily digest is their
-- own row, which nobody else reads (not even the members of their studios). The digest's sender,
-- which serves everyone, asks navmcp.digest_due for whose digest is due, then reads each person's
-- entries as that person.
CREATE TABLE mail_settings (
    user_id        TEXT COLLATE "C" PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    email          TEXT NOT NULL,
    digest         INTEGER NOT NULL DEFAULT 1,
    digest_sent_at TEXT COLLATE "C"
);
ALTER TABLE mail_settings ENABLE ROW LEVEL SECURITY;
CREATE POLICY mail_settings_own ON mail_settings FOR ALL
    USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_settings TO navmcp_app;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE mail_settings FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- Whose digest is due: the digest on, not sent since `since`, an account that works.
CREATE OR REPLACE FUNCTION navmcp.digest_due(since text)
RETURNS TABLE (user_id text, email text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT s.user_id, s.email FROM public.mail_settings s JOIN public.users u ON u.id = s.user_id
     WHERE s.digest = 1 AND u.deleted_at IS NULL AND (s.digest_sent_at IS NULL OR s.digest_sent_at < since)
     ORDER BY s.user_id
$$;
REVOKE ALL ON FUNCTION navmcp.digest_due(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.digest_due(text) TO navmcp_app;
