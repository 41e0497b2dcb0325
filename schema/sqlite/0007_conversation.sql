-- mabos embedded store, migration 7: conversation memory (issue 8). Conversations of an agent, their
-- immutable sequenced messages, and the summary DAG over them (leaf summaries cover messages, condensed
-- summaries cover summaries of the depth below). Messages, summaries and their edges never change once
-- written: triggers refuse UPDATE and DELETE. Every message and summary is full-text indexed twice: words
-- (unicode61) and trigrams (substrings, for CJK text that has no spaces between words).

CREATE TABLE conversations (
    uid         TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES agents(agent_id),
    scope       TEXT NOT NULL,
    session_key TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    active      INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (agent_id, session_key)
) STRICT;
CREATE INDEX conversations_agent_updated ON conversations(agent_id, updated_at);

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY,  -- the full-text indexes' rowid
    uid              TEXT NOT NULL UNIQUE,
    conversation_uid TEXT NOT NULL REFERENCES conversations(uid),
    seq              INTEGER NOT NULL CHECK (seq >= 0),
    role             TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content          TEXT NOT NULL,
    token_count      INTEGER NOT NULL CHECK (token_count >= 0),
    tool_call_id     TEXT,
    name             TEXT,
    agent_id         TEXT NOT NULL REFERENCES agents(agent_id),
    scope            TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    UNIQUE (conversation_uid, seq)
) STRICT;
CREATE INDEX messages_conversation_time ON messages(conversation_uid, created_at);

CREATE TABLE summaries (
    id                 INTEGER PRIMARY KEY,  -- the full-text indexes' rowid
    uid                TEXT NOT NULL UNIQUE,
    conversation_uid   TEXT NOT NULL REFERENCES conversations(uid),
    kind               TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
    depth              INTEGER NOT NULL CHECK (depth >= 0),
    content            TEXT NOT NULL,
    token_count        INTEGER NOT NULL CHECK (token_count >= 0),
    source_token_count INTEGER NOT NULL CHECK (source_token_count >= 0),
    method             TEXT NOT NULL CHECK (method IN ('llm', 'extractive')),
    model              TEXT,
    earliest_at        TEXT NOT NULL,
    latest_at          TEXT NOT NULL,
    descendant_count   INTEGER NOT NULL CHECK (descendant_count >= 1),
    agent_id           TEXT NOT NULL REFERENCES agents(agent_id),
    scope              TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    CHECK ((kind = 'leaf') = (depth = 0)),
    CHECK (latest_at >= earliest_at)
) STRICT;
CREATE INDEX summaries_conversation ON summaries(conversation_uid, depth, earliest_at);
CREATE INDEX summaries_conversation_time ON summaries(conversation_uid, earliest_at);

-- What a summary covers: messages (leaf) or summaries one depth below (condensed), in order. A node is
-- covered at most once (UNIQUE child_uid): the DAG is a forest whose roots are the uncovered summaries.
CREATE TABLE summary_edges (
    parent_uid TEXT NOT NULL REFERENCES summaries(uid),
    child_uid  TEXT NOT NULL UNIQUE,
    position   INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (parent_uid, position)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER messages_no_update BEFORE UPDATE ON messages BEGIN
    SELECT RAISE(ABORT, 'messages are immutable');
END;
CREATE TRIGGER messages_no_delete BEFORE DELETE ON messages BEGIN
    SELECT RAISE(ABORT, 'messages are immutable');
END;
CREATE TRIGGER summaries_no_update BEFORE UPDATE ON summaries BEGIN
    SELECT RAISE(ABORT, 'summaries are immutable');
END;
CREATE TRIGGER summaries_no_delete BEFORE DELETE ON summaries BEGIN
    SELECT RAISE(ABORT, 'summaries are immutable');
END;
CREATE TRIGGER summary_edges_no_update BEFORE UPDATE ON summary_edges BEGIN
    SELECT RAISE(ABORT, 'summary edges are immutable');
END;
CREATE TRIGGER summary_edges_no_delete BEFORE DELETE ON summary_edges BEGIN
    SELECT RAISE(ABORT, 'summary edges are immutable');
END;

-- Full-text indexes (external content): rows are only ever inserted, so insert triggers keep them whole.
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id', tokenize='unicode61');
CREATE VIRTUAL TABLE messages_trigram USING fts5(
    content, content='messages', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (NEW.id, NEW.content);
    INSERT INTO messages_trigram(rowid, content) VALUES (NEW.id, NEW.content);
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    content, content='summaries', content_rowid='id', tokenize='unicode61'
);
CREATE VIRTUAL TABLE summaries_trigram USING fts5(
    content, content='summaries', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, content) VALUES (NEW.id, NEW.content);
    INSERT INTO summaries_trigram(rowid, content) VALUES (NEW.id, NEW.content);
END;
