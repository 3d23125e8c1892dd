-- Mirrors navmcp/migrations/0013_findable.sql: being added to a studio takes a handle its owner
-- chose to make findable; someone who signs themselves in (Supabase Auth: a uuid id) starts
-- unfindable, an account the operator made starts findable. A display name never holds an
-- e-mail address.
ALTER TABLE users ADD COLUMN findable INTEGER NOT NULL DEFAULT 0;
UPDATE users SET findable = 1 WHERE NOT (length(id) = 36 AND substr(id, 9, 1) = '-');
UPDATE users SET name = handle WHERE name LIKE '%_@_%._%';

-- The app role writes two columns of its own row: deleted_at (only ever to delete it, as
-- 20261126000021 has it: a deleted row takes no update) and findable (make_findable,
-- make_unfindable).
GRANT UPDATE (findable) ON users TO navmcp_app;
DROP POLICY IF EXISTS users_update ON users;
CREATE POLICY users_update ON users FOR UPDATE
    USING (id = (SELECT navmcp.uid()) AND deleted_at IS NULL)
    WITH CHECK (id = (SELECT navmcp.uid()));

-- add_member reads whether the person it finds is findable.
DROP FUNCTION navmcp.find_user(text);
CREATE FUNCTION navmcp.find_user(wanted text)
RETURNS TABLE (id text, handle text, name text, created_at text, deleted_at text, findable integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT u.id, u.handle, u.name, u.created_at, u.deleted_at, u.findable FROM public.users u WHERE u.handle = wanted
$$;
REVOKE ALL ON FUNCTION navmcp.find_user(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.find_user(text) TO navmcp_app;

-- A web session's user row carries it too (the whoami page and its actions read it).
DROP FUNCTION navmcp.web_session_user(text);
CREATE FUNCTION navmcp.web_session_user(session_hash text)
RETURNS TABLE (id text, handle text, name text, created_at text, deleted_at text, findable integer, flash text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT u.id, u.handle, u.name, u.created_at, u.deleted_at, u.findable, s.flash
      FROM public.web_sessions s JOIN public.users u ON u.id = s.user_id
     WHERE s.id_hash = session_hash AND s.ended_at IS NULL AND s.expires_at > navmcp.now_text() COLLATE "C"
       AND u.deleted_at IS NULL
$$;
REVOKE ALL ON FUNCTION navmcp.web_session_user(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.web_session_user(text) TO navmcp_app;

-- An admin adds only a findable person whose account works (the founder's own first membership
-- aside). A role change of someone already in is an update, not an insert: it needs no consent again.
CREATE OR REPLACE FUNCTION navmcp.findable(person text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.users u WHERE u.id = person AND u.findable = 1 AND u.deleted_at IS NULL)
$$;
REVOKE ALL ON FUNCTION navmcp.findable(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.findable(text) TO navmcp_app;
DROP POLICY IF EXISTS memberships_insert ON memberships;
CREATE POLICY memberships_insert ON memberships FOR INSERT WITH CHECK (
    (navmcp.is_admin(studio_id) AND navmcp.findable(user_id))
    OR (user_id = navmcp.uid() AND role = 'admin' AND navmcp.may_found(studio_id)));
