"""Where each agent tool is declared, so the registry imports a tool's module only when the tool is needed.

:data:`TOOL_TABLE` maps every tool name to ``module:handler``; :class:`ToolRegistry` (``cli.tools.REGISTRY``) is a
mapping over it that imports a module on first use of one of its tools, and every tool module when the tools are
listed (``mabos tools list``, the MCP server's ``tools/list``, the docs). ``mabos fact query`` therefore imports the
fact tools only. ``tests/unit/test_startup_imports.py`` checks the table against what importing every module
registers (names, order, handlers), so a new tool that is not in the table fails a test, and is still found.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Generic, TypeVar

#: What the registry holds (``cli.tools.registry.Tool``; a type parameter, so this table needs nothing of the module
#: that imports it).
T = TypeVar("T")

#: Every tool by name -> ``module:handler``, in the order the tools are listed (modules by name, then declaration
#: order). A module is imported when one of its tools is called or the tools are listed with their schemas;
#: tests/unit/test_startup_imports.py checks this table against what importing every tool module registers.
TOOL_TABLE: dict[str, str] = {
    "bdi_add": "cli.tools.bdi:bdi_add",
    "bdi_list": "cli.tools.bdi:bdi_list",
    "bdi_update": "cli.tools.bdi:bdi_update",
    "cbr_store": "cli.tools.cases:cbr_store",
    "cbr_retrieve": "cli.tools.cases:cbr_retrieve",
    "reason": "cli.tools.cases:reason_tool",
    "lcm_grep": "cli.tools.conversation:lcm_grep",
    "lcm_describe": "cli.tools.conversation:lcm_describe",
    "lcm_expand": "cli.tools.conversation:lcm_expand",
    "context_assemble": "cli.tools.conversation:context_assemble",
    "conversation_ingest": "cli.tools.conversation_admin:conversation_ingest",
    "conversation_compact": "cli.tools.conversation_admin:conversation_compact",
    "memory_extract": "cli.tools.extraction:memory_extract",
    "memory_list": "cli.tools.extraction:memory_list",
    "fact_assert": "cli.tools.fact_writes:fact_assert",
    "fact_retract": "cli.tools.fact_writes:fact_retract",
    "fact_query": "cli.tools.facts:fact_query",
    "fact_explain": "cli.tools.facts_explain:fact_explain",
    "fact_import": "cli.tools.facts_import:fact_import",
    "bdi_cycle": "cli.tools.graph:bdi_cycle",
    "graph_query": "cli.tools.graph:graph_query",
    "graph_link": "cli.tools.graph_links:graph_link",
    "graph_relations": "cli.tools.graph_links:graph_relations",
    "graph_path": "cli.tools.graph_links:graph_path",
    "rule_create": "cli.tools.rules:rule_create",
    "rule_import": "cli.tools.rules:rule_import",
    "rule_list": "cli.tools.rules:rule_list",
    "rule_toggle": "cli.tools.rules:rule_toggle",
    "constraint_check": "cli.tools.rules:constraint_check",
    "policy_eval": "cli.tools.rules:policy_eval",
    "infer_forward": "cli.tools.inference:infer_forward",
    "infer_backward": "cli.tools.inference:infer_backward",
    "infer_abductive": "cli.tools.inference:infer_abductive",
    "knowledge_explain": "cli.tools.inference:knowledge_explain",
    "memory_store_item": "cli.tools.memory:memory_store_item",
    "memory_recall": "cli.tools.memory:memory_recall",
    "memory_consolidate": "cli.tools.memory_admin:memory_consolidate",
    "memory_checkpoint": "cli.tools.memory_admin:memory_checkpoint",
    "memory_build_hierarchy": "cli.tools.memory_admin:memory_build_hierarchy",
    "memory_hierarchy_search": "cli.tools.memory_admin:memory_hierarchy_search",
    "memory_status": "cli.tools.memory_admin:memory_status",
    "memory_admit": "cli.tools.memory_admit:memory_admit",
    "memory_materialize": "cli.tools.memory_files:memory_materialize",
    "memory_export": "cli.tools.memory_files:memory_export",
    "memory_import": "cli.tools.memory_files:memory_import",
    "ontology_propose_concept": "cli.tools.ontology:ontology_propose_concept",
    "ontology_validate_proposal": "cli.tools.ontology:ontology_validate_proposal",
    "ontology_merge_approved": "cli.tools.ontology:ontology_merge_approved",
    "ontology_list_proposals": "cli.tools.ontology:ontology_list_proposals",
    "ontology_scaffold_domain": "cli.tools.ontology:ontology_scaffold_domain",
    "ontology_reject_proposal": "cli.tools.ontology_admin:ontology_reject_proposal",
    "ontology_diff": "cli.tools.ontology_admin:ontology_diff",
    "ontology_check": "cli.tools.ontology_admin:ontology_check",
    "ontology_to_typeql": "cli.tools.ontology_admin:ontology_to_typeql",
    "reason_owl_rl": "cli.tools.owl_rl:reason_owl_rl",
    "rule_delete": "cli.tools.rules_admin:rule_delete",
    "rule_export": "cli.tools.rules_admin:rule_export",
    "typedb_status": "cli.tools.typedb:typedb_status",
    "typedb_sync_schema": "cli.tools.typedb:typedb_sync_schema",
    "typedb_query": "cli.tools.typedb:typedb_query",
    "typedb_sync_agent_data": "cli.tools.typedb:typedb_sync_agent_data",
}

#: The package whose modules declare tools, and those of its modules that declare none.
TOOL_PACKAGE = "cli.tools"
INFRASTRUCTURE = frozenset(
    {"registry", "export", "mcp_server", "mcp_calls", "mcp_workers", "mcp_auth", "overrides", "tool_table"}
)


class ToolRegistry(MutableMapping[str, T], Generic[T]):
    """Every tool by name, each module imported when one of its tools is first needed.

    ``name in REGISTRY`` and ``REGISTRY.get(name)`` import the one module :data:`TOOL_TABLE` names; iterating,
    ``len`` and ``items()``/``values()`` import every tool module first (a tool missing from the table is then
    still found, after the table's tools), so a listing is always complete and in one order.
    """

    def __init__(self, table: Mapping[str, str]) -> None:
        self._table = dict(table)
        self._tools: dict[str, T] = {}
        self._removed: set[str] = set()
        self._all_loaded = False
        self._lock = threading.RLock()

    def registered(self, name: str) -> bool:
        """Whether ``name`` is registered already (imports nothing)."""
        return name in self._tools

    def _load_module_of(self, name: str) -> None:
        where = self._table.get(name)
        if where is not None and name not in self._tools and name not in self._removed:
            with self._lock:
                importlib.import_module(where.split(":", 1)[0])

    def load_all(self) -> None:
        """Import every tool module of :data:`TOOL_PACKAGE` (once)."""
        if self._all_loaded:
            return
        import pkgutil  # noqa: PLC0415 - listing every tool only: a command runs one

        with self._lock:
            package = importlib.import_module(TOOL_PACKAGE)
            for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
                if module not in INFRASTRUCTURE:
                    importlib.import_module(f"{TOOL_PACKAGE}.{module}")
            self._all_loaded = True

    def _names(self) -> list[str]:
        self.load_all()
        listed = [n for n in self._table if n in self._tools]
        return listed + [n for n in self._tools if n not in self._table]

    def __getitem__(self, name: str) -> T:
        if name not in self._tools:
            self._load_module_of(name)
        if name not in self._tools and name not in self._removed:
            self.load_all()  # a tool the table does not name yet
        return self._tools[name]

    def __setitem__(self, name: str, found: T) -> None:
        self._tools[name] = found
        self._removed.discard(name)

    def __delitem__(self, name: str) -> None:
        del self._tools[name]
        self._removed.add(name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


__all__ = ["INFRASTRUCTURE", "TOOL_PACKAGE", "TOOL_TABLE", "ToolRegistry"]
