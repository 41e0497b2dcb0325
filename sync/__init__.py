"""Sync: outbox replay to TypeDB (write-through and ``sync push``, with a circuit breaker), shared-graph reads
and schema, the nightly job and its steps, and workspace import/export in the OpenClaw-MABOS layout."""
