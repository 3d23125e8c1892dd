-- Mirrors navmcp/migrations/0025_option_count.sql: a decision's option count, kept on its item by a
-- trigger, so home's counts and lists of decisions awaiting your vote read one column to skip those
-- with no option yet, instead of looking up each one's options.
ALTER TABLE items ADD COLUMN IF NOT EXISTS option_count INTEGER NOT NULL DEFAULT 0;
UPDATE items i SET option_count = c.n
  FROM (SELECT decision_id, count(*) AS n FROM options GROUP BY decision_id) c
 WHERE i.id = c.decision_id;

-- The trigger writes as the table owner, as the participants' does (20261124000013): adding an
-- option takes the right to insert it, not the right to update the decision; and navmcp_app has
-- no UPDATE on this column (20261124000014), so no member can set it.
CREATE OR REPLACE FUNCTION navmcp.count_options() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    -- Deleting a decision deletes its options (ON DELETE CASCADE) after the item: the update then
    -- finds no row, and there is nothing left to correct.
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE public.items SET option_count = option_count - 1 WHERE id = OLD.decision_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE public.items SET option_count = option_count + 1 WHERE id = NEW.decision_id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_options() FROM PUBLIC;

DROP TRIGGER IF EXISTS options_count ON options;
CREATE TRIGGER options_count AFTER INSERT OR DELETE ON options
    FOR EACH ROW EXECUTE FUNCTION navmcp.count_options();
-- No code moves an option to another decision, but if a row ever is, both counts follow.
DROP TRIGGER IF EXISTS options_count_move ON options;
CREATE TRIGGER options_count_move AFTER UPDATE OF decision_id ON options
    FOR EACH ROW WHEN (OLD.decision_id IS DISTINCT FROM NEW.decision_id)
    EXECUTE FUNCTION navmcp.count_options();
