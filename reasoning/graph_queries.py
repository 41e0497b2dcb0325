"""Cross-agent graph queries (``mabos graph query NAME``), the same on every backend.

A backend (:class:`kg.ports.GraphQueryBackend`) answers small candidate questions: open goals with a
deadline, active beliefs, the edges of one relation kind, lineage links, lineage records. Everything
else happens here, in Python, for every backend alike: schedule arithmetic, path enumeration, conflict
grouping (:mod:`reasoning.bdi.conflicts`), scope filtering of lineage, dependency analysis. So the
results are identical for the same data, and the contract tests check it.

Without an agent a query sees every scope (the operator's view across all agents); with one it sees
what that agent may read (:meth:`kg.scopes.ScopePolicy.readable`). Docs: ``docs/graph-queries.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.models import Belief, RelationKind, parse
from kg.ports import GraphEdgeRow, GraphNodeRow, GraphQueryBackend, LineageRecordRow
from kg.scopes import ScopePolicy
from reasoning.bdi.conflicts import BeliefConflictIndex, belief_subject, normalize_text
from reasoning.graph_query_models import (
    AffectedGoal,
    BeliefConflictResult,
    BeliefConflictsParams,
    BeliefHolder,
    BeliefHoldersParams,
    BeliefRef,
    BlockedStep,
    BlockedStepsParams,
    GoalBehind,
    GoalsBehindParams,
    GraphQueryResult,
    LineageNode,
    LineageParams,
    LineageRelation,
    NodeRef,
    PathResult,
    PathsParams,
)

#: Relations a path follows, from source to target: the means-ends direction of the BDI graph.
PATH_RELATIONS: dict[str, tuple[RelationKind, ...]] = {
    "belief": (RelationKind.BELIEF_SUPPORTS_GOAL,),
    "desire": (RelationKind.DESIRE_MOTIVATES_GOAL,),
    "goal": (RelationKind.GOAL_DECOMPOSITION, RelationKind.GOAL_REQUIRES_PLAN),
    "plan": (RelationKind.PLAN_CONTAINS_STEP,),
    "plan_step": (),
}
#: Step statuses that still have work to do, and dependency statuses that release a dependent step.
OPEN_STEP_STATUSES = frozenset({"pending", "in_progress"})
SATISFIED_STEP_STATUSES = frozenset({"done", "skipped"})
#: Paths enumerated before giving up (the result then says truncated).
MAX_ENUMERATED_PATHS = 100_000
_Path = tuple[tuple[GraphNodeRow, ...], tuple[str, ...]]  # nodes, relation kinds between them


def _belief_ref(row: GraphNodeRow) -> BeliefRef:
    return BeliefRef(uid=row.uid, agent_id=row.agent_id, scope=row.scope, content=row.content,
                     certainty=row.certainty)  # fmt: skip


def expected_progress(created_at: datetime, deadline: datetime, at: datetime) -> float:
    """Share of the time from creation to deadline that has passed at ``at`` (0..1; 1 once due)."""
    total = (deadline - created_at).total_seconds()
    if total <= 0:
        return 1.0
    return min(1.0, max(0.0, (at - created_at).total_seconds() / total))


@dataclass(frozen=True)
class QuerySpec:
    """One catalogue entry: its parameter model and the method that answers it."""

    params: type[BaseModel]
    run: Callable[[GraphQueries, Any, list[str] | None, datetime], tuple[list[Any], bool]]
    summary: str


class GraphQueries:
    """Runs the catalogue's queries on one backend, with an optional agent's visibility."""

    def __init__(self, backend: GraphQueryBackend, policy: ScopePolicy, clock: Clock) -> None:
        self.backend = backend
        self.policy = policy
        self.clock = clock

    def run(self, name: str, parameters: dict[str, Any], *, agent: str | None = None) -> GraphQueryResult[Any]:
        """Validate ``parameters`` for query ``name`` and answer it (every scope when ``agent`` is None)."""
        spec = CATALOGUE.get(name)
        if spec is None:
            raise InputError("query", f"must be one of {', '.join(CATALOGUE)}, got {name[:80]!r}")
        params = parse(spec.params, {k: v for k, v in parameters.items() if v is not None})
        scopes = self.policy.readable(agent) if agent is not None else None
        at = getattr(params, "at", None) or self.clock.now()
        results, truncated = spec.run(self, params, scopes, at)
        return GraphQueryResult[Any](query=name, source=self.backend.source, agent=agent, scopes=scopes, at=at,
                                     parameters=params.model_dump(mode="json", exclude_none=True),
                                     count=len(results), truncated=truncated, results=results)  # fmt: skip

    # -------------------------------------------------------------------------------- goals-behind

    def goals_behind(self, p: GoalsBehindParams, scopes: list[str] | None, at: datetime) -> tuple[list[Any], bool]:
        """Open goals whose progress is below the elapsed share of their time, most behind first."""
        found = []
        for goal in self.backend.open_goals(scopes=scopes):
            if goal.deadline is None or goal.created_at is None:
                continue
            expected = expected_progress(goal.created_at, goal.deadline, at)
            progress = goal.progress or 0.0
            gap = round(expected - progress, 6)  # rounded: the same float on every backend and platform
            if gap > p.tolerance:
                found.append(GoalBehind(uid=goal.uid, agent_id=goal.agent_id, scope=goal.scope, content=goal.content,
                                        status=goal.status, priority=goal.priority, progress=progress,
                                        expected_progress=round(expected, 6), gap=gap, created_at=goal.created_at,
                                        deadline=goal.deadline, overdue=at >= goal.deadline))  # fmt: skip
        found.sort(key=lambda g: (-g.gap, g.deadline, g.uid))
        return found[: p.limit], len(found) > p.limit

    # -------------------------------------------------------------------------------- paths

    def paths(self, p: PathsParams, scopes: list[str] | None, _at: datetime) -> tuple[list[Any], bool]:
        """Directed simple paths from the start (kind or node) to the end (kind or node), by node uids."""
        start_kind, _, start_uid = p.start.partition(":")
        end_kind, _, end_uid = p.to.partition(":")
        partial: list[_Path] = []
        found: list[_Path] = []
        for depth in range(p.max_depth):
            if depth == 0:
                edges = self._edges_from({start_kind: [start_uid] if start_uid else None}, scopes)
                partial = [((e.source, e.target), (e.kind,)) for e in edges]
            else:
                frontier: dict[str, list[str]] = {}
                for nodes, _rels in partial:
                    frontier.setdefault(nodes[-1].kind, []).append(nodes[-1].uid)
                partial = _extend(partial, self._edges_from(frontier, scopes))
            found += [(n, r) for n, r in partial if n[-1].kind == end_kind and end_uid in ("", n[-1].uid)]
            if not partial or len(found) + len(partial) > MAX_ENUMERATED_PATHS:
                break
        found.sort(key=lambda path: [n.uid for n in path[0]])
        results = [PathResult(nodes=[NodeRef.of(n) for n in nodes], relations=list(rels)) for nodes, rels in found]
        return results[: p.limit], len(results) > p.limit or len(found) + len(partial) > MAX_ENUMERATED_PATHS

    def _edges_from(self, frontier: Mapping[str, list[str] | None], scopes: list[str] | None) -> list[GraphEdgeRow]:
        """Edges leaving the frontier's nodes (``None``: every node of that kind), by node kind."""
        edges: list[GraphEdgeRow] = []
        for kind, uids in sorted(frontier.items()):
            for relation in PATH_RELATIONS.get(kind, ()):
                sources = None if uids is None else sorted(set(uids))
                edges += self.backend.edges(relation, scopes=scopes, sources=sources)
        return edges

    # -------------------------------------------------------------------------------- belief-conflicts

    def belief_conflicts(self, p: BeliefConflictsParams, scopes: list[str] | None,
                         at: datetime) -> tuple[list[Any], bool]:  # fmt: skip
        """Conflicting active beliefs per subject (the R5 rule), with the goals they support."""
        rows = {b.uid: b for b in self.backend.active_beliefs(scopes=scopes)}
        index = BeliefConflictIndex(min_certainty=p.min_certainty)
        # Only uid, content, certainty and scope matter to the index; times are placeholders.
        index.add(Belief.model_construct(uid=b.uid, agent_id=b.agent_id, scope=b.scope, content=b.content,
                                         certainty=b.certainty, created_at=at, updated_at=at)
                  for b in rows.values())  # fmt: skip
        conflicts = index.conflicts()
        members = sorted({m.uid for c in conflicts for m in c.members})
        support: dict[str, list[GraphEdgeRow]] = {}
        for edge in self.backend.edges(RelationKind.BELIEF_SUPPORTS_GOAL, scopes=scopes, sources=members):
            support.setdefault(edge.source.uid, []).append(edge)
        results = []
        for conflict in conflicts:
            uids = sorted(m.uid for m in conflict.members)
            goals: dict[str, tuple[GraphNodeRow, list[str]]] = {}
            for uid in uids:
                for edge in support.get(uid, ()):
                    goals.setdefault(edge.target.uid, (edge.target, []))[1].append(uid)
            affected = [AffectedGoal(uid=g.uid, agent_id=g.agent_id, scope=g.scope, content=g.content, status=g.status,
                                     supported_by=by) for g, by in (goals[k] for k in sorted(goals))]  # fmt: skip
            beliefs = [_belief_ref(rows[u]) for u in uids]
            results.append(BeliefConflictResult(subject=conflict.subject, pairs=conflict.pairs, beliefs=beliefs,
                                                goals=affected))  # fmt: skip
        return results[: p.limit], len(results) > p.limit

    # -------------------------------------------------------------------------------- belief-holders

    def belief_holders(self, p: BeliefHoldersParams, scopes: list[str] | None,
                       _at: datetime) -> tuple[list[Any], bool]:  # fmt: skip
        """Agents with active beliefs about the subject, by agent id."""
        matches = _subject_matcher(p.subject) if p.match == "subject" else _contains_matcher(p.subject)
        holders: dict[str, list[BeliefRef]] = {}
        for belief in self.backend.active_beliefs(scopes=scopes):
            if (belief.certainty or 0.0) >= p.min_certainty and matches(belief.content):
                holders.setdefault(belief.agent_id, []).append(_belief_ref(belief))
        return [BeliefHolder(agent_id=a, beliefs=holders[a]) for a in sorted(holders)], False

    # -------------------------------------------------------------------------------- lineage

    def lineage(self, p: LineageParams, scopes: list[str] | None, _at: datetime) -> tuple[list[Any], bool]:
        """The root record, then its ancestors and descendants (nearest first), visible ones only.

        In a lineage cycle a record can be both; it is listed once, where it is nearer (ancestor on a tie).
        """
        records = self._records([p.uid], scopes)
        if p.uid not in records:
            raise NotFoundError(f"uid: no fact or memory item {p.uid!r}" + (" visible here" if scopes else ""))
        nodes: dict[str, tuple[int, LineageRelation]] = {p.uid: (0, "root")}
        links: set[tuple[str, str]] = set()
        walks: tuple[tuple[str, LineageRelation], ...] = (("ancestors", "ancestor"), ("descendants", "descendant"))
        for direction, relation in walks:
            if p.direction in (direction, "both"):
                found = self._walk(p.uid, direction, max_depth=p.max_depth, scopes=scopes, links=links, records=records)
                for uid, depth in found.items():
                    nodes[uid] = min(nodes.get(uid, (depth, relation)), (depth, relation))
        order = {"root": 0, "ancestor": 1, "descendant": 2}
        results = []
        for uid, (depth, relation) in sorted(nodes.items(), key=lambda i: (order[i[1][1]], i[1][0], i[0])):
            rec = records[uid]
            results.append(LineageNode(
                uid=uid, kind=rec.kind, agent_id=rec.agent_id, scope=rec.scope, label=rec.label,
                created_at=rec.created_at, retracted=rec.retracted, relation=relation, depth=depth,
                parents=sorted(pa for c, pa in links if c == uid and pa in nodes),
                children=sorted(c for c, pa in links if pa == uid and c in nodes),
            ))  # fmt: skip
        return results, False

    def _walk(self, root: str, direction: str, *, max_depth: int, scopes: list[str] | None,
              links: set[tuple[str, str]], records: dict[str, LineageRecordRow]) -> dict[str, int]:  # fmt: skip
        """Breadth-first over visible records only (so depths count visible steps); uid -> depth.

        Adds the (child, parent) links it follows to ``links`` and the visible records it meets to ``records``.
        """
        raw = self.backend.lineage_links([root], direction=direction, max_depth=max_depth)
        step: dict[str, list[str]] = {}  # near -> far neighbours
        for child, parent in raw:
            near, far = (child, parent) if direction == "ancestors" else (parent, child)
            step.setdefault(near, []).append(far)
        records.update(self._records(sorted({u for link in raw for u in link} - set(records)), scopes))
        reached, frontier, depth = {root: 0}, [root], 0
        while frontier and depth < max_depth:
            depth += 1
            following = []
            for near in frontier:
                for far in sorted(step.get(near, ())):
                    if far not in records:
                        continue  # invisible (or not a fact or memory item): the walk does not pass through it
                    links.add((near, far) if direction == "ancestors" else (far, near))
                    if far not in reached:
                        reached[far] = depth
                        following.append(far)
            frontier = following
        del reached[root]
        return reached

    def _records(self, uids: Sequence[str], scopes: list[str] | None) -> dict[str, LineageRecordRow]:
        rows = self.backend.lineage_records(uids) if uids else []
        return {r.uid: r for r in rows if scopes is None or r.scope in scopes}

    # -------------------------------------------------------------------------------- blocked-steps

    def blocked_steps(self, p: BlockedStepsParams, scopes: list[str] | None,
                      _at: datetime) -> tuple[list[Any], bool]:  # fmt: skip
        """Open steps with unfinished dependencies, the roots of their chains and dependency cycles."""
        steps: dict[str, GraphNodeRow] = {}
        waits: dict[str, set[str]] = {}  # dependent -> unfinished dependencies
        for edge in self.backend.edges(RelationKind.STEP_DEPENDS_ON, scopes=scopes):
            steps[edge.source.uid], steps[edge.target.uid] = edge.source, edge.target
            if edge.target.status not in SATISFIED_STEP_STATUSES:
                waits.setdefault(edge.source.uid, set()).add(edge.target.uid)
        blocked = sorted(u for u in waits if steps[u].status in OPEN_STEP_STATUSES)
        plans: dict[str, list[str]] = {}
        if blocked:
            for edge in self.backend.edges(RelationKind.PLAN_CONTAINS_STEP, scopes=scopes):
                plans.setdefault(edge.target.uid, []).append(edge.source.uid)
        results = []
        for uid in blocked:
            reach = _reachable(uid, waits)
            step = steps[uid]
            results.append(BlockedStep(
                uid=uid, agent_id=step.agent_id, scope=step.scope, content=step.content, status=step.status,
                plans=sorted(plans.get(uid, [])), waiting_on=[NodeRef.of(steps[d]) for d in sorted(waits[uid])],
                root_blockers=sorted(r for r in reach if r != uid and not waits.get(r)), in_cycle=uid in reach,
            ))  # fmt: skip
        return results[: p.limit], len(results) > p.limit


def _extend(partial: list[_Path], edges: list[GraphEdgeRow]) -> list[_Path]:
    """Every partial path continued by every edge leaving its last node to a node not yet on it."""
    by_source: dict[str, list[GraphEdgeRow]] = {}
    for edge in edges:
        by_source.setdefault(edge.source.uid, []).append(edge)
    longer = []
    for nodes, rels in partial:
        on_path = {n.uid for n in nodes}
        for edge in by_source.get(nodes[-1].uid, ()):
            if edge.target.uid not in on_path:
                longer.append(((*nodes, edge.target), (*rels, edge.kind)))
    return longer


def _subject_matcher(subject: str) -> Callable[[str], bool]:
    wanted = belief_subject(f"subject: {subject}")  # normalized exactly like a belief's subject marker
    if not wanted:
        raise InputError("subject", "has no words to match (letters or digits)")
    return lambda content: belief_subject(content) == wanted


def _contains_matcher(subject: str) -> Callable[[str], bool]:
    needle = normalize_text(subject)
    return lambda content: needle in normalize_text(content)


def _reachable(start: str, graph: dict[str, set[str]]) -> set[str]:
    """Every node reachable from ``start`` in one or more steps (``start`` itself only through a cycle)."""
    seen: set[str] = set()
    pending = list(graph.get(start, ()))
    while pending:
        node = pending.pop()
        if node not in seen:
            seen.add(node)
            pending.extend(graph.get(node, ()))
    return seen


CATALOGUE: dict[str, QuerySpec] = {
    "goals-behind": QuerySpec(GoalsBehindParams, GraphQueries.goals_behind,
                              "Open goals whose progress is below the share of time elapsed to their deadline."),
    "paths": QuerySpec(PathsParams, GraphQueries.paths,
                       "Directed belief -> goal -> plan paths (desire -> goal, subgoals and steps too)."),
    "belief-conflicts": QuerySpec(BeliefConflictsParams, GraphQueries.belief_conflicts,
                                  "Active beliefs about one subject that disagree, and the goals they support."),
    "lineage": QuerySpec(LineageParams, GraphQueries.lineage,
                         "Ancestors and descendants of a fact or memory item."),
    "belief-holders": QuerySpec(BeliefHoldersParams, GraphQueries.belief_holders,
                                "Which agents hold an active belief about a subject."),
    "blocked-steps": QuerySpec(BlockedStepsParams, GraphQueries.blocked_steps,
                               "Open plan steps waiting on dependencies that are not done."),
}  # fmt: skip
