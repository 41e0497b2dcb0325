"""Fixtures of the service-level unit tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import kg
from cli import tools
from kg.clock import FixedClock
from kg.errors import InputError
from kg.ontology.proposals import OntologyService
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.workspace import Workspace

#: Small ontologies and shapes for the proposal workflow tests.
ONTOLOGY_DATA = Path(__file__).resolve().parents[1] / "data" / "ontology" / "proposals"


def call(ws: Workspace, name: str, /, **arguments: Any) -> Any:
    """Call the registered tool ``name`` on the workspace ``ws`` by path, as the CLI and MCP server do."""
    return tools.call(name, workspace=ws.path, **arguments)


def refused(ws: Workspace, name: str, /, **arguments: Any) -> InputError:
    """The InputError a malformed call of tool ``name`` raises (the test fails when the call succeeds)."""
    with pytest.raises(InputError) as raised:
        call(ws, name, **arguments)
    return raised.value


@pytest.fixture
def ws(workspace):
    """A workspace with two agents, ``a`` and ``b``."""
    workspace.agents.add("a")
    workspace.agents.add("b")
    return workspace


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    """The packaged model, loaded once per test module (every embedder of the process shares it)."""
    loaded = SentenceTransformerEmbedder()
    loaded.load()
    return loaded


@pytest.fixture
def embedded_ws(workspace: Workspace, model: SentenceTransformerEmbedder) -> Workspace:
    """A workspace with agent ``a`` whose own embedder (behind the embedding cache) shares the loaded model."""
    workspace.agents.add("a")
    assert workspace.embedder is not None, "these tests need the real embedder (MABOS_EMBEDDER must not be none)"
    return workspace


@pytest.fixture
def no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MABOS_EMBEDDER=none`` for the test: workspaces it opens recall by BM25 only and load no model.
    ``pytestmark = pytest.mark.usefixtures("no_embedder")`` sets it before ``ws`` is built."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.fixture
def tool_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A workspace with agents ``a`` and ``b`` and no embedder, for the tool tests (tools reopen it by path)."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    workspace = kg.init_workspace(tmp_path / "ws")
    workspace.agents.add("a")
    workspace.agents.add("b")
    yield workspace
    workspace.close()


@pytest.fixture(scope="module")
def module_ws_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One path where each test of a module makes its workspace afresh (and removes it after).

    The extraction vocabulary parses the workspace's ontology files, and the parsed files are kept per process
    keyed by their path and text (kg/ontology/graphs.py), as a long-lived server re-reading its workspace has them.
    Under a new folder per test every extraction run parsed the shipped set again (~0.3 s of rdflib). Each test
    still gets a new workspace with nothing of the previous one's.
    """
    return tmp_path_factory.mktemp("ws-per-test") / "ws"


@pytest.fixture
def quiet_workspace(module_ws_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[datetime], Workspace]]:
    """Opens a new workspace (:func:`module_ws_path`) with agents ``a`` and ``b``, no embedder and no LLM, its
    clock fixed at the given time; closed and removed after the test."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)
    shutil.rmtree(module_ws_path, ignore_errors=True)
    opened: list[Workspace] = []

    def open_at(now: datetime) -> Workspace:
        workspace = kg.init_workspace(module_ws_path, clock=FixedClock(now))
        opened.append(workspace)
        workspace.agents.add("a")
        workspace.agents.add("b")
        return workspace

    try:
        yield open_at
    finally:
        for workspace in opened:
            workspace.close()
        shutil.rmtree(module_ws_path, ignore_errors=True)


@pytest.fixture
def svc(ws) -> OntologyService:
    """The ontology service on the fixture ontologies (not the shipped ones ``init`` copied in), with a
    reviewing agent ``knowledge``."""
    onto = ws.path / "ontologies"
    shutil.rmtree(onto, ignore_errors=True)
    shutil.copytree(ONTOLOGY_DATA / "ontologies", onto)
    ws.agents.add("knowledge")
    return OntologyService(ws.ports, ws.scopes, ws.clock, onto, ONTOLOGY_DATA / "shapes")
