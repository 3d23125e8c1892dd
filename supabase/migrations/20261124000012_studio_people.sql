-- A studio's former members stay visible, as users, to its current members (PostgreSQL only: the
-- SQLite store has no row-level security). The users policy used to follow current memberships, so
-- when someone left a studio, the people still in it lost sight of their user row and with it of
-- their work: items joined to their author read "not found", their comments, reads and votes
-- dropped out of pages, and the audit log showed a raw id.
--
-- studio_people: everyone who is or was a member of a studio. Append-only: written only by the
-- trigger below (as the table owner), removed only with the studio. navmcp_app may read it, and
-- its policy shows a studio's rows to that studio's current members alone, so it tells nobody
-- who is or was in a studio they are not in, and a former member sees none of it.
CREATE TABLE studio_people (
    studio_id  TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    PRIMARY KEY (studio_id, user_id)  -- the users policy reads it by studio (index-only)
);

-- Every member is remembered as they join (add_member, create_studio's first admin). Nothing else
-- needs recording: writing anything in a studio (items, comments, votes, ...) takes membership.
CREATE OR REPLACE FUNCTION navmcp.remember_member() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    INSERT INTO public.studio_people (studio_id, user_id) VALUES (NEW.studio_id, NEW.user_id)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.remember_member() FROM PUBLIC;

CREATE TRIGGER memberships_remember AFTER INSERT OR UPDATE OF studio_id, user_id ON memberships
    FOR EACH ROW EXECUTE FUNCTION navmcp.remember_member();

-- People who left before this migration are no longer in memberships: find them by what they
-- left behind in the studio. (Someone who left no trace at all can't be found, and has nothing
-- shown under their name either.) Audit lines carry a studio only for people who were in it
-- (a refused attempt on a studio you can't see records none).
INSERT INTO studio_people (studio_id, user_id)
    SELECT m.studio_id, m.user_id FROM memberships m
    UNION SELECT s.id, s.created_by FROM studios s
    UNION SELECT i.studio_id, i.created_by FROM items i
    UNION SELECT c.studio_id, c.created_by FROM comments c
    UNION SELECT i.studio_id, o.created_by FROM options o JOIN items i ON i.id = o.decision_id
    UNION SELECT i.studio_id, v.user_id FROM votes v JOIN items i ON i.id = v.decision_id
    UNION SELECT i.studio_id, p.user_id FROM participants p JOIN items i ON i.id = p.commitment_id
    UNION SELECT i.studio_id, r.user_id FROM reads r JOIN items i ON i.id = r.note_id
    UNION SELECT a.studio_id, a.user_id FROM audit a
           JOIN studios s ON s.id = a.studio_id JOIN users u ON u.id = a.user_id
ON CONFLICT DO NOTHING;

ALTER TABLE studio_people ENABLE ROW LEVEL SECURITY;
CREATE POLICY studio_people_read ON studio_people FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
GRANT SELECT ON studio_people TO navmcp_app;

-- users: yourself, and the people (present and past) of the studios you are in now. Current
-- members are among them (the trigger), so nobody visible before is hidden now; someone who never
-- shared a studio with you stays invisible, and leaving a studio ends your view of its people.
DROP POLICY users_read ON users;
CREATE POLICY users_read ON users FOR SELECT
    USING (id = navmcp.uid() OR id IN (SELECT p.user_id FROM studio_people p));
