"""The preload of a server's forkserver: one list for the MCP workers and the idle indexer, with the embedding stack
only when the workspace embeds locally (cli/child_process.py; why: docs/decisions/2026-11-26-idle-index-preload.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.child_process import EMBEDDING_PRELOAD, SERVER_PRELOAD, server_preload
from kg.workspace import ENV_EMBEDDER, Workspace
from tests.serving import ChildStarted, spy_child_starts


def test_a_workspace_that_embeds_locally_preloads_the_embedding_stack(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_EMBEDDER, raising=False)
    assert server_preload(workspace.path) == [*SERVER_PRELOAD, *EMBEDDING_PRELOAD]


@pytest.mark.parametrize("kind", ["none", "http"])
def test_another_embedder_preloads_only_the_servers_modules(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv(ENV_EMBEDDER, kind)
    assert server_preload(workspace.path) == list(SERVER_PRELOAD)


def test_a_workspace_that_cannot_be_read_preloads_only_the_servers_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_EMBEDDER, raising=False)
    (tmp_path / "mabos.toml").write_text("[recall\n", encoding="utf-8")  # the child reports the broken file
    assert server_preload(tmp_path) == list(SERVER_PRELOAD)


def test_the_worker_pool_and_the_idle_indexer_ask_for_the_same_list(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first child a process starts decides its forkserver's preload, so both kinds must ask for the same one
    import anyio  # noqa: PLC0415

    from cli.idle_index import IdleIndexer  # noqa: PLC0415
    from cli.tools.mcp_workers import WorkerPool  # noqa: PLC0415

    monkeypatch.delenv(ENV_EMBEDDER, raising=False)
    asked = spy_child_starts(monkeypatch)
    with pytest.raises(ChildStarted):
        WorkerPool(workspace.path)._spawn()
    with pytest.raises(ChildStarted):
        anyio.run(IdleIndexer(workspace.path)._one_pass)
    assert asked == {
        "mabos-mcp-worker": server_preload(workspace.path),
        "mabos-idle-index": server_preload(workspace.path),
    }
