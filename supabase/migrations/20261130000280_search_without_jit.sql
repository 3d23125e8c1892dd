-- A search at a million items was planned at a cost past jit_above_cost (100,000), so PostgreSQL
-- compiled its dynamic query (navmcp.search_hits, 20261130000242) with LLVM on every call: 193
-- functions, 53 ms of an 86 ms search for a word no item has ("zebra"), against a statement whose
-- work is a few index reads. Compiling pays off for long analytic scans, never for a query made
-- anew each call and run once; at 1K items the cost stays under the threshold, so a search grew
-- 20× from the compilation alone. Off for this function only (a setting the app role may change
-- for itself: USERSET), the rest keeps the server's.
ALTER FUNCTION navmcp.search_hits(text[], text, text, text, text, text, text, text, text, integer, text) SET jit = off;
