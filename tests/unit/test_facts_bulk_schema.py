"""Migration 10 keeps every fact query indexed: the store's own SQL, traced, read through EXPLAIN QUERY PLAN.

The fact adapter's statements are captured as SQLite runs them (``set_trace_callback`` gives the text with its
parameters bound), then planned again: no plan line may scan the facts table (``SCAN f``/``SCAN facts``) other
than along an index, and each shape must reach the index it is meant for. A dropped or narrowed index that a
shape still needed, or a query that stops matching a partial index's condition, fails here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from kg.workspace import Workspace

FULL_SCAN = re.compile(r"\bSCAN (f|facts)\b(?! USING (COVERING )?INDEX)")


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.agents.add("a")
    workspace.facts.assert_many(
        "a",
        [{"subject": f"acme{i % 7}", "predicate": f"p{i % 3}", "object": f"o{i}"} for i in range(60)],
    )
    workspace.clock.advance(timedelta(seconds=5))  # type: ignore[attr-defined]
    workspace.facts.retract("a", subject="acme1", predicate="p1")
    return workspace


@contextmanager
def traced(ws: Workspace) -> Iterator[list[str]]:
    """Every statement the store runs inside the block, parameters bound."""
    statements: list[str] = []
    ws._store.db.conn.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        ws._store.db.conn.set_trace_callback(None)


def plans(ws: Workspace, action: Callable[[], Any]) -> list[str]:
    """The query plans (one text per statement) of the statements ``action`` runs that read facts."""
    with traced(ws) as statements:
        action()
    found = []
    for sql in statements:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head not in ("SELECT", "UPDATE", "INSERT") or not re.search(r"\bfacts\b", sql):
            continue
        rows = ws._store.db.read(f"EXPLAIN QUERY PLAN {sql}")
        found.append("\n".join(str(r["detail"]) for r in rows))
    assert found, "the action ran no statement over facts"
    return found


def at(ws: Workspace) -> Any:
    return ws.clock.now() - timedelta(seconds=2)


# shape -> (query criteria, indexes each plan of it must name)
SHAPES: dict[str, tuple[Callable[[Workspace], dict[str, Any]], set[str]]] = {
    "subject": (lambda ws: {"subject": "acme3"}, {"facts_live_triple"}),
    "subject+predicate": (lambda ws: {"subject": "acme3", "predicate": "p0"}, {"facts_live_triple"}),
    "triple": (lambda ws: {"subject": "acme3", "predicate": "p0", "object": "o3"}, {"facts_live_triple"}),
    "subject prefix": (lambda ws: {"subject": "acme*"}, {"facts_live_triple"}),
    "predicate": (lambda ws: {"predicate": "p2"}, {"facts_predicate_object"}),
    "predicate+object": (lambda ws: {"predicate": "p2", "object": "o5"}, {"facts_predicate_object"}),
    "object": (lambda ws: {"object": "o5"}, {"facts_object"}),
    "subject with retracted": (
        lambda ws: {"subject": "acme1", "include_retracted": True},
        {"facts_live_triple", "facts_retracted_subject"},
    ),
    "subject as of": (
        lambda ws: {"subject": "acme1", "as_of": at(ws)},
        {"facts_live_triple", "facts_retracted_subject"},
    ),
    "predicate with retracted": (lambda ws: {"predicate": "p1", "include_retracted": True}, {"facts_predicate_object"}),
    "everything, newest order": (lambda ws: {}, {"facts_created"}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_query_shape_reads_its_index_and_never_scans_facts(ws: Workspace, shape: str) -> None:
    criteria, indexes = SHAPES[shape]
    query = criteria(ws)
    found = plans(ws, lambda: ws.facts.query("a", **query))
    for plan in found:
        assert not FULL_SCAN.search(plan), f"{shape}: {plan}"
    text = "\n".join(found)
    for index in indexes:
        assert f"INDEX {index}" in text, f"{shape}: {index} not used in\n{text}"


def test_the_shapes_return_what_they_should(ws: Workspace) -> None:
    """The union of live and retracted halves returns each fact once, ordered as before."""
    live = ws.facts.query("a", subject="acme1")
    every = ws.facts.query("a", subject="acme1", include_retracted=True)
    then = ws.facts.query("a", subject="acme1", as_of=at(ws))
    assert {f.predicate for f in live} == {"p0", "p2"}
    assert {f.predicate for f in every} == {"p0", "p1", "p2"} and len(every) == len({f.uid for f in every})
    assert [f.uid for f in then] == [f.uid for f in every]  # before the retraction: all of them, live then
    assert all(f.retracted_at is None for f in then)
    assert [(f.created_at, f.uid) for f in every] == sorted((f.created_at, f.uid) for f in every)
    assert len(ws.facts.query("a", subject="acme*", include_retracted=True, limit=3)) == 3


def test_writes_and_lookups_by_uid_use_indexes(ws: Workspace) -> None:
    uid = ws.facts.query("a", subject="acme2")[0].uid
    checks: dict[str, tuple[Callable[[], Any], str]] = {
        "get": (lambda: ws.facts.get("a", uid), "sqlite_autoindex_facts_1"),
        "get as of": (lambda: ws.facts.get("a", uid, as_of=at(ws)), "sqlite_autoindex_facts_1"),
        "re-assert unchanged (the uid by live triple)": (
            lambda: ws.facts.assert_fact("a", "acme2", "p2", "o2"),
            "facts_live_triple",
        ),
        "retract by subject": (lambda: ws.facts.retract("a", subject="acme4"), "facts_live_triple"),
        "retract by predicate": (lambda: ws.facts.retract("a", predicate="p0"), "facts_predicate_object"),
        "search": (lambda: ws.ports.facts.search("acme5", scopes=["agent:a"]), "INTEGER PRIMARY KEY"),
    }
    for name, (action, index) in checks.items():
        found = plans(ws, action)
        for plan in found:
            assert not FULL_SCAN.search(plan), f"{name}: {plan}"
        assert any(index in plan for plan in found), f"{name}: {index} not in {found}"
