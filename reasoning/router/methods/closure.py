"""Goals decided on the bounded forward closure, with proof trees rebuilt from the derivations.

Backward chaining explores every way to a goal and grows exponentially with the depth (a transitive rule over
ten fully connected nodes: 10 s at depth 5); the forward closure under :data:`reasoning.bounds.DEFAULT_LIMITS`
(or the workspace's bounds) is bounded by its join work. A goal is *proved* when a matching triple is in the
closure (its proof tree follows the recorded derivations), *unknown* otherwise: not derivable from what is known
(gaps: the missing conditions of the rules that conclude it, from :func:`reasoning.rules.abduction.abduce`), and,
when the closure was cut by a bound, possibly derivable past it (the answer is then partial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kg.models import Rule
from reasoning.bounds import DEFAULT_LIMITS, status
from reasoning.rules.abduction import abduce
from reasoning.rules.forward import forward_chain
from reasoning.rules.results import ChainLimits, Derivation, ForwardResult, Key, ProofNode, Triple

MAX_ROUNDS = 100
MAX_PROOF_NODES = 500  # nodes of one rebuilt proof tree; deeper parts are left out (and said so)
MAX_ANSWERS = 10
MAX_GAPS = 20


@dataclass
class Closure:
    """The facts of a bounded forward closure: ``facts`` by key, ``derived`` derivations by key, the run."""

    facts: dict[Key, Triple]
    derived: dict[Key, Derivation]
    result: ForwardResult
    limits: ChainLimits

    @property
    def complete(self) -> bool:
        """Whether the closure reached its fixpoint."""
        return self.result.fixpoint

    def note(self) -> str | None:
        """One sentence when a bound cut the closure (None when complete)."""
        if self.result.fixpoint:
            return None
        why = status(self.result, self.limits).note
        return why or f"the forward closure stopped after {self.result.iterations} rounds (max_iterations)"


def close(base: Sequence[Triple], rules: Sequence[Rule], limits: ChainLimits | None = None) -> Closure:
    """The forward closure of ``base`` under ``rules`` within ``limits`` (default :data:`DEFAULT_LIMITS`)."""
    bound = limits or DEFAULT_LIMITS
    result = forward_chain(base, rules, max_iterations=MAX_ROUNDS, limits=bound)
    facts = {t.key: t for t in base}
    derived = {d.triple.key: d for d in result.derived}
    facts.update({k: d.triple for k, d in derived.items()})
    return Closure(facts, derived, result, bound)


def matches(goal: Key, closure: Closure) -> list[Key]:
    """Keys of the closure matching ``goal`` (terms starting with ``?`` match anything), best confidence first."""
    if not any(t.startswith("?") for t in goal):
        return [goal] if goal in closure.facts else []
    found = [k for k in closure.facts if all(g.startswith("?") or g == v for g, v in zip(goal, k, strict=True))]
    return sorted(found, key=lambda k: (-closure.facts[k].confidence, k))[:MAX_ANSWERS]


def proof(key: Key, closure: Closure, rules: Sequence[Rule], budget: list[int] | None = None) -> ProofNode:
    """The proof tree of ``key`` along the recorded derivations (at most :data:`MAX_PROOF_NODES` nodes)."""
    budget = budget if budget is not None else [MAX_PROOF_NODES]
    budget[0] -= 1
    fact = closure.facts[key]
    step = closure.derived.get(key)
    if step is None:
        return ProofNode(key, fact.confidence, uid=fact.uid)
    names = {r.uid: r.name for r in rules}
    kids = tuple(proof(k, closure, rules, budget) for k in step.support if k in closure.facts and budget[0] > 0)
    return ProofNode(key, fact.confidence, None, step.rule_id, names.get(step.rule_id), dict(step.bindings), kids)


def gaps(goal: Key, closure: Closure, rules: Sequence[Rule]) -> list[str]:
    """The missing conditions of the rules that would conclude ``goal``, best supported rule first."""
    found = abduce(goal, list(closure.facts.values()), rules)
    missing = [str(p) for h in found for p in h.missing]
    return list(dict.fromkeys(missing))[:MAX_GAPS] or [f"({', '.join(goal)})"]


def walk(node: ProofNode) -> list[str]:
    """Uids of the stored facts and rules a proof tree rests on."""
    found = [x for x in (node.uid, node.rule_id) if x]
    for child in node.children:
        found += walk(child)
    return found


def decide(goal: Key, base: Sequence[Triple], rules: Sequence[Rule],
           limits: ChainLimits | None = None) -> dict[str, Any]:  # fmt: skip
    """``status`` (proved / unknown), ``confidence`` (the best proof's, 0 when unknown), ``answers``, ``proof``
    (dict), ``gaps``, ``uses`` (uids), ``partial`` (a sentence when the closure was cut, else None)."""
    closure = close(base, rules, limits)
    keys = matches(goal, closure)
    cut = closure.note()
    if not keys:
        return {"status": "unknown", "confidence": 0.0, "answers": [], "proof": None, "uses": [], "partial": cut,
                "gaps": gaps(goal, closure, rules), "derived": len(closure.derived)}  # fmt: skip
    tree = proof(keys[0], closure, rules)
    return {"status": "proved", "confidence": closure.facts[keys[0]].confidence,
            "answers": [" ".join(k) for k in keys],
            "proof": tree.to_dict(), "gaps": [], "uses": walk(tree), "partial": None,
            "derived": len(closure.derived)}  # fmt: skip


__all__ = ["MAX_PROOF_NODES", "Closure", "close", "decide", "gaps", "matches", "proof", "walk"]
