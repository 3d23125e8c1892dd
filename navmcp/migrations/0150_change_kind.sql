-- What kind of change a row of the change feed is (issue 42): the action's name, from the action
-- table. A watcher's notification says it in words ("vote by @bob"), so one waiting for a decision
-- to close need not read the page after every vote. Still no content: a name from a fixed list.
ALTER TABLE changes ADD COLUMN action TEXT;
