"""Outbox replay to TypeDB, nightly jobs, workspace import/export (later issues)."""
