-- An admin may close a commitment whose creator has left the studio (removed, left, or the account
-- deleted): rules.creator offers close_commitment to them then, and the items trigger of
-- 20261125000022 refused it (the page listed what the executor would not do, on this store only).
-- The trigger now asks what the rule asks. It runs as the acting user: an admin reads every
-- membership of their studio, and the users of its present and past members (studio_people).
CREATE OR REPLACE FUNCTION navmcp.item_update_allowed() RETURNS trigger
    LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    me text;
BEGIN
    IF NOT pg_catalog.row_security_active('public.items'::regclass) THEN
        RETURN NEW;  -- the owner (or a role that bypasses row-level security)
    END IF;
    me := navmcp.uid();
    IF (NEW.title, NEW.body) IS DISTINCT FROM (OLD.title, OLD.body)
       AND OLD.created_by IS DISTINCT FROM me THEN
        RETURN NULL;
    END IF;
    IF NEW.pinned IS DISTINCT FROM OLD.pinned AND NOT navmcp.is_admin(OLD.studio_id) THEN
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
