"""The case-based reasoning use cases' requests: what ``cbr store`` and ``cbr retrieve`` take, each declared once.

:class:`reasoning.cases.CaseService` accepts these models; the tools ``cbr_store`` and ``cbr_retrieve``
(cli/tools/cases.py) are these models plus ``agent_id``, and ``mabos cbr store|retrieve`` generate their options
from them (docs/decisions/2026-11-28-request-models.md). Retrieval returns 1..100 cases (5 by default).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kg.models import MAX_CONTENT, MAX_LIST, CaseOutcome, CaseSituation, CaseSolution, RecordId, Unit
from kg.models.base import new_list
from kg.models.request import Request
from reasoning.cbr import DEFAULT_K, CBRWeights

MAX_K = 100  # CaseService.retrieve's ceiling

_Item = Annotated[str, Field(max_length=1024)]


class CbrStoreRequest(Request):
    """One past case: its situation, what was done and how it went."""

    situation: CaseSituation = Field(
        description="The situation: {beliefs: [..], desires: [..], context: 'free text'}; beliefs and desires are "
        "uids (B-..., D-...) or short statements."
    )
    solution: CaseSolution = Field(description="What was done: {plan_id: 'P-...' or null, actions: ['..']}.")
    outcome: CaseOutcome = Field(
        description="How it went: {success: true|false, metrics: {name: number}, lessons: ['..']}."
    )
    scope: str | None = Field(None, description="Where to store it (default the agent's own scope 'agent:<id>').")
    uid: RecordId | None = Field(None, description="Optional: the uid (C-...) to store it under; default a new one.")


class CbrRetrieveRequest(Request):
    """The current situation to find similar past cases for."""

    beliefs: list[_Item] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="The current beliefs: uids or short statements."
    )
    desires: list[_Item] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="The current desires: uids or short statements."
    )
    context: str = Field(
        "", max_length=MAX_CONTENT, description="Free text compared with the cases' contexts (needs the embedder)."
    )
    k: int = Field(DEFAULT_K, ge=1, le=MAX_K, description="How many cases at most (1..100).")
    min_score: Unit = Field(0.0, description="Only cases scoring at least this (0..1).")
    weights: CBRWeights | None = Field(
        None, description="Optional weights {beliefs: 0.6, desires: 0.4, context: 0.2} (beliefs:desires is a ratio)."
    )


__all__ = ["MAX_K", "CbrRetrieveRequest", "CbrStoreRequest"]
