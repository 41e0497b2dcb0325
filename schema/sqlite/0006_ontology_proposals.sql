-- mabos embedded store, migration 6: ontology proposals (ontology issue).
-- A proposal is stored whole as JSON (the pydantic model, with its status history, validates it on the way
-- in and out); the columns beside it are what lists and filters need. Every change is replicated through
-- the outbox (aggregate 'proposal', op 'upsert' with the whole proposal).

CREATE TABLE ontology_proposals (
    seq        INTEGER PRIMARY KEY,
    uid        TEXT NOT NULL UNIQUE,
    agent_id   TEXT NOT NULL REFERENCES agents(agent_id),  -- the proposer
    scope      TEXT NOT NULL,
    domain     TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    status     TEXT NOT NULL
               CHECK (status IN ('pending', 'validated', 'invalid', 'approved-merged', 'rejected')),
    body       TEXT NOT NULL,  -- the OntologyProposal as JSON
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX ontology_proposals_domain ON ontology_proposals(domain, status);
CREATE INDEX ontology_proposals_scope ON ontology_proposals(scope);
