-- Row-level security: every row is reachable only through studio membership of the user named
-- by the request's JWT `sub`, read from `request.jwt.claims` exactly as Supabase does. The server
-- sets those claims per transaction (set_config(..., true)) and works as `navmcp_app`, a role that
-- is neither superuser, nor BYPASSRLS, nor the tables' owner, so these policies always apply.

-- Supabase provides auth.jwt() and auth.uid(); plain PostgreSQL gets the same definitions.
CREATE SCHEMA IF NOT EXISTS auth;
DO $$
BEGIN
    IF to_regprocedure('auth.jwt()') IS NULL THEN
        CREATE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE AS $f$
            SELECT coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                            nullif(current_setting('request.jwt.claims', true), ''))::jsonb
        $f$;
    END IF;
    IF to_regprocedure('auth.uid()') IS NULL THEN
        CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS $f$
            SELECT coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                            (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid
        $f$;
    END IF;
END
$$;

-- The role the server works as. LOGIN so it can connect directly (set its password on a hosted
-- database); the migrating role may also SET ROLE to it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'navmcp_app') THEN
        CREATE ROLE navmcp_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION;
    END IF;
    EXECUTE format('GRANT navmcp_app TO %I', current_user);
END
$$;

CREATE SCHEMA IF NOT EXISTS navmcp;

-- The acting user: the JWT's `sub` as text — what auth.jwt() ->> 'sub' gives, read directly so the
-- policies need no privileges on Supabase's auth schema. navmcp ids are short strings, and a
-- Supabase user's navmcp id is their auth uuid, so on Supabase navmcp.uid() = auth.uid()::text.
CREATE OR REPLACE FUNCTION navmcp.uid() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT nullif(nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub', '')
$$;

-- Membership lookups run as the owner (SECURITY DEFINER) so the memberships policy can use them
-- without recursing into itself. They only ever answer about the acting user.
CREATE OR REPLACE FUNCTION navmcp.my_studios() RETURNS text[] LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT coalesce(array_agg(m.studio_id), '{}') FROM public.memberships m WHERE m.user_id = navmcp.uid()
$$;

CREATE OR REPLACE FUNCTION navmcp.is_admin(studio text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.memberships m
                    WHERE m.studio_id = studio AND m.user_id = navmcp.uid() AND m.role = 'admin')
$$;

-- A studio's first admin: its creator, while it has no members at all (create_studio).
CREATE OR REPLACE FUNCTION navmcp.may_found(studio text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.studios s WHERE s.id = studio AND s.created_by = navmcp.uid())
       AND NOT EXISTS (SELECT 1 FROM public.memberships m WHERE m.studio_id = studio)
$$;

-- Looking a user up by handle (add_member, unique handles for new users) must work for users
-- who share no studio yet; it answers one handle at a time and only the public columns.
CREATE OR REPLACE FUNCTION navmcp.find_user(wanted text)
RETURNS TABLE (id text, handle text, name text, created_at text, deleted_at text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT u.id, u.handle, u.name, u.created_at, u.deleted_at FROM public.users u WHERE u.handle = wanted
$$;

REVOKE ALL ON SCHEMA navmcp FROM PUBLIC;
GRANT USAGE ON SCHEMA navmcp TO navmcp_app;
DO $$
BEGIN
    GRANT USAGE ON SCHEMA auth TO navmcp_app;  -- for auth.uid()/auth.jwt() in hand-written SQL; optional
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'navmcp_app gets no usage on schema auth (not needed by navmcp''s policies)';
END
$$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA navmcp TO navmcp_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO navmcp_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO navmcp_app;

ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE studios ENABLE ROW LEVEL SECURITY;
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
ALTER TABLE items ENABLE ROW LEVEL SECURITY;
ALTER TABLE item_tags ENABLE ROW LEVEL SECURITY;
ALTER TABLE options ENABLE ROW LEVEL SECURITY;
ALTER TABLE votes ENABLE ROW LEVEL SECURITY;
ALTER TABLE participants ENABLE ROW LEVEL SECURITY;
ALTER TABLE comments ENABLE ROW LEVEL SECURITY;
ALTER TABLE reads ENABLE ROW LEVEL SECURITY;
ALTER TABLE links ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_sessions ENABLE ROW LEVEL SECURITY;

-- users: yourself and the people you share a studio with; you insert only yourself (first sight
-- of a Supabase user, `navmcp user add`), and edit only yourself.
CREATE POLICY users_read ON users FOR SELECT
    USING (id = navmcp.uid() OR id IN (SELECT m.user_id FROM memberships m));
CREATE POLICY users_insert ON users FOR INSERT WITH CHECK (id = navmcp.uid());
CREATE POLICY users_update ON users FOR UPDATE USING (id = navmcp.uid()) WITH CHECK (id = navmcp.uid());

-- settings: instance settings (the local owner's id); readable by signed-in users, written only
-- by the migrating role.
CREATE POLICY settings_read ON settings FOR SELECT USING (navmcp.uid() IS NOT NULL);

-- studios: your studios; you may create one in your own name; admins may change or delete it.
CREATE POLICY studios_read ON studios FOR SELECT USING (id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY studios_insert ON studios FOR INSERT WITH CHECK (created_by = navmcp.uid());
CREATE POLICY studios_update ON studios FOR UPDATE USING (navmcp.is_admin(id)) WITH CHECK (navmcp.is_admin(id));
CREATE POLICY studios_delete ON studios FOR DELETE USING (navmcp.is_admin(id));

-- memberships: members see the member list; admins manage it; a studio's creator becomes its first admin.
CREATE POLICY memberships_read ON memberships FOR SELECT USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY memberships_insert ON memberships FOR INSERT WITH CHECK (
    navmcp.is_admin(studio_id)
    OR (user_id = navmcp.uid() AND role = 'admin' AND navmcp.may_found(studio_id)));
CREATE POLICY memberships_update ON memberships FOR UPDATE
    USING (navmcp.is_admin(studio_id)) WITH CHECK (navmcp.is_admin(studio_id));
CREATE POLICY memberships_delete ON memberships FOR DELETE USING (navmcp.is_admin(studio_id));

-- items and comments carry their studio; the rest reach it through their item (items' own policy
-- filters the subquery, so no extra function is needed).
CREATE POLICY items_member ON items FOR ALL
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
    WITH CHECK (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY comments_read ON comments FOR SELECT USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY comments_write ON comments FOR INSERT WITH CHECK (
    created_by = navmcp.uid() AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.studio_id = comments.studio_id));
CREATE POLICY comments_delete ON comments FOR DELETE USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));

CREATE POLICY item_tags_member ON item_tags FOR ALL
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = item_id))
    WITH CHECK (EXISTS (SELECT 1 FROM items i WHERE i.id = item_id));
CREATE POLICY options_member ON options FOR ALL
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id))
    WITH CHECK (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY links_member ON links FOR ALL
    USING (EXISTS (SELECT 1 FROM items i WHERE i.id = from_item) AND EXISTS (SELECT 1 FROM items i WHERE i.id = to_item))
    WITH CHECK (EXISTS (SELECT 1 FROM items i WHERE i.id = from_item) AND EXISTS (SELECT 1 FROM items i WHERE i.id = to_item));

-- votes, participants, reads: everyone in the studio sees them; you write only your own.
CREATE POLICY votes_read ON votes FOR SELECT USING (EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY votes_write ON votes FOR INSERT WITH CHECK (
    user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY votes_delete ON votes FOR DELETE USING (
    user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = decision_id));
CREATE POLICY participants_read ON participants FOR SELECT USING (EXISTS (SELECT 1 FROM items i WHERE i.id = commitment_id));
CREATE POLICY participants_write ON participants FOR INSERT WITH CHECK (
    user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = commitment_id));
CREATE POLICY participants_delete ON participants FOR DELETE USING (
    user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = commitment_id));
CREATE POLICY reads_read ON reads FOR SELECT USING (EXISTS (SELECT 1 FROM items i WHERE i.id = note_id));
CREATE POLICY reads_write ON reads FOR INSERT WITH CHECK (
    user_id = navmcp.uid() AND EXISTS (SELECT 1 FROM items i WHERE i.id = note_id));

-- audit: admins read their studio's log; anyone records their own attempts (refusals too,
-- including attempts on studios they are not in, which carry no studio id).
CREATE POLICY audit_read ON audit FOR SELECT USING (navmcp.is_admin(studio_id));
CREATE POLICY audit_insert ON audit FOR INSERT WITH CHECK (user_id = navmcp.uid());

-- mcp_sessions: your own sessions only.
CREATE POLICY mcp_sessions_own ON mcp_sessions FOR ALL
    USING (user_id = navmcp.uid()) WITH CHECK (user_id = navmcp.uid());
