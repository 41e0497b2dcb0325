"""The premises of the rule-based methods: facts and inference rules, given in the inputs or read from the graph.

Deductive, abductive, inductive, counterfactual and meta-cognitive reason over ``"facts": ["S P O", ..]`` and
``"rules": [rule objects]`` when the inputs give them, else over the agent's asserted facts and enabled inference
rules (what its scopes allow). Deontic, temporal and analogical read ``"S P O"`` triples with :func:`triple`.
Apart from the engines that use them so that importing one of those engines loads no other one (and, for
deductive, neither NumPy nor networkx: the counterfactual's structural models need them).
"""

from __future__ import annotations

from typing import Any

from kg.errors import InputError
from kg.models import Rule, RuleType
from reasoning.router.methods.base import MethodContext, MissingInputs, fail
from reasoning.rules.checks import build_rule
from reasoning.rules.results import Key, Triple


def triple(value: Any, method: str, path: str) -> Key:
    """``"S P O"`` or ``[S, P, O]`` as a key.

    Raises:
        InputError: anything else.
    """
    parts = value.split(maxsplit=2) if isinstance(value, str) else value
    if not isinstance(parts, list | tuple) or len(parts) != 3 or not all(isinstance(p, str) and p.strip()
                                                                         for p in parts):  # fmt: skip
        raise fail(method, path, "must be 'SUBJECT PREDICATE OBJECT' or [subject, predicate, object]")
    return (parts[0], parts[1], parts[2])


def knowledge(ctx: MethodContext, method: str, inputs: dict[str, Any]) -> tuple[list[Triple], list[Rule], bool]:
    """Facts and inference rules from the inputs, else from the agent's graph; and whether they are records."""
    if "facts" in inputs or "rules" in inputs:
        raw_facts, raw_rules = inputs.get("facts", []), inputs.get("rules", [])
        if not isinstance(raw_facts, list) or not isinstance(raw_rules, list):
            raise fail(method, "facts", "facts and rules must be lists")
        base = [Triple(*triple(f, method, f"facts.{i}")) for i, f in enumerate(raw_facts)]
        rules = []
        for i, data in enumerate(raw_rules):
            try:
                rules.append(build_rule(data if isinstance(data, dict) else {}, agent_id=ctx.agent_id))
            except InputError as exc:
                raise fail(method, f"rules.{i}.{exc.field}", exc.rule) from None
        return base, rules, False
    if ctx.workspace is None:
        raise MissingInputs(method, f"give inputs.{method}.facts and rules, or run it for an agent")
    reasoner = ctx.reasoner()
    return reasoner.base_facts(ctx.agent_id), reasoner.rules(ctx.agent_id, RuleType.INFERENCE), True


__all__ = ["knowledge", "triple"]
