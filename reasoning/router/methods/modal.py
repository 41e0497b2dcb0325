"""Modal reasoning: truth in a given Kripke model, and validity or satisfiability in K, T, S4 and S5.

Two modes (``inputs.modal``):

- a model: ``{"worlds": {w: [true propositions]}, "access": [[w, v], ..] (default: every world sees every world,
  S5), "actual": w, "query": ["box(p)", "dia(p and not q)", ..]}``. Each query is evaluated bottom-up: every
  distinct subformula's set of worlds is computed once, so work grows with subformulas x (worlds + links), never
  with nesting; the propositions are classified as necessary, possible or impossible at the actual world.
- a logic: ``{"logic": "K" | "T" | "S4" | "S5", "valid": [formulas], "satisfiable": [formulas]}`` decided by the
  tableau of :mod:`.modal_logic`, with a checked counter-model for each formula that is not valid (a model for
  each satisfiable one).

Formulas: names, ``true``, ``false``, ``not``, ``and``, ``or``, ``->``, ``box``, ``dia`` and parentheses.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import input_error, parse_inputs
from reasoning.router.methods.modal_logic import (
    MAX_FORMULA_CHARS,
    MAX_FORMULA_DEPTH,
    MAX_STEPS,
    MAX_WORLDS,
    Budget,
    Formula,
    Logic,
    decide,
    extension,
    parse,
)

METHOD = "modal"
MAX_MODEL_WORLDS = 10_000
MAX_LINKS = 200_000
MAX_MODEL_WORK = 2_000_000  # world (or link) visits over every distinct subformula of every query
MAX_QUERIES = 100

_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Formula = Annotated[str, Field(min_length=1, max_length=MAX_FORMULA_CHARS)]


class ModalInput(Model):
    """``inputs.modal``: a Kripke model and queries, or a logic and formulas to decide."""

    worlds: dict[_Name, list[_Name]] | None = Field(default=None, min_length=1, max_length=MAX_MODEL_WORLDS)
    access: list[Annotated[list[_Name], Field(min_length=2, max_length=2)]] | None = Field(
        default=None, max_length=MAX_LINKS)  # fmt: skip
    actual: _Name | None = None
    query: list[_Formula] = Field(default_factory=new_list, max_length=MAX_QUERIES)
    logic: Logic = "K"
    valid: list[_Formula] = Field(default_factory=new_list, max_length=MAX_QUERIES)
    satisfiable: list[_Formula] = Field(default_factory=new_list, max_length=MAX_QUERIES)

    @model_validator(mode="after")
    def _known_worlds(self) -> ModalInput:
        if self.worlds is None:
            return self
        for i, pair in enumerate(self.access or []):
            for side, name in enumerate(pair):
                if name not in self.worlds:
                    raise ValueError(f"@access.{i}.{side}: {name[:80]!r} is not one of the worlds")
        if self.actual is not None and self.actual not in self.worlds:
            raise ValueError(f"@actual: {self.actual[:80]!r} is not one of the worlds")
        return self


def _formula(text: str, field: str, index: int) -> Formula:
    return parse(text, lambda rule: input_error(METHOD, [field, index], rule))


def holds(text: str, world: str, model: tuple[dict[str, set[str]], dict[str, set[str]]]) -> bool:
    """Whether the formula ``text`` is true at ``world`` of the Kripke ``model`` (worlds, access)."""
    found = extension(_formula(text, "query", 0), model[0], model[1], Budget(MAX_MODEL_WORK), {})
    if found is None:
        raise input_error(METHOD, ["query"], f"needs more than {MAX_MODEL_WORK} world visits (MAX_MODEL_WORK)")
    return world in found


def _in_model(data: ModalInput) -> MethodOutcome:
    worlds = {w: set(props) for w, props in (data.worlds or {}).items()}
    if data.access is None:
        access = {w: set(worlds) for w in worlds}
    else:
        access = {w: set() for w in worlds}
        for a, b in data.access:
            access[a].add(b)
    actual = data.actual or next(iter(worlds))
    formulas = [_formula(q, "query", i) for i, q in enumerate(data.query)]
    budget, memo = Budget(MAX_MODEL_WORK), dict[Formula, frozenset[str]]()
    results: dict[str, bool | None] = {}
    for text, f in zip(data.query, formulas, strict=True):
        found = extension(f, worlds, access, budget, memo)
        results[text] = None if found is None else actual in found
    seen = access[actual]
    props = sorted({p for ps in worlds.values() for p in ps})
    status = {p: ("necessary" if seen and all(p in worlds[v] for v in seen) else
                  "possible" if any(p in worlds[v] for v in seen) else "impossible") for p in props}  # fmt: skip
    undecided = [q for q, v in results.items() if v is None]
    value = {"actual": actual, "results": results, "status": status, "accessible": sorted(seen),
             "work": budget.used, "undecided": undecided}  # fmt: skip
    shown = "; ".join(f"{q} is {'undecided' if v is None else 'true' if v else 'false'}" for q, v in results.items())
    conclusion = f"at {actual}: " + (shown or ", ".join(f"{p} {s}" for p, s in status.items()))
    partial = None
    if undecided:
        partial = (f"stopped after {MAX_MODEL_WORK} world visits (MAX_MODEL_WORK): {len(undecided)} of "
                   f"{len(results)} formula(s) left undecided")  # fmt: skip
    return computed(METHOD, conclusion[:1000], 1.0, value,
                    trace=[f"{len(worlds)} worlds, {sum(len(v) for v in access.values())} accessibility links",
                           f"{len(memo)} distinct subformula(s) evaluated bottom-up, {budget.used} world visits",
                           f"{sum(1 for v in results.values() if v)} of {len(results)} formulas hold at {actual}"],
                    partial=partial)  # fmt: skip


def _in_logic(data: ModalInput) -> MethodOutcome:
    rows = [decide(_formula(t, "valid", i), data.logic, "validity") for i, t in enumerate(data.valid)]
    rows += [
        decide(_formula(t, "satisfiable", i), data.logic, "satisfiability") for i, t in enumerate(data.satisfiable)
    ]
    word = {("validity", True): "valid", ("validity", False): "not valid",
            ("satisfiability", True): "satisfiable", ("satisfiability", False): "unsatisfiable"}  # fmt: skip
    parts = [f"{r['formula']} is {word[(r['task'], r['answer'])] if r['answer'] is not None else 'undecided'}"
             for r in rows]  # fmt: skip
    undecided = [r for r in rows if r["answer"] is None]
    trace = [f"tableau for {data.logic} (negation normal form, labelled worlds)"]
    trace += [f"{r['formula']}: {r['steps']} rule application(s)" + (" -> counter-model" if "counter_model" in r
              else "") for r in rows]  # fmt: skip
    partial = None
    if undecided:
        partial = (f"{len(undecided)} formula(s) undecided: the tableau stopped at "
                   f"{undecided[0]['bound']}")  # fmt: skip
    return computed(METHOD, f"in {data.logic}: " + "; ".join(parts)[:990], 1.0, {"logic": data.logic, "results": rows},
                    trace=trace, partial=partial)  # fmt: skip


def modal(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``modal``: truth in a Kripke model, or validity and satisfiability in K, T, S4, S5."""
    if not inputs:
        raise MissingInputs(METHOD, "give inputs.modal.worlds and query, or logic and valid/satisfiable formulas")
    data = parse_inputs(ModalInput, inputs, METHOD)
    if data.worlds is not None:
        return _in_model(data)
    if data.valid or data.satisfiable:
        return _in_logic(data)
    raise MissingInputs(METHOD, "give inputs.modal.worlds and query, or logic and valid/satisfiable formulas")


DOCS = {
    METHOD: MethodDoc(
        confidence="1.0 when every formula is decided: truth in a finite model is computed exactly, and the tableau "
        "is sound and complete for K, T, S4 and S5 (each counter-model is re-checked by evaluation). A "
        "formula left undecided at a bound makes the result partial (confidence at most 0.8).",
        bound=f"a formula has at most {MAX_FORMULA_CHARS} characters and {MAX_FORMULA_DEPTH} nested operators "
        f"(deeper: a one-line error naming the field); a model has at most {MAX_MODEL_WORLDS} worlds and "
        f"{MAX_LINKS} links, and evaluation stops after {MAX_MODEL_WORK} world visits (MAX_MODEL_WORK), leaving "
        f"the remaining queries undecided (partial). The tableau stops after {MAX_STEPS} rule applications "
        f"(MAX_STEPS) or {MAX_WORLDS} worlds in a branch (MAX_WORLDS): that formula is undecided (partial).",
        inputs=ModalInput,
        example={"logic": "T", "valid": ["box p -> p", "box p -> box box p"]},
        graph="nothing: the worlds or the formulas come from the inputs",
    ),
}

__all__ = ["DOCS", "MAX_MODEL_WORK", "ModalInput", "holds", "modal"]
