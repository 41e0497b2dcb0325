-- mabos embedded store, migration 9: what an embedded replay target has applied, per record (issue 18).
-- sync/replay.py (EmbeddedTarget) keeps, for each record it replays, the source outbox position (seq) of the
-- last event it applied. Outbox positions only grow, so an event at or below it is a resend and is skipped:
-- two changes of one record at the same instant (equal updated_at) no longer flip-flop on a resend. Local to
-- the target (never replicated); a store that is no replay target leaves the table empty.

CREATE TABLE replay_versions (
    aggregate  TEXT NOT NULL,
    record_uid TEXT NOT NULL,
    seq        INTEGER NOT NULL,  -- the source outbox position of the last event applied to the record
    PRIMARY KEY (aggregate, record_uid)
) STRICT, WITHOUT ROWID;
