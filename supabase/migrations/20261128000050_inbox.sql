-- The inbox (mirrors navmcp/migrations/0050_inbox.sql): what happened that concerns a user, written
-- in the action's own transaction, ids only. A user reads, marks read and dismisses their own
-- entries and nobody else's; entries are written for others only through navmcp.note_inbox, which
-- records the acting user itself and writes only for members of a studio the actor is in.
CREATE TABLE inbox (
    id           TEXT COLLATE "C" PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind         TEXT COLLATE "C" NOT NULL,
    studio_id    TEXT COLLATE "C" REFERENCES studios(id) ON DELETE CASCADE,
    item_id      TEXT COLLATE "C" REFERENCES items(id) ON DELETE CASCADE,
    actor_id     TEXT COLLATE "C" REFERENCES users(id) ON DELETE SET NULL,
    client       TEXT NOT NULL DEFAULT '',
    count        INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT COLLATE "C" NOT NULL,
    updated_at   TEXT COLLATE "C" NOT NULL,
    read_at      TEXT COLLATE "C",
    dismissed_at TEXT COLLATE "C"
);
CREATE INDEX inbox_user_unread ON inbox (user_id, dismissed_at, read_at, updated_at);
CREATE INDEX inbox_fold ON inbox (user_id, item_id, kind) WHERE read_at IS NULL AND dismissed_at IS NULL;
CREATE INDEX inbox_user_age ON inbox (user_id, updated_at);
CREATE INDEX inbox_actor ON inbox (actor_id);

ALTER TABLE inbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY inbox_read ON inbox FOR SELECT USING (user_id = navmcp.uid());
CREATE POLICY inbox_update ON inbox FOR UPDATE USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
GRANT SELECT, UPDATE (read_at, dismissed_at) ON inbox TO navmcp_app;
-- Nor does Supabase's Data API (see 20261124000016_no_data_api.sql).
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE inbox FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- One entry for each of `recipients` (the actor left out: your own actions never notify you), or,
-- where an unread entry of the same item and kind is there already, that entry counted once more
-- (a burst folds). Only members of `studio` are written for, and only by a member of it; the
-- recipients' entries older than 90 days go (navmcp/inbox.py's KEEP_DAYS).
CREATE OR REPLACE FUNCTION navmcp.note_inbox(at text, kind text, studio text, item text, client text,
                                             recipients text[], fold boolean, expired text)
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
        INSERT INTO public.inbox (id, user_id, kind, studio_id, item_id, actor_id, client, created_at, updated_at)
        VALUES (left(replace(gen_random_uuid()::text, '-', ''), 16), recipient, note_inbox.kind, studio, item, actor,
                note_inbox.client, at, at);
    END LOOP;
    DELETE FROM public.inbox e WHERE e.user_id = ANY (recipients) AND e.updated_at < expired;
END $$;
REVOKE ALL ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_inbox(text, text, text, text, text, text[], boolean, text) TO navmcp_app;
