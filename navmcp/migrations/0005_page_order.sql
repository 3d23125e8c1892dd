-- A note's readers and a commitment's participants are listed in the order they came, a page at a
-- time: with these indexes the list is read in that order and stops after a page, instead of
-- sorting every reader or participant into a temporary b-tree on each visit.
CREATE INDEX reads_note_confirmed ON reads(note_id, confirmed_at);
CREATE INDEX participants_commitment_joined ON participants(commitment_id, joined_at);
-- Statistics for the new indexes: a database analyzed before them (`navmcp seed` does) would
-- otherwise keep preferring the primary keys, which cover the same lookups but not the order.
ANALYZE reads_note_confirmed;
ANALYZE participants_commitment_joined;
