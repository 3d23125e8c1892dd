-- Mirrors navmcp/migrations/0200_cycle_days.sql: a cycle page's counts (items created, closed by
-- hand, comments, ballots, joins) kept per studio and UTC day by triggers, in the transaction of
-- the write, so that a page sums at most 31 rows instead of counting the window's rows (this
-- month's ballots took 79 ms at a million items). Read through navmcp.cycle_activity, which runs as
-- the owner and answers only for a studio of the acting user's; nobody reads or writes the table
-- directly, and the triggers write it as its owner.
--
-- A ballot is one voter's say on one decision; all its rows carry its time. A vote row counts a
-- ballot on its day only when no other row of the ballot is on that day. The vote triggers run
-- BEFORE each row: there a trigger's queries see the rows the statement changed before this one
-- (a new ballot updates its rows one by one), where AFTER ROW triggers all run at the end of the
-- statement and would each see every row already moved. An INSERT that meets its own key goes on
-- as an UPDATE (ON CONFLICT), whose trigger counts it; its BEFORE INSERT counts nothing.
CREATE TABLE cycle_days (
    studio_id TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    day       TEXT COLLATE "C" NOT NULL,
    created   INTEGER NOT NULL DEFAULT 0,
    closed    INTEGER NOT NULL DEFAULT 0,
    comments  INTEGER NOT NULL DEFAULT 0,
    ballots   INTEGER NOT NULL DEFAULT 0,
    joins     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (studio_id, day)
);
ALTER TABLE cycle_days ENABLE ROW LEVEL SECURITY;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE cycle_days FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

INSERT INTO cycle_days (studio_id, day, created, closed, comments, ballots, joins)
SELECT studio_id, day, sum(created), sum(closed), sum(comments), sum(ballots), sum(joins) FROM (
    SELECT studio_id, substr(created_at, 1, 10) AS day, count(*) AS created, 0 AS closed, 0 AS comments,
           0 AS ballots, 0 AS joins FROM items GROUP BY 1, 2
    UNION ALL
    SELECT studio_id, substr(closed_at, 1, 10), 0, count(*), 0, 0, 0 FROM items WHERE closed_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT studio_id, substr(created_at, 1, 10), 0, 0, count(*), 0, 0 FROM comments GROUP BY 1, 2
    UNION ALL
    SELECT i.studio_id, b.day, 0, 0, 0, count(*), 0
      FROM (SELECT DISTINCT decision_id, user_id, substr(created_at, 1, 10) AS day FROM votes) b
      JOIN items i ON i.id = b.decision_id GROUP BY 1, 2
    UNION ALL
    SELECT i.studio_id, substr(p.joined_at, 1, 10), 0, 0, 0, 0, count(*)
      FROM participants p JOIN items i ON i.id = p.commitment_id GROUP BY 1, 2
) counted GROUP BY studio_id, day;

-- One count of one day moved by `by` (a day row is made on its first count). A count going down
-- only updates: rows deleted with their studio must not make a day row for it again.
CREATE FUNCTION navmcp.count_day(studio text, stamp text, what text, by integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF studio IS NULL OR stamp IS NULL THEN
        RETURN;
    END IF;
    IF by < 0 THEN
        EXECUTE format('UPDATE public.cycle_days SET %1$I = %1$I + $3 WHERE studio_id = $1 AND day = $2', what)
            USING studio, substr(stamp, 1, 10), by;
    ELSE
        EXECUTE format('INSERT INTO public.cycle_days AS d (studio_id, day, %1$I) VALUES ($1, $2, $3)
                        ON CONFLICT (studio_id, day) DO UPDATE SET %1$I = d.%1$I + $3', what)
            USING studio, substr(stamp, 1, 10), by;
    END IF;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_day(text, text, text, integer) FROM PUBLIC;

CREATE FUNCTION navmcp.cycle_days_items() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.count_day(NEW.studio_id, NEW.created_at, 'created', 1);
        PERFORM navmcp.count_day(NEW.studio_id, NEW.closed_at, 'closed', 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM navmcp.count_day(OLD.studio_id, OLD.created_at, 'created', -1);
        PERFORM navmcp.count_day(OLD.studio_id, OLD.closed_at, 'closed', -1);
    ELSIF OLD.closed_at IS DISTINCT FROM NEW.closed_at THEN
        PERFORM navmcp.count_day(OLD.studio_id, OLD.closed_at, 'closed', -1);
        PERFORM navmcp.count_day(NEW.studio_id, NEW.closed_at, 'closed', 1);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_days_items() FROM PUBLIC;
CREATE TRIGGER cycle_days_items AFTER INSERT OR DELETE OR UPDATE OF closed_at ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.cycle_days_items();

CREATE FUNCTION navmcp.cycle_days_comments() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.count_day(NEW.studio_id, NEW.created_at, 'comments', 1);
    ELSE
        PERFORM navmcp.count_day(OLD.studio_id, OLD.created_at, 'comments', -1);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_days_comments() FROM PUBLIC;
CREATE TRIGGER cycle_days_comments AFTER INSERT OR DELETE ON comments
    FOR EACH ROW EXECUTE FUNCTION navmcp.cycle_days_comments();

CREATE FUNCTION navmcp.cycle_days_participants() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.count_day((SELECT i.studio_id FROM public.items i WHERE i.id = NEW.commitment_id),
                                 NEW.joined_at, 'joins', 1);
    ELSE  -- a commitment deleted with its studio is found no more: its day rows go with the studio
        PERFORM navmcp.count_day((SELECT i.studio_id FROM public.items i WHERE i.id = OLD.commitment_id),
                                 OLD.joined_at, 'joins', -1);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_days_participants() FROM PUBLIC;
CREATE TRIGGER cycle_days_participants AFTER INSERT OR DELETE ON participants
    FOR EACH ROW EXECUTE FUNCTION navmcp.cycle_days_participants();

-- Whether another row of the ballot (decision, voter) than the option's is on the day of `stamp`.
CREATE FUNCTION navmcp.ballot_on_day(decision text, voter text, option text, stamp text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.votes v WHERE v.decision_id = decision AND v.user_id = voter
                      AND v.option_id <> option AND substr(v.created_at, 1, 10) = substr(stamp, 1, 10))
$$;
REVOKE ALL ON FUNCTION navmcp.ballot_on_day(text, text, text, text) FROM PUBLIC;

CREATE FUNCTION navmcp.cycle_days_votes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    studio text;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT 1 FROM public.votes v WHERE v.option_id = NEW.option_id AND v.user_id = NEW.user_id)
           AND NOT navmcp.ballot_on_day(NEW.decision_id, NEW.user_id, NEW.option_id, NEW.created_at) THEN
            studio := (SELECT i.studio_id FROM public.items i WHERE i.id = NEW.decision_id);
            PERFORM navmcp.count_day(studio, NEW.created_at, 'ballots', 1);
        END IF;
        RETURN NEW;
    END IF;
    studio := (SELECT i.studio_id FROM public.items i WHERE i.id = OLD.decision_id);
    IF TG_OP = 'DELETE' THEN
        IF NOT navmcp.ballot_on_day(OLD.decision_id, OLD.user_id, OLD.option_id, OLD.created_at) THEN
            PERFORM navmcp.count_day(studio, OLD.created_at, 'ballots', -1);
        END IF;
        RETURN OLD;
    END IF;
    IF substr(OLD.created_at, 1, 10) <> substr(NEW.created_at, 1, 10) THEN
        IF NOT navmcp.ballot_on_day(OLD.decision_id, OLD.user_id, OLD.option_id, OLD.created_at) THEN
            PERFORM navmcp.count_day(studio, OLD.created_at, 'ballots', -1);
        END IF;
        IF NOT navmcp.ballot_on_day(NEW.decision_id, NEW.user_id, NEW.option_id, NEW.created_at) THEN
            PERFORM navmcp.count_day(studio, NEW.created_at, 'ballots', 1);
        END IF;
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_days_votes() FROM PUBLIC;
CREATE TRIGGER cycle_days_votes BEFORE INSERT OR DELETE OR UPDATE OF created_at ON votes
    FOR EACH ROW EXECUTE FUNCTION navmcp.cycle_days_votes();

-- navmcp.cycle_activity (20261124000019) from the day rows, with the items created and closed.
DROP FUNCTION navmcp.cycle_activity(text, text, text);
CREATE FUNCTION navmcp.cycle_activity(studio text, since text, till text,
                                      OUT created bigint, OUT closed bigint, OUT comments bigint,
                                      OUT votes bigint, OUT joins bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    SELECT 0, 0, 0, 0, 0 INTO created, closed, comments, votes, joins;
    IF NOT studio = ANY (navmcp.my_studios()) THEN
        RETURN;
    END IF;
    SELECT coalesce(sum(d.created), 0), coalesce(sum(d.closed), 0), coalesce(sum(d.comments), 0),
           coalesce(sum(d.ballots), 0), coalesce(sum(d.joins), 0)
      INTO created, closed, comments, votes, joins
      FROM public.cycle_days d
     WHERE d.studio_id = studio AND d.day >= substr(since, 1, 10) AND d.day < substr(till, 1, 10);
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_activity(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.cycle_activity(text, text, text) TO navmcp_app;
