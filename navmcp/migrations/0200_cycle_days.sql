-- Cycle pages at a million items (issue 40 item 3, issue 41 item 6): a cycle page's counts (items
-- created, closed by hand, comments, ballots, joins) were exact counts of the window's rows, so
-- they grew with the month: 79 ms for this month's ballots at 1M items. The same counts are now
-- kept per studio and UTC day (cycles are whole UTC days: domain.cycle_window) by the triggers
-- below, in the transaction of the write, and a page sums at most 31 rows. A day is the first ten
-- characters of a store timestamp ('YYYY-MM-DD'). Items closed by a deadline passing are still
-- counted from their index (no write marks that moment).
--
-- A ballot is one voter's say on one decision, however many options it names; every row of a
-- ballot carries its time (actions/decisions.py stamps them together, and a new ballot moves them
-- all). A vote row counts a ballot on its day only when no other row of the same ballot is on that
-- day, so the per-row triggers see one ballot once, whatever the order of the rows.
CREATE TABLE cycle_days (
    studio_id TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    day       TEXT NOT NULL,
    created   INTEGER NOT NULL DEFAULT 0,
    closed    INTEGER NOT NULL DEFAULT 0,
    comments  INTEGER NOT NULL DEFAULT 0,
    ballots   INTEGER NOT NULL DEFAULT 0,
    joins     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (studio_id, day)
) WITHOUT ROWID;

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
) GROUP BY studio_id, day;

-- Items: created on their day; closed by hand on the day of closed_at.
CREATE TRIGGER cycle_days_item_new AFTER INSERT ON items BEGIN
    INSERT INTO cycle_days (studio_id, day, created) VALUES (new.studio_id, substr(new.created_at, 1, 10), 1)
        ON CONFLICT (studio_id, day) DO UPDATE SET created = created + 1;
    INSERT INTO cycle_days (studio_id, day, closed) SELECT new.studio_id, substr(new.closed_at, 1, 10), 1
     WHERE new.closed_at IS NOT NULL
        ON CONFLICT (studio_id, day) DO UPDATE SET closed = closed + 1;
END;
CREATE TRIGGER cycle_days_item_gone AFTER DELETE ON items BEGIN
    UPDATE cycle_days SET created = created - 1 WHERE studio_id = old.studio_id AND day = substr(old.created_at, 1, 10);
    UPDATE cycle_days SET closed = closed - 1
     WHERE old.closed_at IS NOT NULL AND studio_id = old.studio_id AND day = substr(old.closed_at, 1, 10);
END;
CREATE TRIGGER cycle_days_item_closed AFTER UPDATE OF closed_at ON items
WHEN old.closed_at IS NOT new.closed_at BEGIN
    UPDATE cycle_days SET closed = closed - 1
     WHERE old.closed_at IS NOT NULL AND studio_id = old.studio_id AND day = substr(old.closed_at, 1, 10);
    INSERT INTO cycle_days (studio_id, day, closed) SELECT new.studio_id, substr(new.closed_at, 1, 10), 1
     WHERE new.closed_at IS NOT NULL
        ON CONFLICT (studio_id, day) DO UPDATE SET closed = closed + 1;
END;

CREATE TRIGGER cycle_days_comment_new AFTER INSERT ON comments BEGIN
    INSERT INTO cycle_days (studio_id, day, comments) VALUES (new.studio_id, substr(new.created_at, 1, 10), 1)
        ON CONFLICT (studio_id, day) DO UPDATE SET comments = comments + 1;
END;
CREATE TRIGGER cycle_days_comment_gone AFTER DELETE ON comments BEGIN
    UPDATE cycle_days SET comments = comments - 1 WHERE studio_id = old.studio_id AND day = substr(old.created_at, 1, 10);
END;

CREATE TRIGGER cycle_days_join_new AFTER INSERT ON participants BEGIN
    INSERT INTO cycle_days (studio_id, day, joins)
    SELECT i.studio_id, substr(new.joined_at, 1, 10), 1 FROM items i WHERE i.id = new.commitment_id
        ON CONFLICT (studio_id, day) DO UPDATE SET joins = joins + 1;
END;
CREATE TRIGGER cycle_days_join_gone AFTER DELETE ON participants BEGIN
    UPDATE cycle_days SET joins = joins - 1
     WHERE day = substr(old.joined_at, 1, 10) AND studio_id = (SELECT i.studio_id FROM items i WHERE i.id = old.commitment_id);
END;

-- Ballots: "another row of this ballot on that day" excludes the row itself by its key.
CREATE TRIGGER cycle_days_vote_new AFTER INSERT ON votes
WHEN NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = new.decision_id AND v.user_id = new.user_id
                    AND v.option_id <> new.option_id AND substr(v.created_at, 1, 10) = substr(new.created_at, 1, 10))
BEGIN
    INSERT INTO cycle_days (studio_id, day, ballots)
    SELECT i.studio_id, substr(new.created_at, 1, 10), 1 FROM items i WHERE i.id = new.decision_id
        ON CONFLICT (studio_id, day) DO UPDATE SET ballots = ballots + 1;
END;
CREATE TRIGGER cycle_days_vote_gone AFTER DELETE ON votes
WHEN NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = old.decision_id AND v.user_id = old.user_id
                    AND v.option_id <> old.option_id AND substr(v.created_at, 1, 10) = substr(old.created_at, 1, 10))
BEGIN
    UPDATE cycle_days SET ballots = ballots - 1
     WHERE day = substr(old.created_at, 1, 10) AND studio_id = (SELECT i.studio_id FROM items i WHERE i.id = old.decision_id);
END;
CREATE TRIGGER cycle_days_vote_moved AFTER UPDATE OF created_at ON votes
WHEN substr(old.created_at, 1, 10) <> substr(new.created_at, 1, 10) BEGIN
    UPDATE cycle_days SET ballots = ballots - 1
     WHERE day = substr(old.created_at, 1, 10) AND studio_id = (SELECT i.studio_id FROM items i WHERE i.id = old.decision_id)
       AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = old.decision_id AND v.user_id = old.user_id
                          AND v.option_id <> old.option_id AND substr(v.created_at, 1, 10) = substr(old.created_at, 1, 10));
    INSERT INTO cycle_days (studio_id, day, ballots)
    SELECT i.studio_id, substr(new.created_at, 1, 10), 1 FROM items i WHERE i.id = new.decision_id
       AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = new.decision_id AND v.user_id = new.user_id
                          AND v.option_id <> new.option_id AND substr(v.created_at, 1, 10) = substr(new.created_at, 1, 10))
        ON CONFLICT (studio_id, day) DO UPDATE SET ballots = ballots + 1;
END;
