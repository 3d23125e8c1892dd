-- The change feed (mirrors navmcp/migrations/0023_changes.sql): one row per committed action,
-- written in the action's transaction, naming its studio and the item acted on or created. A row
-- announces itself with NOTIFY, which PostgreSQL delivers only when the transaction commits, so a
-- listener never hears of a change that rolled back; the rows are the durable truth a listener
-- catches up from. Rows carry ids only, never content, and no user reads or writes the table
-- directly: actions record through navmcp.note_change, listeners read through navmcp.changes_after.
CREATE TABLE changes (
    seq        BIGSERIAL PRIMARY KEY,
    at         TEXT COLLATE "C" NOT NULL,
    studio_id  TEXT COLLATE "C",
    item_id    TEXT COLLATE "C",
    user_id    TEXT COLLATE "C" NOT NULL
);
ALTER TABLE changes ENABLE ROW LEVEL SECURITY;
-- Nor does Supabase's Data API (see 20261124000016_no_data_api.sql).
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE changes FROM %I', api_role);
            EXECUTE format('REVOKE ALL ON SEQUENCE changes_seq_seq FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- The acting user records a change to an item of a studio they belong to, or a studio-wide change
-- (after leaving a studio one is no longer in it). Every 1024th change prunes all but the last 10,000
-- (navmcp/store.py's CHANGES_KEPT and CHANGES_PRUNE_EVERY).
CREATE OR REPLACE FUNCTION navmcp.note_change(at text, studio text, item text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    made bigint;
BEGIN
    IF actor IS NULL THEN
        RAISE EXCEPTION 'a change needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF item IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.memberships m
                                         WHERE m.studio_id = studio AND m.user_id = actor) THEN
        RAISE EXCEPTION 'a change to an item of a studio you are not in' USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO public.changes (at, studio_id, item_id, user_id) VALUES (at, studio, item, actor)
        RETURNING seq INTO made;
    IF made % 1024 = 0 THEN
        DELETE FROM public.changes WHERE seq <= made - 10000;
    END IF;
    PERFORM pg_notify('navmcp_changes', made::text);
END $$;

-- What a listener reads: ids after a sequence number, for a process that serves many users (no
-- one user's policy applies to it). Whether a watcher may see a page is checked as that watcher.
CREATE OR REPLACE FUNCTION navmcp.changes_after(after bigint, most integer)
RETURNS TABLE (seq bigint, studio_id text, item_id text, user_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.seq, c.studio_id, c.item_id, c.user_id FROM public.changes c
     WHERE c.seq > after ORDER BY c.seq LIMIT most
$$;
CREATE OR REPLACE FUNCTION navmcp.last_change() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT coalesce(max(c.seq), 0) FROM public.changes c
$$;
REVOKE ALL ON FUNCTION navmcp.note_change(text, text, text), navmcp.changes_after(bigint, integer),
    navmcp.last_change() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_change(text, text, text), navmcp.changes_after(bigint, integer),
    navmcp.last_change() TO navmcp_app;
