-- Mirrors navmcp/migrations/0070_held_actions.sql: held actions (navmcp/held/), an agent's write
-- that waits for a person's approval, the rules that hold them, and the approvals given.
CREATE TABLE IF NOT EXISTS hold_rules (
    id            TEXT COLLATE "C" PRIMARY KEY,
    studio_id     TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    owner_id      TEXT COLLATE "C" REFERENCES users(id),
    actions       TEXT COLLATE "C" NOT NULL,
    whose         TEXT COLLATE "C" NOT NULL,
    approvers     TEXT COLLATE "C" NOT NULL,
    approvals     INTEGER NOT NULL DEFAULT 1,
    own_counts    INTEGER NOT NULL DEFAULT 0,
    in_client     INTEGER NOT NULL DEFAULT 0,
    expires_hours INTEGER NOT NULL DEFAULT 72,
    created_by    TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    created_at    TEXT COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS hold_rules_studio ON hold_rules(studio_id);

ALTER TABLE studios ADD COLUMN IF NOT EXISTS hold_rules INTEGER NOT NULL DEFAULT 0;
-- The count follows the rules whoever writes them: a member's rule for their own agents takes no
-- right to update the studio, so the trigger writes as the table owner.
CREATE OR REPLACE FUNCTION navmcp.count_hold_rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE public.studios SET hold_rules = hold_rules - 1 WHERE id = OLD.studio_id;
    ELSE
        UPDATE public.studios SET hold_rules = hold_rules + 1 WHERE id = NEW.studio_id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_hold_rules() FROM PUBLIC;
DROP TRIGGER IF EXISTS hold_rules_count ON hold_rules;
CREATE TRIGGER hold_rules_count AFTER INSERT OR DELETE ON hold_rules
    FOR EACH ROW EXECUTE FUNCTION navmcp.count_hold_rules();

CREATE TABLE IF NOT EXISTS held_actions (
    id             TEXT COLLATE "C" PRIMARY KEY,
    studio_id      TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    requester_id   TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    client         TEXT COLLATE "C" NOT NULL,
    url            TEXT COLLATE "C" NOT NULL,
    action         TEXT COLLATE "C" NOT NULL,
    params         TEXT NOT NULL,
    digest         TEXT COLLATE "C" NOT NULL,
    preview        TEXT NOT NULL,
    target_version TEXT COLLATE "C",
    rule_id        TEXT COLLATE "C" NOT NULL,
    rule_text      TEXT NOT NULL,
    approvers      TEXT COLLATE "C" NOT NULL,
    approvals      INTEGER NOT NULL,
    own_counts     INTEGER NOT NULL,
    status         TEXT COLLATE "C" NOT NULL DEFAULT 'pending',
    reason         TEXT NOT NULL DEFAULT '',
    result_message TEXT NOT NULL DEFAULT '',
    result_url     TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at     TEXT COLLATE "C" NOT NULL,
    expires_at     TEXT COLLATE "C" NOT NULL,
    decided_at     TEXT COLLATE "C",
    decided_by     TEXT COLLATE "C" REFERENCES users(id)
);
CREATE INDEX IF NOT EXISTS held_actions_queue ON held_actions(studio_id, status, created_at);
CREATE INDEX IF NOT EXISTS held_actions_requester ON held_actions(requester_id, studio_id, status);

CREATE TABLE IF NOT EXISTS held_approvals (
    held_id    TEXT COLLATE "C" NOT NULL REFERENCES held_actions(id) ON DELETE CASCADE,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (held_id, user_id)
);

ALTER TABLE hold_rules ENABLE ROW LEVEL SECURITY;
ALTER TABLE held_actions ENABLE ROW LEVEL SECURITY;
ALTER TABLE held_approvals ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, DELETE ON hold_rules TO navmcp_app;
GRANT SELECT, INSERT, UPDATE ON held_actions TO navmcp_app;
GRANT SELECT, INSERT ON held_approvals TO navmcp_app;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE hold_rules, held_actions, held_approvals FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- Rules: read by the studio's members; the studio's rules written by its admins, a person's own
-- rules by that person.
DROP POLICY IF EXISTS hold_rules_read ON hold_rules;
DROP POLICY IF EXISTS hold_rules_insert ON hold_rules;
DROP POLICY IF EXISTS hold_rules_delete ON hold_rules;
CREATE POLICY hold_rules_read ON hold_rules FOR SELECT USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY hold_rules_insert ON hold_rules FOR INSERT WITH CHECK (
    created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND (owner_id = (SELECT navmcp.uid()) OR (owner_id IS NULL AND navmcp.is_admin(studio_id))));
CREATE POLICY hold_rules_delete ON hold_rules FOR DELETE USING (
    studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND (owner_id = (SELECT navmcp.uid()) OR (owner_id IS NULL AND navmcp.is_admin(studio_id))));

-- Held actions: read by the studio's members (the page shows each its part); held by the requester
-- in their own name; decided by a member (who may decide is the app's rule, judged in the
-- approving transaction: navmcp/held/approval.py).
DROP POLICY IF EXISTS held_actions_read ON held_actions;
DROP POLICY IF EXISTS held_actions_insert ON held_actions;
DROP POLICY IF EXISTS held_actions_update ON held_actions;
CREATE POLICY held_actions_read ON held_actions FOR SELECT USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY held_actions_insert ON held_actions FOR INSERT WITH CHECK (
    requester_id = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY held_actions_update ON held_actions FOR UPDATE
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));

DROP POLICY IF EXISTS held_approvals_read ON held_approvals;
DROP POLICY IF EXISTS held_approvals_insert ON held_approvals;
CREATE POLICY held_approvals_read ON held_approvals FOR SELECT
    USING (EXISTS (SELECT 1 FROM held_actions h WHERE h.id = held_id));
CREATE POLICY held_approvals_insert ON held_approvals FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid()) AND EXISTS (SELECT 1 FROM held_actions h WHERE h.id = held_id AND h.status = 'pending'));
