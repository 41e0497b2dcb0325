"""mabos knowledge graph: the record models and store ports (:mod:`kg.models`, :mod:`kg.ports`), the two store
adapters (:mod:`kg.store`), and the features over them: facts, the BDI graph, scopes, memory, recall,
conversations and ontologies, bundled by :class:`kg.workspace.Workspace`.

>>> import kg
>>> with kg.init_workspace("/tmp/ws") as ws:          # doctest: +SKIP
...     ws.agents.add("sales-agent", name="Sales")
...     ws.facts.assert_fact("sales-agent", "acme", "hasRevenue", "$50000", confidence=0.9)
"""

from kg.errors import MabosError
from kg.workspace import Workspace, init_workspace, open_workspace

__all__ = ["MabosError", "Workspace", "init_workspace", "open_workspace"]
