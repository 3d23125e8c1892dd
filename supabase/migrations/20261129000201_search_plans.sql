-- Search at a million items on PostgreSQL (issue 41, item 6). navmcp.search_hits (20261128000130)
-- takes the newest `win` matches of each source (titles, texts, options, comments). GIN returns the
-- matches of a word in no useful order, so the plan PostgreSQL made for every query (a SQL
-- function is planned without its words) read every match and sorted them: 7.4 s at a million
-- items for "plan", in 29% of the items. Planning each call with its words does not fix it: the
-- planner's guess for a word it has no statistics for (a typo, "zebra") chose a walk of the items
-- newest first that never fills the window, 6.2 s through a million rows.
--
-- Each source now first walks its newest `probe` rows (20 windows), newest first, and keeps the
-- matches; a word common enough to fill the window there is done (the newest `win` matches are
-- among them, in that order). Only a rarer word reads its matches from the GIN index and sorts
-- them, and a rarer word has fewer (at most probe ÷ win of the rows, 5%). The two branches are
-- chosen at run time by the count of the walk (a one-time filter), so no estimate decides. The
-- newest options are walked by an index of their own. Same rows, same order as before.
CREATE INDEX IF NOT EXISTS options_created ON options(created_at, id);

CREATE OR REPLACE FUNCTION navmcp.search_hits(mine text[], want_q text, want_title text, want_out text, want_tag_word text,
                                              want_kind text, want_status text, want_tag text, want_at text, win integer,
                                              want_decision_kind text)
RETURNS TABLE (item_id text, tier integer, option_id text, comment_id text, options bigint, comments bigint,
               updated_at text, widest bigint)
LANGUAGE plpgsql STABLE SET search_path = '' SET work_mem = '32MB' AS $f$
DECLARE
    words tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_q, 'ς', 'σ'));
    title tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_title, 'ς', 'σ'));
    left_out tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_out, 'ς', 'σ'));
BEGIN
    -- EXECUTE: planned with its values (the text queries made once, above, are constants to it).
    -- A walk keeps its subquery's order: the first `win` matches it gives are the newest.
    RETURN QUERY EXECUTE $q$
        WITH title_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT i.id AS item_id, 0 AS tier, NULL::text AS part, i.fts AS words FROM public.items i
                                                     WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $15) r
             WHERE r.words @@ $13 LIMIT $10),
        body_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT i.id AS item_id, 2 AS tier, NULL::text AS part, i.fts AS words FROM public.items i
                                                     WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $15) r
             WHERE r.words @@ $12 LIMIT $10),
        opt_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT o.decision_id AS item_id, 3 AS tier, o.id AS part, o.fts AS words FROM public.options o JOIN public.items d ON d.id = o.decision_id
                                                     WHERE $2 IS NOT NULL AND d.studio_id = ANY ($1) ORDER BY o.created_at DESC, o.id DESC LIMIT $15) r
             WHERE r.words @@ $12 LIMIT $10),
        com_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT c.item_id AS item_id, 4 AS tier, c.id AS part, c.fts AS words FROM public.comments c
                                                     WHERE $2 IS NOT NULL AND c.studio_id = ANY ($1) ORDER BY c.seq DESC LIMIT $15) r
             WHERE r.words @@ $12 LIMIT $10),
        hits AS (
            SELECT * FROM title_walked WHERE (SELECT count(*) FROM title_walked) >= $10
            UNION ALL
            SELECT * FROM (SELECT i.id AS item_id, 0 AS tier, NULL::text AS part FROM public.items i WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) AND i.fts @@ $13
                            ORDER BY i.seq + 0 DESC LIMIT $10) title_indexed
             WHERE (SELECT count(*) FROM title_walked) < $10
            UNION ALL
            SELECT * FROM body_walked WHERE (SELECT count(*) FROM body_walked) >= $10
            UNION ALL
            SELECT * FROM (SELECT i.id AS item_id, 2 AS tier, NULL::text AS part FROM public.items i WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) AND i.fts @@ $12
                            ORDER BY i.seq + 0 DESC LIMIT $10) body_indexed
             WHERE (SELECT count(*) FROM body_walked) < $10
            UNION ALL
            SELECT * FROM opt_walked WHERE (SELECT count(*) FROM opt_walked) >= $10
            UNION ALL
            SELECT * FROM (SELECT o.decision_id AS item_id, 3 AS tier, o.id AS part FROM public.options o JOIN public.items d ON d.id = o.decision_id WHERE $2 IS NOT NULL AND d.studio_id = ANY ($1) AND o.fts @@ $12
                            ORDER BY o.created_at || '' DESC, o.id DESC LIMIT $10) opt_indexed
             WHERE (SELECT count(*) FROM opt_walked) < $10
            UNION ALL
            SELECT * FROM com_walked WHERE (SELECT count(*) FROM com_walked) >= $10
            UNION ALL
            SELECT * FROM (SELECT c.item_id AS item_id, 4 AS tier, c.id AS part FROM public.comments c WHERE $2 IS NOT NULL AND c.studio_id = ANY ($1) AND c.fts @@ $12
                            ORDER BY c.seq + 0 DESC LIMIT $10) com_indexed
             WHERE (SELECT count(*) FROM com_walked) < $10
            UNION ALL
            SELECT * FROM (SELECT t.item_id, 1, NULL FROM public.item_tags t
                            WHERE $2 IS NOT NULL AND $5 IS NOT NULL AND t.studio_id = ANY ($1)
                              AND t.tag = $5 ORDER BY t.seq DESC LIMIT $10) e
            UNION ALL
            SELECT * FROM (SELECT i.id, 0, NULL FROM public.items i
                            WHERE $2 IS NULL AND $8 IS NULL AND i.studio_id = ANY ($1)
                              AND ($6 IS NULL OR i.kind = $6)) f
            UNION ALL
            SELECT * FROM (SELECT t.item_id, 0, NULL FROM public.item_tags t
                            WHERE $2 IS NULL AND $8 IS NOT NULL AND t.studio_id = ANY ($1)
                              AND t.tag = $8) g
        ),
        best AS (
            SELECT h.item_id, min(h.tier) AS tier, min(h.part) FILTER (WHERE h.tier = 3) AS option_id,
                   min(h.part) FILTER (WHERE h.tier = 4) AS comment_id,
                   count(*) FILTER (WHERE h.tier = 3) AS options, count(*) FILTER (WHERE h.tier = 4) AS comments
              FROM hits h GROUP BY h.item_id
        )
        SELECT b.item_id, b.tier, b.option_id, b.comment_id, b.options, b.comments, i.updated_at,
               (SELECT max(n) FROM (SELECT count(*) AS n FROM hits WHERE $2 IS NOT NULL GROUP BY hits.tier) w) AS widest
          FROM best b JOIN public.items i ON i.id = b.item_id
         WHERE ($6 IS NULL OR i.kind = $6)
           AND ($7 IS NULL OR ($7 = 'open') =
                (i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > $9)))
           AND ($8 IS NULL OR EXISTS (SELECT 1 FROM public.item_tags t WHERE t.item_id = i.id AND t.tag = $8))
           AND ($11 IS NULL OR coalesce(i.decision_kind, 'acceptance') = $11)
           AND ($4 IS NULL OR NOT i.fts @@ $14)
    $q$ USING mine, want_q, want_title, want_out, want_tag_word, want_kind, want_status, want_tag, want_at, win,
              want_decision_kind, words, title, left_out, win * 20;
END $f$;
REVOKE ALL ON FUNCTION navmcp.search_hits(text[], text, text, text, text, text, text, text, text, integer, text) FROM PUBLIC;
