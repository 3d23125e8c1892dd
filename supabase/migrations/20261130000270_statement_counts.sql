-- The counter triggers of items, item_tags, comments and participants run once per statement, over
-- its transition tables, and move each counter row once by the statement's grouped delta. Run per
-- row, they updated one hot counter row once per row written: within one transaction each update
-- leaves a row version that cannot be pruned and the next update walks them all, so a bulk load
-- (COPY, INSERT ... SELECT, an archive import) was quadratic (20,000 tag rows of one tag: 5.7 s, and
-- the million-item bench seed never ended). What each counter means is unchanged: see
-- 20261122000005/20261129000160 (studio_item_counts), 20261129000200 (cycle_days), 20261129000203
-- (tag_counts) and 20261130000240 (filter_counts). A count going down only updates: rows deleted
-- with their studio must not make its counter row again. The votes trigger stays per row: a ballot
-- counts by what the rows before it in the statement left (20261129000200).
--
-- PostgreSQL allows transition tables only on a trigger of one event and no column list, so each
-- table has a trigger per event, and an UPDATE's deltas net its old rows against its new ones: a
-- statement that changes no counted column writes no counter.

DROP TRIGGER items_count ON items;
DROP TRIGGER cycle_days_items ON items;
DROP TRIGGER filter_counts_items ON items;
DROP TRIGGER tag_counts ON item_tags;
DROP TRIGGER filter_counts_tags ON item_tags;
DROP TRIGGER cycle_days_comments ON comments;
DROP TRIGGER cycle_days_participants ON participants;
DROP FUNCTION navmcp.count_items();
DROP FUNCTION navmcp.cycle_days_items();
DROP FUNCTION navmcp.filter_counts_items();
DROP FUNCTION navmcp.count_tags();
DROP FUNCTION navmcp.filter_counts_tags();
DROP FUNCTION navmcp.cycle_days_comments();
DROP FUNCTION navmcp.cycle_days_participants();
DROP FUNCTION navmcp.count_filters(public.items, text[], integer);

-- Grouped deltas (one per key, none zero) added to each counter: a rise makes the row if need be.
-- PL/pgSQL, whose plans are kept for the session (a SQL function's are made at every call).
CREATE FUNCTION navmcp.add_tag_counts(studios text[], tags text[], ns bigint[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF studios IS NULL THEN  -- no key moved
        RETURN;
    END IF;
    WITH d AS (SELECT * FROM unnest(studios, tags, ns) AS d(studio_id, tag, n) WHERE d.n <> 0),
    down AS (UPDATE public.tag_counts c SET n = c.n + d.n FROM d
              WHERE d.n < 0 AND c.studio_id = d.studio_id AND c.tag = d.tag)
    INSERT INTO public.tag_counts AS c (studio_id, tag, n) SELECT d.studio_id, d.tag, d.n FROM d WHERE d.n > 0
        ON CONFLICT (studio_id, tag) DO UPDATE SET n = c.n + excluded.n;
END $$;
REVOKE ALL ON FUNCTION navmcp.add_tag_counts(text[], text[], bigint[]) FROM PUBLIC;

CREATE FUNCTION navmcp.add_filter_counts(studios text[], tags text[], kinds text[], decision_kinds text[],
                                         states smallint[], ns bigint[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF studios IS NULL THEN
        RETURN;
    END IF;
    WITH d AS (SELECT * FROM unnest(studios, tags, kinds, decision_kinds, states, ns)
                       AS d(studio_id, tag, kind, decision_kind, state, n) WHERE d.n <> 0),
    down AS (UPDATE public.filter_counts c SET n = c.n + d.n FROM d
              WHERE d.n < 0 AND c.studio_id = d.studio_id AND c.tag = d.tag AND c.kind = d.kind
                AND c.decision_kind = d.decision_kind AND c.state = d.state)
    INSERT INTO public.filter_counts AS c (studio_id, tag, kind, decision_kind, state, n)
        SELECT d.studio_id, d.tag, d.kind, d.decision_kind, d.state, d.n FROM d WHERE d.n > 0
        ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = c.n + excluded.n;
END $$;
REVOKE ALL ON FUNCTION navmcp.add_filter_counts(text[], text[], text[], text[], smallint[], bigint[]) FROM PUBLIC;

-- `what` is one count column of cycle_days (not ballots: the votes trigger's); `stamps` are times,
-- counted on their UTC day. One static statement for every column: its plan is kept.
CREATE FUNCTION navmcp.add_cycle_days(what text, studios text[], stamps text[], ns bigint[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF studios IS NULL THEN
        RETURN;
    END IF;
    WITH d AS (SELECT d.studio_id, substr(d.stamp, 1, 10) AS day, sum(d.n)::integer AS n
                 FROM unnest(studios, stamps, ns) AS d(studio_id, stamp, n)
                WHERE d.studio_id IS NOT NULL AND d.stamp IS NOT NULL GROUP BY 1, 2 HAVING sum(d.n) <> 0),
    w AS (SELECT d.studio_id, d.day, d.n,
                 CASE WHEN what = 'created' THEN d.n ELSE 0 END AS created,
                 CASE WHEN what = 'closed' THEN d.n ELSE 0 END AS closed,
                 CASE WHEN what = 'comments' THEN d.n ELSE 0 END AS comments,
                 CASE WHEN what = 'joins' THEN d.n ELSE 0 END AS joins FROM d),
    down AS (UPDATE public.cycle_days c
                SET created = c.created + w.created, closed = c.closed + w.closed,
                    comments = c.comments + w.comments, joins = c.joins + w.joins
               FROM w WHERE w.n < 0 AND c.studio_id = w.studio_id AND c.day = w.day)
    INSERT INTO public.cycle_days AS c (studio_id, day, created, closed, comments, joins)
        SELECT w.studio_id, w.day, w.created, w.closed, w.comments, w.joins FROM w WHERE w.n > 0
        ON CONFLICT (studio_id, day) DO UPDATE
            SET created = c.created + excluded.created, closed = c.closed + excluded.closed,
                comments = c.comments + excluded.comments, joins = c.joins + excluded.joins;
END $$;
REVOKE ALL ON FUNCTION navmcp.add_cycle_days(text, text[], text[], bigint[]) FROM PUBLIC;

-- items: studio_item_counts, cycle_days (created, closed) and filter_counts. An UPDATE pairs its
-- old and new rows by seq; a row moved in filter_counts moves with its tags, as read after the
-- statement (a deleted item's tag rows, going with it, find it gone and count nothing).
CREATE FUNCTION navmcp.count_item_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO public.studio_item_counts AS c (studio_id, kind, n)
            SELECT r.studio_id, r.kind, count(*) FROM new_rows r GROUP BY 1, 2
            ON CONFLICT (studio_id, kind) DO UPDATE SET n = c.n + excluded.n;
        PERFORM navmcp.add_cycle_days('created', array_agg(r.studio_id), array_agg(r.created_at), array_agg(1::bigint))
           FROM new_rows r;
        PERFORM navmcp.add_cycle_days('closed', array_agg(r.studio_id), array_agg(r.closed_at), array_agg(1::bigint))
           FROM new_rows r WHERE r.closed_at IS NOT NULL;
        PERFORM navmcp.add_filter_counts(array_agg(d.studio_id), array_agg(''::text), array_agg(d.kind),
                                         array_agg(d.decision_kind), array_agg(d.state), array_agg(d.n))
           FROM (SELECT r.studio_id, r.kind, navmcp.filter_decision_kind(r.kind, r.decision_kind) AS decision_kind,
                        navmcp.filter_state(r.closed_at, r.deadline) AS state, count(*) AS n
                   FROM new_rows r WHERE r.deleted_at IS NULL GROUP BY 1, 2, 3, 4) d;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE public.studio_item_counts c SET n = c.n - d.n
          FROM (SELECT r.studio_id, r.kind, count(*) AS n FROM old_rows r WHERE r.deleted_at IS NULL GROUP BY 1, 2) d
         WHERE c.studio_id = d.studio_id AND c.kind = d.kind;
        PERFORM navmcp.add_cycle_days('created', array_agg(r.studio_id), array_agg(r.created_at), array_agg(-1::bigint))
           FROM old_rows r;
        PERFORM navmcp.add_cycle_days('closed', array_agg(r.studio_id), array_agg(r.closed_at), array_agg(-1::bigint))
           FROM old_rows r WHERE r.closed_at IS NOT NULL;
        PERFORM navmcp.add_filter_counts(array_agg(d.studio_id), array_agg(''::text), array_agg(d.kind),
                                         array_agg(d.decision_kind), array_agg(d.state), array_agg(-d.n))
           FROM (SELECT r.studio_id, r.kind, navmcp.filter_decision_kind(r.kind, r.decision_kind) AS decision_kind,
                        navmcp.filter_state(r.closed_at, r.deadline) AS state, count(*) AS n
                   FROM old_rows r WHERE r.deleted_at IS NULL GROUP BY 1, 2, 3, 4) d;
    ELSE
        UPDATE public.studio_item_counts c SET n = c.n + d.n
          FROM (SELECT n.studio_id, n.kind, sum(CASE WHEN n.deleted_at IS NULL THEN 1 ELSE -1 END) AS n
                  FROM old_rows o JOIN new_rows n ON n.seq = o.seq
                 WHERE (o.deleted_at IS NULL) <> (n.deleted_at IS NULL) GROUP BY 1, 2) d
         WHERE c.studio_id = d.studio_id AND c.kind = d.kind AND d.n <> 0;
        PERFORM navmcp.add_cycle_days('closed', array_agg(m.studio_id), array_agg(m.closed_at), array_agg(m.n))
           FROM (SELECT o.studio_id, o.closed_at, -1::bigint AS n FROM old_rows o JOIN new_rows n ON n.seq = o.seq
                  WHERE o.closed_at IS DISTINCT FROM n.closed_at
                 UNION ALL
                 SELECT n.studio_id, n.closed_at, 1 FROM old_rows o JOIN new_rows n ON n.seq = o.seq
                  WHERE o.closed_at IS DISTINCT FROM n.closed_at) m;
        PERFORM navmcp.add_filter_counts(array_agg(d.studio_id), array_agg(d.tag), array_agg(d.kind),
                                         array_agg(d.decision_kind), array_agg(d.state), array_agg(d.n))
           FROM (SELECT m.studio_id, t.tag, m.kind, navmcp.filter_decision_kind(m.kind, m.decision_kind) AS decision_kind,
                        navmcp.filter_state(m.closed_at, m.deadline) AS state, sum(m.n) AS n
                   FROM (SELECT r.*, -1 AS n FROM old_rows r WHERE r.deleted_at IS NULL
                         UNION ALL SELECT r.*, 1 FROM new_rows r WHERE r.deleted_at IS NULL) m
                   JOIN (SELECT o.seq FROM old_rows o JOIN new_rows n ON n.seq = o.seq
                          WHERE (o.studio_id, o.kind, navmcp.filter_decision_kind(o.kind, o.decision_kind),
                                 navmcp.filter_state(o.closed_at, o.deadline), o.deleted_at IS NULL)
                                IS DISTINCT FROM
                                (n.studio_id, n.kind, navmcp.filter_decision_kind(n.kind, n.decision_kind),
                                 navmcp.filter_state(n.closed_at, n.deadline), n.deleted_at IS NULL)) moved
                     ON moved.seq = m.seq
                  CROSS JOIN LATERAL (SELECT ''::text AS tag
                                      UNION ALL SELECT it.tag FROM public.item_tags it WHERE it.item_id = m.id) t
                  GROUP BY 1, 2, 3, 4, 5 HAVING sum(m.n) <> 0) d;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_item_rows() FROM PUBLIC;
CREATE TRIGGER items_counts_insert AFTER INSERT ON items REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_item_rows();
CREATE TRIGGER items_counts_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_item_rows();
CREATE TRIGGER items_counts_update AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_item_rows();

-- item_tags: tag_counts (by the row's studio) and filter_counts (by its item, as it is after the
-- statement). Every row counts -1 old and +1 new; the keys a statement left as they were net to 0.
CREATE FUNCTION navmcp.count_tag_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    moved jsonb;  -- [{item_id, studio_id, tag, n}]: each row's -1 (old) or +1 (new)
BEGIN
    IF TG_OP = 'INSERT' THEN
        moved := (SELECT jsonb_agg(jsonb_build_object('item_id', r.item_id, 'studio_id', r.studio_id, 'tag', r.tag, 'n', 1))
                    FROM new_rows r);
    ELSIF TG_OP = 'DELETE' THEN
        moved := (SELECT jsonb_agg(jsonb_build_object('item_id', r.item_id, 'studio_id', r.studio_id, 'tag', r.tag, 'n', -1))
                    FROM old_rows r);
    ELSE
        moved := (SELECT jsonb_agg(m.j) FROM (
                    SELECT jsonb_build_object('item_id', r.item_id, 'studio_id', r.studio_id, 'tag', r.tag, 'n', -1) AS j
                      FROM old_rows r
                    UNION ALL
                    SELECT jsonb_build_object('item_id', r.item_id, 'studio_id', r.studio_id, 'tag', r.tag, 'n', 1)
                      FROM new_rows r) m);
    END IF;
    IF moved IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM navmcp.add_tag_counts(array_agg(d.studio_id), array_agg(d.tag), array_agg(d.n))
       FROM (SELECT r.studio_id, r.tag, sum(r.n)::bigint AS n
               FROM jsonb_to_recordset(moved) AS r(item_id text, studio_id text, tag text, n bigint)
              WHERE r.studio_id IS NOT NULL GROUP BY 1, 2 HAVING sum(r.n) <> 0) d;
    PERFORM navmcp.add_filter_counts(array_agg(d.studio_id), array_agg(d.tag), array_agg(d.kind),
                                     array_agg(d.decision_kind), array_agg(d.state), array_agg(d.n))
       FROM (SELECT i.studio_id, r.tag, i.kind, navmcp.filter_decision_kind(i.kind, i.decision_kind) AS decision_kind,
                    navmcp.filter_state(i.closed_at, i.deadline) AS state, sum(r.n)::bigint AS n
               FROM jsonb_to_recordset(moved) AS r(item_id text, studio_id text, tag text, n bigint)
               JOIN public.items i ON i.id = r.item_id
              WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.n) <> 0) d;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_tag_rows() FROM PUBLIC;
CREATE TRIGGER item_tags_counts_insert AFTER INSERT ON item_tags REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_tag_rows();
CREATE TRIGGER item_tags_counts_delete AFTER DELETE ON item_tags REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_tag_rows();
CREATE TRIGGER item_tags_counts_update AFTER UPDATE ON item_tags REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_tag_rows();

-- comments and participants: cycle_days (comments, joins). A commitment deleted with its studio is
-- found no more: its day rows go with the studio.
CREATE FUNCTION navmcp.count_comment_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.add_cycle_days('comments', array_agg(r.studio_id), array_agg(r.created_at), array_agg(1::bigint))
           FROM new_rows r;
    ELSE
        PERFORM navmcp.add_cycle_days('comments', array_agg(r.studio_id), array_agg(r.created_at), array_agg(-1::bigint))
           FROM old_rows r;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_comment_rows() FROM PUBLIC;
CREATE TRIGGER comments_counts_insert AFTER INSERT ON comments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_comment_rows();
CREATE TRIGGER comments_counts_delete AFTER DELETE ON comments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_comment_rows();

CREATE FUNCTION navmcp.count_participant_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.add_cycle_days('joins', array_agg(i.studio_id), array_agg(r.joined_at), array_agg(1::bigint))
           FROM new_rows r JOIN public.items i ON i.id = r.commitment_id;
    ELSE
        PERFORM navmcp.add_cycle_days('joins', array_agg(i.studio_id), array_agg(r.joined_at), array_agg(-1::bigint))
           FROM old_rows r JOIN public.items i ON i.id = r.commitment_id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_participant_rows() FROM PUBLIC;
CREATE TRIGGER participants_counts_insert AFTER INSERT ON participants REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_participant_rows();
CREATE TRIGGER participants_counts_delete AFTER DELETE ON participants REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION navmcp.count_participant_rows();
