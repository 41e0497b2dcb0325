-- mabos embedded store, migration 5: rules and cases (reasoning, issue 5).
-- A rule or a case is stored whole as JSON (the pydantic model validates it on the way in and out); the
-- columns beside it are what lists and filters need. Both are replicated through the outbox like every
-- other record (aggregates 'rule' and 'case').

CREATE TABLE rules (
    seq        INTEGER PRIMARY KEY,
    uid        TEXT NOT NULL UNIQUE,
    agent_id   TEXT NOT NULL REFERENCES agents(agent_id),
    scope      TEXT NOT NULL,
    name       TEXT NOT NULL,
    type       TEXT NOT NULL CHECK (type IN ('inference', 'constraint', 'policy')),
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    domain     TEXT NOT NULL,
    body       TEXT NOT NULL,  -- the Rule as JSON
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX rules_scope ON rules(scope, type, enabled);

CREATE TABLE cases (
    seq           INTEGER PRIMARY KEY,
    uid           TEXT NOT NULL UNIQUE,
    agent_id      TEXT NOT NULL REFERENCES agents(agent_id),
    scope         TEXT NOT NULL,
    situation_key TEXT NOT NULL,  -- identical situations share it: one case per situation and scope
    success       INTEGER NOT NULL CHECK (success IN (0, 1)),
    body          TEXT NOT NULL,  -- the Case as JSON
    created_at    TEXT NOT NULL,
    UNIQUE (scope, situation_key)
) STRICT;
CREATE INDEX cases_scope ON cases(scope, created_at);
