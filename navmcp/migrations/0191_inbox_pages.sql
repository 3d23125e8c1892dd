-- The inbox's writes touch few pages (navmcp/store/sqlite.py `note_inbox`): a comment telling 20
-- members wrote each recipient's entry into a different leaf of every index keyed by the user
-- first, about 80 pages to the WAL (and a checkpoint) for 20 rows. The fold's lookup is keyed by the
-- item first, so one item's recipients sit side by side; pruning walks one index of every entry by
-- age, whose new rows all land at its end. (Entry ids grow with time too, for the primary key's.)
DROP INDEX inbox_fold;
CREATE INDEX inbox_fold ON inbox (item_id, kind, user_id) WHERE read_at IS NULL AND dismissed_at IS NULL;
DROP INDEX inbox_user_age;
CREATE INDEX inbox_age ON inbox (updated_at);
