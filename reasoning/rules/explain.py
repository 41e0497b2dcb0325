"""Explanations: the derivation tree of a fact, down to the asserted facts it rests on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kg.errors import NotFoundError
from reasoning.rules.results import ForwardResult, Key, Triple


def explain(key: tuple[str, str, str], facts: Iterable[Triple], result: ForwardResult) -> dict[str, Any]:
    """The derivation tree of a fact as plain data (JSON-ready).

    An asserted fact is a leaf ``{"triple", "confidence", "asserted": True, "uid"}``; a derived one is
    ``{"triple", "confidence", "asserted": False, "rule": {"id", "name", "confidence_factor"},
    "bindings", "supports": [...]}`` with one subtree per supporting triple, in condition order.

    Args:
        key: the ``(subject, predicate, object)`` to explain.
        facts: the facts ``result`` was computed from.
        result: a :func:`~reasoning.rules.forward_chain` result.

    Raises:
        NotFoundError: the triple is neither among the facts nor derived.
    """
    asserted: dict[Key, Triple] = {}
    for fact in facts:
        known = asserted.get(fact.key)
        if known is None or fact.confidence > known.confidence:
            asserted[fact.key] = fact
    if key not in asserted and result.lookup(key) is None:
        raise NotFoundError(f"{key} is neither a given fact nor derived")
    return _node(key, asserted, result, frozenset())


def _node(key: Key, asserted: dict[Key, Triple], result: ForwardResult, path: frozenset[Key]) -> dict[str, Any]:
    fact = asserted.get(key)
    if fact is not None:
        return {"triple": list(key), "confidence": fact.confidence, "asserted": True, "uid": fact.uid}
    derivation = result.lookup(key)
    if derivation is None:  # not from these facts: the result was computed from other ones
        return {"triple": list(key), "asserted": False, "unknown": True}
    if key in path:  # cannot happen for a finished run (supports are derived earlier); guard anyway
        return {"triple": list(key), "asserted": False, "cycle": True}
    rule = result.rules.get(derivation.rule_id)
    inner = path | {key}
    return {
        "triple": list(key),
        "confidence": derivation.triple.confidence,
        "asserted": False,
        "rule": {
            "id": derivation.rule_id,
            "name": rule.name if rule else None,
            "confidence_factor": rule.confidence_factor if rule else None,
        },
        "bindings": dict(derivation.bindings),
        "supports": [_node(support, asserted, result, inner) for support in derivation.support],
    }
