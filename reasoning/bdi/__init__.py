"""BDI maintenance (R5): belief chunking, conflict detection, stale-intention pruning, desire
re-prioritisation, conflict reports and the Sunday weekly summary — ``run_cycle`` / ``run_all``.
"""

from reasoning.bdi.chunking import CHUNK_SIZE, chunk_count, chunked
from reasoning.bdi.conflicts import (
    DEFAULT_FUNCTIONAL_PREDICATES,
    BeliefConflictIndex,
    belief_subject,
    detect_belief_conflicts,
    detect_fact_conflicts,
)
from reasoning.bdi.cycle import run_all, run_cycle
from reasoning.bdi.desires import desire_priority
from reasoning.bdi.intentions import STALL_PERIODS, stale_reason
from reasoning.bdi.models import Conflict, ConflictMember, CycleDetails, CycleResult, DesireChange, PrunedIntention

__all__ = [
    "CHUNK_SIZE",
    "DEFAULT_FUNCTIONAL_PREDICATES",
    "STALL_PERIODS",
    "BeliefConflictIndex",
    "Conflict",
    "ConflictMember",
    "CycleDetails",
    "CycleResult",
    "DesireChange",
    "PrunedIntention",
    "belief_subject",
    "chunk_count",
    "chunked",
    "desire_priority",
    "detect_belief_conflicts",
    "detect_fact_conflicts",
    "run_all",
    "run_cycle",
    "stale_reason",
]
