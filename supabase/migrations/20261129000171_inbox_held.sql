-- Mirrors navmcp/migrations/0170_inbox_held.sql: an inbox entry about a held action names the hold,
-- so it links the held action's own page, not the studio's queue. navmcp.note_inbox takes the hold
-- (only one of the acting user's studio, as an item is) and writes it; the old signature goes, so no
-- call can resolve to it.
ALTER TABLE inbox ADD COLUMN IF NOT EXISTS held_id TEXT COLLATE "C" REFERENCES held_actions(id) ON DELETE CASCADE;

DROP FUNCTION IF EXISTS navmcp.note_inbox(text, text, text, text, text, text[], boolean, text);
CREATE OR REPLACE FUNCTION navmcp.note_inbox(at text, kind text, studio text, item text, client text,
                                             recipients text[], fold boolean, expired text,
                                             held text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    recipient text;
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
END $$;
REVOKE ALL ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text, text) TO navmcp_app;
