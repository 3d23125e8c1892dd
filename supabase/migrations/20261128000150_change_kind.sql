-- What kind of change a row of the change feed is (mirrors navmcp/migrations/0150_change_kind.sql):
-- the action's name, from the action table; a watcher's notification says it in words. An action's
-- name is letters and '_' only: anything else is recorded as no kind at all (the caller is the app
-- role acting as a user, who could call this function with a name of their own).
ALTER TABLE changes ADD COLUMN action TEXT COLLATE "C";

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
    IF action !~ '^[a-z_]{1,40}$' THEN
        action := NULL;
    END IF;
    INSERT INTO public.changes (at, studio_id, item_id, user_id, action) VALUES (at, studio, item, actor, action)
        RETURNING seq INTO made;
    IF made % 1024 = 0 THEN
        DELETE FROM public.changes WHERE seq <= made - 10000;
    END IF;
    PERFORM pg_notify('navmcp_changes', made::text);
END $$;

-- navmcp.changes_between with each row's kind (a function of its own: the older one's result type
-- stays for an app of the version before, during an upgrade).
CREATE OR REPLACE FUNCTION navmcp.changes_between_kinds(since pg_snapshot, upto pg_snapshot, after bigint, most integer)
RETURNS TABLE (seq bigint, studio_id text, item_id text, user_id text, action text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.seq, c.studio_id, c.item_id, c.user_id, c.action FROM public.changes c
     WHERE c.xid >= pg_snapshot_xmin(since) AND NOT pg_visible_in_snapshot(c.xid, since)
       AND pg_visible_in_snapshot(c.xid, upto) AND c.seq > after
     ORDER BY c.seq LIMIT most
$$;
REVOKE ALL ON FUNCTION navmcp.note_change(text, text, text, text),
    navmcp.changes_between_kinds(pg_snapshot, pg_snapshot, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_change(text, text, text, text),
    navmcp.changes_between_kinds(pg_snapshot, pg_snapshot, bigint, integer) TO navmcp_app;
