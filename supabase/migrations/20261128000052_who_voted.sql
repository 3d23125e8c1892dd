-- Mirrors navmcp/migrations/0052_who_voted.sql: whether a decision is anonymous (set when it is
-- created, never changed: no UPDATE grant), and when its voters were last reminded (a member may
-- read and write it for an item they can see).
ALTER TABLE items ADD COLUMN IF NOT EXISTS anonymous INTEGER NOT NULL DEFAULT 0;
GRANT INSERT (anonymous) ON items TO navmcp_app;  -- domain.insert_item writes it (see 20261124000014)
CREATE TABLE reminders (
    item_id     TEXT COLLATE "C" PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    reminded_at TEXT COLLATE "C" NOT NULL
);
ALTER TABLE reminders ENABLE ROW LEVEL SECURITY;
CREATE POLICY reminders_member ON reminders FOR ALL
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = item_id))
    WITH CHECK (EXISTS (SELECT 1 FROM items i WHERE i.id = item_id));
GRANT SELECT, INSERT, UPDATE ON reminders TO navmcp_app;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE reminders FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;
