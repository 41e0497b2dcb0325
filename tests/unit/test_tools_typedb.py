"""The TypeDB tools (cli/tools/typedb.py) through ``cli.tools.call`` without a TypeDB server: not configured, and
configured but unreachable (127.0.0.1:1, where nothing listens: a real refused connection, nothing mocked).
Either way they say so and change nothing. The same tools against a live server: tests/integration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kg
from cli import tools
from cli.tools.overrides import CommandContext
from cli.tools.typedb import TypeDBStatus
from kg.errors import BackendUnavailableError, InputError, ScopeError, WorkspaceError
from kg.workspace import STATE_DIR
from sync.shared_graph import SCHEMA_STATE

DEAD = "127.0.0.1:1"
READ = "match $g isa goal; fetch { 'goal': $g.has-content };"


@pytest.fixture
def ws_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A closed workspace with an agent and a goal (so the outbox holds events), TypeDB not configured."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    with kg.init_workspace(tmp_path / "ws") as ws:
        ws.agents.add("sales")
        ws.bdi.add("goal", "sales", "Close Q3 pipeline")
    return tmp_path / "ws"


@pytest.fixture
def dead(ws_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TypeDB configured (after ``ws_path`` cleared it) at an address where nothing listens."""
    monkeypatch.setenv("MABOS_TYPEDB_ADDRESS", DEAD)


def call(ws_path: Path, name: str, agent: str | None = None, **args: Any) -> Any:
    return tools.call(name, workspace=ws_path, agent=agent, **args)


def outbox(ws_path: Path) -> dict[str, int]:
    with kg.open_workspace(ws_path) as ws:
        return ws.ports.outbox.counts()


def test_status_without_typedb_says_how_to_configure_it(ws_path: Path) -> None:
    report = call(ws_path, "typedb_status")
    assert isinstance(report, TypeDBStatus)
    assert report.configured is False and report.reachable is None
    assert report.message is not None and "MABOS_TYPEDB_ADDRESS" in report.message
    assert report.outbox == outbox(ws_path) and report.outbox["pending"] > 0
    assert report.model_dump(mode="json", exclude_unset=True).keys() == {"configured", "outbox", "message"}


@pytest.mark.usefixtures("dead")
def test_status_with_an_unreachable_server_reports_it_and_does_not_fail(ws_path: Path) -> None:
    report = call(ws_path, "typedb_status")
    assert (report.configured, report.reachable, report.configured_by) == (True, False, "MABOS_TYPEDB_ADDRESS")
    assert report.address == DEAD and report.database == "mabos_ws"
    assert report.error is not None and "unreachable" in report.error
    dumped = report.model_dump(mode="json", exclude_unset=True)
    assert "schema" in dumped and dumped["schema"] is None  # never synced; the key is the CLI's


def test_not_configured_is_a_workspace_error_for_every_server_tool(ws_path: Path) -> None:
    before = outbox(ws_path)
    for name, args in (
        ("typedb_sync_schema", {}),
        ("typedb_query", {"query": READ}),
        ("typedb_sync_agent_data", {"batch": 10}),
    ):
        with pytest.raises(WorkspaceError, match="typedb: not configured"):
            call(ws_path, name, **args)
    assert outbox(ws_path) == before


@pytest.mark.usefixtures("dead")
def test_an_unreachable_server_is_backend_unavailable_and_changes_nothing(ws_path: Path) -> None:
    before = outbox(ws_path)
    for name, args in (
        ("typedb_sync_schema", {"if_changed": True}),
        ("typedb_query", {"query": READ, "limit": 5}),
        ("typedb_sync_agent_data", {}),
    ):
        with pytest.raises(BackendUnavailableError, match=f"typedb: {DEAD} is unreachable"):
            call(ws_path, name, **args)
    assert outbox(ws_path) == before  # nothing acknowledged
    assert not (ws_path / STATE_DIR / SCHEMA_STATE).exists()  # no schema sync recorded


def test_a_read_only_query_refuses_write_stages_before_connecting(ws_path: Path) -> None:
    with pytest.raises(InputError) as caught:  # not configured: the refusal must come first
        call(ws_path, "typedb_query", query="match $g isa goal; delete $g;")
    assert (caught.value.field, caught.value.rule) == ("query", "a read-only query cannot contain a 'delete' stage "
                                                                "(use --write)")  # fmt: skip
    with pytest.raises(WorkspaceError):  # with write=true the stage is allowed and the server is needed
        call(ws_path, "typedb_query", query="match $g isa goal; delete $g;", write=True)


def test_a_command_context_passes_the_typedb_address(ws_path: Path) -> None:
    with kg.open_workspace(ws_path) as ws:
        report = tools.run(CommandContext(workspace_obj=ws, typedb=DEAD), "typedb_status", {})
        assert isinstance(report, TypeDBStatus)
        assert (report.configured, report.reachable, report.configured_by) == (True, False, "--typedb")
        with pytest.raises(InputError) as caught:
            tools.run(CommandContext(workspace_obj=ws, typedb="http://localhost:1729"), "typedb_status", {})
        assert caught.value.field == "--typedb"


@pytest.mark.parametrize(
    ("name", "args", "field"),
    [
        ("typedb_query", {}, "query"),
        ("typedb_query", {"query": ""}, "query"),
        ("typedb_query", {"query": READ, "limit": 0}, "limit"),
        ("typedb_query", {"query": READ, "limit": 100_001}, "limit"),
        ("typedb_query", {"query": READ, "write": "maybe"}, "write"),
        ("typedb_sync_agent_data", {"batch": 0}, "batch"),
        ("typedb_sync_agent_data", {"batch": 10_001}, "batch"),
        ("typedb_sync_schema", {"if_changed": "sometimes"}, "if_changed"),
        ("typedb_status", {"address": DEAD}, "address"),  # agents cannot choose the server
    ],
)
def test_malformed_calls_name_the_field(ws_path: Path, name: str, args: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as caught:
        call(ws_path, name, **args)
    assert caught.value.field == field


def test_a_bound_agent_cannot_act_as_another_nor_run_raw_typeql(ws_path: Path) -> None:
    for name, args in (
        ("typedb_status", {}),
        ("typedb_sync_schema", {}),
        ("typedb_query", {"query": READ}),
        ("typedb_sync_agent_data", {}),
    ):
        with pytest.raises(ScopeError):
            call(ws_path, name, agent="sales", agent_id="finance", **args)
    with pytest.raises(ScopeError, match="raw TypeQL reads every agent's scope"):
        call(ws_path, "typedb_query", agent="sales", query=READ)
    assert call(ws_path, "typedb_status", agent="sales").configured is False  # its own status call is fine
