-- Invitations (mirrors navmcp/migrations/0051_invitations.sql). A studio's admins create, list and
-- revoke its invitations; the person who opens a link is no member yet, so reading one by its
-- secret and joining by it go through SECURITY DEFINER functions that answer about that one row.
CREATE TABLE invitations (
    id          TEXT COLLATE "C" PRIMARY KEY,
    studio_id   TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    token_hash  TEXT COLLATE "C" NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('member', 'admin')),
    max_uses    INTEGER NOT NULL CHECK (max_uses >= 1),
    uses        INTEGER NOT NULL DEFAULT 0,
    created_by  TEXT COLLATE "C" REFERENCES users(id) ON DELETE SET NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    revoked_at  TEXT COLLATE "C"
);
CREATE INDEX invitations_studio ON invitations (studio_id, created_at);
CREATE TABLE invitation_uses (
    invitation_id TEXT COLLATE "C" NOT NULL REFERENCES invitations(id) ON DELETE CASCADE,
    user_id       TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    used_at       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (invitation_id, user_id)
);
CREATE INDEX invitation_uses_user ON invitation_uses (user_id);
CREATE INDEX invitations_creator ON invitations (created_by);

ALTER TABLE invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE invitation_uses ENABLE ROW LEVEL SECURITY;
CREATE POLICY invitations_admin ON invitations FOR SELECT USING (navmcp.is_admin(studio_id));
CREATE POLICY invitations_insert ON invitations FOR INSERT
    WITH CHECK (navmcp.is_admin(studio_id) AND created_by = navmcp.uid());
CREATE POLICY invitations_revoke ON invitations FOR UPDATE
    USING (navmcp.is_admin(studio_id)) WITH CHECK (navmcp.is_admin(studio_id));
CREATE POLICY invitation_uses_admin ON invitation_uses FOR SELECT
    USING (EXISTS (SELECT 1 FROM invitations i WHERE i.id = invitation_id));
GRANT SELECT, INSERT ON invitations TO navmcp_app;
GRANT UPDATE (revoked_at) ON invitations TO navmcp_app;
GRANT SELECT ON invitation_uses TO navmcp_app;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE invitations, invitation_uses FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- The studio and role a live invitation (not revoked, not expired, not used up) offers; no row for
-- any other secret, whatever the reason (one refusal for all of them).
CREATE OR REPLACE FUNCTION navmcp.invitation(hash text, at text)
RETURNS TABLE (studio_id text, handle text, name text, role text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT s.id, s.handle, s.name, i.role FROM public.invitations i JOIN public.studios s ON s.id = i.studio_id
     WHERE i.token_hash = hash AND i.revoked_at IS NULL AND i.expires_at > at AND i.uses < i.max_uses
$$;

-- The acting user joins by a live invitation: a membership with its role (one already in keeps
-- theirs and spends no use), one use counted and named. Returns the studio's handle, or NULL.
CREATE OR REPLACE FUNCTION navmcp.redeem_invitation(hash text, at text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    inv record;
BEGIN
    IF actor IS NULL THEN
        RAISE EXCEPTION 'joining needs a signed-in user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT i.id, i.studio_id, i.role, s.handle INTO inv FROM public.invitations i
      JOIN public.studios s ON s.id = i.studio_id
     WHERE i.token_hash = hash AND i.revoked_at IS NULL AND i.expires_at > at AND i.uses < i.max_uses
       FOR UPDATE OF i;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM public.memberships m WHERE m.studio_id = inv.studio_id AND m.user_id = actor) THEN
        RETURN inv.handle;
    END IF;
    PERFORM 1 FROM public.studios s WHERE s.id = inv.studio_id FOR NO KEY UPDATE;  -- after membership changes in flight
    INSERT INTO public.memberships (studio_id, user_id, role, created_at) VALUES (inv.studio_id, actor, inv.role, at);
    UPDATE public.invitations SET uses = uses + 1 WHERE id = inv.id;
    INSERT INTO public.invitation_uses (invitation_id, user_id, used_at) VALUES (inv.id, actor, at);
    RETURN inv.handle;
END $$;
REVOKE ALL ON FUNCTION navmcp.invitation(text, text), navmcp.redeem_invitation(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.invitation(text, text), navmcp.redeem_invitation(text, text) TO navmcp_app;
