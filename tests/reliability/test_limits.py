"""Limits (issue 10, point 6): every size limit holds at its boundary: the limit is accepted, one more is refused
with an InputError naming the field, and a refused call leaves the workspace byte-for-byte unchanged.

Two layers: the declared limits of every tool input model, read from the models themselves (so a new limit is
tested without editing this file), checked where the tools parse their arguments; and the stored limits
(kg.models MAX_* and the query caps) checked end to end on a real workspace through ``cli.tools.call`` and the
services. docs/reliability-input.md has the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic.fields import FieldInfo

import kg
from cli import tools
from kg.errors import InputError
from kg.ids import new_id
from kg.models import MAX_CONTENT, MAX_LIST, MAX_NAME, MAX_OBJECT, MAX_TAGS, MAX_TERM
from kg.store.sqlite.readonly import MAX_ROWS, run_readonly
from kg.workspace import DB_FILE, STATE_DIR
from reasoning.service import RuleService
from tests.conftest import snapshot_workspace

#: Minimal valid arguments of the tools with required fields (agent a).
REQUIRED: dict[str, dict[str, Any]] = {
    "cbr_store": {"situation": {"beliefs": ["b"]}, "solution": {"actions": ["act"]}, "outcome": {"success": True}},
    "lcm_grep": {"pattern": "x"},
    "lcm_describe": {"summary_uid": "SUM-x"},
    "lcm_expand": {"summary_uid": "SUM-x"},
    "context_assemble": {"session_key": "s"},
    "fact_assert": {"subject": "s", "predicate": "p", "object": "o"},
    "fact_explain": {"fact_id": "F-x"},
    "fact_import": {"documents": [{"name": "d.nt", "format": "nt", "content": "<urn:a> <urn:b> <urn:c> .\n"}]},
    "graph_query": {"name": "paths"},
    "memory_store_item": {"content": "x"},
    "memory_hierarchy_search": {"query": "x"},
    "ontology_propose_concept": {"domain": "d", "node_type": "class", "node_id": "X", "label": "x"},
    "ontology_validate_proposal": {"uid": "O-x"},
    "ontology_merge_approved": {"uid": "O-x"},
    "ontology_scaffold_domain": {"template": "saas", "domain": "d"},
    "rule_create": {"name": "r", "conditions": [{"subject": "?x", "predicate": "p", "object": "o"}]},
    "rule_import": {"document": "[]", "format": "json"},
    "rule_toggle": {"rule_id": "R-x"},
    "rule_delete": {"rule_id": new_id("rule")},
    "bdi_add": {"kind": "goal", "content": "x"},
    "bdi_update": {"uid": new_id("goal")},
    "graph_link": {"relation": "belief-supports-goal", "source_uid": new_id("belief"), "target_uid": new_id("goal")},
    "graph_relations": {"uid": new_id("goal")},
    "graph_path": {"kinds": ["belief"]},
    "conversation_ingest": {"session_key": "s", "messages": [{"role": "user", "content": "x"}]},
    "conversation_compact": {"session_key": "s"},
    "memory_admit": {"candidates": [{"content": "x"}]},
    "ontology_reject_proposal": {"uid": "O-x", "reason": "r"},
    "ontology_diff": {"uid": "O-x"},
    "infer_backward": {"subject": "s", "predicate": "p", "object": "o"},
    "infer_abductive": {"subject": "s", "predicate": "p", "object": "o"},
    "knowledge_explain": {"question": "x"},
    "typedb_query": {"query": "match $x isa agent;"},
}


def _bounds(info: FieldInfo) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for meta in info.metadata:
        for key in ("ge", "le", "max_length"):
            value = getattr(meta, key, None)
            if value is not None:
                found[key] = value
    return found


def declared_limits() -> list[tuple[str, str, str, Any]]:
    """(tool, field, ge|le|max_length, bound) for every declared bound of every tool input model."""
    rows = []
    for name, tool in sorted(tools.REGISTRY.items()):
        for field, info in tool.input.model_fields.items():
            rows += [(name, field, key, bound) for key, bound in _bounds(info).items()]
    return rows


def _item(name: str, field: str, info: FieldInfo) -> Any:
    """A valid element of a list (or entry of a dict) field, for filling it up to its length limit."""
    text = str(info.annotation)
    if "ConditionInput" in text:
        return {"subject": "?x", "predicate": "p", "object": "o"}
    if "[A-Z]{1,3}-" in text:
        return new_id("fact")
    if "MessageInput" in text:
        return {"role": "user", "content": "x"}
    if "MemoryCandidate" in text:
        return {"content": "x"}
    if "RdfDocument" in text:
        return {"name": "d.nt", "format": "nt", "content": ""}
    return "x"


def _value(name: str, field: str, key: str, bound: Any, info: FieldInfo, *, over: bool) -> Any:
    if key == "le":
        return (
            (bound + 1 if isinstance(bound, int) and "float" not in str(info.annotation) else bound + 1e-9)
            if over
            else bound
        )
    if key == "ge":
        return (
            (bound - 1 if isinstance(bound, int) and "float" not in str(info.annotation) else bound - 1e-9)
            if over
            else bound
        )
    size = bound + 1 if over else bound
    if "dict" in str(info.annotation):
        return {f"k{i}": "v" for i in range(size)}
    if "list" in str(info.annotation):
        item = _item(name, field, info)
        return [item if not isinstance(item, str) or item != "x" else f"x{i}" for i in range(size)]
    return "X" * size


LIMITS = declared_limits()

#: bdi_add and bdi_update accept only the fields of the node's kind: each bounded field is checked on a kind that has
#: it (every other bounded field is a goal's, or any kind's).
KIND_OF_FIELD = {"certainty": "belief", "sequence": "plan_step"}


def _base(name: str, field: str) -> dict[str, Any]:
    """Valid arguments of tool ``name`` to which ``field`` is added."""
    base = {"agent_id": "a", **REQUIRED.get(name, {})}
    kind = KIND_OF_FIELD.get(field, "goal")
    if name == "bdi_add":
        base["kind"] = kind
    elif name == "bdi_update":
        base["uid"] = new_id(kind)
    elif name == "conversation_ingest" and field == "jsonl":  # messages or jsonl, not both
        del base["messages"]
    return base


def test_every_tool_with_required_fields_has_valid_minimal_arguments() -> None:
    """REQUIRED covers every tool whose input has a required field, and each entry parses: a new tool's limits are
    checked from valid arguments, not refused for a missing field before the bound is reached."""
    needing = {name for name, tool in tools.REGISTRY.items()
               if any(info.is_required() for info in tool.input.model_fields.values())}  # fmt: skip
    assert needing - set(REQUIRED) == set(), "tools with required fields and no entry in REQUIRED"
    assert {"rule_delete", "bdi_add", "bdi_update", "graph_link", "graph_path"} <= needing
    for name, arguments in REQUIRED.items():
        tools.get(name).parse({"agent_id": "a", **arguments})


def test_the_declared_limits_are_found() -> None:
    assert len(LIMITS) >= 60
    assert ("memory_recall", "limit", "le", 100) in LIMITS
    assert ("rule_create", "conditions", "max_length", 64) in LIMITS


@pytest.mark.parametrize(("name", "field", "key", "bound"), LIMITS, ids=[f"{n}.{f}.{k}" for n, f, k, _ in LIMITS])
def test_declared_tool_limit_at_the_boundary(name: str, field: str, key: str, bound: Any) -> None:
    """The bound itself parses; one past it is an InputError naming the field (before any handler runs)."""
    tool = tools.get(name)
    info = tool.input.model_fields[field]
    base = _base(name, field)
    tool.parse({**base, field: _value(name, field, key, bound, info, over=False)})
    with pytest.raises(InputError) as refused:
        tool.parse({**base, field: _value(name, field, key, bound, info, over=True)})
    assert refused.value.field.split(".")[0] == field, str(refused.value)
    assert "\n" not in str(refused.value) and len(str(refused.value)) <= 600


# ------------------------------------------------------------------------------------------ end to end


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A workspace with agents a and b, no embedder, no TypeDB."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    path = tmp_path / "ws"
    with kg.init_workspace(path) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
    yield path


def refused(root: Path, field: str, call: Any) -> InputError:
    """``call()`` raises an InputError naming ``field`` and the workspace stays byte-for-byte the same."""
    before = snapshot_workspace(_Path(root))
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field.split(".")[0].split("[")[0] == field, str(err.value)
    assert snapshot_workspace(_Path(root)) == before
    return err.value


class _Path:
    """What snapshot_workspace reads of a workspace: its path."""

    def __init__(self, path: Path) -> None:
        self.path = path


def call(root: Path, tool: str, /, **args: Any) -> Any:
    return tools.call(tool, workspace=root, agent_id=args.pop("agent_id", "a"), **args)


def test_memory_content_length(root: Path) -> None:
    assert call(root, "memory_store_item", content="a" * MAX_CONTENT).item.content == "a" * MAX_CONTENT
    refused(root, "content", lambda: call(root, "memory_store_item", content="b" * (MAX_CONTENT + 1)))


def test_memory_tags(root: Path) -> None:
    tags = [f"t{i}" for i in range(MAX_TAGS)]
    assert call(root, "memory_store_item", content="tagged", tags=tags).item.tags == tags
    refused(root, "tags", lambda: call(root, "memory_store_item", content="more", tags=[*tags, "extra"]))
    assert call(root, "memory_store_item", content="long tag", tags=["t" * 64]).item.tags == ["t" * 64]
    refused(root, "tags", lambda: call(root, "memory_store_item", content="longer tag", tags=["t" * 65]))


@pytest.mark.parametrize(
    ("field", "limit"), [("subject", MAX_TERM), ("predicate", MAX_TERM), ("object", MAX_OBJECT), ("source", MAX_NAME)]
)
def test_fact_field_lengths(root: Path, field: str, limit: int) -> None:
    args = {"subject": "s", "predicate": "p", "object": "o"}
    assert call(root, "fact_assert", **{**args, field: "a" * limit}).status == "created"
    refused(root, field, lambda: call(root, "fact_assert", **{**args, field: "b" * (limit + 1)}))


def test_fact_derived_from_list(root: Path) -> None:
    ids = [new_id("fact") for _ in range(MAX_LIST)]
    assert (
        len(call(root, "fact_assert", subject="s", predicate="p", object="o", derived_from=ids).fact.derived_from)
        == MAX_LIST
    )
    refused(
        root,
        "derived_from",
        lambda: call(root, "fact_assert", subject="s", predicate="p", object="o2", derived_from=[*ids, new_id("fact")]),
    )


def test_rule_conditions(root: Path) -> None:
    conditions = [{"subject": "?x", "predicate": f"p{i}", "object": "o"} for i in range(64)]
    conclusion = {"subject": "?x", "predicate": "q", "object": "yes"}
    assert len(call(root, "rule_create", name="wide", conditions=conditions, conclusion=conclusion).conditions) == 64
    extra = [*conditions, {"subject": "?x", "predicate": "p64", "object": "o"}]
    refused(
        root, "conditions", lambda: call(root, "rule_create", name="wider", conditions=extra, conclusion=conclusion)
    )
    with kg.open_workspace(root) as ws:
        rules = RuleService(ws.ports, ws.scopes, ws.clock)
        refused(root, "conditions", lambda: rules.create("a", name="svc", conditions=extra, conclusion=conclusion))


def test_agent_id_length(root: Path) -> None:
    with kg.open_workspace(root) as ws:
        assert ws.agents.add("a" * 64).agent_id == "a" * 64
        refused(root, "agent_id", lambda: ws.agents.add("b" * 65))


def test_belief_content_length(root: Path) -> None:
    with kg.open_workspace(root) as ws:
        assert ws.bdi.add("belief", "a", "c" * MAX_CONTENT).content == "c" * MAX_CONTENT
        refused(root, "content", lambda: ws.bdi.add("belief", "a", "d" * (MAX_CONTENT + 1)))


def test_scope_name_length(root: Path) -> None:
    with kg.open_workspace(root) as ws:
        ok = "project:" + "p" * 128
        assert ws.scopes.grant("a", ok, granted_by="admin").scope == ok
        refused(root, "scope", lambda: ws.scopes.grant("a", "project:" + "p" * 129, granted_by="admin"))


@pytest.mark.parametrize(
    ("tool", "limit", "args"),
    [
        ("fact_query", 100_000, {}),
        ("memory_recall", 100, {"query": "x"}),
        ("graph_query", 10_000, {"name": "belief-conflicts"}),
        ("ontology_list_proposals", 10_000, {}),
        ("memory_hierarchy_search", 1_000, {"query": "x"}),
        ("lcm_grep", 1_000, {"pattern": "x"}),
        ("knowledge_explain", 100, {"question": "x"}),
    ],
)
def test_query_result_caps(root: Path, tool: str, limit: int, args: dict[str, Any]) -> None:
    """Every query takes at most its cap as limit; one more is refused before anything runs."""
    call(root, tool, **args, limit=limit)
    refused(root, "limit", lambda: call(root, tool, **args, limit=limit + 1))


def test_query_limit_cuts_the_results(root: Path) -> None:
    for i in range(5):
        call(root, "fact_assert", subject=f"s{i}", predicate="p", object="o")
        call(root, "memory_store_item", content=f"note {i} about pricing", store="long_term")
    assert len(call(root, "fact_query", limit=3).facts) == 3
    assert len(call(root, "memory_recall", query="pricing", limit=2).hits) == 2


def test_readonly_sql_row_cap(root: Path) -> None:
    db = root / STATE_DIR / DB_FILE
    result = run_readonly(
        db,
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 20000) SELECT i FROM n",
        limit=MAX_ROWS,
    )
    assert len(result.rows) == MAX_ROWS and result.truncated
    refused(root, "limit", lambda: run_readonly(db, "SELECT 1", limit=MAX_ROWS + 1))


def test_graph_query_names_are_closed() -> None:
    """graph_query's name is a closed set (no free text reaches a query builder)."""
    info = tools.get("graph_query").input.model_fields["name"]
    assert len(get_args(info.annotation)) == 6
