"""mabos knowledge graph: the record models and store ports (:mod:`kg.models`, :mod:`kg.ports`), the two store
adapters (:mod:`kg.store`), and the features over them: facts, the BDI graph, scopes, memory, recall,
conversations and ontologies, bundled by :class:`kg.workspace.Workspace`.

>>> import kg
>>> with kg.init_workspace("/tmp/ws") as ws:          # doctest: +SKIP
...     ws.agents.add("sales-agent", name="Sales")
...     ws.facts.assert_fact("sales-agent", "acme", "hasRevenue", "$50000", confidence=0.9)

The names below load on first use (PEP 562): ``import kg.errors`` imports the errors only, not the workspace
with its stores and indexes (tests/unit/test_startup_imports.py pins it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg.errors import MabosError
    from kg.workspace import Workspace, init_workspace, open_workspace

#: Exported name -> the module that defines it.
_EXPORTS = {
    "MabosError": "kg.errors",
    "Workspace": "kg.workspace",
    "init_workspace": "kg.workspace",
    "open_workspace": "kg.workspace",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kg' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = ["MabosError", "Workspace", "init_workspace", "open_workspace"]
