-- mabos embedded store, migration 2: the embedding cache (derived data, local: not in the outbox).
-- One vector per (model, SHA-256 of the text), stored as `dimension` float32 values, little-endian.
-- A rowid table on purpose: rows of ~1.5 KiB are too wide for WITHOUT ROWID to pay off.

CREATE TABLE embeddings (
    model        TEXT NOT NULL,
    content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),
    dimension    INTEGER NOT NULL CHECK (dimension > 0),
    vector       BLOB NOT NULL CHECK (length(vector) = 4 * dimension),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (model, content_hash)
) STRICT;
