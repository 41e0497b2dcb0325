-- mabos embedded store, migration 3: what the vector index (.mabos/vectors/) has not seen yet.
-- The index is derived data kept outside the database; this queue, filled by triggers in the same
-- transaction as every insert, content change or delete of a memory item, is the source of truth for
-- what it still lacks. The indexing pass embeds the queued items, saves the index, then deletes the
-- queue rows it covered: a crash in between only repeats work (adding a vector is idempotent by uid).
-- store_meta.store_id names this database: an index built for another database is rebuilt, not used.

CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
INSERT INTO store_meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))));

CREATE TABLE vector_queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL
) STRICT;
INSERT INTO vector_queue(uid) SELECT uid FROM memory_items ORDER BY seq;

CREATE TRIGGER vector_queue_insert AFTER INSERT ON memory_items BEGIN
    INSERT INTO vector_queue(uid) VALUES (NEW.uid);
END;
CREATE TRIGGER vector_queue_update AFTER UPDATE OF content ON memory_items BEGIN
    INSERT INTO vector_queue(uid) VALUES (NEW.uid);
END;
CREATE TRIGGER vector_queue_delete AFTER DELETE ON memory_items BEGIN
    INSERT INTO vector_queue(uid) VALUES (OLD.uid);
END;
