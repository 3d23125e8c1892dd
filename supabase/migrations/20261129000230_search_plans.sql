-- A one-note search took ~45 ms at 100k items (issue 40, item 3): search_hits, a SQL function with a
-- SET clause, is never inlined, and PostgreSQL plans a SQL function's body once for any arguments
-- (a generic plan). Not knowing that `mine` is one studio, it scanned every comment by seq and the
-- options' GIN index for the prefix in all studios. Without the SET clause it is inlined into
-- find_items' query (as its owner: find_items is SECURITY DEFINER with search_path '', and the body
-- names every table and the text search configuration by schema; its functions are pg_catalog's,
-- and EXECUTE is still revoked from PUBLIC, so nobody else calls it), and find_items plans that
-- query for each call's own values.
ALTER FUNCTION navmcp.search_hits(text[], text, text, text, text, text, text, text, text, integer, text)
    RESET search_path;
ALTER FUNCTION navmcp.find_items(text[], text, text, text, text, text, text, text, text, integer, integer, integer, text)
    SET plan_cache_mode = force_custom_plan;
