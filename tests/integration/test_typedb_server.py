"""Against a real TypeDB 3.x server (marker ``typedb``): schema sync, outbox push, raw queries, idempotence,
shared-graph reads.

The server comes from ``MABOS_TYPEDB_ADDRESS`` or a testcontainers container (tests/conftest.py
``typedb_address``); with neither, every test here skips in well under a second with the reason. Each test
uses its own database (``mabos_it_<random>``), dropped afterwards.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.demo import build_demo
from kg.store.typedb.client import TypeDBClient
from kg.workspace import Workspace, open_workspace
from reasoning.graph_queries import GraphQueries
from sync.reads import graph_backend, local_backend
from sync.shared_graph import client_for, push_outbox, sync_schema

pytestmark = pytest.mark.typedb


@pytest.fixture
def shared(
    typedb_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Workspace, TypeDBClient]]:
    """The demo workspace and a client for a fresh database of its own on the server."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.setenv("MABOS_TYPEDB_ADDRESS", typedb_address)
    monkeypatch.setenv("MABOS_TYPEDB_DATABASE", f"mabos_it_{uuid.uuid4().hex[:12]}")
    build_demo(tmp_path / "demo")
    ws = open_workspace(tmp_path / "demo")
    client = client_for(ws)
    yield ws, client
    driver = client.driver()
    if driver.databases.contains(client.settings.database):
        driver.databases.get(client.settings.database).delete()
    ws.close()


def _dump(client: TypeDBClient) -> list[str]:
    """Every record (entity or relation with a uid) and all its attributes, canonically ordered."""
    docs = client.read('match $x has uid $u; fetch { "uid": $u, "all": { $x.* } };')
    return sorted(json.dumps(d, sort_keys=True) for d in docs)


def _count(client: TypeDBClient, entity: str) -> int:
    rows = client.read(f"match $x isa {entity}; reduce $n = count;")
    return int(rows[0]["n"])


def test_schema_sync_creates_the_database_and_is_idempotent(shared: tuple[Workspace, TypeDBClient]) -> None:
    ws, client = shared
    first = sync_schema(ws)
    assert first["created"] is True and first["defined"] is True
    again = sync_schema(ws, if_changed=True)
    assert again["defined"] is False
    forced = sync_schema(ws)  # define is idempotent: defining the same schema twice succeeds
    assert forced["defined"] is True
    assert "entity goal" in client.schema()


def test_push_replicates_the_outbox_and_twice_equals_once(shared: tuple[Workspace, TypeDBClient]) -> None:
    ws, client = shared
    report = push_outbox(ws, batch=50)
    assert report.pending_left == 0 and report.sent == report.acknowledged > 0
    facts = ws._store.db.read("SELECT count(*) FROM facts")[0][0]
    goals = ws._store.db.read("SELECT count(*) FROM bdi_nodes WHERE kind = 'goal'")[0][0]
    agents = ws._store.db.read("SELECT count(*) FROM agents")[0][0]
    assert (_count(client, "fact"), _count(client, "goal"), _count(client, "agent")) == (facts, goals, agents)
    before = _dump(client)
    with ws._store.db.write() as conn:  # forget every acknowledgement: a full replay of the whole outbox
        conn.execute("UPDATE outbox SET acked_at = NULL")
    push_outbox(ws, batch=7)
    assert _dump(client) == before


def test_a_retraction_reaches_the_shared_graph(shared: tuple[Workspace, TypeDBClient]) -> None:
    ws, client = shared
    retracted = ws._store.db.read("SELECT uid FROM facts WHERE retracted_at IS NOT NULL LIMIT 1")
    push_outbox(ws)
    if retracted:
        uid = retracted[0][0]
        rows = client.read(f'match $f isa fact, has uid "{uid}", has retracted-at $t; select $t;')
        assert len(rows) == 1


def test_raw_queries_read_rows_and_documents(shared: tuple[Workspace, TypeDBClient]) -> None:
    ws, client = shared
    push_outbox(ws)
    answers, truncated = client.query('match $g isa goal, has has-content $c; fetch { "goal": $c };', limit=1)
    assert len(answers) == 1 and isinstance(answers[0]["goal"], str)
    assert truncated == (_count(client, "goal") > 1)
    rows: list[Any] = client.read("match $a isa agent, has agent-id $id; select $id;")
    assert {r["id"] for r in rows} == {a.agent_id for a in ws.agents.list()}


def test_graph_queries_read_the_shared_graph_when_it_is_reachable(shared: tuple[Workspace, TypeDBClient]) -> None:
    ws, _client = shared
    backend, reason = graph_backend(ws)
    assert reason is None and backend.source == "typedb"
    assert ws.ports.outbox.counts()["pending"] == 0  # the read pushed this workspace's changes first
    remote = GraphQueries(backend, ws.scopes, ws.clock).run("blocked-steps", {}, agent=None)
    local = GraphQueries(local_backend(ws), ws.scopes, ws.clock).run("blocked-steps", {}, agent=None)
    assert remote.model_dump(exclude={"source", "at"}) == local.model_dump(exclude={"source", "at"})
