"""MCP worker processes have a memory limit; one call past it fails cleanly and the next call works (issue 30).

Before: the 983-byte billion-laughs document sent through ``fact_import`` made the worker ask for 3 GB and abort,
and nothing stopped a call from taking the machine's memory. Now each worker caps its address space
(``RLIMIT_AS``) at its size when ready plus ``PoolSettings.memory`` (default 2 GiB, ``MABOS_WORKER_MEMORY``); a
call past it ends with ``error: memory: ...``, that worker is replaced, and the pool keeps serving. Real worker
processes (the forkserver of ``cli.child_process``) on a real workspace; the call that runs out is a real import
of a large N-Triples document under a 64 MiB limit. The bomb itself is refused before parsing
(:func:`kg.limits.refuse_xml_dtd`) and leaves the worker as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from cli.pool_settings import DEFAULT_MEMORY, ENV_MEMORY, PoolSettings, memory_from_env
from cli.tools.mcp_workers import WorkerPool
from kg.errors import InputError
from kg.workspace import Workspace
from tests.reliability.test_xml_bombs import REFUSED, laughs

LIMIT = 64 << 20


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.fixture
def pool(workspace: Workspace) -> Iterator[WorkerPool]:
    workspace.agents.add("a")
    made = WorkerPool(Path(workspace.path), PoolSettings(workers=1, memory=LIMIT))
    try:
        yield made
    finally:
        made.close()


def _text(reply: dict[str, Any]) -> str:
    return str(reply["content"][0]["text"])


def test_a_call_past_the_memory_limit_fails_cleanly_and_the_next_one_works(pool: WorkerPool) -> None:
    triples = "".join(
        f'<http://example.org/s{i}> <http://example.org/p> "value number {i}" .\n' for i in range(200_000)
    )

    async def scenario() -> list[tuple[dict[str, Any], list[int]]]:
        out = []
        for name, arguments in (
            ("fact_import", {"documents": [{"name": "lol.rdf", "format": "xml", "content": laughs(9)}]}),
            ("fact_import", {"documents": [{"name": "big.nt", "format": "nt", "content": triples}]}),
            ("fact_query", {"subject": "http://example.org/s1"}),
        ):
            reply = await pool.call(name, {"agent_id": "a", **arguments}, agent=None, key="a")
            out.append((reply, pool.pids()))
        return out

    (bomb, pids0), (big, pids1), (after, pids2) = anyio.run(scenario)
    assert bomb["isError"] and _text(bomb) == f"error: documents[0]: lol.rdf: {REFUSED}"
    assert big["isError"] and _text(big).startswith("error: memory: fact_import "), _text(big)
    assert "64 MiB" in _text(big) and len(_text(big).splitlines()) == 1
    assert not after.get("isError") and after["structuredContent"] == {"facts": []}  # nothing of the import stored
    assert len(pids0) == 1 and pids1 == []  # the bomb left its worker serving; the one that ran out was retired
    assert len(pids2) == 1 and pids2 != pids0  # and a new worker took the next call


def test_the_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, expected in (("", DEFAULT_MEMORY), ("512MiB", 512 << 20), ("3g", 3 << 30), ("off", None),
                            ("1048576", 1 << 20)):  # fmt: skip
        monkeypatch.setenv(ENV_MEMORY, value)
        assert memory_from_env() == expected
        if expected is None or expected >= 32 << 20:
            assert PoolSettings().memory == expected
    monkeypatch.setenv(ENV_MEMORY, "lots")
    with pytest.raises(InputError, match=r"^MABOS_WORKER_MEMORY: must be a size"):
        memory_from_env()
    with pytest.raises(InputError, match=r"^memory: must be between 32 MiB"):
        PoolSettings(memory=1 << 20)
