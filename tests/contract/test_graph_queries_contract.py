"""Contract: every graph-query backend gives the same answers for the same data.

The data is written through the workspace services (so the outbox holds it too); ``make_backend(workspace)``
returns the backend under test. ``sqlite`` always runs. ``typedb`` needs a server (``MABOS_TYPEDB_ADDRESS`` or
a Docker engine, see tests/conftest.py ``typedb_address``; otherwise it skips with the reason): the data is
pushed to TypeDB through the outbox before :class:`~kg.store.typedb.graph_queries.TypeDBGraphQueries` answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kg.ports import GraphQueryBackend
from kg.store.sqlite.graph_queries import SqliteGraphQueries
from kg.store.typedb.graph_queries import TypeDBGraphQueries
from kg.workspace import Workspace
from reasoning.graph_queries import GraphQueries
from sync.shared_graph import client_for, push_outbox
from tests.records import q3_workspace

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
MakeBackend = Callable[[Workspace], GraphQueryBackend]


def _sqlite(ws: Workspace) -> GraphQueryBackend:
    return SqliteGraphQueries(ws._store.db)


def _typedb(ws: Workspace) -> GraphQueryBackend:  # replaced per test by make_backend (needs the server)
    raise AssertionError("make_backend builds the TypeDB backend")


@pytest.fixture(
    params=[pytest.param(_sqlite, id="sqlite"), pytest.param(_typedb, id="typedb", marks=pytest.mark.typedb)]
)
def make_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> MakeBackend:
    """``make_backend(workspace) -> GraphQueryBackend`` for each backend.

    TypeDB: the workspace's outbox is pushed (the same replay as ``mabos sync push``) into a fresh database on
    the server of the ``typedb_address`` fixture (which skips without one), dropped after the test.
    """
    if request.param is _sqlite:
        return _sqlite
    address: str = request.getfixturevalue("typedb_address")
    monkeypatch.setenv("MABOS_TYPEDB_DATABASE", f"mabos_gq_{uuid.uuid4().hex[:12]}")

    def build(ws: Workspace) -> GraphQueryBackend:
        push_outbox(ws, override=address)
        client = client_for(ws, address)

        def drop() -> None:
            driver = client.driver()
            if driver.databases.contains(client.settings.database):
                driver.databases.get(client.settings.database).delete()

        request.addfinalizer(drop)
        return TypeDBGraphQueries(client)

    return build


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Workspace, SimpleNamespace]]:
    """Three agents with goals, beliefs, plans, steps and lineage; the uids by name."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with q3_workspace(tmp_path / "ws") as ws:
        add, link, u = ws.bdi.add, ws.bdi.link, SimpleNamespace()
        u.late = add("goal", "sales", "Close Q3", deadline=T0 + 10 * DAY, progress=0.2, priority=7).uid
        u.over = add("goal", "finance", 'Audit "FY24" \\ books', deadline=T0 + 2 * DAY, progress=0.5).uid
        u.proj = add("goal", "ops", "Ship v2", deadline=T0 + 20 * DAY, scope="project:q3", status="active").uid
        add("goal", "finance", "Done", deadline=T0 + DAY, status="achieved")
        u.sub = add("goal", "sales", "Qualify leads").uid
        u.plan = add("plan", "sales", "Outbound").uid
        u.up = add("belief", "sales", "Acme revenue is growing", certainty=0.9).uid
        u.down = add("belief", "finance", "Acme revenue is shrinking", certainty=0.8).uid
        u.hot = add("belief", "ops", "subject: market\nIt is hot", certainty=0.7, scope="project:q3").uid
        for relation, source, target, agent in (
            ("belief-supports-goal", u.up, u.late, "sales"), ("belief-supports-goal", u.down, u.over, "finance"),
            ("goal-decomposition", u.late, u.sub, "sales"), ("goal-requires-plan", u.sub, u.plan, "sales"),
        ):  # fmt: skip
            link(agent, relation, source, target)
        u.s = [add("step", "sales", f"step {n}", sequence=n).uid for n in range(4)]
        for n in range(4):
            link("sales", "plan-contains-step", u.plan, u.s[n])
        for dependent, dependency in ((1, 0), (2, 3), (3, 2)):
            link("sales", "step-depends-on", u.s[dependent], u.s[dependency])
        u.f1 = ws.facts.assert_fact("sales", "acme", "hasRevenue", "5M")[0].uid
        u.f2 = ws.facts.assert_fact("ops", "acme", "churn", "low", scope="project:q3")[0].uid
        u.f3 = ws.facts.assert_fact("sales", "acme", "isTarget", "yes", derived_from=[u.f1, u.f2])[0].uid
        u.m1 = ws.memory.store_item("sales", "Acme is a target", derived_from=[u.f3], store="long_term").item.uid
        yield ws, u


def ask(ws: Workspace, make_backend: MakeBackend, name: str, agent: str | None = None, **params: Any) -> Any:
    result = GraphQueries(make_backend(ws), ws.scopes, ws.clock).run(name, params, agent=agent)
    return result.model_dump(mode="json")


def test_goals_behind(data: tuple[Workspace, SimpleNamespace], make_backend: MakeBackend) -> None:
    ws, u = data
    every = ask(ws, make_backend, "goals-behind", at=T0 + 5 * DAY)
    rows = [(g["uid"], g["gap"], g["expected_progress"], g["overdue"], g["deadline"]) for g in every["results"]]
    assert rows == [
        (u.over, 0.5, 1.0, True, "2024-05-03T12:00:00.000000Z"),
        (u.late, 0.3, 0.5, False, "2024-05-11T12:00:00.000000Z"),
        (u.proj, 0.25, 0.25, False, "2024-05-21T12:00:00.000000Z"),
    ]
    assert every["results"][0]["content"] == 'Audit "FY24" \\ books' and every["results"][1]["priority"] == 7
    finance = ask(ws, make_backend, "goals-behind", agent="finance", at=T0 + 5 * DAY)
    assert [g["uid"] for g in finance["results"]] == [u.over, u.proj]


def test_paths(data: tuple[Workspace, SimpleNamespace], make_backend: MakeBackend) -> None:
    ws, u = data
    result = ask(ws, make_backend, "paths")
    assert [[n["uid"] for n in p["nodes"]] for p in result["results"]] == [[u.up, u.late, u.sub, u.plan]]
    assert result["results"][0]["relations"] == ["belief-supports-goal", "goal-decomposition", "goal-requires-plan"]
    steps = ask(ws, make_backend, "paths", start=f"goal:{u.sub}", to="step")
    assert [p["nodes"][-1]["uid"] for p in steps["results"]] == sorted(u.s)
    assert ask(ws, make_backend, "paths", agent="finance")["count"] == 0


def test_belief_conflicts_and_holders(data: tuple[Workspace, SimpleNamespace], make_backend: MakeBackend) -> None:
    ws, u = data
    (conflict,) = ask(ws, make_backend, "belief-conflicts")["results"]
    assert (conflict["subject"], conflict["pairs"]) == ("acme revenue", 1)
    assert [(g["uid"], g["supported_by"]) for g in conflict["goals"]] == sorted([(u.late, [u.up]), (u.over, [u.down])])
    holders = ask(ws, make_backend, "belief-holders", subject="Market")["results"]
    assert [(h["agent_id"], [b["uid"] for b in h["beliefs"]]) for h in holders] == [("ops", [u.hot])]
    assert ask(ws, make_backend, "belief-holders", subject="market", agent="sales")["count"] == 0


def test_lineage(data: tuple[Workspace, SimpleNamespace], make_backend: MakeBackend) -> None:
    ws, u = data
    every = ask(ws, make_backend, "lineage", uid=u.f3)["results"]
    assert [(n["uid"], n["relation"], n["depth"]) for n in every] == [
        (u.f3, "root", 0), *sorted([(u.f1, "ancestor", 1), (u.f2, "ancestor", 1)]), (u.m1, "descendant", 1),
    ]  # fmt: skip
    assert (every[-1]["kind"], every[-1]["label"]) == ("memory:observation", "Acme is a target")
    sales = ask(ws, make_backend, "lineage", uid=u.m1, agent="sales", direction="ancestors")["results"]
    assert [(n["uid"], n["parents"]) for n in sales] == [(u.m1, [u.f3]), (u.f3, [u.f1]), (u.f1, [])]


def test_blocked_steps(data: tuple[Workspace, SimpleNamespace], make_backend: MakeBackend) -> None:
    ws, u = data
    blocked = ask(ws, make_backend, "blocked-steps")["results"]
    got = [(b["uid"], [w["uid"] for w in b["waiting_on"]], b["root_blockers"], b["in_cycle"], b["plans"])
           for b in blocked]  # fmt: skip
    assert got == [
        (u.s[1], [u.s[0]], [u.s[0]], False, [u.plan]),
        (u.s[2], [u.s[3]], [], True, [u.plan]),
        (u.s[3], [u.s[2]], [], True, [u.plan]),
    ]
