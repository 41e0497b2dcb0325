"""Golden TypeQL of the TypeDB graph-query adapter: every template it can emit, for representative parameters.

No TypeDB server runs here, so the text is compared with reviewed golden files
(``tests/data/typedb/graph_queries/*.tql``); the contract suite runs the queries against a server when
``MABOS_TYPEDB_ADDRESS`` is set. Regenerate after a deliberate change with
``UPDATE_GOLDEN=1 pytest tests/unit/test_typedb_graph_queries.py`` and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kg.errors import BackendUnavailableError, InputError
from kg.models import NodeKind, RelationKind
from kg.ports.graph_queries import OPEN_GOAL_STATUSES
from kg.store.typedb.graph_queries import (
    edges_query,
    lineage_queries,
    nodes_query,
    one_of,
    parse_datetime,
    record_queries,
)
from kg.store.typedb.literals import decode_string

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "typedb" / "graph_queries"
SCOPES = ["global", "agent:sales-agent", "project:q3"]
# Not a valid uid: it shows that any value is encoded, quotes and backslashes included.
TRICKY = 'F-"quoted" \\back\\slash'
B1, B2 = "B-01J00000000000000000000001", "B-01J00000000000000000000002"

CASES: dict[str, Callable[[], str]] = {
    "open_goals_all_scopes": lambda: nodes_query(NodeKind.GOAL, OPEN_GOAL_STATUSES, None, with_deadline=True),
    "open_goals_scoped": lambda: nodes_query(NodeKind.GOAL, OPEN_GOAL_STATUSES, SCOPES, with_deadline=True),
    "active_beliefs_all_scopes": lambda: nodes_query(NodeKind.BELIEF, ("active",), None),
    "active_beliefs_one_scope": lambda: nodes_query(NodeKind.BELIEF, ("active",), ["agent:sales-agent"]),
    "edges_all": lambda: edges_query(RelationKind.GOAL_REQUIRES_PLAN, None),
    "edges_from_one_scoped": lambda: edges_query(RelationKind.BELIEF_SUPPORTS_GOAL, SCOPES, [B1]),
    "edges_from_many": lambda: edges_query(RelationKind.STEP_DEPENDS_ON, None, [B1, B2]),
    "lineage_ancestors_by_attribute": lambda: lineage_queries([TRICKY], "ancestors")[0],
    "lineage_ancestors_by_relation": lambda: lineage_queries([TRICKY], "ancestors")[1],
    "lineage_descendants_by_attribute": lambda: lineage_queries([B1, B2], "descendants")[0],
    "lineage_descendants_by_relation": lambda: lineage_queries([B1, B2], "descendants")[1],
    "records_facts": lambda: record_queries([TRICKY, B1])[0],
    "records_memory": lambda: record_queries([TRICKY, B1])[1],
}


# Every relation kind the adapter accepts has its own roles: one golden each (unscoped, all edges).
def _all_edges(kind: RelationKind) -> Callable[[], str]:
    return lambda: edges_query(kind, None)


CASES |= {
    f"edges_{kind.value}": _all_edges(kind)
    for kind in (RelationKind.BELIEF_SUPPORTS_GOAL, RelationKind.DESIRE_MOTIVATES_GOAL,
                 RelationKind.GOAL_DECOMPOSITION, RelationKind.PLAN_CONTAINS_STEP)
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_query_text_matches_its_golden_file(name: str, golden: Callable[[Path, str], None]) -> None:
    golden(GOLDEN / f"{name}.tql", CASES[name]())


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.tql")) == sorted(CASES)


def test_values_are_encoded_literals_that_decode_back() -> None:
    text = one_of("$u", [TRICKY])
    literal = text.removeprefix("$u == ").removesuffix(";")
    assert decode_string(literal) == TRICKY
    assert '\\"quoted\\" \\\\back\\\\slash' in lineage_queries([TRICKY], "ancestors")[0]


def test_bad_input_is_refused_before_any_query_text() -> None:
    with pytest.raises(InputError, match="sources"):
        edges_query(RelationKind.GOAL_REQUIRES_PLAN, None, [])
    with pytest.raises(InputError, match="direction"):
        lineage_queries([B1], "sideways")
    with pytest.raises(InputError, match="scopes"):
        nodes_query(NodeKind.GOAL, ("active",), [])


def test_fetched_datetimes_parse_to_utc_microseconds() -> None:
    assert parse_datetime("2024-05-01T12:00:00.123456789") == datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert parse_datetime("2024-05-01T12:00:00") == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_datetime(None) is None
    with pytest.raises(BackendUnavailableError):
        parse_datetime("yesterday")
