-- Held actions (navmcp/held/): an agent's write that waits for a person's approval.
--
-- hold_rules: who set which rule where. owner_id NULL: the studio's rule, set by an admin;
-- else that person's rule for their own agents in the studio.
--   actions        '*' (every write) or a comma-separated list of action names
--   whose          agents (anything but a person's browser session) | everyone
--   approvers      self (the person the agent acts for) | admins | members | a comma-separated list of user ids
--   approvals      how many approvals it takes
--   own_counts     1: the requester's own approval counts; 0: it does not
--   in_client      1: approval may also happen in the MCP client (elicitation); 0: the browser only
--   expires_hours  how long a hold waits before it expires
CREATE TABLE hold_rules (
    id            TEXT PRIMARY KEY,
    studio_id     TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    owner_id      TEXT REFERENCES users(id),
    actions       TEXT NOT NULL,
    whose         TEXT NOT NULL,
    approvers     TEXT NOT NULL,
    approvals     INTEGER NOT NULL DEFAULT 1,
    own_counts    INTEGER NOT NULL DEFAULT 0,
    in_client     INTEGER NOT NULL DEFAULT 0,
    expires_hours INTEGER NOT NULL DEFAULT 72,
    created_by    TEXT NOT NULL REFERENCES users(id),
    created_at    TEXT NOT NULL
);
CREATE INDEX hold_rules_studio ON hold_rules(studio_id);

-- How many rules a studio has: read with the studio on every write (resolve_studio's s.*), so a
-- write in a studio without rules costs no query. Kept by the triggers below.
ALTER TABLE studios ADD COLUMN hold_rules INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER hold_rules_added AFTER INSERT ON hold_rules BEGIN
    UPDATE studios SET hold_rules = hold_rules + 1 WHERE id = NEW.studio_id;
END;
CREATE TRIGGER hold_rules_removed AFTER DELETE ON hold_rules BEGIN
    UPDATE studios SET hold_rules = hold_rules - 1 WHERE id = OLD.studio_id;
END;

-- One held write: exactly what will run (action, page URL, params as JSON), what it would do
-- (preview: its message when run and rolled back), the target's version when it was held.
--   status  pending | executed | rejected | withdrawn | expired | failed
CREATE TABLE held_actions (
    id             TEXT PRIMARY KEY,
    studio_id      TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    requester_id   TEXT NOT NULL REFERENCES users(id),
    client         TEXT NOT NULL,
    url            TEXT NOT NULL,
    action         TEXT NOT NULL,
    params         TEXT NOT NULL,
    digest         TEXT NOT NULL,
    preview        TEXT NOT NULL,
    target_version TEXT,
    rule_id        TEXT NOT NULL,
    rule_text      TEXT NOT NULL,
    approvers      TEXT NOT NULL,
    approvals      INTEGER NOT NULL,
    own_counts     INTEGER NOT NULL,
    status         TEXT NOT NULL DEFAULT 'pending',
    reason         TEXT NOT NULL DEFAULT '',
    result_message TEXT NOT NULL DEFAULT '',
    result_url     TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    decided_at     TEXT,
    decided_by     TEXT REFERENCES users(id)
);
CREATE INDEX held_actions_queue ON held_actions(studio_id, status, created_at);
CREATE INDEX held_actions_requester ON held_actions(requester_id, studio_id, status);

CREATE TABLE held_approvals (
    held_id    TEXT NOT NULL REFERENCES held_actions(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id),
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (held_id, user_id)
);
