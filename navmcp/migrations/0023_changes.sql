-- The change feed: one row per committed action, written in the action's own transaction, naming
-- the facts it changed (its studio, the item acted on or created; no item for a studio-wide change
-- such as a membership). Live pages read it to tell watchers which pages changed; rows carry ids
-- only, never content. Old rows are pruned as new ones come (see navmcp/changes.py).
CREATE TABLE changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    studio_id  TEXT,
    item_id    TEXT,
    user_id    TEXT NOT NULL
);
