"""The OWL 2 RL use case's request and report: what ``reason owl-rl`` takes and answers, declared once.

:func:`reasoning.owl.run_owl_rl` accepts it; the tool ``reason_owl_rl`` (cli/tools/owl_rl.py) is it plus
``agent_id``, and ``mabos reason owl-rl`` generates its options from it
(docs/decisions/2026-11-28-request-models.md). Extra ontology files are not part of it: a path is the operator's
(``--ontology``), never an agent's. The report (:class:`OwlRlReport`, its :class:`Entailment` rows) is declared
here too, beside the request: the tool's output model and ``mabos reason`` need them without rdflib, which
:mod:`reasoning.owl` loads.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kg.models import Model
from kg.models.base import new_list
from kg.models.request import Request

#: The most entailments one answer lists (all of them are written; ``entailed`` counts them).
MAX_LISTED = 100_000


class OwlRlRequest(Request):
    """Whether to write, which engine computes the closure, and how many entailments the answer lists."""

    dry_run: bool = Field(default=False, description="Report what would be written and retracted; write nothing.")
    engine: Literal["mabos", "owlrl"] = Field(
        default="mabos",
        description="mabos: our OWL 2 RL engine; owlrl: the reference library (same closure, much slower).",
    )
    limit: int = Field(
        default=1_000,
        ge=1,
        le=MAX_LISTED,
        description=f"List at most this many entailments in the answer (1..{MAX_LISTED}); all are written.",
    )


class Entailment(Model):
    """A triple OWL 2 RL adds to the facts, as fact terms.

    ``support`` is the uids of the input facts that mention the subject or object (at most
    :data:`reasoning.owl.MAX_SUPPORT`): owlrl gives no provenance, so this is the facts about the same individuals,
    not a proof. ``confidence`` is the lowest confidence among them; ``uid`` is set once the fact is written.
    """

    subject: str
    predicate: str
    object: str
    object_kind: str
    support: list[str]
    confidence: float = 1.0
    uid: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """(subject, predicate, object)."""
        return self.subject, self.predicate, self.object


class OwlRlReport(Model):
    """What ``reason owl-rl`` did (with ``dry_run``, what it would do: nothing is written or retracted)."""

    agent_id: str
    dry_run: bool
    input_facts: int
    ontology_triples: int
    entailed: int
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    retracted: list[str] = Field(default_factory=new_list)
    triples_before: int = 0
    triples_after: int = 0
    seconds: float = 0.0
    inconsistencies: list[str] = Field(default_factory=new_list)
    entailments: list[Entailment] = Field(default_factory=new_list)


__all__ = ["MAX_LISTED", "Entailment", "OwlRlReport", "OwlRlRequest"]
