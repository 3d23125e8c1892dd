-- A decision's options are read in the order they were added on every vote and every decision
-- page: with this index they are read in that order, from the index alone, instead of being
-- sorted into a temporary b-tree each time.
CREATE INDEX options_decision_created ON options(decision_id, created_at, id, title);
ANALYZE options_decision_created;
