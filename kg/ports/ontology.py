"""Port of ontology proposals."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Protocol

from kg.models import (
    OntologyProposal,
    ProposalStatus,
)


class ProposalStore(Protocol):
    """Ontology proposals, stored whole with their status history."""

    def add(self, proposal: OntologyProposal) -> OntologyProposal:
        """Store a new proposal with an outbox event."""
        ...

    def get(self, uid: str) -> OntologyProposal:
        """A proposal by uid (any scope), or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(
        self, *, scopes: Sequence[str] | None = None, status: ProposalStatus | None = None,
        domain: str | None = None,
    ) -> builtins.list[OntologyProposal]:  # fmt: skip
        """Proposals oldest first (every scope when ``scopes`` is None), optionally filtered."""
        ...

    def update(self, proposal: OntologyProposal, *, expected_status: ProposalStatus) -> OntologyProposal:
        """Replace a proposal whose stored status is still ``expected_status`` (ConflictError otherwise)."""
        ...
