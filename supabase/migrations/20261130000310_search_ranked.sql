-- PostgreSQL's word search reads as far as its page needs (navmcp/store/ranked.py, as SQLite's since
-- lane i41r): navmcp.find_items ranked every source's newest window of matches (a walk of the newest
-- 20,000 rows each when the word is common), whatever the page showed. These are the reads the
-- store-independent algorithm asks for, as the owner (under row-level security the GIN indexes
-- would not be used), each answering only for the acting user's studios.
--
-- navmcp.search_sample: how many of each source's newest `n` rows match (title, text, option,
-- comment), so that a common word's source is walked newest first and a rare one read from the GIN
-- index (which gives its matches in no order: all of them are read and sorted).
CREATE OR REPLACE FUNCTION navmcp.search_sample(studios text[], want_q text, want_title text, n integer)
RETURNS integer[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' SET jit = off SET max_parallel_workers_per_gather = 0 AS $f$
DECLARE
    mine text[] := ARRAY(SELECT unnest(studios) INTERSECT SELECT unnest(navmcp.my_studios()));
    words tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_q, 'ς', 'σ'));
    title tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_title, 'ς', 'σ'));
    found integer[];
BEGIN
    -- EXECUTE: planned with its values, as search_hits' samples. No parallel workers (here and in
    -- search_scan): starting them took 12 ms of a 2,000-option walk of 24 ms at 1M items.
    EXECUTE $q$ SELECT ARRAY[r.title, r.words, (
        SELECT count(*) FILTER (WHERE o.fts @@ $2) FROM (SELECT o.fts FROM public.options o JOIN public.items d ON d.id = o.decision_id
                                                     WHERE d.studio_id = ANY ($1) ORDER BY o.created_at DESC, o.id DESC LIMIT $4) o), (
        SELECT count(*) FILTER (WHERE c.fts @@ $2) FROM (SELECT c.fts FROM public.comments c WHERE c.studio_id = ANY ($1)
                                                     ORDER BY c.seq DESC LIMIT $4) c)]::integer[]
          FROM (SELECT count(*) FILTER (WHERE i.fts @@ $3) AS title, count(*) FILTER (WHERE i.fts @@ $2) AS words
                  FROM (SELECT i.fts FROM public.items i WHERE i.studio_id = ANY ($1) ORDER BY i.seq DESC LIMIT $4) i) r $q$
       INTO found USING mine, words, title, n;
    RETURN found;
END $f$;
REVOKE ALL ON FUNCTION navmcp.search_sample(text[], text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_sample(text[], text, text, integer) TO navmcp_app;

-- navmcp.search_scan: up to `n` matches of one tier's source (0 title, 1 tag, 2 text, 3 option,
-- 4 comment: navmcp.content.search.TIERS) below a position and from a floor on, newest first (the
-- order of search_hits' windows), each with its item, its updated_at and whether the query's
-- filters pass (find_items' conditions, a deleted item never passing). A position is a seq (an
-- item's, its tag rows', a comment's); an option's is (created_at, id). `walk`: the source's rows
-- newest first, each tested, stopping at the `n`-th match; else the GIN index's matches, sorted.
CREATE OR REPLACE FUNCTION navmcp.search_scan(studios text[], tier integer, walk boolean, want_q text, want_title text,
                                              want_out text, want_tag_word text, want_kind text, want_status text,
                                              want_tag text, want_at text, want_decision_kind text,
                                              below_seq bigint, below_at text, below_id text,
                                              floor_seq bigint, floor_at text, floor_id text, n integer)
RETURNS TABLE (pos bigint, pos_at text, pos_id text, item_id text, part text, updated_at text, passes boolean)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' SET jit = off SET max_parallel_workers_per_gather = 0 AS $f$
DECLARE
    mine text[] := ARRAY(SELECT unnest(studios) INTERSECT SELECT unnest(navmcp.my_studios()));
    words tsquery := to_tsquery('navmcp.search_words'::regconfig,
                                translate(CASE WHEN tier = 0 THEN want_title ELSE want_q END, 'ς', 'σ'));
    left_out tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(want_out, 'ς', 'σ'));
    source text;
    bounds text := '';
    ord text;
BEGIN
    IF tier IN (0, 2) THEN
        source := 'SELECT i.seq AS pos, NULL::text AS pos_at, NULL::text AS pos_id, i.id AS item_id, NULL::text AS part,'
                  ' i.fts AS words FROM public.items i WHERE i.studio_id = ANY ($1)';
    ELSIF tier = 1 THEN
        source := 'SELECT t.seq AS pos, NULL::text AS pos_at, NULL::text AS pos_id, t.item_id, NULL::text AS part,'
                  ' NULL::tsvector AS words FROM public.item_tags t WHERE t.studio_id = ANY ($1) AND t.tag = $3';
    ELSIF tier = 3 THEN
        source := 'SELECT NULL::bigint AS pos, o.created_at AS pos_at, o.id AS pos_id, o.decision_id AS item_id, o.id AS part,'
                  ' o.fts AS words FROM public.options o JOIN public.items d ON d.id = o.decision_id WHERE d.studio_id = ANY ($1)';
    ELSE
        source := 'SELECT c.seq AS pos, NULL::text AS pos_at, NULL::text AS pos_id, c.item_id, c.id AS part,'
                  ' c.fts AS words FROM public.comments c WHERE c.studio_id = ANY ($1)';
    END IF;
    IF tier = 3 THEN
        IF below_at IS NOT NULL THEN bounds := bounds || ' AND (o.created_at, o.id) < ($4, $5)'; END IF;
        IF floor_at IS NOT NULL THEN bounds := bounds || ' AND (o.created_at, o.id) >= ($7, $8)'; END IF;
        ord := 'ORDER BY o.created_at DESC, o.id DESC';
    ELSE
        IF below_seq IS NOT NULL THEN bounds := bounds || format(' AND %s.seq < $6', CASE tier WHEN 1 THEN 't' WHEN 4 THEN 'c' ELSE 'i' END); END IF;
        IF floor_seq IS NOT NULL THEN bounds := bounds || format(' AND %s.seq >= $9', CASE tier WHEN 1 THEN 't' WHEN 4 THEN 'c' ELSE 'i' END); END IF;
        ord := format('ORDER BY %s.seq DESC', CASE tier WHEN 1 THEN 't' WHEN 4 THEN 'c' ELSE 'i' END);
    END IF;
    IF tier = 1 THEN
        source := source || bounds || ' ' || ord || ' LIMIT $10';
    ELSIF walk THEN  -- newest first, each row tested (`IS TRUE`: a test no index answers)
        source := source || bounds || ' AND (' || CASE tier WHEN 3 THEN 'o' WHEN 4 THEN 'c' ELSE 'i' END
                  || '.fts @@ $2) IS TRUE ' || ord || ' LIMIT $10';
    ELSE  -- the index's matches (`+ 0`, `|| ''`: not the ordered read), sorted
        source := source || bounds || ' AND ' || CASE tier WHEN 3 THEN 'o' WHEN 4 THEN 'c' ELSE 'i' END || '.fts @@ $2 '
                  || replace(replace(ord, '.seq DESC', '.seq + 0 DESC'), 'o.created_at DESC', 'o.created_at || '''' DESC')
                  || ' LIMIT $10';
    END IF;
    RETURN QUERY EXECUTE
        'SELECT h.pos, h.pos_at, h.pos_id, h.item_id, h.part, i.updated_at,
                coalesce(i.deleted_at IS NULL
                         AND ($11 IS NULL OR i.kind = $11)
                         AND ($12 IS NULL OR ($12 = ''open'') = (i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > $13)))
                         AND ($14 IS NULL OR EXISTS (SELECT 1 FROM public.item_tags t WHERE t.item_id = i.id AND t.tag = $14))
                         AND ($15 IS NULL OR coalesce(i.decision_kind, ''acceptance'') = $15)
                         AND ($16::tsquery IS NULL OR NOT i.fts @@ $16), false)
           FROM (' || source || ') h JOIN public.items i ON i.id = h.item_id
          ORDER BY h.pos DESC, h.pos_at DESC, h.pos_id DESC'
        USING mine, words, want_tag_word, below_at, below_id, below_seq, floor_at, floor_id, floor_seq, n,
              want_kind, want_status, want_at, want_tag, want_decision_kind, left_out;
END $f$;
REVOKE ALL ON FUNCTION navmcp.search_scan(text[], integer, boolean, text, text, text, text, text, text, text, text, text,
                                          bigint, text, text, bigint, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_scan(text[], integer, boolean, text, text, text, text, text, text, text, text, text,
                                             bigint, text, text, bigint, text, text, integer) TO navmcp_app;

-- navmcp.search_oldest_since: the lowest seq of an item of the acting user's studios updated at
-- `since` or later (the index of (studio_id, updated_at, seq)): how far a tier is read to know its best.
CREATE OR REPLACE FUNCTION navmcp.search_oldest_since(studios text[], since text) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' SET jit = off SET max_parallel_workers_per_gather = 0 AS $f$
DECLARE
    found bigint;
BEGIN
    -- EXECUTE: planned with `since` (a generic plan reads every item); `+ 0`: not min(seq)'s walk by seq.
    EXECUTE 'SELECT min(i.seq + 0) FROM public.items i WHERE i.studio_id = ANY ($1) AND i.updated_at >= $2'
       INTO found USING ARRAY(SELECT unnest(studios) INTERSECT SELECT unnest(navmcp.my_studios())), since;
    RETURN found;
END $f$;
REVOKE ALL ON FUNCTION navmcp.search_oldest_since(text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_oldest_since(text[], text) TO navmcp_app;
