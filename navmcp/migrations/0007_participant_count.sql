-- A commitment's participant count, kept on its item by triggers: the home page's "commitments that
-- need you" compared a fresh count(*) of participants with critical_mass for every open commitment
-- it walked (and counted again for the column it shows), and the commitment page and the join,
-- leave and close rules counted too. Now they all read one column.
ALTER TABLE items ADD COLUMN participant_count INTEGER NOT NULL DEFAULT 0;
-- Only items that have participants need a value other than the default (a commitment with none,
-- and every note and decision, keep 0): one pass over the participants' primary key.
UPDATE items SET participant_count = (SELECT count(*) FROM participants p WHERE p.commitment_id = items.id)
 WHERE id IN (SELECT commitment_id FROM participants);
CREATE TRIGGER participants_count_ai AFTER INSERT ON participants BEGIN
    UPDATE items SET participant_count = participant_count + 1 WHERE id = new.commitment_id;
END;
-- Deleting a commitment deletes its participants (ON DELETE CASCADE) along with the item; their
-- updates then find no row, or the row about to go: nothing is left to correct.
CREATE TRIGGER participants_count_ad AFTER DELETE ON participants BEGIN
    UPDATE items SET participant_count = participant_count - 1 WHERE id = old.commitment_id;
END;
-- No code moves a participant to another commitment, but if a row ever is, both counts follow.
CREATE TRIGGER participants_count_au AFTER UPDATE OF commitment_id ON participants
    WHEN new.commitment_id IS NOT old.commitment_id BEGIN
    UPDATE items SET participant_count = participant_count - 1 WHERE id = old.commitment_id;
    UPDATE items SET participant_count = participant_count + 1 WHERE id = new.commitment_id;
END;
