-- mabos embedded store, migration 4: full-text search with stemming and conversational context.
-- memory_items.context holds, for an episodic item (observation, event), the text of up to two earlier
-- episodic items of the same agent and scope stored within an hour of it (set by the adapter at insert);
-- it is indexed as a third FTS column that recall weights at half the content's, so a question finds the
-- turn that answers it even when the words it shares are in the turns just before.
-- The Porter stemmer makes "running" match "run". Items stored before this migration keep an empty
-- context; the index itself is rebuilt here from the table.

ALTER TABLE memory_items ADD COLUMN context TEXT NOT NULL DEFAULT '';
CREATE INDEX memory_items_conversation ON memory_items(agent_id, scope, seq);  -- an item's predecessors

DROP TRIGGER memory_fts_insert;
DROP TRIGGER memory_fts_delete;
DROP TRIGGER memory_fts_update;
DROP TABLE memory_fts;

CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, tags, context, content='memory_items', content_rowid='seq', tokenize='porter unicode61'
);
INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');

CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_fts(rowid, content, tags, context) VALUES (NEW.seq, NEW.content, NEW.tags, NEW.context);
END;
CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content, tags, context)
        VALUES ('delete', OLD.seq, OLD.content, OLD.tags, OLD.context);
END;
CREATE TRIGGER memory_fts_update AFTER UPDATE OF content, tags, context ON memory_items BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content, tags, context)
        VALUES ('delete', OLD.seq, OLD.content, OLD.tags, OLD.context);
    INSERT INTO memory_fts(rowid, content, tags, context) VALUES (NEW.seq, NEW.content, NEW.tags, NEW.context);
END;
