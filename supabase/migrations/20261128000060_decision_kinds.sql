-- Mirrors navmcp/migrations/0060_decision_kinds.sql: decision kinds (navmcp/kinds/), what members
-- answered on decisions of the new kinds, and a consent proposal's versions.
ALTER TABLE items ADD COLUMN IF NOT EXISTS decision_kind TEXT;
ALTER TABLE items ADD COLUMN IF NOT EXISTS quorum TEXT;
ALTER TABLE items ADD COLUMN IF NOT EXISTS kind_settings TEXT;
-- create_decision writes them (20261124000014: the app role inserts only the columns it names).
GRANT INSERT (decision_kind, quorum, kind_settings) ON items TO navmcp_app;

CREATE TABLE IF NOT EXISTS responses (
    decision_id TEXT COLLATE "C" NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    option_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    choice      TEXT NOT NULL,
    amount      INTEGER NOT NULL DEFAULT 0,
    reason      TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (decision_id, user_id, option_id)
);
CREATE TABLE IF NOT EXISTS proposal_versions (
    decision_id TEXT COLLATE "C" NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    body        TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_by  TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    created_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (decision_id, version)
);
ALTER TABLE responses ENABLE ROW LEVEL SECURITY;
ALTER TABLE proposal_versions ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE, DELETE ON responses TO navmcp_app;
GRANT SELECT, INSERT ON proposal_versions TO navmcp_app;
-- Not Supabase's Data API's (see 20261124000016_no_data_api.sql).
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE responses, proposal_versions FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- responses: everyone in the studio reads them (the items policy limits which decisions are
-- seen); you write only your own, on an open decision (as votes, 20261126000021).
DROP POLICY IF EXISTS responses_read ON responses;
DROP POLICY IF EXISTS responses_write ON responses;
DROP POLICY IF EXISTS responses_update ON responses;
DROP POLICY IF EXISTS responses_delete ON responses;
CREATE POLICY responses_read ON responses FOR SELECT USING (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY responses_write ON responses FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                   AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));
CREATE POLICY responses_update ON responses FOR UPDATE
    USING (user_id = (SELECT navmcp.uid())
           AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                          AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))))
    WITH CHECK (user_id = (SELECT navmcp.uid()));
CREATE POLICY responses_delete ON responses FOR DELETE USING (
    user_id = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.kind = 'decision' AND i.closed_at IS NULL
                   AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));

-- proposal_versions: read in the studio; written by the proposal's author alone (create_decision
-- and amend), in their own name, while it is open.
DROP POLICY IF EXISTS proposal_versions_read ON proposal_versions;
DROP POLICY IF EXISTS proposal_versions_write ON proposal_versions;
CREATE POLICY proposal_versions_read ON proposal_versions FOR SELECT
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY proposal_versions_write ON proposal_versions FOR INSERT WITH CHECK (
    created_by = (SELECT navmcp.uid())
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id AND i.created_by = (SELECT navmcp.uid())
                   AND i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > (SELECT navmcp.now_text()))));

-- A time poll closed with create_commitment joins everyone who answered yes to the chosen time
-- (navmcp/kinds/times.py): the commitment's creator (the closer) inserts their participant rows.
-- Allowed only for a commitment of theirs whose text links a time poll (domain.link_mentions)
-- on which that person answered yes to a time; everyone else still joins only themselves.
DROP POLICY IF EXISTS participants_from_poll ON participants;
CREATE POLICY participants_from_poll ON participants FOR INSERT WITH CHECK (
    EXISTS (SELECT 1 FROM items c JOIN links l ON l.from_item = c.id
              JOIN items p ON p.id = l.to_item AND p.decision_kind = 'times'
              JOIN responses r ON r.decision_id = p.id AND r.user_id = participants.user_id AND r.choice = 'yes'
             WHERE c.id = commitment_id AND c.kind = 'commitment' AND c.created_by = (SELECT navmcp.uid())));
