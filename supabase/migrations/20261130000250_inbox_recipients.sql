-- navmcp.note_inbox answers whom it wrote for (the members among the recipients, the actor left
-- out: folded into an unread entry or given a new one), so navmcp.feeds.inbox.notify asks no
-- membership query of its own before it (mirrors navmcp/store/sqlite_tx.py `note_inbox`). The body
-- is 20261129000171's; only the answer is new, and a function's result type changes by a DROP.
DROP FUNCTION IF EXISTS navmcp.note_inbox(text, text, text, text, text, text[], boolean, text, text);
CREATE FUNCTION navmcp.note_inbox(at text, kind text, studio text, item text, client text,
                                  recipients text[], fold boolean, expired text,
                                  held text DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    recipient text;
    written text[] := '{}';
BEGIN
    IF actor IS NULL THEN
        RAISE EXCEPTION 'an inbox entry needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF studio IS NULL OR NOT EXISTS (SELECT 1 FROM public.memberships m WHERE m.studio_id = studio AND m.user_id = actor) THEN
        RAISE EXCEPTION 'an inbox entry in a studio you are not in' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF item IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.items i WHERE i.id = item AND i.studio_id = studio) THEN
        RAISE EXCEPTION 'an inbox entry about an item of another studio' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF held IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.held_actions h WHERE h.id = held AND h.studio_id = studio) THEN
        RAISE EXCEPTION 'an inbox entry about a held action of another studio' USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR recipient IN
        SELECT DISTINCT m.user_id FROM public.memberships m
         WHERE m.studio_id = studio AND m.user_id = ANY (recipients) AND m.user_id <> actor
         ORDER BY m.user_id
    LOOP
        written := written || recipient;
        IF fold THEN
            UPDATE public.inbox e SET count = e.count + 1, updated_at = at, actor_id = actor, client = note_inbox.client
             WHERE e.user_id = recipient AND e.item_id = item AND e.kind = note_inbox.kind
               AND e.read_at IS NULL AND e.dismissed_at IS NULL;
            IF FOUND THEN
                CONTINUE;
            END IF;
        END IF;
        INSERT INTO public.inbox (id, user_id, kind, studio_id, item_id, held_id, actor_id, client, created_at, updated_at)
        VALUES (left(replace(gen_random_uuid()::text, '-', ''), 16), recipient, note_inbox.kind, studio, item, held, actor,
                note_inbox.client, at, at);
    END LOOP;
    DELETE FROM public.inbox e WHERE e.user_id = ANY (recipients) AND e.updated_at < expired;
    RETURN written;
END $$;
REVOKE ALL ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text, text) TO navmcp_app;
