-- mabos embedded store, migration 8: API tokens (issue 18). A token lets a remote caller act as one agent
-- (the MCP server over HTTP, later the web console). Only the SHA-256 of the secret is stored; the secret is
-- shown once at creation. Tokens are local credentials: they are never replicated (no outbox event).

CREATE TABLE api_tokens (
    token_id    TEXT PRIMARY KEY,                                -- 12 hex digits, part of the secret's text
    agent_id    TEXT NOT NULL REFERENCES agents(agent_id),       -- the agent a caller with it acts as
    secret_hash TEXT NOT NULL,                                   -- sha256 hex of the whole secret
    label       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    expires_at  TEXT,                                            -- NULL: never
    revoked_at  TEXT                                             -- NULL: live
) STRICT;
CREATE INDEX api_tokens_agent ON api_tokens(agent_id);
