-- Invitations addressed to a person (mirrors navmcp/migrations/0192_invitee.sql; navmcp/invitations.py).
-- The invitee is no member of the studio: telling them, listing what waits for them and answering go
-- through SECURITY DEFINER functions that act on their own invitations only.
ALTER TABLE invitations ADD COLUMN invitee_id TEXT COLLATE "C" REFERENCES users(id) ON DELETE CASCADE;
-- The handle it was addressed to, as the admin wrote it: the members page lists it (on the hosted
-- store the admins may not see the invitee's account until they join).
ALTER TABLE invitations ADD COLUMN invitee_handle TEXT;
ALTER TABLE invitations ADD COLUMN declined_at TEXT COLLATE "C";
CREATE INDEX invitations_invitee ON invitations (invitee_id) WHERE invitee_id IS NOT NULL;

-- The invitee's inbox entry (outside any studio: they are in none of its) and a change of their own
-- pages, for an invitation the acting admin just made for them.
CREATE OR REPLACE FUNCTION navmcp.note_invited(invitation text, at text, entry text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    invitee text;
    made bigint;
BEGIN
    SELECT i.invitee_id INTO invitee FROM public.invitations i
     WHERE i.id = invitation AND i.created_by = actor AND i.invitee_id IS NOT NULL AND navmcp.is_admin(i.studio_id);
    IF invitee IS NULL THEN
        RAISE EXCEPTION 'no invitation of yours for a person' USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO public.inbox (id, user_id, kind, studio_id, item_id, actor_id, client, created_at, updated_at)
    VALUES (entry, invitee, 'invited', NULL, NULL, actor, '', at, at);
    INSERT INTO public.changes (at, studio_id, item_id, user_id, action) VALUES (at, NULL, NULL, invitee, 'invited')
        RETURNING seq INTO made;
    PERFORM pg_notify('navmcp_changes', made::text);
END $$;

-- The acting user's invitations waiting for an answer (not expired, revoked, declined or used).
CREATE OR REPLACE FUNCTION navmcp.invitations_for_me(at text)
RETURNS TABLE (id text, studio text, studio_name text, role text, inviter text, expires_at text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT i.id, s.handle, s.name, i.role, u.handle, i.expires_at
      FROM public.invitations i JOIN public.studios s ON s.id = i.studio_id
      LEFT JOIN public.users u ON u.id = i.created_by
     WHERE i.invitee_id = navmcp.uid() AND i.revoked_at IS NULL AND i.declined_at IS NULL
       AND i.expires_at > at AND i.uses < i.max_uses
     ORDER BY i.created_at DESC, i.id LIMIT 50
$$;

-- The acting user answers one of their waiting invitations: accepting joins the studio with its
-- role (one already in keeps theirs), declining marks it declined. Returns the studio's handle, or
-- NULL (no such invitation waits for them).
CREATE OR REPLACE FUNCTION navmcp.answer_invitation(invitation text, accept boolean, at text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    inv record;
BEGIN
    SELECT i.id, i.studio_id, i.role, s.handle INTO inv FROM public.invitations i
      JOIN public.studios s ON s.id = i.studio_id
     WHERE i.id = invitation AND i.invitee_id = actor AND i.revoked_at IS NULL AND i.declined_at IS NULL
       AND i.expires_at > at AND i.uses < i.max_uses
       FOR UPDATE OF i;
    IF NOT FOUND OR actor IS NULL THEN
        RETURN NULL;
    END IF;
    IF NOT accept THEN
        UPDATE public.invitations SET declined_at = at WHERE id = inv.id;
        RETURN inv.handle;
    END IF;
    PERFORM 1 FROM public.studios s WHERE s.id = inv.studio_id FOR NO KEY UPDATE;
    IF NOT EXISTS (SELECT 1 FROM public.memberships m WHERE m.studio_id = inv.studio_id AND m.user_id = actor) THEN
        INSERT INTO public.memberships (studio_id, user_id, role, created_at) VALUES (inv.studio_id, actor, inv.role, at);
    END IF;
    UPDATE public.invitations SET uses = uses + 1 WHERE id = inv.id;
    INSERT INTO public.invitation_uses (invitation_id, user_id, used_at) VALUES (inv.id, actor, at)
        ON CONFLICT DO NOTHING;
    RETURN inv.handle;
END $$;
REVOKE ALL ON FUNCTION navmcp.note_invited(text, text, text), navmcp.invitations_for_me(text),
    navmcp.answer_invitation(text, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.note_invited(text, text, text), navmcp.invitations_for_me(text),
    navmcp.answer_invitation(text, boolean, text) TO navmcp_app;
