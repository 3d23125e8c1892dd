-- The change feed in commit order (issue 41). A sequence number is taken when a row is inserted, not
-- when its transaction commits: a change numbered 5 may commit after one numbered 6, and a listener
-- that read "after 6" never handed 5 on. Each row now carries its transaction's id; a listener keeps
-- the snapshot it last read with and reads the rows whose transaction that snapshot did not show and
-- a newer one does: every committed change exactly once, whatever order the numbers commit in.
ALTER TABLE changes ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX changes_xid ON changes (xid);

-- Where a listener starts: the snapshot of now (as text, so that it can travel, e.g. as an event id).
CREATE OR REPLACE FUNCTION navmcp.change_position() RETURNS text
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
    SELECT pg_current_snapshot()::text
$$;

-- The changes committed between two snapshots: their transactions not visible in `since`, visible in
-- `upto`, in number order, those numbered after `after` (a round read in parts), at most `most`.
CREATE OR REPLACE FUNCTION navmcp.changes_between(since pg_snapshot, upto pg_snapshot, after bigint, most integer)
RETURNS TABLE (seq bigint, studio_id text, item_id text, user_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.seq, c.studio_id, c.item_id, c.user_id FROM public.changes c
     WHERE c.xid >= pg_snapshot_xmin(since) AND NOT pg_visible_in_snapshot(c.xid, since)
       AND pg_visible_in_snapshot(c.xid, upto) AND c.seq > after
     ORDER BY c.seq LIMIT most
$$;
REVOKE ALL ON FUNCTION navmcp.change_position(), navmcp.changes_between(pg_snapshot, pg_snapshot, bigint, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.change_position(), navmcp.changes_between(pg_snapshot, pg_snapshot, bigint, integer)
    TO navmcp_app;
