"""What ``memory_admit`` takes: candidate memories for admission control and dedup, declared once.

Apart from :mod:`kg.memory.requests` because the candidates are :class:`kg.memory.admission.MemoryCandidate`, whose
module brings numpy, which a recall's request must not import. The ``memory_admit`` tool is this model plus
``agent_id``; ``mabos memory admit`` generates its options from it (docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kg.memory.admission import MemoryCandidate
from kg.models.request import Request

#: The most candidates one admission takes.
MAX_CANDIDATES = 10_000
#: An admission control preset, or ``off`` (every candidate admitted).
Preset = Literal["balanced", "conservative", "high-recall", "off"]


class AdmitRequest(Request):
    """Candidate memories to offer to admission control and dedup."""

    candidates: list[MemoryCandidate] = Field(
        min_length=1,
        max_length=MAX_CANDIDATES,
        description="The candidate memories: content, type, importance, tags, store, scope, evidence (the "
        "conversation text each came from), observed_at, key (your own label, carried into the results).",
    )
    preset: Preset = Field(
        default="balanced",
        description="Admission control: balanced, conservative or high-recall; off admits every candidate.",
    )
    dry_run: bool = Field(default=False, description="Score and decide admission only; write nothing.")


__all__ = ["MAX_CANDIDATES", "AdmitRequest", "Preset"]
