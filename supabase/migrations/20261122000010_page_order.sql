-- Mirrors navmcp/migrations/0005_page_order.sql: a note's readers and a commitment's participants
-- read in the order they are listed (a page at a time), without sorting them on each visit.
CREATE INDEX IF NOT EXISTS reads_note_confirmed ON reads(note_id, confirmed_at);
CREATE INDEX IF NOT EXISTS participants_commitment_joined ON participants(commitment_id, joined_at);
