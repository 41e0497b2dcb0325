"""Idle-time indexing (cli/idle_index.py) as the MCP server runs it (issue 18): real workspace, real embedding
model, real child processes.

The pass runs in a forkserver child that opens the workspace by path and embeds with the packaged model (the
``MABOS_EMBEDDER`` of the test environment); tool calls run in the server's real worker pool.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest

from cli.idle_index import IdleIndexer
from cli.pool_settings import PoolSettings
from cli.tools.mcp_server import ToolServer
from cli.tools.registry import ToolContext
from kg.errors import InputError
from kg.workspace import Workspace

CAR = "The car would not start this morning"


def _store(ws: Workspace, count: int) -> str:
    """``count`` items of agent a (none of them indexed); the uid of the one about the car."""
    uid = ws.memory.store_item("a", CAR, type="fact").item.uid
    for n in range(count - 1):
        ws.memory.store_item("a", f"note {n}: the meeting about budget line {n} moved to room {n % 7}", type="fact")
    return uid


def _vectors(ws: Workspace) -> dict[str, Any]:
    assert ws.vectors is not None
    return ws.vectors.status()


async def _until(check: Any) -> None:
    with anyio.fail_after(180):  # a guard against a hang, not a timing assertion
        while not check():
            await anyio.sleep(0.02)


def _idle_until_empty(indexer: IdleIndexer) -> dict[str, Any]:
    """Run the indexer as a server does, with no request coming, until a pass finds nothing left to index; its
    progress then (leaving :meth:`IdleIndexer.running` marks it stopped)."""

    async def main() -> dict[str, Any]:
        async with indexer.running():
            await _until(lambda: indexer.empty)
            return indexer.progress()

    return anyio.run(main)


def test_items_stored_while_idle_become_vector_searchable(embedded_ws: Workspace) -> None:
    ws = embedded_ws
    uid = _store(ws, 20)
    assert _vectors(ws)["state"] == "missing"
    indexer = IdleIndexer(ws.path, idle=0.1, pass_items=8, batch=4, poll=0.02)
    progress = _idle_until_empty(indexer)
    status = _vectors(ws)
    assert (status["state"], status["indexed"], status["backlog"]) == ("ready", 20, 0)
    assert "progress" in indexer.events
    assert indexer.progress()["state"] == "stopped"
    assert (progress["state"], progress["done"], progress["total"], progress["backlog"]) == ("up to date", 20, 20, 0)
    assert ws.vectors is not None and ws.embedder is not None
    index = ws.vectors.index(inline_limit=0)  # the saved index as it is: nothing may be embedded inline here
    assert index.search(ws.embedder.embed([CAR])[0], 1)[0][0] == uid

    # more items after the index is built: the next idle period adds them (catch-up passes of pass_items each)
    _store(ws, 12)
    indexer2 = IdleIndexer(ws.path, idle=0.1, pass_items=5, batch=5, poll=0.02)
    _idle_until_empty(indexer2)
    status = _vectors(ws)
    assert (status["indexed"], status["backlog"]) == (32, 0)
    assert indexer2.events.count("start") >= 3  # 12 items in passes of at most 5


def test_a_call_during_a_pass_stops_it_and_the_next_pass_loses_and_repeats_nothing(embedded_ws: Workspace) -> None:
    ws = embedded_ws
    _store(ws, 30)
    server = ToolServer(ToolContext(path=ws.path), PoolSettings(workers=1), index_when_idle=30)
    assert server.indexer is not None
    indexer = server.indexer = IdleIndexer(ws.path, idle=0.1, pass_items=10, batch=1, poll=0.02)
    answers: list[types.CallToolResult] = []

    async def main() -> None:
        await server.pool.start()
        async with anyio.create_task_group() as group:
            group.start_soon(indexer.run)
            await _until(lambda: indexer.events.count("progress") >= 12)  # past its first checkpoint (10 items)
            params = types.CallToolRequestParams(name="memory_status", arguments={"agent_id": "a"})
            answers.append(await server._call_tool(None, params))
            indexer.events.append("answered")
            await _until(lambda: indexer.empty)
            indexer.close()
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        server.close()
    assert answers and not answers[0].is_error
    events = indexer.events
    # the call arrived during the first pass: that pass was stopped before the call was answered, then resumed
    assert events.index("stopped") < events.index("answered") < events.index("done")
    assert "done" not in events[: events.index("stopped")]
    assert events[events.index("answered") :].count("start") >= 1
    status = _vectors(ws)  # killed mid-build: every item indexed exactly once
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("ready", 30, 30, 0)


def test_the_off_switch(embedded_ws: Workspace) -> None:
    ws = embedded_ws
    _store(ws, 5)
    server = ToolServer(ToolContext(path=ws.path))  # index_when_idle defaults to 0 here: off
    assert server.indexer is None

    async def main() -> None:
        async with server._idle_indexing():
            await anyio.sleep(0.3)

    try:
        anyio.run(main)
    finally:
        server.close()
    assert _vectors(ws)["state"] == "missing"
    with pytest.raises(InputError, match="index_when_idle"):
        IdleIndexer(ws.path, idle=0)
