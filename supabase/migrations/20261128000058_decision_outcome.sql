-- A decision's outcome statement (mirrors navmcp/migrations/0058_decision_outcome.sql), and a closed
-- decision reopened (reopen_decision). Its creator or an admin writes the outcome, and reopens a
-- decision as one revision (closed_at back to none, the revision number one more); the rest of
-- the items trigger is as 20261128000056 left it.
GRANT UPDATE (outcome) ON items TO navmcp_app;
CREATE OR REPLACE FUNCTION navmcp.item_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.items'::regclass) THEN
        RETURN NEW;  -- the owner (or a role that bypasses row-level security)
    END IF;
    me := navmcp.uid();
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
    BEFORE UPDATE OF title, body, pinned, closed_at, deadline, participant_limit, revision, outcome ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.item_update_allowed();
