"""What the fact service's explain and bulk asserts answer: :class:`Explanation` and :class:`BulkResult`.

Apart from :mod:`kg.facts` so that a fact query, which answers neither, does not define them (two pydantic models,
~3.6 M instructions of a cold ``mabos fact query``); ``kg.facts.Explanation`` and ``kg.facts.BulkResult`` still
name them. No ``from __future__ import annotations``: the fields are evaluated in the class body
(docs/decisions/2026-11-29-pydantic-plugins.md).
"""

from pydantic import Field

from kg.models import Fact, Model
from kg.models.base import new_list


class Explanation(Model):
    """Why a fact holds: the fact, the rule that derived it and, recursively, its supports."""

    uid: str
    fact: Fact | None = None
    rule_id: str | None = None
    rule_name: str | None = None  # when the rule is stored and visible to the agent
    confidence_factor: float | None = None
    visible: bool = True
    cycle: bool = False
    truncated: bool = False
    supports: list["Explanation"] = Field(default_factory=new_list)


def support(uid: str, fact: Fact | None, scopes: set[str], ancestors: frozenset[str]) -> Explanation:
    """The node of a supporting fact: hidden when unknown or outside ``scopes``, a cycle when it is one of its own
    ``ancestors``."""
    if fact is None or fact.scope not in scopes:  # unknown, or private to someone else: say nothing more
        return Explanation(uid=uid, visible=False)
    if uid in ancestors:
        return Explanation(uid=uid, rule_id=fact.rule_id, cycle=True)
    return Explanation(uid=uid, fact=fact, rule_id=fact.rule_id)


class BulkResult(Model):
    """Counts of a bulk assert."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    uids: list[str] = Field(default_factory=new_list)


__all__ = ["BulkResult", "Explanation", "support"]
