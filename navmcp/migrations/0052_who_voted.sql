-- Who has voted (issue 43): a decision page names who voted how and who has not, unless the
-- decision was created anonymous (then counts only, for good). `remind` tells those who have not
-- voted, at most once a day per decision: when it last did is kept here.
ALTER TABLE items ADD COLUMN anonymous INTEGER NOT NULL DEFAULT 0;
CREATE TABLE reminders (
    item_id     TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    reminded_at TEXT NOT NULL
);
