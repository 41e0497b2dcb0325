-- mabos embedded store, migration 10: bulk fact ingest (issue 22). Decision record:
-- docs/decisions/2026-11-26-facts-bulk-schema.md. Two changes; both keep every query indexed and every
-- outbox event replayable.
--
-- 1. Indexes. facts_subject_predicate (subject, predicate) duplicated the live-triple key for every query of
--    live facts once that key leads with the subject: the unique live-triple index is now
--    (subject, predicate, object, scope) (the same set of columns, so the upsert's ON CONFLICT target is
--    unchanged) and (subject, predicate) is kept only for retracted rows, a partial index a bulk insert of live
--    facts never touches. Queries that include retracted facts (include_retracted, as_of) read both halves
--    (kg/store/sqlite/facts_sql.py). A new live fact now updates five indexes instead of six.
--
-- 2. Outbox. A fact created without lineage (derived = 0) gets a compact event: payload '' instead of the
--    fact's ~590-byte JSON. The table is renamed outbox_log and `outbox` becomes a view over it that expands a
--    compact payload to the fact's JSON as it was created: the immutable columns from the row, the mutable
--    ones (confidence, source, validity, rule, updated_by/updated_at) from the fact's first history row when it
--    was updated since (the facts_keep_history trigger keeps every earlier version), never retracted, no
--    lineage. So every reader (push/replay, the TypeDB writer, `mabos graph sql`, tests) sees the events it
--    saw before. object_kind is not in the history: an event replayed after a later change of object_kind
--    carries the current one (the later change's own event carries the same value; the end state is equal).
--    Doubles are written with 17 significant digits (exact; 1.0 and 0.0 as such).

DROP INDEX facts_subject_predicate;
DROP INDEX facts_live_triple;
CREATE UNIQUE INDEX facts_live_triple ON facts(subject, predicate, object, scope) WHERE retracted_at IS NULL;
CREATE INDEX facts_retracted_subject ON facts(subject, predicate) WHERE retracted_at IS NOT NULL;

ALTER TABLE outbox RENAME TO outbox_log;

CREATE VIEW outbox(seq, aggregate, op, record_uid, agent_id, scope, payload, created_at, acked_at) AS
SELECT o.seq, o.aggregate, o.op, o.record_uid, o.agent_id, o.scope,
       CASE WHEN o.payload <> '' OR o.aggregate <> 'fact' THEN o.payload ELSE (
           SELECT replace(
               json_object(
                   'uid', f.uid, 'agent_id', f.agent_id, 'scope', f.scope, 'subject', f.subject,
                   'predicate', f.predicate, 'object', f.object, 'object_kind', f.object_kind, 'confidence', '#',
                   'source', COALESCE(h.source, f.source),
                   'valid_from', CASE WHEN h.seq IS NULL THEN f.valid_from ELSE h.valid_from END,
                   'valid_until', CASE WHEN h.seq IS NULL THEN f.valid_until ELSE h.valid_until END,
                   'created_at', f.created_at,
                   'updated_at', COALESCE(h.sys_from, f.updated_at),
                   'updated_by', COALESCE(h.updated_by, f.updated_by),
                   'retracted_at', NULL, 'retracted_by', NULL,
                   'rule_id', CASE WHEN h.seq IS NULL THEN f.rule_id ELSE h.rule_id END,
                   'derived_from', json('[]')
               ),
               '"confidence":"#"',
               '"confidence":' || CASE COALESCE(h.confidence, f.confidence)
                   WHEN 1.0 THEN '1.0' WHEN 0.0 THEN '0.0'
                   ELSE printf('%!.17g', COALESCE(h.confidence, f.confidence)) END
           )
           FROM facts f
           LEFT JOIN fact_history h ON h.seq = (SELECT MIN(seq) FROM fact_history WHERE uid = f.uid)
           WHERE f.uid = o.record_uid
       ) END,
       o.created_at, o.acked_at
FROM outbox_log o;

CREATE TRIGGER outbox_insert INSTEAD OF INSERT ON outbox
BEGIN
    INSERT INTO outbox_log(aggregate, op, record_uid, agent_id, scope, payload, created_at, acked_at)
    VALUES (NEW.aggregate, NEW.op, NEW.record_uid, NEW.agent_id, NEW.scope, NEW.payload, NEW.created_at,
            NEW.acked_at);
END;

CREATE TRIGGER outbox_update INSTEAD OF UPDATE OF acked_at ON outbox
BEGIN
    UPDATE outbox_log SET acked_at = NEW.acked_at WHERE seq = OLD.seq;
END;

CREATE TRIGGER outbox_delete INSTEAD OF DELETE ON outbox
BEGIN
    DELETE FROM outbox_log WHERE seq = OLD.seq;
END;
