"""``reason``: the seed's three invocation modes over the catalogue's engines.

- explicit: ``method="bayesian"`` runs that method;
- auto: ``problem_classification={...}`` (or ``method="auto"``) ranks the seed's 32 methods by the seed's
  scoring, the problem text breaking ties; without a classification the problem text is read (structural cues,
  semantic similarity, the inferred classification: :mod:`.textroute`), or, with a chat model, the model
  classifies (:mod:`.llm_route`); the best ``top`` run. ``RouterResult.router`` says which path ran;
- multi: ``multi_method=True, methods=[...]`` runs each and fuses the conclusions (:mod:`.fusion`).

``inputs`` is ``{method_id: {...}}`` (any accepted spelling of the id), or, when one method runs, that
method's own object. A method whose engine finds neither inputs nor records returns its prompt, or,
with a chat model in the context, is executed by the model (``kind: "llm"``). Inputs a method lacks are read
from the problem text where it states them (:mod:`.extract`: a test's sensitivity and base rate, lotteries,
ranked ballots); a method that still cannot compute carries a ready-to-fill template, what is missing and a
short prompt to fill it (``value.template``, ``value.fill_prompt``, ``RouterResult.templates``). In auto mode
a method that computed from no inputs and no record of the graph is answered the same way, never as a result.
Bad inputs raise :class:`~kg.errors.InputError` naming ``inputs.<method>.<field>``; nothing is written unless
storing is asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from kg.errors import InputError
from kg.ports import Embedder
from reasoning.router.catalogue import canonical, get_method
from reasoning.router.extract import read_inputs
from reasoning.router.fusion import fuse
from reasoning.router.llm import narrate, not_computed
from reasoning.router.methods import engine as engine_of
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs
from reasoning.router.models import MethodScore, ProblemClassification, RouterResult
from reasoning.router.scoring import classification
from reasoning.router.template import build, fill_prompt
from reasoning.router_requests import MAX_METHODS, MAX_TOP

if TYPE_CHECKING:
    from reasoning.router.textroute import Route

AUTO = "auto"
MULTI_DEFAULT = 3  # multi_method without methods: the best three of auto-selection
RUNNER_UP = 3  # auto with one method and no inputs for it: look this far down for one the text holds inputs of
RUNNER_UP_SHARE = 0.6  # ... scoring at least this share of the first's score


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
    engine = engine_of(spec.id)  # its module is imported now, not with the router
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


def _embedder(ctx: MethodContext, embedder: Embedder | None) -> Embedder | None:
    if embedder is not None or ctx.workspace is None:
        return embedder
    return ctx.workspace.embedder


def _auto(ctx: MethodContext, problem: str, given: ProblemClassification | None, embedder: Embedder | None,
          semantic: bool | None) -> Route:  # fmt: skip
    # auto-selection's modules (the cue patterns, the similarity) load when a method is to be chosen
    from reasoning.router.llm_route import llm_route  # noqa: PLC0415
    from reasoning.router.textroute import route  # noqa: PLC0415

    found = route(problem, given, _embedder(ctx, embedder), semantic=semantic)
    if given is None and ctx.chat is not None and problem.strip():
        return llm_route(problem, ctx.chat, found)
    return found


def _prefer_computable(found: Route, ids: list[str], given: dict[str, Any], problem: str) -> tuple[list[str], str]:
    """With one method chosen and no inputs for it: a close runner-up whose inputs the text holds, if any."""
    first = found.scores[0]
    if len(ids) != 1 or ids[0] in given or _complete(ids[0], problem):
        return ids, ""
    for other in found.scores[1:RUNNER_UP]:
        if other.score >= RUNNER_UP_SHARE * first.score and _complete(other.method, problem):
            return [other.method], (f"ran {other.method} (rank {other.rank}) instead of {first.method}: the problem "
                                    f"text holds {other.method}'s inputs and not {first.method}'s")  # fmt: skip
    return ids, ""


def _complete(method_id: str, problem: str) -> bool:
    found = read_inputs(method_id, problem)
    return found is not None and found.inputs is not None


def _run_one(ctx: MethodContext, method_id: str, given: Any, *, auto: bool, route_why: str) -> MethodOutcome:
    """One method, with inputs read from the problem text when none are given, and a template when it lacks them."""
    extraction = read_inputs(method_id, ctx.problem) if given is None else None
    notes: list[str] = []
    inputs = given
    if extraction is not None and extraction.inputs is not None:
        inputs = extraction.inputs
        notes.append(f"inputs read from the problem text: {'; '.join(extraction.found)}")
    try:
        outcome = run(ctx, method_id, inputs)
    except InputError as exc:
        if inputs is given:  # the caller's own inputs: their error is theirs to see
            raise
        inputs, extraction = None, None
        notes.append(f"the inputs read from the problem text were refused ({exc}); not computed")
        outcome = not_computed(ctx, get_method(method_id), {}, "the inputs read from the problem text were refused")
    if auto and outcome.kind == "computed" and inputs is None and not outcome.used:
        why = "it computed over nothing: no inputs were given and it read no record of the agent's graph"
        outcome = not_computed(ctx, get_method(method_id), {}, why)
    if outcome.kind == "llm_prompt":
        needed = next((n.split("not computed: ", 1)[1].split("; ")[0] for n in outcome.notes
                       if n.startswith("not computed: ")), "its inputs")  # fmt: skip
        template = build(method_id, inputs if isinstance(inputs, dict) else None, extraction, needed)
        value = dict(outcome.value or {})
        value.update(template=template.as_json(), fill_prompt=fill_prompt(ctx.problem, template))
        if route_why:
            value["why"] = route_why
        notes.append(f"missing: {'; '.join(template.missing)}")
        outcome = outcome.model_copy(update={"value": value})
    return outcome.model_copy(update={"notes": [*outcome.notes, *notes]}) if notes else outcome


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
    embedder: Embedder | None = None,
    semantic: bool | None = None,
) -> RouterResult:
    """Route ``problem`` to one or several methods and run them (see the module docstring).

    ``embedder`` (default: the workspace's) gives the semantic similarity of auto-selection; ``semantic``: see
    :func:`reasoning.router.textroute.route`.

    Raises:
        InputError: unknown method ids, a bad classification, bad inputs, ``top`` outside 1..32.
    """
    if isinstance(top, bool) or not 1 <= top <= MAX_TOP:
        raise InputError("top", f"must be an integer from 1 to {MAX_TOP}, got {top!r}")
    ctx = replace(ctx, problem=ctx.problem or problem)  # the caller's context is left as it was
    mode_name, ids = _targets(method, methods, multi_method)
    mode: Literal["explicit", "auto", "multi"] = "auto" if mode_name == "auto" else (
        "multi" if mode_name == "multi" else "explicit")  # fmt: skip
    notes: list[str] = []
    chosen: ProblemClassification | None = None
    scores: list[MethodScore] = []
    tie, path, why = None, "explicit", {}
    given = normalize_inputs(inputs, ids) if ids else {}
    if not ids:  # auto, or multi without a list: rank the seed's methods
        from reasoning.router.textroute import explain_tie  # noqa: PLC0415 - see _auto

        explicit = classification(problem_classification) if problem_classification is not None else None
        found = _auto(ctx, ctx.problem, explicit, embedder, semantic)
        chosen, scores, path = found.classification, found.scores, found.path
        notes += found.notes
        count = MULTI_DEFAULT if mode == "multi" else top
        ids = [s.method for s in scores[:count]]
        tie = explain_tie(found, count)
        given = normalize_inputs(inputs, ids)
        ids, swapped = _prefer_computable(found, ids, given, ctx.problem)
        notes += [swapped] if swapped else []
        why = {m: found.why(m) for m in ids}
    elif problem_classification is not None:
        chosen = classification(problem_classification)
    extra = sorted(set(given) - set(ids))
    if extra:
        notes.append(f"inputs for methods that did not run were ignored: {', '.join(extra)}")
    results = [_run_one(ctx, m, given.get(m), auto=path != "explicit", route_why=why.get(m, ""))
               for m in ids]  # fmt: skip
    story: dict[str, str] = {}
    if narrate_results:
        if ctx.chat is None:
            notes.append("narrate: no chat model is configured ([conversation] llm_url); nothing was narrated")
        for result in results:
            text = narrate(ctx, result)
            if text:
                story[result.method] = text
    fusion = fuse(results) if mode == "multi" else None
    templates = {r.method: r.value["template"] for r in results
                 if r.kind == "llm_prompt" and isinstance(r.value, dict) and "template" in r.value}  # fmt: skip
    return RouterResult(mode=mode, methods=ids, classification=chosen, scores=scores[:10], tie_break=tie,
                        results=results, fusion=fusion, narration=story, notes=notes, router=path,
                        why=why, templates=templates)  # fmt: skip


__all__ = ["AUTO", "MAX_METHODS", "normalize_inputs", "reason", "run"]
