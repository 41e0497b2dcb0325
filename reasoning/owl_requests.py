"""The OWL 2 RL use case's request: what ``reason owl-rl`` takes, declared once.

:func:`reasoning.owl.run_owl_rl` accepts it; the tool ``reason_owl_rl`` (cli/tools/owl_rl.py) is it plus
``agent_id``, and ``mabos reason owl-rl`` generates its options from it
(docs/decisions/2026-11-28-request-models.md). Extra ontology files are not part of it: a path is the operator's
(``--ontology``), never an agent's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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


__all__ = ["MAX_LISTED", "OwlRlRequest"]
