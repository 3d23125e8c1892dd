-- Search found on SQLite what it missed here. The `fts` columns were indexed with the 'english'
-- configuration, which drops stop words and keeps accents, where SQLite's FTS5 (`porter
-- unicode61`) keeps every word and strips diacritics: a note titled "Other", "Who is in?" or
-- "Before and after" could not be found by its words, "cafe" missed "Café", and a query's stop
-- words were dropped from it, so "plan the" matched more than it did on SQLite. Both stores now
-- index alike (tests/test_search_parity.py): `navmcp.search_words` stems like English (snowball,
-- with no stop-word list: every word is kept) behind `unaccent` (accents go before stemming), and
-- a Greek final "ς" is read as "σ" in the columns and the query, as FTS5 folds it (PostgreSQL
-- lowercases "Σ" to "σ" wherever it stands, so "Σίσυφος" and "ΣΊΣΥΦΟΣ" missed each other).
--
-- unaccent is a trusted extension (PostgreSQL 13+): the database owner may create it. It goes
-- where Supabase keeps extensions (schema `extensions`) when there is one, else in `public`; if it
-- is already installed, wherever that is. The configuration refers to a dictionary of its own,
-- made from the extension's template, so it holds whichever schema that is.
DO $$
DECLARE
    home text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') THEN
        IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'extensions') THEN
            CREATE EXTENSION unaccent SCHEMA extensions;
        ELSE
            CREATE EXTENSION unaccent SCHEMA public;
        END IF;
    END IF;
    SELECT n.nspname INTO home
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
    EXECUTE format('CREATE TEXT SEARCH DICTIONARY navmcp.unaccent (TEMPLATE = %I.unaccent, RULES = unaccent)', home);
END
$$;
CREATE TEXT SEARCH DICTIONARY navmcp.english_stem_all (TEMPLATE = pg_catalog.snowball, LANGUAGE = english);
-- english's parser and mappings (numbers, e-mail addresses, URLs, host and file names as `simple`
-- lexemes), with its word types through unaccent and the stemmer that keeps every word; the
-- words that hold digits through unaccent and `simple`.
CREATE TEXT SEARCH CONFIGURATION navmcp.search_words (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION navmcp.search_words
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH navmcp.unaccent, navmcp.english_stem_all;
ALTER TEXT SEARCH CONFIGURATION navmcp.search_words
    ALTER MAPPING FOR numword, numhword, hword_numpart WITH navmcp.unaccent, pg_catalog.simple;

-- The columns made again with the new configuration (PostgreSQL 15 cannot change a generated
-- column's expression): each table is rewritten once, under its ACCESS EXCLUSIVE lock, and its
-- existing rows indexed anew; both stay locked until the migration commits (11.6 s for 100,000
-- seeded items and 30,000 comments on a 2-CPU machine: search and writes wait). Weights as before: title A, body B (ts_rank weighs A above B, as
-- bm25(items_fts, 5.0, 1.0) does on SQLite). The GIN indexes went with the old columns.
-- navmcp_app reads them through its table-wide SELECT (20261122000003), and writes neither
-- (its INSERT and UPDATE grants name columns, 20261124000014).
ALTER TABLE items
    DROP COLUMN fts,
    ADD COLUMN fts TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('navmcp.search_words'::regconfig, translate(title, 'ς', 'σ')), 'A') ||
        setweight(to_tsvector('navmcp.search_words'::regconfig, translate(body, 'ς', 'σ')), 'B')) STORED;
CREATE INDEX items_fts ON items USING GIN (fts);
ALTER TABLE comments
    DROP COLUMN fts,
    ADD COLUMN fts TSVECTOR GENERATED ALWAYS AS (
        to_tsvector('navmcp.search_words'::regconfig, translate(body, 'ς', 'σ'))) STORED;
CREATE INDEX comments_fts ON comments USING GIN (fts);

-- As in 20261124000018, but for how the query is read: as the columns' words are.
CREATE OR REPLACE FUNCTION navmcp.search_page(studio text, query text, lim integer, skip integer,
                                              OUT total bigint, OUT item_ids text[], OUT comment_ids text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    q tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(query, 'ς', 'σ'));
BEGIN
    SELECT 0, '{}', '{}' INTO total, item_ids, comment_ids;
    IF NOT studio = ANY (navmcp.my_studios()) THEN
        RETURN;
    END IF;
    -- Counted apart from the ranking: a count needs no ts_rank.
    total := (SELECT count(*) FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q)
           + (SELECT count(*) FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q);
    SELECT coalesce(array_agg(h.item_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.comment_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST), '{}')
      INTO item_ids, comment_ids
      FROM (SELECT i.id AS item_id, NULL::text AS comment_id, ts_rank(i.fts, q) AS rank
              FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q
            UNION ALL
            SELECT c.item_id, c.id, ts_rank(c.fts, q)
              FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q
             ORDER BY rank DESC, item_id, comment_id NULLS FIRST LIMIT lim OFFSET skip) h;
END $$;
REVOKE ALL ON FUNCTION navmcp.search_page(text, text, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_page(text, text, integer, integer) TO navmcp_app;
