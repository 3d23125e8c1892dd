-- Deleted items (mirrors navmcp/migrations/0160_deleted_items.sql; navmcp/deletion.py): a deleted
-- note, decision or commitment keeps its row, with who deleted it and when, for 30 days, then it is
-- purged with everything of it. Meanwhile it is in no list, count or search.
ALTER TABLE items ADD COLUMN deleted_at TEXT COLLATE "C";
ALTER TABLE items ADD COLUMN deleted_by TEXT REFERENCES users(id);
GRANT UPDATE (deleted_at, deleted_by) ON items TO navmcp_app;

CREATE INDEX items_deleted ON items(studio_id, deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX items_deleted_at ON items(deleted_at) WHERE deleted_at IS NOT NULL;

-- The lists of open items read these indexes alone; their queries say `deleted_at IS NULL` too.
DROP INDEX IF EXISTS items_open_kind_created;
CREATE INDEX items_open_kind_created ON items(studio_id, kind, created_at) WHERE closed_at IS NULL AND deleted_at IS NULL;
DROP INDEX IF EXISTS items_open_deadline;
CREATE INDEX items_open_deadline ON items(studio_id, kind, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL AND deleted_at IS NULL;
DROP INDEX IF EXISTS items_open_needed;
CREATE INDEX items_open_needed ON items(studio_id, (critical_mass - participant_count), created_at DESC)
    WHERE closed_at IS NULL AND kind = 'commitment' AND deleted_at IS NULL;
DROP INDEX IF EXISTS items_deadline_open;
CREATE INDEX items_deadline_open ON items(studio_id, deadline)
    WHERE closed_at IS NULL AND deadline IS NOT NULL AND deleted_at IS NULL;

-- A studio's counts are of its items not deleted: a deletion takes one off, a restore puts it back,
-- the purge of a deleted item takes nothing more.
CREATE OR REPLACE FUNCTION navmcp.count_items() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO studio_item_counts (studio_id, kind, n) VALUES (NEW.studio_id, NEW.kind, 1)
            ON CONFLICT (studio_id, kind) DO UPDATE SET n = studio_item_counts.n + 1;
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.deleted_at IS NULL THEN
            UPDATE studio_item_counts SET n = n - 1 WHERE studio_id = OLD.studio_id AND kind = OLD.kind;
        END IF;
    ELSIF (NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) THEN
        UPDATE studio_item_counts SET n = n + CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END
         WHERE studio_id = NEW.studio_id AND kind = NEW.kind;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_items() FROM PUBLIC;
DROP TRIGGER IF EXISTS items_count ON items;
CREATE TRIGGER items_count AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.count_items();

-- Who may delete or restore an item, even by SQL: its creator or an admin of its studio, in their own
-- name; a deleted item changes no more but for that restore. The rest is as 20261128000058 left it.
CREATE OR REPLACE FUNCTION navmcp.item_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.items'::regclass) THEN
        RETURN NEW;  -- the owner (or a role that bypasses row-level security)
    END IF;
    me := navmcp.uid();
    IF OLD.deleted_at IS NOT NULL THEN
        -- A deleted item changes no more, but for its restore by its creator or an admin.
        IF NEW.deleted_at IS NOT NULL OR NEW.deleted_by IS NOT NULL
           OR NOT (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)) THEN
            RETURN NULL;
        END IF;
    ELSIF NEW.deleted_at IS NOT NULL OR NEW.deleted_by IS NOT NULL THEN
        -- A deletion: by its creator or an admin, in their own name.
        IF NEW.deleted_at IS NULL OR NEW.deleted_by IS DISTINCT FROM me
           OR NOT (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)) THEN
            RETURN NULL;
        END IF;
    END IF;
    IF NEW.revision IS DISTINCT FROM OLD.revision
       OR (NEW.title, NEW.body, NEW.deadline, NEW.participant_limit)
          IS DISTINCT FROM (OLD.title, OLD.body, OLD.deadline, OLD.participant_limit) THEN
        IF NEW.revision IS DISTINCT FROM OLD.revision + 1
           OR NOT (OLD.created_by = me OR (OLD.kind <> 'note' AND navmcp.is_admin(OLD.studio_id))) THEN
            RETURN NULL;
        END IF;
    END IF;
    IF NEW.pinned IS DISTINCT FROM OLD.pinned AND NOT navmcp.is_admin(OLD.studio_id) THEN
        RETURN NULL;
    END IF;
    IF NEW.outcome IS DISTINCT FROM OLD.outcome
       AND NOT (OLD.kind = 'decision' AND (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id))) THEN
        RETURN NULL;
    END IF;
    IF OLD.closed_at IS NOT NULL AND NEW.closed_at IS NULL THEN  -- reopen_decision, as a revision
        IF OLD.kind = 'decision' AND (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id))
           AND NEW.revision = OLD.revision + 1 THEN
            RETURN NEW;
        END IF;
        RETURN NULL;
    END IF;
    IF NEW.closed_at IS DISTINCT FROM OLD.closed_at AND NOT coalesce(
           OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL AND (
               (OLD.kind = 'decision' AND (OLD.created_by = me OR navmcp.is_admin(OLD.studio_id)))
               OR (OLD.kind = 'commitment' AND (
                   OLD.created_by = me
                   OR (navmcp.is_admin(OLD.studio_id)
                       AND NOT EXISTS (SELECT 1 FROM public.memberships m JOIN public.users u ON u.id = m.user_id
                                        WHERE m.studio_id = OLD.studio_id AND m.user_id = OLD.created_by
                                          AND u.deleted_at IS NULL))
                   OR (OLD.participant_limit IS NOT NULL AND OLD.participant_count >= OLD.participant_limit
                       AND EXISTS (SELECT 1 FROM public.participants p
                                    WHERE p.commitment_id = OLD.id AND p.user_id = me))))),
           false) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.item_update_allowed() FROM PUBLIC;
DROP TRIGGER IF EXISTS items_update_allowed ON items;
CREATE TRIGGER items_update_allowed
    BEFORE UPDATE OF title, body, pinned, closed_at, deadline, participant_limit, revision, outcome, deleted_at,
                     deleted_by ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.item_update_allowed();

-- The purge: items deleted before `before` (and 30 days ago by the database's clock, whatever the
-- caller says), at most `most` of them, with everything of theirs (the foreign keys cascade: tags,
-- options, votes, answers, participants, comments, reads, links, revisions, attachments, inbox
-- entries, reminders), their change rows and the held actions waiting on their pages. As the owner:
-- any member's write may run it, and it judges only by age.
CREATE OR REPLACE FUNCTION navmcp.purge_deleted(before text, most integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    cutoff text := least(before, to_char((now() AT TIME ZONE 'UTC') - interval '30 days',
                                         'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
    gone text[];
BEGIN
    SELECT coalesce(array_agg(i.id), '{}') INTO gone FROM (
        SELECT i.id FROM public.items i WHERE i.deleted_at IS NOT NULL AND i.deleted_at < cutoff
         ORDER BY i.deleted_at LIMIT most) i;
    IF cardinality(gone) = 0 THEN
        RETURN 0;
    END IF;
    DELETE FROM public.held_actions h USING public.items i JOIN public.studios s ON s.id = i.studio_id
     WHERE i.id = ANY (gone) AND h.studio_id = i.studio_id
       AND split_part(split_part(h.url, '?', 1), '/', 5) = i.id
       AND split_part(h.url, '/', 3) = s.handle;
    DELETE FROM public.changes WHERE item_id = ANY (gone);
    DELETE FROM public.items WHERE id = ANY (gone);
    RETURN cardinality(gone);
END $$;
REVOKE ALL ON FUNCTION navmcp.purge_deleted(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.purge_deleted(text, integer) TO navmcp_app;
