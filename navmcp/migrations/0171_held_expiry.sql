-- A watched change feed asks every second which held actions expired meanwhile (navmcp.changes,
-- `Source.expired`): found by expiry among the pending ones, not by walking every hold.
CREATE INDEX held_actions_expiry ON held_actions(expires_at) WHERE status = 'pending';
