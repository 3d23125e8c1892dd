-- Search at a million items (issue 41, item 6): the last word of a query matches as a prefix
-- ("plan" finds "planning"), and FTS5 answers a prefix query with no prefix index by merging the
-- whole doclist of every term it names before the newest hits can be taken: 8.6 ms for "plan"* at
-- 1M items (343,572 hits), 9 ms for "review"*, where a word alone takes 0.2 ms. Prefixes of 2 to 6
-- characters (what a person has typed of a word, or a whole short word; search.MIN_PREFIX is 2) are
-- indexed as terms of their own, so such a query walks one doclist newest first and stops at the
-- window (0.22-0.26 ms). Longer prefixes still merge. Same matches: a prefix index changes only how
-- FTS5 finds them. The cost is space: 107 MB of FTS data at 1M items becomes 561 MB (412 MB with
-- prefixes of 2-4 only, which left "review"* at 9 ms); the rebuild took 43 s there.
DROP TABLE items_fts;
CREATE VIRTUAL TABLE items_fts USING fts5(
    title, body, content = 'items', content_rowid = 'seq', tokenize = 'porter unicode61', prefix = '2 3 4 5 6'
);
INSERT INTO items_fts(items_fts) VALUES ('rebuild');
