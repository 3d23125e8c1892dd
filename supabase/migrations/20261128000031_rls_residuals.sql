-- Row-level security residuals (issue 40, item 12), by SQL through the app role:
--   audit:        a member could write lines in their own studio at any time they liked (back- or
--                 forward-dated, with ids of their choosing), so a forged line could sit among
--                 the real ones in the admins' audit;
--   oauth_grants: a person could un-revoke their own grants (and widen their scope, move them to
--                 another client or resource, or insert one already issued).

-- audit: the database stamps each line the app role writes (its time is the transaction's, as
-- navmcp writes times; its id the next of the sequence), and the app role never changes or deletes
-- a line (the owner's pruning does, navmcp.prune_audit). The owner's own inserts (an import, a
-- test's history) keep their times.
ALTER TABLE audit ALTER COLUMN id SET GENERATED ALWAYS;
REVOKE UPDATE, DELETE ON audit FROM navmcp_app;
CREATE OR REPLACE FUNCTION navmcp.audit_stamp() RETURNS trigger LANGUAGE plpgsql SET search_path = '' AS $$
BEGIN
    IF current_user = 'navmcp_app' THEN
        NEW.at := navmcp.now_text();
        NEW.duration_ms := greatest(coalesce(NEW.duration_ms, 0), 0);
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS audit_stamp ON audit;
CREATE TRIGGER audit_stamp BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION navmcp.audit_stamp();

-- oauth_grants: a person changes only when a grant was last used and revokes it; a revoked grant
-- stays revoked; a grant is inserted as approved (not yet issued, used or revoked: the code's
-- exchange, navmcp.oauth_take_code, issues it).
REVOKE UPDATE ON oauth_grants FROM navmcp_app;
GRANT UPDATE (revoked_at, last_used_at) ON oauth_grants TO navmcp_app;
CREATE OR REPLACE FUNCTION navmcp.oauth_grant_revocation_stays() RETURNS trigger LANGUAGE plpgsql
SET search_path = '' AS $$
BEGIN
    IF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at THEN
        RAISE EXCEPTION 'a revoked grant stays revoked' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS oauth_grant_revocation_stays ON oauth_grants;
CREATE TRIGGER oauth_grant_revocation_stays BEFORE UPDATE ON oauth_grants
    FOR EACH ROW EXECUTE FUNCTION navmcp.oauth_grant_revocation_stays();
DROP POLICY IF EXISTS oauth_grants_insert ON oauth_grants;
CREATE POLICY oauth_grants_insert ON oauth_grants FOR INSERT WITH CHECK (
    user_id = (SELECT navmcp.uid()) AND issued_at IS NULL AND revoked_at IS NULL AND last_used_at IS NULL);
