-- Signing in with Supabase Auth (an emailed code) proves the user with a verified access token;
-- the web app then opens a cookie session acting as that user. A user may open sessions for
-- themselves only (login links still go through navmcp.redeem_login_link).
DROP POLICY IF EXISTS web_sessions_insert ON web_sessions;
CREATE POLICY web_sessions_insert ON web_sessions FOR INSERT WITH CHECK (user_id = navmcp.uid());
