-- The inbox (navmcp/inbox.py): what happened that concerns a user, one row per entry, written in
-- the action's own transaction. Rows hold ids only, as the change feed does: who it is for, the
-- studio and item, who acted and through which client. A burst on one item folds into one unread
-- entry (`count`, `updated_at`: the newest). Kept 90 days.
CREATE TABLE inbox (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    studio_id    TEXT REFERENCES studios(id) ON DELETE CASCADE,
    item_id      TEXT REFERENCES items(id) ON DELETE CASCADE,
    actor_id     TEXT REFERENCES users(id) ON DELETE SET NULL,
    client       TEXT NOT NULL DEFAULT '',
    count        INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    read_at      TEXT,
    dismissed_at TEXT
);
-- The page reads a user's entries unread first, newest first; the fold finds the unread entry of
-- one item and kind; the pruning walks a user's oldest.
CREATE INDEX inbox_user_unread ON inbox (user_id, dismissed_at, read_at, updated_at);
CREATE INDEX inbox_fold ON inbox (user_id, item_id, kind) WHERE read_at IS NULL AND dismissed_at IS NULL;
CREATE INDEX inbox_user_age ON inbox (user_id, updated_at);
