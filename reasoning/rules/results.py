"""What the rule engine takes and gives back: triples, patterns, derivations, proofs, hypotheses,
violations and policy firings. Plain frozen dataclasses, so results compare and print simply.

Bindings map variable names *with* their question mark (``{"?x": "acme"}``) to values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kg.models import Operator, Rule, Severity

#: A fact's identity as the engine sees it: ``(subject, predicate, object)``.
Key = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Triple:
    """A fact: a stored one (``uid`` set) or one the engine derived (``uid`` is ``None``)."""

    subject: str
    predicate: str
    object: str
    confidence: float = 1.0
    uid: str | None = None

    @property
    def key(self) -> Key:
        """``(subject, predicate, object)``."""
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True, slots=True)
class Pattern:
    """A condition with the bindings known at that point applied; unbound ``?variables`` remain."""

    subject: str
    predicate: str
    object: str
    operator: Operator = Operator.EQ

    def __str__(self) -> str:
        obj = self.object if self.operator is Operator.EQ else f"{self.operator.value} {self.object}"
        return f"({self.subject}, {self.predicate}, {obj})"


@dataclass(frozen=True, slots=True)
class Derivation:
    """A triple forward chaining added, with the rule and the supporting triples of its best derivation."""

    triple: Triple
    rule_id: str
    support: tuple[Key, ...]
    bindings: dict[str, str]


@dataclass(frozen=True, slots=True)
class ChainLimits:
    """Bounds of one forward chaining run (``None``: unbounded).

    Attributes:
        max_derived: the most triples a run may add; the run stops when one more would be added.
        max_join: the most candidate facts the joins may examine (each lookup adds the size of its bucket);
            it bounds the time of a run, which the number of derived triples alone does not (a transitive
            rule over a chain of 400 examines millions of candidates to derive 80,000 triples).
    """

    max_derived: int | None = None
    max_join: int | None = None


#: Why a run stopped before its fixpoint.
STOP_REASONS = ("max_iterations", "max_derived", "max_join")


@dataclass(slots=True)
class ForwardResult:
    """The outcome of :func:`~reasoning.rules.forward_chain`.

    Attributes:
        derived: the triples not among the input facts, in the order they were first derived.
        iterations: how many rounds ran (round 1 applies the rules to the input facts).
        fixpoint: whether the last round derived nothing (``False`` when a bound cut the run: then
            ``derived`` is a sound but incomplete part of the closure).
        fired: per enabled inference rule uid, how many new triples or raised confidences it produced.
        rules: the enabled inference rules by uid (for explanations).
        stopped_by: ``None`` at the fixpoint, else which bound cut the run (one of :data:`STOP_REASONS`).
        join_work: candidate facts the joins examined (what ``max_join`` bounds).
    """

    derived: list[Derivation]
    iterations: int
    fixpoint: bool
    fired: dict[str, int]
    rules: dict[str, Rule] = field(default_factory=dict)
    stopped_by: str | None = None
    join_work: int = 0
    _by_key: dict[Key, Derivation] | None = field(default=None, init=False, repr=False, compare=False)

    def lookup(self, key: Key) -> Derivation | None:
        """The derivation of a triple, or ``None`` if it was not derived."""
        if self._by_key is None:
            self._by_key = {d.triple.key: d for d in self.derived}
        return self._by_key.get(key)

    def triples(self) -> list[Triple]:
        """The derived triples (confidence set, no uid)."""
        return [d.triple for d in self.derived]


@dataclass(frozen=True, slots=True)
class ProofNode:
    """One node of a proof tree: a stored fact (a leaf, ``rule_id`` is ``None``) or a rule application."""

    triple: Key
    confidence: float
    uid: str | None = None
    rule_id: str | None = None
    rule_name: str | None = None
    bindings: Mapping[str, str] = field(default_factory=dict)
    children: tuple[ProofNode, ...] = ()

    @property
    def is_fact(self) -> bool:
        """Whether this node is a stored (input) fact."""
        return self.rule_id is None

    def to_dict(self) -> dict[str, Any]:
        """The tree as plain data (JSON-ready)."""
        if self.is_fact:
            return {"triple": list(self.triple), "confidence": self.confidence, "fact": self.uid}
        return {
            "triple": list(self.triple),
            "confidence": self.confidence,
            "rule": {"id": self.rule_id, "name": self.rule_name},
            "bindings": dict(self.bindings),
            "children": [child.to_dict() for child in self.children],
        }


@dataclass(frozen=True, slots=True)
class ProofResult:
    """The outcome of :func:`~reasoning.rules.prove`: proofs (one per distinct answer) or the gaps; ``complete``
    false and a ``note`` when the search was cut at its step bound, and the ``steps`` it took."""

    goal: Key
    proved: bool
    proofs: list[ProofNode]
    gaps: list[Pattern]
    complete: bool = True
    steps: int = 0
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A rule that would explain an observation, with how much of its body the facts already support."""

    rule_id: str
    name: str
    score: float
    confidence_factor: float
    bindings: dict[str, str]
    supported: tuple[Triple, ...]
    missing: tuple[Pattern, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleMatch:
    """A rule whose conditions all hold: which rule, the variable bindings and the facts that matched."""

    rule_id: str
    name: str
    bindings: dict[str, str]
    facts: tuple[Triple, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation(RuleMatch):
    """A constraint whose conditions all hold."""

    severity: Severity
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyFiring(RuleMatch):
    """A policy whose conditions all hold: the action to take (``?vars`` substituted)."""

    action: str
    escalate: bool
