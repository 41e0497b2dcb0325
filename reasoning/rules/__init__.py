"""The rule engine (design.md §5): pure functions over in-memory triples, no store and no I/O but rule files.

* :func:`forward_chain` — semi-naive fixpoint of the inference rules, with provenance and confidences;
* :func:`prove` — backward chaining with proof trees, cycle guard, depth limit and knowledge gaps;
* :func:`abduce` — the rules that would explain an observation, ranked;
* :func:`check_constraints`, :func:`evaluate_policies` — rules that report instead of deriving;
* :func:`explain` — the derivation tree of a fact;
* :func:`check_rule`, :func:`build_rule`, :func:`load_rules`, :func:`dump_rules` — rules in and out.

See ``docs/rules-engine.md``.
"""

from reasoning.rules.abduction import abduce
from reasoning.rules.backward import prove
from reasoning.rules.checks import build_rule, check_rule, is_var
from reasoning.rules.evaluate import (
    CONTEXT,
    check_constraints,
    constraint_violations,
    evaluate_policies,
    policy_firings,
    substitute,
)
from reasoning.rules.explain import explain
from reasoning.rules.forward import forward_chain
from reasoning.rules.io import dump_rules, load_rules, parse_rules, rules_from_data
from reasoning.rules.numbers import compare, parse_number
from reasoning.rules.results import (
    ChainLimits,
    Derivation,
    ForwardResult,
    Hypothesis,
    Key,
    Pattern,
    PolicyFiring,
    ProofNode,
    ProofResult,
    Triple,
    Violation,
)

__all__ = [
    "CONTEXT",
    "ChainLimits",
    "Derivation",
    "ForwardResult",
    "Hypothesis",
    "Key",
    "Pattern",
    "PolicyFiring",
    "ProofNode",
    "ProofResult",
    "Triple",
    "Violation",
    "abduce",
    "build_rule",
    "check_constraints",
    "check_rule",
    "compare",
    "constraint_violations",
    "dump_rules",
    "evaluate_policies",
    "explain",
    "forward_chain",
    "is_var",
    "load_rules",
    "parse_number",
    "parse_rules",
    "policy_firings",
    "prove",
    "rules_from_data",
    "substitute",
]
