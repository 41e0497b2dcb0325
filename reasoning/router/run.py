"""Running methods: explicit, auto and multi-method modes, LLM prompts and the fusion report.

A method is computed when an engine exists for it: one the caller injects (``engines``, e.g. the
rule engine for ``deductive``) or a built-in one (``bayesian_update``, ``expected_utility``) whose
inputs are present in ``problem.inputs``. Every other method returns a :class:`PromptResult` —
instructions for the caller's own LLM, marked ``kind="llm_prompt"``; nothing is pretended.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Literal

from kg.errors import InputError
from reasoning.router.catalogue import get_method
from reasoning.router.engines import BUILTIN_ENGINES, BUILTIN_INPUTS
from reasoning.router.models import (
    ComputedResult,
    Disagreement,
    FusionReport,
    MethodResult,
    MethodScore,
    Position,
    Problem,
    ProblemProfile,
    PromptResult,
    RouterResult,
)
from reasoning.router.scoring import classification_signals, classify_problem, score_methods_for_problem

#: An engine computes one method for a problem.
Engine = Callable[[Problem], MethodResult]

AUTO = "auto"
MAX_METHODS = 35
PROMPT_MARKER = "[mabos reasoning router: a prompt for your own LLM; mabos did not compute this method]"
RESPONSE_FORMAT = {
    "answer": "your conclusion in one line",
    "confidence": "a number from 0 to 1",
    "rationale": "two to four sentences on how the method led there",
}


def build_prompt(method_id: str, problem: Problem, *, notes: Sequence[str] = ()) -> PromptResult:
    """The structured prompt that applies ``method_id`` to ``problem`` with the caller's LLM."""
    method = get_method(method_id)
    inputs = problem.inputs.get(method_id, {})
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(method.steps, 1))
    parts = [
        PROMPT_MARKER,
        f"Apply the reasoning method {method.name!r} ({method.category.label.lower()}): {method.description}",
        f"Problem:\n{problem.text.strip() or '(no problem text was given)'}",
    ]
    if inputs:
        parts.append(f"Inputs (JSON):\n{json.dumps(inputs, indent=2, sort_keys=True, default=str)}")
    parts.append(f"Steps:\n{steps}")
    parts.append(f"Reply with JSON only: {json.dumps(RESPONSE_FORMAT)}")
    return PromptResult(method=method.id, prompt="\n\n".join(parts), inputs=inputs,
                        response_format=dict(RESPONSE_FORMAT), notes=list(notes))  # fmt: skip


def _check_engines(engines: Mapping[str, Engine] | None) -> Mapping[str, Engine]:
    for name in engines or {}:
        get_method(name, field="engines")
    return engines or {}


def _check_inputs(problem: Problem) -> None:
    for name in problem.inputs:
        get_method(name, field="inputs")


def run(method_id: str, problem: Problem, *, engines: Mapping[str, Engine] | None = None) -> MethodResult:
    """Apply one method: an injected engine, else a built-in engine with its inputs, else an LLM prompt.

    Raises:
        InputError: unknown method id (or unknown keys in ``engines`` / ``problem.inputs``), or bad inputs
            for a built-in engine.
    """
    method = get_method(method_id)
    injected = _check_engines(engines)
    _check_inputs(problem)
    if method.id in injected:
        return injected[method.id](problem)
    if method.id in BUILTIN_ENGINES:
        key = BUILTIN_INPUTS[method.id]
        if key in problem.inputs.get(method.id, {}):
            return BUILTIN_ENGINES[method.id](problem)
        note = f"not computed: give inputs.{method.id}.{key} to compute it; returned a prompt instead"
        return build_prompt(method.id, problem, notes=[note])
    if method.engine == "injected":
        note = f"not computed: no engine for {method.id} was passed in engines; returned a prompt instead"
        return build_prompt(method.id, problem, notes=[note])
    return build_prompt(method.id, problem)


def _answer_key(answer: str) -> str:
    return " ".join(answer.casefold().split()).rstrip(".")


def fuse(results: Sequence[MethodResult], answers: Mapping[str, str] | None = None) -> FusionReport:
    """Compare the conclusions of several methods.

    Computed results bring their ``answer``; for prompt results the caller may pass the answer its
    LLM gave (``answers[method_id]``), else they are listed as pending. Answers compare casefolded,
    with whitespace collapsed and a trailing full stop ignored.
    """
    given = dict(answers or {})
    concluded: dict[str, str] = {}
    pending = []
    for result in results:
        if isinstance(result, ComputedResult):
            concluded[result.method] = result.answer
        elif result.method in given:
            concluded[result.method] = given[result.method]
        else:
            pending.append(result.method)
    groups: dict[str, Position] = {}
    for method, answer in concluded.items():
        groups.setdefault(_answer_key(answer), Position(answer=answer.strip(), methods=[])).methods.append(method)
    positions = sorted(groups.values(), key=lambda p: -len(p.methods))  # stable: first answered first
    disagreements = [
        Disagreement(methods=(a, b), answers=(concluded[a], concluded[b]))
        for a, b in combinations(concluded, 2)
        if _answer_key(concluded[a]) != _answer_key(concluded[b])
    ]
    top = positions[0] if positions else None
    consensus = top.answer if top and len(top.methods) >= 2 and 2 * len(top.methods) > len(concluded) else None
    summary = (f"{len(concluded)} method(s) answered, {len(pending)} pending; {len(positions)} distinct answer(s); "
               + (f"majority: {consensus}" if consensus else "no majority"))  # fmt: skip
    return FusionReport(positions=positions, agreements=[p for p in positions if len(p.methods) >= 2],
                        disagreements=disagreements, pending=pending, consensus=consensus, summary=summary)  # fmt: skip


def _auto(problem: Problem, top: int) -> tuple[ProblemProfile, list[str], list[str]]:
    notes = []
    profile = problem.profile
    if profile is None:
        profile = classify_problem(problem.text)
        signals = classification_signals(problem.text)
        found = "; ".join(f"{k}: {', '.join(v)}" for k, v in signals.items()) or "no keywords"
        notes.append(f"profile classified from the text ({found})")
    scores = score_methods_for_problem(profile)
    return profile, [s.method_id for s in scores[:top]], notes


def reason(
    problem: Problem,
    method: str | Sequence[str] = AUTO,
    *,
    top: int = 1,
    engines: Mapping[str, Engine] | None = None,
) -> RouterResult:
    """Route a problem to one or several methods and run them.

    Modes: ``method="auto"`` classifies the problem (unless ``problem.profile`` is given) and runs the
    ``top`` best-scored methods; a method id runs that method (explicit); a list of ids runs each
    (multi). With more than one method, a :class:`FusionReport` compares their conclusions.

    Raises:
        InputError: unknown method ids, an empty or too long list, ``top`` outside 1..35, bad inputs.
    """
    if isinstance(top, bool) or not 1 <= top <= MAX_METHODS:
        raise InputError("top", f"must be an integer from 1 to {MAX_METHODS}, got {top!r}")
    scores: list[MethodScore] = []
    notes: list[str] = []
    profile = problem.profile
    mode: Literal["explicit", "auto", "multi"]
    if isinstance(method, str) and method == AUTO:
        mode = "auto"
        profile, ids, notes = _auto(problem, top)
        scores = score_methods_for_problem(profile)[: max(top, 5)]
    elif isinstance(method, str):
        mode, ids = "explicit", [get_method(method).id]
    else:
        mode, ids = "multi", list(dict.fromkeys(method))
        if not 1 <= len(ids) <= MAX_METHODS:
            raise InputError("method", f"give 1 to {MAX_METHODS} method ids, got {len(ids)}")
        for method_id in ids:
            get_method(method_id)
    results = [run(method_id, problem, engines=engines) for method_id in ids]
    fusion = fuse(results) if len(results) > 1 else None
    return RouterResult(mode=mode, methods=ids, profile=profile, scores=scores, results=results, fusion=fusion,
                        notes=notes)  # fmt: skip


__all__ = ["AUTO", "PROMPT_MARKER", "RESPONSE_FORMAT", "Engine", "build_prompt", "fuse", "reason", "run"]
