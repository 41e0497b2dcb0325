"""Records several test modules share: the seed's running rule, an ontology proposal and the graph-query tests'
workspace (moved out of conftest.py, which holds the fixtures and hooks)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kg
from kg.clock import FixedClock
from kg.workspace import Workspace
from tests.conftest import T0

#: The seed's running rule: a company with revenue over 1,000,000 located in the US is taxable (structured form).
TAXABLE: dict[str, Any] = {
    "name": "taxable",
    "conditions": [
        {"subject": "?x", "predicate": "hasRevenue", "object": "1000000", "operator": "gt"},
        {"subject": "?x", "predicate": "locatedIn", "object": "US"},
    ],
    "conclusion": {"subject": "?x", "predicate": "isTaxable", "object": "true"},
}

#: An ontology proposal for a new class under the shipped ``sbvr-business`` domain.
VENDOR: dict[str, Any] = {
    "domain": "sbvr-business", "node_type": "class", "node_id": "biz:DropshipVendor", "label": "Dropship Vendor",
    "parent_class": "biz:Supplier", "sbvr_definition": "A dropship vendor is a supplier that ships to the buyer.",
    "rationale": "three suppliers ship direct",
}  # fmt: skip


@contextmanager
def q3_workspace(path: Path) -> Iterator[Workspace]:
    """A workspace at ``path`` on a clock fixed at :data:`T0`: agents ``sales``, ``finance`` and ``ops``, the last two
    granted ``project:q3`` (the graph-query tests' world; set ``MABOS_EMBEDDER=none`` first)."""
    with kg.init_workspace(path, clock=FixedClock(T0)) as ws:
        for agent in ("sales", "finance", "ops"):
            ws.agents.add(agent)
        ws.scopes.grant("finance", "project:q3", granted_by="admin")
        ws.scopes.grant("ops", "project:q3", granted_by="admin")
        yield ws
