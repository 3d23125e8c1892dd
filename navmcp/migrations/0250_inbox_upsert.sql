-- The inbox's write is one statement (navmcp/store/sqlite_tx.py `note_inbox`): a new entry, or for a
-- kind that folds the unread entry of the same item counted once more, as an upsert on this unique
-- index. `fold` is 1 on an entry of a kind that folds (navmcp.feeds.inbox.KINDS) and NULL on the
-- rest, which never conflict (NULLs are distinct), so a decision closed twice is two entries. The
-- update and insert it replaces cost a second statement, an IN list's temporary b-tree and a
-- RETURNING buffer per write. The unread entries folded into until now keep folding: the newest
-- of each item, kind and person (of the kinds that fold today) is marked.
ALTER TABLE inbox ADD COLUMN fold INTEGER;
UPDATE inbox SET fold = 1 WHERE rowid IN (
    SELECT max(rowid) FROM inbox WHERE kind IN ('mention', 'comment', 'reminder', 'approval_requested')
       AND item_id IS NOT NULL AND read_at IS NULL AND dismissed_at IS NULL GROUP BY item_id, kind, user_id);
DROP INDEX inbox_fold;
CREATE UNIQUE INDEX inbox_fold ON inbox (item_id, kind, user_id, fold) WHERE read_at IS NULL AND dismissed_at IS NULL;
