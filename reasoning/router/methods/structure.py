"""Analogical reasoning (structure mapping) and modal reasoning (Kripke possible worlds).

analogical: ``{"source": ["S P O", ..], "target": ["S P O", ..]}`` (relations), or ``{"source": "entity",
"target": "entity"}`` to compare two entities' neighbourhoods in the agent's facts (the facts about the entity
and about its neighbours).
The mapping is the one-to-one entity correspondence preserving the most relations (same predicate between
mapped entities; Gentner's structure-mapping, found by exhaustive branch and bound over at most 12
entities a side). Source relations between mapped entities that the target lacks are the candidate
inferences. Confidence = preserved relations / source relations.

modal: ``{"worlds": {w: [true propositions]}, "access": [[w, v], ..] (default: every world sees every world,
S5), "actual": w, "query": ["box(p)", "dia(p and not q)", ..]}``. Formulas use proposition names
(identifiers), ``not``, ``and``, ``or``, ``box(..)`` (necessarily: true in every accessible world) and
``dia(..)`` (possibly: true in some). Each proposition of the query is also classified as necessary,
possible (contingent) or impossible at the actual world.
"""

from __future__ import annotations

import ast
from typing import Any

from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail
from reasoning.router.methods.counterfactual import triple

Key = tuple[str, str, str]
MAX_ENTITIES = 12
MAX_NODES = 200_000  # search nodes; past it the best mapping found so far is reported (and said so)


def _relations(ctx: MethodContext, value: Any, side: str) -> tuple[list[Key], list[str]]:
    if isinstance(value, list):
        return [triple(v, "analogical", f"{side}.{i}") for i, v in enumerate(value)], []
    if isinstance(value, str) and value.strip():
        facts = {f.uid: f for f in [*ctx.facts(subject=value), *ctx.facts(object=value)]}
        neighbours = {f.object if f.subject == value else f.subject for f in facts.values()}
        for other in sorted(neighbours)[:50]:
            facts.update({f.uid: f for f in ctx.facts(subject=other, limit=200)})
        rows = sorted(facts.values(), key=lambda f: f.uid)
        return [(f.subject, f.predicate, f.object) for f in rows], [f.uid for f in rows]
    raise fail("analogical", side, "must be a list of 'S P O' relations or an entity name")


def best_mapping(source: list[Key], target: list[Key]) -> tuple[dict[str, str], bool]:
    """The one-to-one entity mapping preserving the most source relations (first found on ties), and whether
    the search was complete (False: it stopped after :data:`MAX_NODES` nodes with the best found)."""
    degree = {e: sum(e in (r[0], r[2]) for r in source) for r in source for e in (r[0], r[2])}
    s_entities = sorted(degree, key=lambda e: (-degree[e], e))  # most connected first: the bound prunes sooner
    t_entities = sorted({e for s, _, o in target for e in (s, o)})
    if len(s_entities) > MAX_ENTITIES or len(t_entities) > MAX_ENTITIES:
        raise fail("analogical", "source", f"at most {MAX_ENTITIES} entities a side can be mapped exhaustively")
    target_set = set(target)
    best: dict[str, Any] = {"score": -1, "mapping": {}, "nodes": 0}

    def score(mapping: dict[str, str]) -> int:
        return sum((mapping[s], p, mapping[o]) in target_set for s, p, o in source if s in mapping and o in mapping)

    def search(i: int, mapping: dict[str, str], used: set[str]) -> None:
        best["nodes"] += 1
        if best["nodes"] > MAX_NODES:
            return
        current = score(mapping)
        pending = sum(1 for s, _, o in source if not (s in mapping and o in mapping))
        if current + pending <= best["score"]:
            return
        if i == len(s_entities):
            if current > best["score"]:
                best.update(score=current, mapping=dict(mapping))
            return
        entity = s_entities[i]
        for candidate in t_entities:
            if candidate not in used:
                mapping[entity] = candidate
                search(i + 1, mapping, used | {candidate})
                del mapping[entity]
        search(i + 1, mapping, used)

    search(0, {}, set())
    mapping: dict[str, str] = best["mapping"]
    kept = {s: t for s, t in mapping.items() if any(s in (r[0], r[2]) and (mapping.get(r[0]), r[1], mapping.get(r[2]))
                                                    in target_set for r in source)}  # fmt: skip
    return kept, best["nodes"] <= MAX_NODES


def analogical(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``analogical``."""
    if "source" not in inputs or "target" not in inputs:
        raise MissingInputs("analogical", "give inputs.analogical.source and target (relations or entities)")
    source, used_s = _relations(ctx, inputs["source"], "source")
    target, used_t = _relations(ctx, inputs["target"], "target")
    if not source or not target:
        raise MissingInputs("analogical", "the source or the target has no relations")
    mapping, complete = best_mapping(source, target)
    target_set = set(target)
    preserved = [r for r in source if (mapping.get(r[0]), r[1], mapping.get(r[2])) in target_set]
    inferences = [f"{mapping[s]} {p} {mapping[o]}" for s, p, o in source
                  if s in mapping and o in mapping and (mapping[s], p, mapping[o]) not in target_set]  # fmt: skip
    value = {"mapping": mapping, "preserved": [" ".join(r) for r in preserved], "candidate_inferences": inferences,
             "source_relations": len(source)}  # fmt: skip
    pairs = ", ".join(f"{s} -> {t}" for s, t in mapping.items()) or "nothing"
    conclusion = f"maps {pairs}" + (f"; suggests {'; '.join(inferences[:3])}" if inferences else "")
    return computed("analogical", conclusion, len(preserved) / len(source), value,
                    trace=[f"{len(source)} source and {len(target)} target relations",
                           f"best mapping preserves {len(preserved)} relation(s)",
                           f"{len(inferences)} candidate inference(s)"], used=[*used_s, *used_t],
                    notes=[] if complete else [f"search stopped after {MAX_NODES} nodes: the best mapping found "
                                               "so far, maybe not the best"])  # fmt: skip


# ---------------------------------------------------------------------------------------------- modal


Model = tuple[dict[str, set[str]], dict[str, set[str]]]  # worlds -> true propositions, world -> accessible


def holds(text: str, world: str, model: Model) -> bool:
    """Whether the formula ``text`` is true at ``world`` of the Kripke ``model``."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        rule = f"{text[:80]!r} is not a formula (names, not, and, or, box(..), dia(..))"
        raise fail("modal", "query", rule) from None
    return _eval(tree, world, text, model)


def modal(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``modal``: Kripke semantics over explicit worlds."""
    raw = inputs.get("worlds")
    if raw is None:
        raise MissingInputs("modal", "give inputs.modal.worlds ({world: [true propositions]}) and query")
    if not isinstance(raw, dict) or not raw or not all(isinstance(v, list) for v in raw.values()):
        raise fail("modal", "worlds", "must map world names to lists of the propositions true there")
    worlds = {str(w): {str(p) for p in props} for w, props in raw.items()}
    access_raw = inputs.get("access")
    if access_raw is None:
        access = {w: set(worlds) for w in worlds}
    else:
        access = {w: set() for w in worlds}
        for i, pair in enumerate(access_raw if isinstance(access_raw, list) else [None]):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p in worlds
                                                                      for p in pair)):  # fmt: skip
                raise fail("modal", f"access.{i}", "must be [world, world] with known worlds")
            access[pair[0]].add(pair[1])
    actual = inputs.get("actual", next(iter(worlds)))
    if not isinstance(actual, str) or actual not in worlds:
        raise fail("modal", "actual", f"unknown world {str(actual)[:80]!r}")
    queries = inputs.get("query", [])
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise fail("modal", "query", "must be a list of formulas")
    results = {q: holds(q, actual, (worlds, access)) for q in queries}
    props = sorted({p for ps in worlds.values() for p in ps})
    seen = access[actual]
    status = {p: ("necessary" if seen and all(p in worlds[v] for v in seen) else
                  "possible" if any(p in worlds[v] for v in seen) else "impossible") for p in props}  # fmt: skip
    value = {"actual": actual, "results": results, "status": status, "accessible": sorted(seen)}
    holding = [q for q, v in results.items() if v]
    conclusion = (f"at {actual}: " + "; ".join(f"{q} is {'true' if v else 'false'}" for q, v in results.items())
                  if results else f"at {actual}: " + ", ".join(f"{p} {s}" for p, s in status.items()))  # fmt: skip
    return computed("modal", conclusion[:1000], 1.0, value,
                    trace=[f"{len(worlds)} worlds, {sum(len(v) for v in access.values())} accessibility links",
                           f"{len(holding)} of {len(results)} formulas hold at {actual}"])  # fmt: skip


def _eval(node: ast.AST, world: str, text: str, model: Model) -> bool:
    worlds, access = model
    if isinstance(node, ast.Name):
        return node.id in worlds[world]
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, world, text, model)
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, world, text, model) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("box", "dia") \
            and len(node.args) == 1 and not node.keywords:  # fmt: skip
        results = (_eval(node.args[0], v, text, model) for v in sorted(access[world]))
        return all(results) if node.func.id == "box" else any(results)
    raise fail("modal", "query", f"{text[:80]!r}: only names, not, and, or, box(..) and dia(..) are allowed")


__all__ = ["analogical", "best_mapping", "holds", "modal"]
