-- What each change was: the action's name (`vote`, `close_decision`, `add_comment`; NULL for a
-- change an action did not record, such as accepting an invitation), so a watcher's notification
-- can say what changed (issue 42, navmcp/summaries.py). A name, never content.
ALTER TABLE changes ADD COLUMN action TEXT;
