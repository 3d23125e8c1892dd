-- A decision's outcome statement: what its closer says was decided (a tie's pick among the tied
-- options, say), written when closing or later (set_outcome); a reopened decision's is cleared,
-- and kept in its history (navmcp/actions/closing.py).
ALTER TABLE items ADD COLUMN outcome TEXT;
