-- Mirrors navmcp/migrations/0007_participant_count.sql: a commitment's participant count, kept on
-- its item by a trigger, so the home page's "commitments that need you", the commitment page and
-- the join, leave and close rules read one column instead of counting participants per row.
ALTER TABLE items ADD COLUMN IF NOT EXISTS participant_count INTEGER NOT NULL DEFAULT 0;
UPDATE items i SET participant_count = c.n
  FROM (SELECT commitment_id, count(*) AS n FROM participants GROUP BY commitment_id) c
 WHERE i.id = c.commitment_id;

-- The trigger writes as the table owner: joining or leaving takes the right to insert or delete
-- your own participant row, not the right to update the commitment (which the items policy may
-- not give a plain member), and the count follows the rows whoever writes them.
CREATE OR REPLACE FUNCTION navmcp.count_participants() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    -- Deleting a commitment deletes its participants (ON DELETE CASCADE) after the item: the
    -- update then finds no row, and there is nothing left to correct.
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE public.items SET participant_count = participant_count - 1 WHERE id = OLD.commitment_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE public.items SET participant_count = participant_count + 1 WHERE id = NEW.commitment_id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_participants() FROM PUBLIC;

DROP TRIGGER IF EXISTS participants_count ON participants;
CREATE TRIGGER participants_count AFTER INSERT OR DELETE ON participants
    FOR EACH ROW EXECUTE FUNCTION navmcp.count_participants();
-- No code moves a participant to another commitment, but if a row ever is, both counts follow.
DROP TRIGGER IF EXISTS participants_count_move ON participants;
CREATE TRIGGER participants_count_move AFTER UPDATE OF commitment_id ON participants
    FOR EACH ROW WHEN (OLD.commitment_id IS DISTINCT FROM NEW.commitment_id)
    EXECUTE FUNCTION navmcp.count_participants();
