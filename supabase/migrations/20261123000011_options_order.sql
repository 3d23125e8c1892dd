-- Mirrors navmcp/migrations/0006_options_order.sql: a decision's options in the order they were
-- added, read from the index without a sort.
CREATE INDEX IF NOT EXISTS options_decision_created ON options(decision_id, created_at, id, title);
