"""Recognition from experience: case-based, heuristic and naturalistic reasoning over the agent's cases.

All three retrieve the closest past cases with the CBR-BDI similarity of :func:`reasoning.cbr.retrieve`
(inputs ``beliefs``, ``desires``, ``context``, ``k``; without beliefs and desires, the agent's active
beliefs and desires are the situation). Then:

- **case-based**: reuse the closest case's solution (a failed closest case is a warning, not a model).
- **heuristic** (recognition / take-the-best, Gigerenzer & Goldstein 1996): take the first
  successful case in similarity order, its first action, stop searching; simulate that action once.
- **naturalistic** (recognition-primed decision, Klein 1998): go through the actions of the
  successful cases in similarity order, simulate each, accept the first whose simulation breaks no
  constraint and reaches every expected triple; rejected options say why.

Simulating an action: the triple ``(<actor>, performs, <action>)`` (actor: ``inputs.actor``, default
the agent id) plus ``inputs.effects[<action>]`` (``"S P O"`` strings) are added to the agent's
asserted facts, the agent's inference rules run to a fixpoint (:func:`reasoning.rules.forward_chain`),
and the result is compared with the closure without the action: the facts that newly follow, the
constraint violations that are new, and whether each ``inputs.expect`` triple holds.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kg.models import MAX_CONTENT, MAX_LIST, Model, RuleType, Unit
from reasoning.cbr import CaseMatch, CaseQuery, retrieve
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.fields import input_error, parse_inputs
from reasoning.rules import Triple, check_constraints, forward_chain

CASE_BASED, HEURISTIC, NATURALISTIC = "case-based", "heuristic", "naturalistic"
PERFORMS = "performs"

_Item = Annotated[str, Field(max_length=1_024)]
_Triple = Annotated[str, Field(min_length=5, max_length=2_048)]


class RecognitionInput(Model):
    """Inputs shared by case-based, heuristic and naturalistic."""

    beliefs: list[_Item] | None = Field(default=None, max_length=MAX_LIST)
    desires: list[_Item] | None = Field(default=None, max_length=MAX_LIST)
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    k: int = Field(default=5, ge=1, le=100)
    min_score: Unit = 0.0
    actor: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    effects: dict[_Item, list[_Triple]] = Field(default_factory=dict, max_length=1_000)
    expect: list[_Triple] = Field(default_factory=list, max_length=MAX_LIST)
    max_options: int = Field(default=5, ge=1, le=50)


def triple_of(text: str, method: str, loc: list[str | int]) -> tuple[str, str, str]:
    """``"S P O"`` split into a triple (the object keeps its spaces)."""
    parts = text.split(maxsplit=2)
    if len(parts) != 3:
        raise input_error(method, loc, f"must be 'SUBJECT PREDICATE OBJECT', got {text!r}")
    return (parts[0], parts[1], parts[2])


def recall(ctx: MethodContext, method: str, data: RecognitionInput) -> tuple[list[CaseMatch], list[str], list[str]]:
    """The closest cases (best first), the uids read, and notes."""
    used: list[str] = []
    beliefs, desires = data.beliefs, data.desires
    if beliefs is None and desires is None:
        nodes = ctx.nodes("belief", status="active") + ctx.nodes("desire", status="active")
        beliefs = [n.content for n in nodes if n.kind.value == "belief"]
        desires = [n.content for n in nodes if n.kind.value == "desire"]
        used += [n.uid for n in nodes]
        if not nodes:
            raise MissingInputs(method, f"give inputs.{method}.beliefs or desires (the agent has no active ones)")
    cases = ctx.cases()
    if not cases:
        raise MissingInputs(method, "no past cases are visible to the agent; store cases first (mabos cbr store)")
    embedder = ctx.workspace.embedder if ctx.workspace is not None and data.context.strip() else None
    query = CaseQuery(beliefs=beliefs or [], desires=desires or [], context=data.context)
    found = retrieve(cases, query, k=data.k, embedder=embedder, min_score=data.min_score)
    used += [m.case_uid for m in found.matches]
    return found.matches, used, list(found.notes)


def _match_row(m: CaseMatch) -> dict[str, Any]:
    return {"case": m.case_uid, "score": round(m.score, 6), "success": m.outcome.success,
            "actions": list(m.solution.actions), "lessons": list(m.outcome.lessons)}  # fmt: skip


def simulate(ctx: MethodContext, method: str, action: str, data: RecognitionInput) -> dict[str, Any]:
    """Forward-chain the agent's facts with the action performed; what follows, breaks and is reached."""
    reasoner = ctx.reasoner()
    actor = data.actor or ctx.agent_id
    base = reasoner.base_facts(ctx.agent_id)
    inference = reasoner.rules(ctx.agent_id, RuleType.INFERENCE)
    constraints = reasoner.rules(ctx.agent_id, RuleType.CONSTRAINT)
    assumed = [(actor, PERFORMS, action)]
    assumed += [triple_of(t, method, ["effects", action, i]) for i, t in enumerate(data.effects.get(action, []))]
    before = forward_chain(base, inference, limits=reasoner.limits)
    after = forward_chain([*base, *(Triple(*t) for t in assumed)], inference, limits=reasoner.limits)
    known = {t.key for t in base} | {d.triple.key for d in before.derived}
    closure = known | set(assumed) | {d.triple.key for d in after.derived}
    fresh = [d for d in after.derived if d.triple.key not in known]
    new = [d.triple.key for d in fresh]
    uid_of = {t.key: t.uid for t in base if t.uid}
    support = [uid_of[k] for d in fresh for k in d.support if k in uid_of]
    old_violations = {(v.rule_id, tuple(sorted(v.bindings.items()))) for v in check_constraints(
        [*base, *(d.triple for d in before.derived)], constraints)}  # fmt: skip
    violations = [v.message for v in check_constraints(
        [*base, *(Triple(*t) for t in assumed), *(d.triple for d in after.derived)], constraints)
        if (v.rule_id, tuple(sorted(v.bindings.items()))) not in old_violations]  # fmt: skip
    expected = {t: triple_of(t, method, ["expect", i]) in closure for i, t in enumerate(data.expect)}
    return {"action": action, "assumed": [" ".join(t) for t in assumed], "follows": [" ".join(k) for k in new],
            "violations": violations, "expected": expected,
            "ok": not violations and all(expected.values()), "support": list(dict.fromkeys(support))}  # fmt: skip


def _describe(sim: dict[str, Any]) -> str:
    parts = [f"{len(sim['follows'])} new fact(s)"]
    if sim["violations"]:
        parts.append(f"violates: {'; '.join(sim['violations'][:3])}")
    missed = [t for t, ok in sim["expected"].items() if not ok]
    if missed:
        parts.append(f"does not reach: {'; '.join(missed[:3])}")
    return ", ".join(parts)


def case_based(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Reuse the solution of the most similar past case."""
    data = parse_inputs(RecognitionInput, inputs, CASE_BASED)
    matches, used, notes = recall(ctx, CASE_BASED, data)
    rows = [_match_row(m) for m in matches]
    trace = [f"retrieved {len(rows)} case(s) by belief/desire/context similarity"]
    trace += [f"{r['case']}: score {r['score']:.3g}, {'success' if r['success'] else 'failure'}" for r in rows]
    if not matches:
        return computed(CASE_BASED, "no similar case", 0.0, {"matches": []}, trace=trace, used=used, notes=notes)
    best = matches[0]
    actions = "; ".join(best.solution.actions) or "(no recorded actions)"
    if best.outcome.success:
        text = f"reuse case {best.case_uid}: {actions}"
    else:
        text = f"closest case {best.case_uid} failed: avoid {actions}"
        notes.append("the closest case failed: its solution is a warning, not a model")
    value = {"matches": rows, "solution": list(best.solution.actions), "reused": best.case_uid,
             "success": best.outcome.success, "lessons": list(best.outcome.lessons)}  # fmt: skip
    return computed(CASE_BASED, text, best.score, value, trace=trace, used=used, notes=notes)


def heuristic(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Take the best: the first action of the closest successful case, simulated once."""
    data = parse_inputs(RecognitionInput, inputs, HEURISTIC)
    matches, used, notes = recall(ctx, HEURISTIC, data)
    trace = [f"retrieved {len(matches)} case(s); looking for the first successful one with an action"]
    chosen = next((m for m in matches if m.outcome.success and m.solution.actions), None)
    if chosen is None:
        return computed(HEURISTIC, "no successful similar case to imitate", 0.0,
                        {"matches": [_match_row(m) for m in matches], "choice": None}, trace=trace, used=used,
                        notes=notes)  # fmt: skip
    action = chosen.solution.actions[0]
    trace.append(f"recognised {chosen.case_uid} (score {chosen.score:.3g}): act {action!r}; search stops")
    sim = simulate(ctx, HEURISTIC, action, data)
    used += sim["support"]
    trace.append(f"simulated {action!r}: {_describe(sim)}")
    confidence = chosen.score * (1.0 if sim["ok"] else 0.5)
    if not sim["ok"]:
        notes.append("the simulation found a problem: check it before acting")
    value = {"choice": action, "case": chosen.case_uid, "simulation": sim,
             "matches": [_match_row(m) for m in matches]}  # fmt: skip
    return computed(HEURISTIC, f"do {action!r} as in case {chosen.case_uid}", confidence, value, trace=trace,
                    used=used, notes=notes)  # fmt: skip


def naturalistic(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Recognition-primed decision: the first recognised action whose mental simulation works."""
    data = parse_inputs(RecognitionInput, inputs, NATURALISTIC)
    matches, used, notes = recall(ctx, NATURALISTIC, data)
    options = list(dict.fromkeys((a, m.case_uid) for m in matches if m.outcome.success for a in m.solution.actions))
    scores = {m.case_uid: m.score for m in matches}
    trace = [f"recognised {len(matches)} similar case(s); {len(options)} candidate action(s) from successful ones"]
    tried: list[dict[str, Any]] = []
    chosen = None
    for action, case_uid in options[: data.max_options]:
        sim = simulate(ctx, NATURALISTIC, action, data)
        tried.append({**sim, "case": case_uid})
        verdict = "accept" if sim["ok"] else "reject"
        trace.append(f"simulate {action!r} (case {case_uid}): {_describe(sim)} -> {verdict}")
        if sim["ok"]:
            chosen = tried[-1]
            break
    used += [uid for sim in tried for uid in sim["support"]]
    value = {"choice": chosen["action"] if chosen else None, "case": chosen["case"] if chosen else None,
             "tried": tried, "matches": [_match_row(m) for m in matches]}  # fmt: skip
    if chosen is None:
        text = "no recognised action survives mental simulation" if tried else "no successful similar case"
        return computed(NATURALISTIC, text, 0.0, value, trace=trace, used=used, notes=notes)
    text = f"do {chosen['action']!r} (case {chosen['case']}): the simulation breaks nothing and reaches the goal"
    return computed(NATURALISTIC, text, scores[chosen["case"]], value, trace=trace, used=used, notes=notes)


ENGINES: dict[str, Engine] = {CASE_BASED: case_based, HEURISTIC: heuristic, NATURALISTIC: naturalistic}

__all__ = ["ENGINES", "RecognitionInput", "recall", "simulate", "triple_of"]
