-- mabos embedded store, migration 11: the facts' full-text index catches up when searched (issue 22).
-- Decision record: docs/decisions/2026-11-26-fact-search-catch-up.md.
--
-- Until now every write transaction that created facts also tokenized them into facts_fts (about a quarter of
-- a bulk load's SQLite time). Since this migration writers only insert rows; facts_fts is brought up to date
-- by the search itself: in one write transaction, every fact whose seq is above the mark below is indexed and
-- the mark moves to the highest seq (kg/store/sqlite/facts.py, catch_up_search). Facts are never deleted and
-- their text never changes, and seq grows with every insert (writers are serialized), so "above the mark" is
-- exactly "not indexed yet". The facts themselves, their outbox events and history are written and committed
-- as before: only the derived index lags, and no search ever sees it lagging.
--
-- Every fact present now was indexed by the writer that created it: the mark starts at the highest seq.

CREATE TABLE search_marks (
    name TEXT PRIMARY KEY,      -- the index: 'facts_fts'
    seq  INTEGER NOT NULL       -- every row of its table with seq <= this is in the index
) STRICT, WITHOUT ROWID;

INSERT INTO search_marks(name, seq) SELECT 'facts_fts', COALESCE(MAX(seq), 0) FROM facts;
