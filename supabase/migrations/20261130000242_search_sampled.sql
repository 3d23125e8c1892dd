-- PostgreSQL search (navmcp.search_hits of 20261129000201) walked each source's newest 20 windows of
-- rows before it read a rarer word from the GIN index: a word no item has ("zebra") or a title
-- search whose matches are rare among the newest rows (`launch review`) read 4 × 20,000 rows only
-- to find that the walk would not do (199 ms at 100K items, 12.6 ms at 1K). Each walk is now taken
-- only when the newest 2 windows of rows hold at least a tenth of a window of matches, so that the
-- 20 are likely to fill one; else the source goes straight to the index. Either branch gives the
-- newest `win` matches in order (20261129000201): the sample changes what a search costs, never
-- what it finds.
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
        WITH title_sampled AS MATERIALIZED (
            SELECT count(*) * ($15 / $16) >= $10 AS dense FROM (
                SELECT i.fts AS words FROM public.items i WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $16) r
             WHERE r.words @@ $13),
        body_sampled AS MATERIALIZED (
            SELECT count(*) * ($15 / $16) >= $10 AS dense FROM (
                SELECT i.fts AS words FROM public.items i WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $16) r
             WHERE r.words @@ $12),
        opt_sampled AS MATERIALIZED (
            SELECT count(*) * ($15 / $16) >= $10 AS dense FROM (
                SELECT o.fts AS words FROM public.options o JOIN public.items d ON d.id = o.decision_id
                     WHERE $2 IS NOT NULL AND d.studio_id = ANY ($1) ORDER BY o.created_at DESC, o.id DESC LIMIT $16) r
             WHERE r.words @@ $12),
        com_sampled AS MATERIALIZED (
            SELECT count(*) * ($15 / $16) >= $10 AS dense FROM (
                SELECT c.fts AS words FROM public.comments c WHERE $2 IS NOT NULL AND c.studio_id = ANY ($1) ORDER BY c.seq DESC LIMIT $16) r
             WHERE r.words @@ $12),
        title_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT i.id AS item_id, 0 AS tier, NULL::text AS part, i.fts AS words FROM public.items i
                                                     WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $15) r
             WHERE r.words @@ $13 AND (SELECT s.dense FROM title_sampled s) LIMIT $10),
        body_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT i.id AS item_id, 2 AS tier, NULL::text AS part, i.fts AS words FROM public.items i
                                                     WHERE $2 IS NOT NULL AND i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $15) r
             WHERE r.words @@ $12 AND (SELECT s.dense FROM body_sampled s) LIMIT $10),
        opt_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT o.decision_id AS item_id, 3 AS tier, o.id AS part, o.fts AS words FROM public.options o JOIN public.items d ON d.id = o.decision_id
                                                     WHERE $2 IS NOT NULL AND d.studio_id = ANY ($1) ORDER BY o.created_at DESC, o.id DESC LIMIT $15) r
             WHERE r.words @@ $12 AND (SELECT s.dense FROM opt_sampled s) LIMIT $10),
        com_walked AS MATERIALIZED (
            SELECT r.item_id, r.tier, r.part FROM (SELECT c.item_id AS item_id, 4 AS tier, c.id AS part, c.fts AS words FROM public.comments c
                                                     WHERE $2 IS NOT NULL AND c.studio_id = ANY ($1) ORDER BY c.seq DESC LIMIT $15) r
             WHERE r.words @@ $12 AND (SELECT s.dense FROM com_sampled s) LIMIT $10),
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
              want_decision_kind, words, title, left_out, win * 20, win * 2;
END $f$;
REVOKE ALL ON FUNCTION navmcp.search_hits(text[], text, text, text, text, text, text, text, text, integer, text) FROM PUBLIC;
