"""``reason``: the seed's three invocation modes over the catalogue's engines.

- explicit: ``method="bayesian"`` runs that method;
- auto: ``problem_classification={...}`` (or ``method="auto"``; without a classification one is read from
  the problem text's keywords) scores the seed's 32 methods and runs the best ``top``;
- multi: ``multi_method=True, methods=[...]`` runs each and fuses the conclusions (:mod:`.fusion`).

``inputs`` is ``{method_id: {...}}`` (any accepted spelling of the id), or, when one method runs, that
method's own object. A method whose engine finds neither inputs nor records returns its prompt, or,
with a chat model in the context, is executed by the model (``kind: "llm"``). Bad inputs raise
:class:`~kg.errors.InputError` naming ``inputs.<method>.<field>``; nothing is written unless storing is asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from kg.errors import InputError
from reasoning.router.catalogue import canonical, get_method
from reasoning.router.fusion import fuse
from reasoning.router.llm import narrate, not_computed
from reasoning.router.methods import engines
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs
from reasoning.router.models import ProblemClassification, RouterResult
from reasoning.router.scoring import classification, classification_signals, classify_problem, explain_tie
from reasoning.router.scoring import score_methods_for_problem as score

AUTO = "auto"
MAX_METHODS = 48
MULTI_DEFAULT = 3  # multi_method without methods: the best three of auto-selection


def normalize_inputs(inputs: Mapping[str, Any] | None, ids: Sequence[str]) -> dict[str, Any]:
    """``inputs`` keyed by canonical method id; a single method's own object is wrapped under its id.

    Raises:
        InputError: inputs that are neither keyed by method ids nor (with one method) its own object.
    """
    if not inputs:
        return {}
    if not isinstance(inputs, Mapping):
        raise InputError("inputs", "must be an object {method_id: {...}}")
    keyed = {key: canonical(key) for key in inputs}
    if all(keyed.values()):
        return {str(keyed[k]): v for k, v in inputs.items()}
    if len(ids) == 1:
        return {ids[0]: dict(inputs)}
    bad = next(k for k, v in keyed.items() if v is None)
    raise InputError(f"inputs.{str(bad)[:64]}", "is not a method id; give inputs as {method_id: {...}}")


def run(ctx: MethodContext, method_id: str, inputs: Any = None) -> MethodOutcome:
    """Run one method: its engine, else (or when the engine lacks inputs) its prompt or the chat model."""
    spec = get_method(method_id)
    engine = engines().get(spec.id)
    given = {} if inputs is None else inputs
    if engine is None:
        return not_computed(ctx, spec, given, f"{spec.id} has no engine ({spec.category.value} method)")
    if not isinstance(given, dict):
        raise InputError(f"inputs.{spec.id}", f"must be a JSON object, got {type(given).__name__}")
    try:
        outcome = engine(ctx, given)
    except MissingInputs as missing:
        return not_computed(ctx, spec, given, missing.needed)
    return outcome if outcome.method == spec.id else outcome.model_copy(update={"method": spec.id})


def _targets(method: str | None, methods: Sequence[str] | None, multi: bool) -> tuple[str, list[str]]:
    if methods is not None and method not in (None, AUTO) and not multi:
        raise InputError("method", "give either method or methods (with multi_method), not both")
    if methods is not None and len(methods) > 0:
        if not 1 <= len(methods) <= MAX_METHODS:
            raise InputError("methods", f"give 1 to {MAX_METHODS} method ids, got {len(methods)}")
        ids = list(dict.fromkeys(get_method(m, field=f"methods.{i}").id for i, m in enumerate(methods)))
        return ("multi" if (multi or len(ids) > 1) else "explicit"), ids
    if method not in (None, AUTO) and not multi:
        return "explicit", [get_method(str(method)).id]
    return ("multi" if multi else "auto"), []


def reason(
    ctx: MethodContext,
    problem: str = "",
    *,
    method: str | None = None,
    problem_classification: ProblemClassification | Mapping[str, Any] | None = None,
    multi_method: bool = False,
    methods: Sequence[str] | None = None,
    inputs: Mapping[str, Any] | None = None,
    top: int = 1,
    narrate_results: bool = False,
) -> RouterResult:
    """Route ``problem`` to one or several methods and run them (see the module docstring).

    Raises:
        InputError: unknown method ids, a bad classification, bad inputs, ``top`` outside 1..32.
    """
    if isinstance(top, bool) or not 1 <= top <= 32:
        raise InputError("top", f"must be an integer from 1 to 32, got {top!r}")
    ctx = replace(ctx, problem=ctx.problem or problem)  # the caller's context is left as it was
    mode_name, ids = _targets(method, methods, multi_method)
    mode: Literal["explicit", "auto", "multi"] = "auto" if mode_name == "auto" else (
        "multi" if mode_name == "multi" else "explicit")  # fmt: skip
    notes: list[str] = []
    chosen: ProblemClassification | None = None
    scores, tie = [], None
    if not ids:  # auto, or multi without a list: rank the seed's methods
        if problem_classification is not None:
            chosen = classification(problem_classification)
        else:
            chosen = classify_problem(problem)
            found = "; ".join(f"{k}: {', '.join(v)}" for k, v in classification_signals(problem).items())
            notes.append(f"classification read from the problem text ({found or 'no keywords'})")
        scores = score(chosen)
        count = MULTI_DEFAULT if mode == "multi" else top
        ids = [s.method for s in scores[:count]]
        tie = explain_tie(scores, count)
    elif problem_classification is not None:
        chosen = classification(problem_classification)
    given = normalize_inputs(inputs, ids)
    extra = sorted(set(given) - set(ids))
    if extra:
        notes.append(f"inputs for methods that did not run were ignored: {', '.join(extra)}")
    results = [run(ctx, method_id, given.get(method_id)) for method_id in ids]
    story: dict[str, str] = {}
    if narrate_results:
        if ctx.chat is None:
            notes.append("narrate: no chat model is configured ([conversation] llm_url); nothing was narrated")
        for result in results:
            text = narrate(ctx, result)
            if text:
                story[result.method] = text
    fusion = fuse(results) if mode == "multi" else None
    return RouterResult(mode=mode, methods=ids, classification=chosen, scores=scores[:10] if scores else [],
                        tie_break=tie, results=results, fusion=fusion, narration=story, notes=notes)  # fmt: skip


__all__ = ["AUTO", "MAX_METHODS", "normalize_inputs", "reason", "run"]
