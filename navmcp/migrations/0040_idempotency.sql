-- Idempotency keys (issue 41): a write sent with a key is applied at most once per user and key; the
-- key's row is written in the action's own transaction with the answer it gave, which a repeat of
-- the call gets back. Rows older than a day are pruned (navmcp/idempotency.py).
CREATE TABLE idempotency_keys (
    user_id  TEXT NOT NULL,
    key      TEXT NOT NULL,
    at       TEXT NOT NULL,
    action   TEXT NOT NULL,
    url      TEXT NOT NULL,
    result   TEXT,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_at ON idempotency_keys(user_id, at);
