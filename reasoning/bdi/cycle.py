"""The BDI maintenance cycle (R5) of one agent, or of every agent: ``mabos bdi cycle``.

One cycle, in order:

1. **Belief chunking and conflicts** — the agent's active beliefs, 50 per chunk, go into a
   subject index; the facts it can see with a functional predicate are grouped likewise
   (:mod:`reasoning.bdi.conflicts`).
2. **Stale intentions** — dropped by deadline and commitment strategy (:mod:`reasoning.bdi.intentions`).
3. **Desires** — priorities recomputed from urgency and motivated goals (:mod:`reasoning.bdi.desires`).
4. **Conflict report** — ``memory/bdi-conflicts/YYYY-MM-DD.md`` when anything conflicts.
5. **Weekly summaries** — on a Sunday (the clock's UTC date) the week's hierarchy is built.

The cycle reads and writes through the workspace services (scope-checked, outboxed), never the
store directly, and takes its time from an injected clock.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from kg.clock import Clock
from kg.errors import InputError
from kg.models import BDINode, Fact, NodeKind, to_utc
from kg.workspace import Workspace
from reasoning.bdi.chunking import CHUNK_SIZE, chunked
from reasoning.bdi.conflicts import (
    DEFAULT_FUNCTIONAL_PREDICATES,
    MIN_FACT_CONFIDENCE,
    BeliefConflictIndex,
    conflict_pairs,
    detect_fact_conflicts,
)
from reasoning.bdi.desires import reprioritize_desires
from reasoning.bdi.intentions import prune_stale_intentions
from reasoning.bdi.models import CycleDetails, CycleResult
from reasoning.bdi.report import write_report

#: At most this many active beliefs, and facts per functional predicate, are read per cycle.
MAX_RECORDS = 100_000
SUNDAY = 6


def _escape(term: str) -> str:
    """A fact-query pattern matching ``term`` literally (``*`` is the query wildcard)."""
    return term.replace("\\", "\\\\").replace("*", "\\*")


def functional_facts(ws: Workspace, agent_id: str, predicates: Collection[str], min_confidence: float) -> list[Fact]:
    """Current (unretracted) facts visible to the agent whose predicate is one of ``predicates``."""
    facts: list[Fact] = []
    for predicate in sorted(predicates):
        facts += ws.facts.query(agent_id, predicate=_escape(predicate), min_confidence=min_confidence,
                                limit=MAX_RECORDS)  # fmt: skip
    return facts


def _index_beliefs(beliefs: list[BDINode]) -> tuple[BeliefConflictIndex, int]:
    index, chunks = BeliefConflictIndex(), 0
    for chunk in chunked(beliefs, CHUNK_SIZE):
        index.add(chunk)
        chunks += 1
    return index, chunks


def _weekly_hierarchy(ws: Workspace, agent_id: str, clock: Clock, now: datetime) -> list[str] | None:
    """On a Sunday, build the week's summaries; the summaries written, or None on other days."""
    if now.weekday() != SUNDAY:
        return None
    # Lazy: only Sundays need the hierarchy module (and its daily-log parsing).
    from kg.memory.hierarchy import build_hierarchy  # noqa: PLC0415

    built = build_hierarchy(ws.path, agent_id, scope="week", clock=clock)
    return [str(path) for path in built.written]


def run_cycle(
    ws: Workspace,
    agent_id: str,
    *,
    clock: Clock | None = None,
    functional_predicates: Collection[str] | None = None,
    min_fact_confidence: float = MIN_FACT_CONFIDENCE,
) -> CycleResult:
    """Run one maintenance cycle for ``agent_id`` (NotFoundError for an unknown agent).

    ``clock`` defaults to the workspace's; ``functional_predicates`` to
    :data:`~reasoning.bdi.conflicts.DEFAULT_FUNCTIONAL_PREDICATES`.
    """
    if not 0.0 <= min_fact_confidence <= 1.0:
        raise InputError("min_fact_confidence", "must be between 0 and 1")
    clock = clock or ws.clock
    now = to_utc(clock.now())
    ws.scopes.require_agent(agent_id)
    agent = ws.agents.get(agent_id)
    # Every active belief the agent may read (its own, global, its shared scopes), as `graph query belief-conflicts`
    # sees them: a conflict with another agent's belief in a shared project scope is the agent's concern too.
    beliefs = ws.bdi.list(agent_id, NodeKind.BELIEF, status="active", limit=MAX_RECORDS)
    index, chunks = _index_beliefs(beliefs)
    predicates = DEFAULT_FUNCTIONAL_PREDICATES if functional_predicates is None else functional_predicates
    facts = functional_facts(ws, agent_id, predicates, min_fact_confidence)
    conflicts = index.conflicts() + detect_fact_conflicts(
        facts, functional_predicates=predicates, min_confidence=min_fact_confidence
    )
    pruned = prune_stale_intentions(ws, agent_id, agent.commitment_strategy, now)
    changes = reprioritize_desires(ws, agent_id)
    report = write_report(ws.path, agent_id, conflicts, now) if conflicts else None
    weekly = _weekly_hierarchy(ws, agent_id, clock, now)
    details = CycleDetails(
        commitment_strategy=agent.commitment_strategy.value, beliefs=len(beliefs), pruned_intentions=pruned,
        desire_changes=changes, conflicts=conflicts, report_path=str(report) if report else None,
        hierarchy_built=weekly is not None, weekly_summaries=weekly or [],
    )  # fmt: skip
    return CycleResult(agent_id=agent_id, stale_intentions_pruned=len(pruned), desires_prioritized=len(changes),
                       conflicts_detected=conflict_pairs(conflicts), chunks_processed=chunks, timestamp=now,
                       details=details)  # fmt: skip


def run_all(
    ws: Workspace,
    *,
    clock: Clock | None = None,
    functional_predicates: Collection[str] | None = None,
    min_fact_confidence: float = MIN_FACT_CONFIDENCE,
) -> list[CycleResult]:
    """Run the cycle for every agent of the workspace, in agent-id order."""
    agents = sorted(a.agent_id for a in ws.agents.list())
    return [
        run_cycle(
            ws,
            agent_id,
            clock=clock,
            functional_predicates=functional_predicates,
            min_fact_confidence=min_fact_confidence,
        )
        for agent_id in agents
    ]
