-- Decision kinds (navmcp/kinds/): how a decision is decided, fixed at its creation. NULL on
-- decisions made before kinds, and on notes and commitments: acceptance voting, as before.
--   decision_kind  acceptance | consent | dots | times
--   quorum         NULL (none), a number of members ("3") or a share of them ("50%")
--   kind_settings  the kind's own settings as JSON ({"dots": 3}, {"max_objections": 0}, ...)
ALTER TABLE items ADD COLUMN decision_kind TEXT;
ALTER TABLE items ADD COLUMN quorum TEXT;
ALTER TABLE items ADD COLUMN kind_settings TEXT;

-- What a member answered on a decision of a kind other than acceptance (whose votes stay in
-- `votes`), one row per member and option: a consent stance on the whole decision (option_id '',
-- choice consent | object, its reason, the proposal version it was given on), a number of dots
-- on an option (choice 'dots', amount), a time poll's answer on a time (choice yes | maybe | no).
CREATE TABLE responses (
    decision_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id),
    option_id   TEXT NOT NULL DEFAULT '',
    choice      TEXT NOT NULL,
    amount      INTEGER NOT NULL DEFAULT 0,
    reason      TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (decision_id, user_id, option_id)
);

-- A consent proposal's versions: the first at creation, one more per amendment. The item's body is
-- the latest version's text.
CREATE TABLE proposal_versions (
    decision_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    body        TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (decision_id, version)
);
