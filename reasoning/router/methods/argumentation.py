"""Abstract argumentation (Dung 1995): grounded, preferred and stable extensions of an attack graph.

Inputs (``inputs.argumentation``)::

    {"arguments": ["a", "b", "c"], "attacks": [["a", "b"], ["b", "c"]],
     "semantics": "grounded" | "preferred" | "stable"}

- grounded: the least fixpoint of the characteristic function F(S) = {a | S defends a}, iterated
  from the empty set (polynomial; any size up to the input limits).
- preferred and stable: every complete labelling is found by a constraint solver
  (python-constraint2) over the labels in / out / undec (Caminada 2006): an argument is ``in`` iff
  all its attackers are ``out``, ``out`` iff some attacker is ``in``, ``undec`` otherwise. The
  ``in`` sets of the complete labellings are the complete extensions; the preferred ones are the
  ⊆-maximal among them, the stable ones those with no ``undec`` argument. The number of complete
  labellings can grow as 3^(n/3): at most :data:`MAX_ARGUMENTS` arguments and
  :data:`MAX_LABELLINGS` labellings are enumerated, beyond which the input is refused.

``value.extensions`` is a list of sorted lists (sorted among themselves too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from constraint import BacktrackingSolver, FunctionConstraint, Problem
from pydantic import Field, model_validator

from kg.errors import InputError
from kg.models import Model
from reasoning.router.methods.fields import input_error, parse_inputs

METHOD = "argumentation"
MAX_ARGUMENTS = 60
MAX_ATTACKS = 2_000
MAX_LABELLINGS = 20_000

_Name = Annotated[str, Field(min_length=1, max_length=256)]
Semantics = Literal["grounded", "preferred", "stable"]


class Framework(Model):
    """An argumentation framework and the semantics wanted."""

    arguments: list[_Name] = Field(min_length=1, max_length=1_000)
    attacks: list[Annotated[list[_Name], Field(min_length=2, max_length=2)]] = Field(
        default_factory=list, max_length=MAX_ATTACKS
    )
    semantics: Semantics = "grounded"

    @model_validator(mode="after")
    def _known(self) -> Framework:
        if len(set(self.arguments)) != len(self.arguments):
            raise ValueError("@arguments: arguments must be unique")
        known = set(self.arguments)
        for index, (x, y) in enumerate(self.attacks):
            for side, name in ((0, x), (1, y)):
                if name not in known:
                    raise ValueError(f"@attacks.{index}.{side}: {name!r} is not one of the arguments")
        return self


def attackers_of(arguments: list[str], attacks: list[list[str]]) -> dict[str, set[str]]:
    """For each argument, the arguments attacking it."""
    result: dict[str, set[str]] = {a: set() for a in arguments}
    for x, y in attacks:
        result[y].add(x)
    return result


def grounded(arguments: list[str], attacks: list[list[str]]) -> tuple[set[str], list[list[str]]]:
    """The grounded extension and the sets the fixpoint iteration went through."""
    attackers = attackers_of(arguments, attacks)
    current: set[str] = set()
    steps: list[list[str]] = []
    while True:
        beaten = {y for x, y in attacks if x in current}  # everything the set attacks
        nxt = {a for a in arguments if attackers[a] <= beaten}
        if nxt == current:
            return current, steps
        current = nxt
        steps.append(sorted(current))


def _rule(attackers: list[str]) -> Callable[..., bool]:
    def labelled(label: str, *others: str) -> bool:
        if label == "in":
            return all(o == "out" for o in others)
        if label == "out":
            return any(o == "in" for o in others)
        return not any(o == "in" for o in others) and not all(o == "out" for o in others)

    return labelled


def complete_labellings(arguments: list[str], attacks: list[list[str]]) -> list[dict[str, str]]:
    """Every complete labelling (``in``/``out``/``undec`` per argument).

    Raises:
        InputError: more than :data:`MAX_LABELLINGS` labellings.
    """
    attackers = attackers_of(arguments, attacks)
    problem = Problem(BacktrackingSolver())
    names = {a: f"v{i}" for i, a in enumerate(arguments)}  # the solver's variables: plain, hashable, ordered
    for a in arguments:
        problem.addVariable(names[a], ["in", "out", "undec"])
    for a in arguments:
        others = sorted(attackers[a], key=arguments.index)
        if others:
            problem.addConstraint(FunctionConstraint(_rule(others)), [names[a], *(names[o] for o in others)])
        else:  # an unattacked argument is always in
            problem.addConstraint(FunctionConstraint(lambda label: label == "in"), [names[a]])
    found = []
    for solution in problem.getSolutionIter():
        found.append({a: solution[names[a]] for a in arguments})
        if len(found) > MAX_LABELLINGS:
            raise InputError(f"inputs.{METHOD}", f"more than {MAX_LABELLINGS} complete labellings: too large to "
                             "enumerate; ask for the grounded extension instead")  # fmt: skip
    return found


def preferred_and_stable(arguments: list[str], attacks: list[list[str]]) -> tuple[list[set[str]], list[set[str]], int]:
    """The preferred and stable extensions and the number of complete ones."""
    labellings = complete_labellings(arguments, attacks)
    complete = {frozenset(a for a, lab in lab_.items() if lab == "in") for lab_ in labellings}
    preferred = [set(s) for s in complete if not any(s < other for other in complete)]
    stable = [{a for a, lab in lab_.items() if lab == "in"} for lab_ in labellings if "undec" not in lab_.values()]
    return preferred, stable, len(complete)


def _sorted(sets: list[set[str]]) -> list[list[str]]:
    return sorted(sorted(s) for s in sets)


def extensions(data: Any) -> tuple[dict[str, Any], list[str]]:
    """``value`` (``semantics``, ``extensions``, ``credulous``, ``sceptical``) and the trace.

    Raises:
        InputError: a field path under ``inputs.argumentation`` and the rule it breaks.
    """
    f = parse_inputs(Framework, data, METHOD)
    ground, steps = grounded(f.arguments, f.attacks)
    trace = [f"F^{i + 1}(∅) = {{{', '.join(s)}}}" for i, s in enumerate(steps)]
    trace = trace or ["F(∅) = ∅: every argument is attacked"]
    if f.semantics == "grounded":
        found = [ground]
    else:
        if len(f.arguments) > MAX_ARGUMENTS:
            raise input_error(METHOD, ["arguments"], f"{f.semantics} semantics enumerates labellings: at most "
                              f"{MAX_ARGUMENTS} arguments, got {len(f.arguments)}")  # fmt: skip
        preferred, stable, complete = preferred_and_stable(f.arguments, f.attacks)
        found = preferred if f.semantics == "preferred" else stable
        trace.append(f"{complete} complete extension(s) from the labelling constraints; "
                     f"{len(preferred)} preferred (⊆-maximal), {len(stable)} stable (no undec)")  # fmt: skip
    exts = _sorted(found)
    credulous = sorted(set().union(*found)) if found else []
    sceptical = sorted(set.intersection(*found)) if found else []
    return {"semantics": f.semantics, "extensions": exts, "credulous": credulous, "sceptical": sceptical,
            "grounded": sorted(ground)}, trace  # fmt: skip


def conclusion(value: dict[str, Any]) -> str:
    """One line for the extensions found."""
    exts = value["extensions"]
    if not exts:
        return f"no {value['semantics']} extension exists"
    shown = "; ".join("{" + ", ".join(e) + "}" for e in exts[:5])
    more = f" (+{len(exts) - 5} more)" if len(exts) > 5 else ""
    return f"{len(exts)} {value['semantics']} extension(s): {shown}{more}"


__all__ = ["METHOD", "Framework", "complete_labellings", "conclusion", "extensions", "grounded", "preferred_and_stable"]
