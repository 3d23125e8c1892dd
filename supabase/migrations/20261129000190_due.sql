-- Deadlines within a day (mirrors navmcp/migrations/0190_due.sql; navmcp/feeds/due.py): one inbox entry
-- per item per person, ever, and the sweep's walk of open items by their deadline.
CREATE UNIQUE INDEX inbox_deadline ON inbox (item_id, user_id) WHERE kind = 'deadline';
CREATE INDEX items_due ON items (deadline) WHERE closed_at IS NULL AND deadline IS NOT NULL;

-- The sweep (navmcp.feeds.due.sweep), as the owner: it writes entries for whoever an item with a deadline
-- in (at, soon] awaits, which no user may write for another, and notes each such item in the change
-- feed (as its creator: the feed asks about members as a change's user) so inbox watchers hear of
-- it. It writes only true facts and each at most once, so any caller may run it. Returns how many
-- entries it wrote.
CREATE OR REPLACE FUNCTION navmcp.note_deadlines(at text, soon text) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    written integer;
    made bigint;
BEGIN
    WITH due AS (
        SELECT m.user_id, i.studio_id, i.id AS item_id
          FROM public.items i JOIN public.memberships m ON m.studio_id = i.studio_id
          JOIN public.users u ON u.id = m.user_id
         WHERE i.closed_at IS NULL AND i.deadline > at AND i.deadline <= soon AND u.deleted_at IS NULL
           AND ((i.kind = 'decision' AND (i.option_count > 0 OR i.decision_kind = 'consent')
                 AND NOT EXISTS (SELECT 1 FROM public.votes v WHERE v.decision_id = i.id AND v.user_id = m.user_id)
                 AND NOT EXISTS (SELECT 1 FROM public.responses r WHERE r.decision_id = i.id AND r.user_id = m.user_id))
             OR (i.kind = 'commitment' AND i.participant_count < i.critical_mass
                 AND NOT EXISTS (SELECT 1 FROM public.participants p
                                  WHERE p.commitment_id = i.id AND p.user_id = m.user_id)))
    ), inserted AS (
        INSERT INTO public.inbox (id, user_id, kind, studio_id, item_id, client, created_at, updated_at)
        SELECT left(replace(gen_random_uuid()::text, '-', ''), 16), d.user_id, 'deadline', d.studio_id, d.item_id,
               '', at, at
          FROM due d
        ON CONFLICT DO NOTHING
        RETURNING studio_id, item_id, user_id
    ), noted AS (
        INSERT INTO public.changes (at, studio_id, item_id, user_id, action)
        SELECT at, w.studio_id, w.item_id, coalesce(i.created_by, min(w.user_id)), 'deadline'
          FROM inserted w JOIN public.items i ON i.id = w.item_id
         GROUP BY w.studio_id, w.item_id, i.created_by
        RETURNING seq
    )
    SELECT (SELECT count(*) FROM inserted), (SELECT max(seq) FROM noted) INTO written, made;
    IF made IS NOT NULL THEN
        PERFORM pg_notify('navmcp_changes', made::text);
    END IF;
    RETURN written;
END $$;
REVOKE ALL ON FUNCTION navmcp.note_deadlines(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_deadlines(text, text) TO navmcp_app;
