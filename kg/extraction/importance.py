"""The spec's importance formula (it lives in :mod:`kg.memory.importance`, where the memory service
recalculates it on access, on a related memory, on a tag change; the nightly step runs the maintenance pass)."""

from __future__ import annotations

from kg.memory.importance import TYPE_WEIGHTS, content_score, importance

__all__ = ["TYPE_WEIGHTS", "content_score", "importance"]
