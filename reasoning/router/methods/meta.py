"""Engines of the meta methods: meta-cognitive, strategy-selection, and (from :mod:`.learning` and
:mod:`.calibration`) learning-to-reason, reflection and calibration.

**meta-cognitive** (``inputs.meta-cognitive``)::

    {"goals": ["acme isTaxable true", "acme hasRevenue ?r"], "threshold": 0.7, "max_depth": 5}

sorts what the problem needs into known, uncertain and unknown with the agent's rule engine:
each goal is proved by backward chaining (:meth:`reasoning.service.Reasoner.backward`). A proved goal
whose proof confidence is at least ``threshold`` is *known*; a weaker proof, or one resting on a fact
below the threshold, is *uncertain* (the weak facts are listed); an unproved goal is *unknown*, with
its knowledge gaps - the conditions no fact or rule satisfies. Without ``goals``, the problem text is
answered by :meth:`~reasoning.service.Reasoner.knowledge_explain`: findings at or above the
threshold are known, weaker ones and abductive hypotheses uncertain, and the question's known terms
that no finding mentions unknown.

**strategy-selection** (``inputs.strategy-selection``)::

    {"problem_classification": {"uncertainty": "high", "domain": "social", ...}, "top": 5}

ranks the seed's methods with the router's own scoring (:func:`reasoning.router.scoring.
score_methods_for_problem`) and gives each the reasons for its score: which dimensions matched
(+0.2 uncertainty, +0.2 complexity, +0.3 domain, +0.15 data, +0.15 stakes) and which did not, and
whether mabos computes it. ``top`` rows are shown, plus the rows of the methods named in ``methods``
(any accepted spelling). Without a classification one is read from the problem text's keywords.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kg.errors import InputError
from kg.models import MAX_LIST, Model, Unit
from kg.models.base import new_list
from reasoning.requests import MAX_QUESTION
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.calibration import METHOD as CALIBRATION
from reasoning.router.methods.calibration import calibration
from reasoning.router.methods.closure import MAX_PROOF_NODES, close, gaps, matches, proof, walk
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import parse_inputs
from reasoning.router.methods.learning import LEARNING, REFLECTION, learning_to_reason, reflection
from reasoning.router.methods.premises import knowledge
from reasoning.router.methods.recognition import triple_of
from reasoning.rules import ProofNode

METACOGNITIVE, STRATEGY = "meta-cognitive", "strategy-selection"
MAX_GOALS = 100

_Triple = Annotated[str, Field(min_length=5, max_length=2_048)]


# ----------------------------------------------------------------------------------------------
# meta-cognitive
# ----------------------------------------------------------------------------------------------


class MetaInput(Model):
    """Inputs of ``meta-cognitive``."""

    goals: list[_Triple] | None = Field(default=None, min_length=1, max_length=MAX_GOALS)
    goal: _Triple | None = None
    threshold: Unit = 0.7
    max_depth: int = Field(default=5, ge=1, le=10, description="kept for compatibility: goals are decided on "
                                                                 "the bounded forward closure")  # fmt: skip
    facts: list[_Triple] | None = Field(default=None, max_length=100_000)
    rules: list[dict[str, Any]] | None = Field(default=None, max_length=1_000)


def _leaves(node: ProofNode) -> list[ProofNode]:
    if node.is_fact:
        return [node]
    return [leaf for child in node.children for leaf in _leaves(child)]


def _assess_goals(ctx: MethodContext, goals: list[str], data: MetaInput,
                  inputs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], str | None]:  # fmt: skip
    """Each goal decided on one bounded forward closure: known / uncertain / unknown, the uids read, and a
    sentence when the closure was cut (unknown goals may then be derivable past the bound)."""
    base, rules, records = knowledge(ctx, METACOGNITIVE, {k: v for k, v in inputs.items() if k in ("facts", "rules")})
    if not base and not rules:
        raise MissingInputs(METACOGNITIVE, "no facts and no rules to assess the goals against: give "
                                           "inputs.meta-cognitive.facts and rules, or assert facts")  # fmt: skip
    limits = ctx.reasoner().limits if records else None
    found = close(base, rules, limits)
    rows: list[dict[str, Any]] = []
    used: list[str] = []
    for index, text in enumerate(goals):
        goal = triple_of(text, METACOGNITIVE, ["goals", index])
        keys = matches(goal, found)
        if not keys:
            rows.append({"goal": text, "status": "unknown", "gaps": gaps(goal, found, rules), "confidence": None})
            continue
        best = proof(keys[0], found, rules)
        leaves = _leaves(best)
        used += [u for u in walk(best) if records]
        weak = sorted({f"({', '.join(leaf.triple)}) confidence {leaf.confidence:.3g}" for leaf in leaves
                       if leaf.confidence < data.threshold})  # fmt: skip
        status = "known" if best.confidence >= data.threshold and not weak else "uncertain"
        rows.append({"goal": text, "status": status, "confidence": round(best.confidence, 9),
                     "answers": [" ".join(k) for k in keys], "weak_support": weak,
                     "proof": best.to_dict()})  # fmt: skip
    cut = found.note()
    if cut and any(r["status"] == "unknown" for r in rows):
        cut = f"unknown goals may follow past the bound: {cut}"
    else:
        cut = None
    return rows, used, cut


def _assess_problem(ctx: MethodContext, threshold: float) -> tuple[list[dict[str, Any]], list[str], str | None]:
    # knowledge_explain takes a question of at most MAX_QUESTION characters: a longer problem is assessed by its start
    answer = ctx.reasoner().knowledge_explain(ctx.agent_id, ctx.problem[:MAX_QUESTION])
    cut = None if answer.fixpoint else (answer.note or "the forward closure was cut by the workspace's bounds")
    rows: list[dict[str, Any]] = []
    used: list[str] = []
    mentioned: set[str] = set()
    for f in answer.findings:
        text = f"{f.subject} {f.predicate} {f.object}"
        mentioned |= {f.subject, f.predicate, f.object}
        sure = f.method != "abduction" and f.confidence is not None and f.confidence >= threshold
        rows.append({"goal": text, "status": "known" if sure else "uncertain", "confidence": f.confidence,
                     "found_by": f.method})  # fmt: skip
        uid = f.detail.get("uid")
        if isinstance(uid, str):
            used.append(uid)
    rows += [{"goal": term, "status": "unknown", "confidence": None, "gaps": [f"nothing known about {term}"]}
             for term in answer.terms if term not in mentioned]  # fmt: skip
    return rows, used, cut


def meta_cognitive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """What is known, uncertain and unknown about the problem, from the agent's facts and rules."""
    data = parse_inputs(MetaInput, inputs, METACOGNITIVE)
    goals = [*(data.goals or []), *([data.goal] if data.goal else [])]
    cut = None
    if goals:
        rows, used, cut = _assess_goals(ctx, goals, data, inputs)
        origin = f"{len(goals)} goal(s) decided on the forward closure of the facts and rules"
    elif ctx.problem.strip() and ctx.workspace is not None:
        rows, used, cut = _assess_problem(ctx, data.threshold)
        origin = "the problem text, answered by facts, forward and backward chaining and abduction"
    else:
        raise MissingInputs(METACOGNITIVE, "give inputs.meta-cognitive.goals ('S P O' triples) or a problem text")
    groups = {s: [r["goal"] for r in rows if r["status"] == s] for s in ("known", "uncertain", "unknown")}
    gaps = [g for r in rows for g in r.get("gaps", [])]
    trace = [f"{origin}; threshold {data.threshold:g}"]
    trace += [f"{r['goal']}: {r['status']}" + (f" (gaps: {'; '.join(r['gaps'][:3])})" if r.get("gaps") else "")
              for r in rows[:50]]  # fmt: skip
    text = ", ".join(f"{s} {len(v)}" for s, v in groups.items())
    text += f" of {len(rows)}" + (f"; gaps: {'; '.join(gaps[:3])}" if gaps else "")
    value = {**groups, "gaps": gaps, "items": rows, "threshold": data.threshold}
    return computed(METACOGNITIVE, text, len(groups["known"]) / len(rows) if rows else 0.0, value, trace=trace,
                    used=used, partial=cut)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# strategy selection
# ----------------------------------------------------------------------------------------------


class StrategyInput(Model):
    """Inputs of ``strategy-selection``."""

    problem_classification: dict[str, Any] | None = None
    top: int = Field(default=5, ge=1, le=32)
    methods: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=new_list, max_length=MAX_LIST)


def strategy_selection(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """The router's ranking of the seed's methods for the problem, with the reason for each score."""
    # the router imports this package: import its scoring when an engine runs, not at import time
    from reasoning.router.catalogue import get_method  # noqa: PLC0415
    from reasoning.router.methods import has_engine  # noqa: PLC0415
    from reasoning.router.scoring import (  # noqa: PLC0415
        WEIGHTS,
        classification,
        classification_signals,
        classify_problem,
        explain_tie,
        score_methods_for_problem,
    )

    data = parse_inputs(StrategyInput, inputs, STRATEGY)
    notes = []
    if data.problem_classification is not None:
        try:
            chosen = classification(data.problem_classification)
        except InputError as exc:  # it names problem_classification.<field>
            raise InputError(f"inputs.{STRATEGY}.{exc.field}", exc.rule) from None
    elif ctx.problem.strip():
        chosen = classify_problem(ctx.problem)
        found = "; ".join(f"{k}: {', '.join(v)}" for k, v in classification_signals(ctx.problem).items())
        notes.append(f"classification read from the problem text ({found or 'no keywords'})")
    else:
        raise MissingInputs(STRATEGY, "give inputs.strategy-selection.problem_classification or a problem text")
    scores = score_methods_for_problem(chosen)
    rows: list[dict[str, Any]] = []
    for s in scores:
        ideal = get_method(s.method).profile
        reasons = []
        for dim, weight in WEIGHTS.items():
            asked, wanted = getattr(chosen, dim), getattr(ideal, dim)
            asked_text = "not given" if asked is None else asked.value
            reasons.append(f"{dim} {wanted.value} matches (+{weight:g})" if dim in s.matched else
                           f"{dim}: suits {wanted.value}, problem {asked_text} (+0)")  # fmt: skip
        rows.append({"method": s.method, "category": s.category.value, "score": s.score, "rank": s.rank,
                     "matched": s.matched, "reasons": reasons, "computes": has_engine(s.method)})  # fmt: skip
    asked = {get_method(m, field=f"inputs.{STRATEGY}.methods[{i}]").id for i, m in enumerate(data.methods)}
    shown = rows[: data.top] + [r for r in rows[data.top :] if r["method"] in asked]
    tie = explain_tie(scores, 1)
    if tie:
        notes.append(tie)
    best = rows[0]
    trace = [f"classification: {chosen.model_dump(mode='json', exclude_none=True)}",
             "score = 0.2 uncertainty + 0.2 complexity + 0.3 domain + 0.15 data + 0.15 stakes, on a match"]  # fmt: skip
    trace += [f"{r['rank']}. {r['method']} {r['score']:g}: {', '.join(r['matched']) or 'no match'}" for r in shown]
    text = f"use {best['method']} (score {best['score']:g}: {', '.join(best['matched']) or 'no dimension matched'})"
    value = {"classification": chosen.model_dump(mode="json"), "ranking": shown, "best": best["method"]}
    return computed(STRATEGY, text, best["score"], value, trace=trace, notes=notes)


DOCS = {
    METACOGNITIVE: MethodDoc(
        confidence="The share of the goals that are known (proved with confidence at or above the threshold, "
        "resting on no weaker fact); uncertain and unknown goals lower it. An unknown goal is not "
        "false: nothing known proves it.",
        bound=f"At most {MAX_GOALS} goals, decided on one forward closure under the workspace's [reasoning] bounds "
        "(reasoning.bounds.DEFAULT_LIMITS without a workspace); a cut closure with unknown goals is marked "
        f"partial. Proof trees hold at most {MAX_PROOF_NODES} nodes.",
        inputs=MetaInput,
        example={
            "goals": ["socrates is mortal", "plato is mortal"],
            "facts": ["socrates is man"],
            "rules": [
                {
                    "name": "mortal",
                    "conditions": [{"subject": "?x", "predicate": "is", "object": "man"}],
                    "conclusion": {"subject": "?x", "predicate": "is", "object": "mortal"},
                }
            ],
        },
        graph="the agent's asserted facts and enabled inference rules; without goals, the problem text answered "
        "from the graph (knowledge_explain)",
    ),
    STRATEGY: MethodDoc(
        confidence="The router's score of the best method: the weighted share of the problem's classification that "
        "its ideal profile matches (0.2 uncertainty, 0.2 complexity, 0.3 domain, 0.15 data, 0.15 stakes).",
        bound="Constant: every method of the catalogue is scored once on five dimensions.",
        inputs=StrategyInput,
        example={
            "problem_classification": {
                "uncertainty": "high",
                "complexity": "moderate",
                "domain": "social",
                "data_availability": "sparse",
                "stakes": "high",
            },
            "top": 3,
        },
        graph="nothing (the problem text when no classification is given)",
    ),
}

ENGINES: dict[str, Engine] = {
    METACOGNITIVE: meta_cognitive,
    STRATEGY: strategy_selection,
    LEARNING: learning_to_reason,
    REFLECTION: reflection,
    CALIBRATION: calibration,
}

__all__ = ["DOCS", "ENGINES", "MetaInput", "StrategyInput", "meta_cognitive", "strategy_selection"]
