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

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import Field

from kg.models import (
    MAX_CONTENT,
    MAX_LIST,
    Case,
    CaseOutcome,
    CaseSituation,
    CaseSolution,
    Model,
    RuleType,
    Unit,
    agent_scope,
)
from kg.models.base import new_list
from reasoning.bounds import DEFAULT_LIMITS
from reasoning.cbr import CaseMatch, CaseQuery, retrieve
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import input_error, parse_inputs
from reasoning.router.methods.heuristics import MAX_CUES, MAX_OPTIONS, CueInput
from reasoning.router.methods.heuristics import decide as cue_heuristic
from reasoning.rules import Triple, check_constraints, forward_chain

CASE_BASED, HEURISTIC, NATURALISTIC = "case-based", "heuristic", "naturalistic"
PERFORMS = "performs"
MAX_CASES = 10_000  # cases read from the graph; more: the oldest 10,000 are compared (partial)
#: Recognised actions that naturalistic simulates at most (inputs.max_options).
MAX_SIMULATED = 50
_GIVEN_AT = datetime(2000, 1, 1, tzinfo=UTC)  # creation time of cases given in the inputs (not stored)

_Item = Annotated[str, Field(max_length=1_024)]
_Triple = Annotated[str, Field(min_length=5, max_length=2_048)]


class GivenCase(Model):
    """A past case given in the inputs (instead of the agent's stored cases)."""

    name: Annotated[str, Field(min_length=1, max_length=256)]
    beliefs: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)
    desires: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    actions: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)
    success: bool = True
    lessons: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)


class RecognitionInput(Model):
    """Inputs shared by case-based, heuristic and naturalistic."""

    cases: list[GivenCase] | None = Field(default=None, min_length=1, max_length=MAX_CASES)

    beliefs: list[_Item] | None = Field(default=None, max_length=MAX_LIST)
    desires: list[_Item] | None = Field(default=None, max_length=MAX_LIST)
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    k: int = Field(default=5, ge=1, le=100)
    min_score: Unit = 0.0
    actor: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    effects: dict[_Item, list[_Triple]] = Field(default_factory=dict, max_length=1_000)
    expect: list[_Triple] = Field(default_factory=new_list, max_length=MAX_LIST)
    max_options: int = Field(default=5, ge=1, le=MAX_SIMULATED)


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
    if beliefs is None and desires is None and ctx.workspace is None:
        raise MissingInputs(method, f"give inputs.{method}.beliefs or desires (the situation to match)")
    if beliefs is None and desires is None:
        nodes = ctx.nodes("belief", status="active") + ctx.nodes("desire", status="active")
        beliefs = [n.content for n in nodes if n.kind.value == "belief"]
        desires = [n.content for n in nodes if n.kind.value == "desire"]
        used += [n.uid for n in nodes]
        if not nodes:
            raise MissingInputs(method, f"give inputs.{method}.beliefs or desires (the agent has no active ones)")
    names: dict[str, str] = {}
    if data.cases is not None:
        cases = []
        for i, given in enumerate(data.cases):
            uid = f"CS-{i:026d}"
            names[uid] = given.name
            situation = CaseSituation(beliefs=given.beliefs, desires=given.desires, context=given.context)
            cases.append(Case(uid=uid, agent_id=ctx.agent_id, scope=agent_scope(ctx.agent_id), created_at=_GIVEN_AT,
                              situation=situation, solution=CaseSolution(actions=given.actions),
                              outcome=CaseOutcome(success=given.success, lessons=given.lessons)))  # fmt: skip
    else:
        cases = ctx.cases(limit=MAX_CASES)
    if len(cases) >= MAX_CASES and data.cases is None:
        notes_cut = [f"compared the first {MAX_CASES} visible cases only (MAX_CASES): a closer case may exist"]
    else:
        notes_cut = []
    if not cases:
        raise MissingInputs(method, "no past cases are visible to the agent; store cases first (mabos cbr store)")
    embedder = ctx.workspace.embedder if ctx.workspace is not None and data.context.strip() else None
    query = CaseQuery(beliefs=beliefs or [], desires=desires or [], context=data.context)
    found = retrieve(cases, query, k=data.k, embedder=embedder, min_score=data.min_score)
    matches = [m.model_copy(update={"case_uid": names.get(m.case_uid, m.case_uid)}) for m in found.matches]
    used += [m.case_uid for m in found.matches if m.case_uid not in names]
    return matches, used, [*found.notes, *notes_cut]


def _cut(notes: list[str]) -> tuple[list[str], str | None]:
    """The notes without the bound notes, and those as one sentence (None when no bound was hit)."""
    cuts = [n for n in notes if "(MAX_CASES)" in n or n.startswith("the simulation's closure")]
    return [n for n in notes if n not in cuts], "; ".join(dict.fromkeys(cuts)) or None


def _match_row(m: CaseMatch) -> dict[str, Any]:
    return {"case": m.case_uid, "score": round(m.score, 6), "success": m.outcome.success,
            "actions": list(m.solution.actions), "lessons": list(m.outcome.lessons)}  # fmt: skip


def simulate(ctx: MethodContext, method: str, action: str, data: RecognitionInput) -> dict[str, Any]:
    """Forward-chain the agent's facts with the action performed; what follows, breaks and is reached."""
    actor = data.actor or ctx.agent_id
    if ctx.workspace is None:  # given cases without a graph: the action and its given effects only
        base, inference, constraints, limits = [], [], [], DEFAULT_LIMITS
    else:
        reasoner = ctx.reasoner()
        base = reasoner.base_facts(ctx.agent_id)
        inference = reasoner.rules(ctx.agent_id, RuleType.INFERENCE)
        constraints = reasoner.rules(ctx.agent_id, RuleType.CONSTRAINT)
        limits = reasoner.limits
    assumed = [(actor, PERFORMS, action)]
    assumed += [triple_of(t, method, ["effects", action, i]) for i, t in enumerate(data.effects.get(action, []))]
    before = forward_chain(base, inference, limits=limits)
    after = forward_chain([*base, *(Triple(*t) for t in assumed)], inference, limits=limits)
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
    cut = None if before.fixpoint and after.fixpoint else (
        f"the simulation's closure was cut by the workspace's bounds ({limits.max_derived} derived, "
        f"{limits.max_join} examined): consequences past it were not checked")  # fmt: skip
    return {"cut": cut, "action": action, "assumed": [" ".join(t) for t in assumed],
            "follows": [" ".join(k) for k in new],
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
    notes, cut = _cut(notes)
    if not matches:
        return computed(CASE_BASED, "no similar case", 0.0, {"matches": []}, trace=trace, used=used, notes=notes,
                        partial=cut)  # fmt: skip
    best = matches[0]
    actions = "; ".join(best.solution.actions) or "(no recorded actions)"
    if best.outcome.success:
        text = f"reuse case {best.case_uid}: {actions}"
    else:
        text = f"closest case {best.case_uid} failed: avoid {actions}"
        notes.append("the closest case failed: its solution is a warning, not a model")
    value = {"matches": rows, "solution": list(best.solution.actions), "reused": best.case_uid,
             "success": best.outcome.success, "lessons": list(best.outcome.lessons)}  # fmt: skip
    return computed(CASE_BASED, text, best.score, value, trace=trace, used=used, notes=notes, partial=cut)


def heuristic(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Take-the-best, tallying or recognition on cues (:mod:`.heuristics`); without cues, take the best case:
    the first action of the closest successful case, simulated once."""
    if "cues" in inputs or "recognized" in inputs:
        return cue_heuristic(inputs)
    data = parse_inputs(RecognitionInput, inputs, HEURISTIC)
    matches, used, notes = recall(ctx, HEURISTIC, data)
    trace = [f"retrieved {len(matches)} case(s); looking for the first successful one with an action"]
    chosen = next((m for m in matches if m.outcome.success and m.solution.actions), None)
    if chosen is None:
        notes, cut = _cut(notes)
        return computed(HEURISTIC, "no successful similar case to imitate", 0.0,
                        {"matches": [_match_row(m) for m in matches], "choice": None}, trace=trace, used=used,
                        notes=notes, partial=cut)  # fmt: skip
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
    notes, cut = _cut([*notes, *([sim["cut"]] if sim["cut"] else [])])
    return computed(HEURISTIC, f"do {action!r} as in case {chosen.case_uid}", confidence, value, trace=trace,
                    used=used, notes=notes, partial=cut)  # fmt: skip


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
    notes, cut = _cut([*notes, *(sim["cut"] for sim in tried if sim["cut"])])
    value = {"choice": chosen["action"] if chosen else None, "case": chosen["case"] if chosen else None,
             "tried": tried, "matches": [_match_row(m) for m in matches]}  # fmt: skip
    if chosen is None:
        text = "no recognised action survives mental simulation" if tried else "no successful similar case"
        return computed(NATURALISTIC, text, 0.0, value, trace=trace, used=used, notes=notes, partial=cut)
    text = f"do {chosen['action']!r} (case {chosen['case']}): the simulation breaks nothing and reaches the goal"
    return computed(NATURALISTIC, text, scores[chosen["case"]], value, trace=trace, used=used, notes=notes,
                    partial=cut)  # fmt: skip


ENGINES: dict[str, Engine] = {CASE_BASED: case_based, HEURISTIC: heuristic, NATURALISTIC: naturalistic}

_RETRIEVAL = (f"Cases: at most {MAX_CASES} visible cases compared (MAX_CASES; more: partial), linear in cases x "
              "beliefs/desires (plus one embedding per distinct context when a context is given)")  # fmt: skip
_SIMULATION = ("each simulation is two forward closures under the workspace's [reasoning] bounds (a cut closure: "
               "partial)")  # fmt: skip

#: The situation of the case-based and naturalistic examples, and the one past case they recognise in it.
_EXAMPLE_SITUATION = {"beliefs": ["market is saturated"], "desires": ["grow revenue"]}
_EXAMPLE_CASE = {"name": "2019 expansion", **_EXAMPLE_SITUATION, "actions": ["enter adjacent market"], "success": True}

DOCS = {
    CASE_BASED: MethodDoc(
        confidence="The similarity of the closest case (CBR-BDI score: weighted overlap of beliefs, desires and, "
        "with an embedder, context), 0..1; 0 when no case is similar. It measures how alike the cases "
        "are, not whether the old solution will work again.",
        bound=f"{_RETRIEVAL}.",
        inputs=RecognitionInput,
        example={**_EXAMPLE_SITUATION, "k": 3, "cases": [_EXAMPLE_CASE]},
        graph="without cases: the agent's visible cases; without beliefs and desires: its active ones",
    ),
    HEURISTIC: MethodDoc(
        confidence="With cues: the validity of the cue that decided (take-the-best, recognition: given "
        "recognition_validity), the winner's share of positive cue votes (tallying), 1 / options for a "
        "guess. With cases: the closest successful case's similarity, halved when the simulation of its "
        "action finds a problem.",
        bound=f"Cues: at most {MAX_OPTIONS} options and {MAX_CUES} cues, linear in options x cues. Cases: "
        f"{_RETRIEVAL}; {_SIMULATION}.",
        inputs=CueInput,
        example={
            "rule": "take-the-best",
            "criterion": "more inhabitants",
            "options": ["cologne", "hamburg"],
            "cues": [
                {"name": "soccer team", "validity": 0.87, "values": {"cologne": True, "hamburg": True}},
                {"name": "state capital", "validity": 0.77, "values": {"cologne": False, "hamburg": True}},
            ],
        },
        graph="without cues: the agent's visible cases (as case-based), and its facts and rules to simulate",
    ),
    NATURALISTIC: MethodDoc(
        confidence="The similarity of the case whose action survived mental simulation (recognition-primed "
        "decision); 0 when no recognised action survives.",
        bound=f"{_RETRIEVAL}; at most max_options ({MAX_SIMULATED}) actions simulated, {_SIMULATION}.",
        inputs=RecognitionInput,
        example={
            **_EXAMPLE_SITUATION,
            "max_options": 3,
            "cases": [_EXAMPLE_CASE],
            "expect": ["acme performs enter adjacent market"],
            "actor": "acme",
        },
        graph="the agent's visible cases, active beliefs and desires, facts, inference and constraint rules",
    ),
}

__all__ = ["DOCS", "ENGINES", "RecognitionInput", "recall", "simulate", "triple_of"]
