-- What each change was (mirrors navmcp/migrations/0110_change_action.sql): the action's name, so a
-- watcher's notification can say what changed (issue 42, navmcp/summaries.py). A name, never content.
ALTER TABLE changes ADD COLUMN action TEXT COLLATE "C";

-- note_change with the action's name: as the three-argument one (20261126000080), which stays for
-- an app of before this migration and records no name.
CREATE OR REPLACE FUNCTION navmcp.note_change(at text, studio text, item text, action text) RETURNS void
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
    INSERT INTO public.changes (at, studio_id, item_id, user_id, action) VALUES (at, studio, item, actor, action)
        RETURNING seq INTO made;
    IF made % 1024 = 0 THEN
        DELETE FROM public.changes WHERE seq <= made - 10000;
    END IF;
    PERFORM pg_notify('navmcp_changes', made::text);
END $$;
REVOKE ALL ON FUNCTION navmcp.note_change(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_change(text, text, text, text) TO navmcp_app;

-- The changes between two snapshots (20261128000040), with their actions' names: a function's
-- result columns cannot be changed in place, so it is made again (and granted again).
DROP FUNCTION navmcp.changes_between(pg_snapshot, pg_snapshot, bigint, integer);
CREATE FUNCTION navmcp.changes_between(since pg_snapshot, upto pg_snapshot, after bigint, most integer)
RETURNS TABLE (seq bigint, studio_id text, item_id text, user_id text, action text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.seq, c.studio_id, c.item_id, c.user_id, c.action FROM public.changes c
     WHERE c.xid >= pg_snapshot_xmin(since) AND NOT pg_visible_in_snapshot(c.xid, since)
       AND pg_visible_in_snapshot(c.xid, upto) AND c.seq > after
     ORDER BY c.seq LIMIT most
$$;
REVOKE ALL ON FUNCTION navmcp.changes_between(pg_snapshot, pg_snapshot, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.changes_between(pg_snapshot, pg_snapshot, bigint, integer) TO navmcp_app;
