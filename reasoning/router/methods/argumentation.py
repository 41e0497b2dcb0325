"""Abstract argumentation (Dung 1995): grounded, preferred and stable extensions of an attack graph.

Inputs (``inputs.argumentation``)::

    {"arguments": ["a", "b", "c"], "attacks": [["a", "b"], ["b", "c"]],
     "semantics": "grounded" | "preferred" | "stable"}

- grounded: the least fixpoint of the characteristic function F(S) = {a | S defends a}, iterated
  from the empty set (polynomial; any size up to the input limits).
- preferred and stable: labellings found by a constraint solver (python-constraint2) over the labels
  in / out / undec (Caminada 2006): an argument is ``in`` iff all its attackers are ``out``, ``out``
  iff some attacker is ``in``, ``undec`` otherwise. The ``in`` sets of these complete labellings are
  the complete extensions; the preferred ones are the ⊆-maximal among them. Stable labellings are the
  complete ones without ``undec``, so for stable semantics the solver only offers in / out. The
  grounded extension is part of every complete one, so its arguments are fixed ``in`` (and those they
  attack ``out``) before the search. Labellings can number 3^(n/2): at most :data:`MAX_ARGUMENTS`
  arguments and :data:`MAX_LABELLINGS` labellings are enumerated, beyond which the input is refused.

``value.extensions`` is a list of sorted lists (sorted among themselves too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from constraint import BacktrackingSolver, FunctionConstraint, Problem
from pydantic import Field, model_validator

from kg.errors import InputError
from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.fields import distinct, input_error, parse_inputs

METHOD = "argumentation"
MAX_ARGUMENTS = 60
MAX_ATTACKS = 2_000
MAX_LABELLINGS = 10_000  # about 1.5 s of enumeration

_Name = Annotated[str, Field(min_length=1, max_length=256)]
Semantics = Literal["grounded", "preferred", "stable"]


class Framework(Model):
    """An argumentation framework and the semantics wanted."""

    arguments: list[_Name] = Field(min_length=1, max_length=1_000)
    attacks: list[Annotated[list[_Name], Field(min_length=2, max_length=2)]] = Field(
        default_factory=new_list, max_length=MAX_ATTACKS
    )
    semantics: Semantics = "grounded"

    @model_validator(mode="after")
    def _known(self) -> Framework:
        known = distinct(self.arguments, "arguments")
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


def labellings(
    arguments: list[str], attacks: list[list[str]], *, stable: bool = False, ground: set[str] | None = None
) -> list[dict[str, str]]:
    """Every complete labelling (``in``/``out``/``undec`` per argument), or with ``stable`` every stable one
    (labels ``in``/``out`` only). ``ground`` (the grounded extension) fixes what every complete labelling
    shares: its members are ``in`` and the arguments they attack ``out``.

    Raises:
        InputError: more than :data:`MAX_LABELLINGS` labellings.
    """
    attackers = attackers_of(arguments, attacks)
    beaten = {y for x, y in attacks if x in (ground or set())}
    problem = Problem(BacktrackingSolver())
    names = {a: f"v{i}" for i, a in enumerate(arguments)}  # the solver's variables: plain, hashable, ordered
    for a in arguments:
        if ground is not None and a in ground:
            domain = ["in"]
        elif a in beaten:
            domain = ["out"]
        else:
            domain = ["in", "out"] if stable else ["in", "out", "undec"]
        problem.addVariable(names[a], domain)
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
            kind = "stable" if stable else "complete"
            raise InputError(f"inputs.{METHOD}", f"more than {MAX_LABELLINGS} {kind} labellings: too large to "
                             "enumerate; ask for the grounded extension instead")  # fmt: skip
    return found


def preferred(arguments: list[str], attacks: list[list[str]], ground: set[str]) -> tuple[list[set[str]], int]:
    """The preferred extensions (⊆-maximal complete ones) and the number of complete extensions."""
    complete = {frozenset(a for a, lab in lab_.items() if lab == "in") for lab_ in labellings(
        arguments, attacks, ground=ground)}  # fmt: skip
    return [set(s) for s in complete if not any(s < other for other in complete)], len(complete)


def stable_extensions(arguments: list[str], attacks: list[list[str]], ground: set[str]) -> list[set[str]]:
    """The stable extensions: labellings with no ``undec`` argument."""
    return [{a for a, lab in lab_.items() if lab == "in"} for lab_ in labellings(
        arguments, attacks, stable=True, ground=ground)]  # fmt: skip


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
        if f.semantics == "preferred":
            found, complete = preferred(f.arguments, f.attacks, ground)
            trace.append(f"{complete} complete extension(s) from the labelling constraints (grounded part fixed); "
                         f"{len(found)} ⊆-maximal: preferred")  # fmt: skip
        else:
            found = stable_extensions(f.arguments, f.attacks, ground)
            trace.append(f"{len(found)} labelling(s) with every argument in or out: stable")
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


__all__ = [
    "METHOD",
    "Framework",
    "conclusion",
    "extensions",
    "grounded",
    "labellings",
    "preferred",
    "stable_extensions",
]
