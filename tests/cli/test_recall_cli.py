"""``mabos memory recall`` (hybrid, explain, files, fallback) and ``mabos index rebuild|update|status``.

In-process runs of the real command tree on a real workspace: SQLite, the FAISS sidecar and the real
all-MiniLM-L6-v2 (loaded once per test process).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import kg
from cli import tools
from kg.clock import FixedClock
from kg.workspace import DB_FILE, STATE_DIR
from tests.conftest import T0

CAR = "The car would not start this morning"
JWT = "JWT tokens are signed with RS256"
REFUND = "The refund policy is 30 days for annual plans"
DAILY_LOG = "agents/a/memory/2024-05-01.md"


@pytest.fixture
def seeded(mabos):
    """Agent ``a`` with three long-term facts stored on 2024-05-01 (daily log ``agents/a/memory/2024-05-01.md``).

    Long-term: the commands run on the system clock, long after a short-term item's two hours."""
    with kg.init_workspace(mabos.workspace, clock=FixedClock(T0)) as ws:
        ws.agents.add("a")
        uids = {name: ws.memory.store_item("a", text, type="fact", store="long_term").item.uid
                for name, text in (("car", CAR), ("jwt", JWT), ("refund", REFUND))}  # fmt: skip
    return uids


def run_json(mabos, *args: str, env: dict[str, str | None] | None = None) -> Any:
    result = mabos(*args, "--json", env=env)
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return json.loads(result.stdout)


def corrupt_database(mabos) -> None:
    state = mabos.workspace / STATE_DIR
    for leftover in state.glob(f"{DB_FILE}-*"):  # -wal and -shm
        leftover.unlink()
    (state / DB_FILE).write_bytes(b"this is not a database\x00\xff" * 512)


def test_recall_json_is_hybrid_and_finds_by_meaning(mabos, seeded):
    data = run_json(mabos, "memory", "recall", "--agent", "a", "vehicle broke down")
    assert (data["mode"], data["requested_mode"], data["fusion"], data["fallback"]) == (
        "hybrid", "hybrid", "weighted", False)  # fmt: skip
    [hit] = data["hits"]
    assert hit["item"]["uid"] == seeded["car"] and hit["bm25"] == 0.0 and hit["vector"] > 0.15
    assert hit["explain"] is None and data["files"] == []


def test_recall_without_an_embedder_says_bm25(mabos, seeded):
    env = {"MABOS_EMBEDDER": "none"}
    data = run_json(mabos, "memory", "recall", "--agent", "a", "refund policy", "--mode", "vector", env=env)
    assert (data["mode"], data["requested_mode"]) == ("bm25", "vector")
    assert [h["item"]["uid"] for h in data["hits"]] == [seeded["refund"]]
    assert data["hits"][0]["vector"] == 0.0
    assert data["notes"] == ["vector search unavailable, BM25 only: embedder: none configured"]
    human = mabos("memory", "recall", "--agent", "a", "refund policy", env=env)
    assert human.exit_code == 0 and "mode bm25" in human.stdout
    assert "note: vector search unavailable, BM25 only: embedder: none configured" in human.stdout


def test_recall_explain_json_and_text(mabos, seeded):
    data = run_json(mabos, "memory", "recall", "--agent", "a", "JWT token signing", "--explain", "--fusion", "rrf")
    assert data["fusion"] == "rrf" and data["hits"][0]["item"]["uid"] == seeded["jwt"]
    for hit in data["hits"]:
        assert round(hit["explain"]["final"], 6) == hit["score"] and hit["explain"]["rrf"] is not None
    text = mabos.ok("memory", "recall", "--agent", "a", "JWT token signing", "--explain").stdout
    assert f"#1 {seeded['jwt']}: bm25_raw=" in text and " final=" in text


def test_bad_mode_is_a_usage_error(mabos, seeded):
    result = mabos("memory", "recall", "--agent", "a", "x", "--mode", "fuzzy")
    assert result.exit_code == 2 and "fuzzy" in result.stderr


def test_a_corrupt_database_answers_from_the_markdown_files(mabos, seeded):
    corrupt_database(mabos)
    data = run_json(mabos, "memory", "recall", "--agent", "a", "refund policy")
    assert data["fallback"] is True and data["hits"] == [] and data["mode"] == "bm25"
    assert "not a usable mabos database" in data["reason"]
    top = data["files"][0]
    assert top["path"] == DAILY_LOG and "refund policy" in top["text"]
    assert 1 <= top["line_start"] <= top["line_end"] and top["fallback"] is True
    assert top["reason"] == data["reason"]
    human = mabos("memory", "recall", "--agent", "a", "refund policy")
    assert human.exit_code == 0 and "answered from the Markdown files (fallback)" in human.stdout
    assert DAILY_LOG in human.stdout


def unopenable_database(mabos) -> None:
    """A folder where the database file should be: SQLite cannot open it (root or not)."""
    state = mabos.workspace / STATE_DIR
    for leftover in state.glob(f"{DB_FILE}-*"):
        leftover.unlink()
    (state / DB_FILE).unlink()
    (state / DB_FILE).mkdir()


@pytest.mark.parametrize(("damage", "why"), [
    (corrupt_database, "not a usable mabos database"),  # CorruptStoreError
    (unopenable_database, "cannot open"),  # BackendUnavailableError
])  # fmt: skip
def test_the_command_and_the_tool_fall_back_to_the_files_alike(mabos, seeded, damage, why):
    """One decision (kg.memory.service.recall_or_files): the command opens its workspace only when the tool asks,
    so a database that cannot be opened gives the same answer, reason and spans on the command line as over the
    registry (MCP)."""
    damage(mabos)
    command = run_json(mabos, "memory", "recall", "--agent", "a", "refund policy", "--limit", "3")
    tool = tools.call("memory_recall", workspace=mabos.workspace, agent_id="a", query="refund policy", limit=3)
    assert command == tool.model_dump(mode="json")
    assert command["fallback"] is True and why in command["reason"]
    assert [f["path"] for f in command["files"]] == [DAILY_LOG]


def test_index_status_rebuild_and_update(mabos, seeded):
    status = run_json(mabos, "index", "status")["vectors"]
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("missing", 3, 0, 3)
    assert status["reason"] == "no manifest" and status["model"] == "all-MiniLM-L6-v2"

    built = run_json(mabos, "index", "rebuild", "--all")
    assert (built["vectors"]["rebuilt"], built["vectors"]["indexed"], built["vectors"]["backlog"]) == (True, 3, 0)
    assert [m["agent_id"] for m in built["markdown"]] == ["a"] and built["markdown"][0]["chunks"] >= 1
    status = run_json(mabos, "index", "status")
    assert (status["vectors"]["state"], status["vectors"]["backlog"]) == ("ready", 0)
    assert status["vectors"]["indexed"] == status["vectors"]["items"] == 3
    assert status["markdown"] == [{"agent_id": "a", "indexed": True, "chunks": status["markdown"][0]["chunks"],
                                   "files": 1}]  # fmt: skip

    run_json(mabos, "memory", "store", "--agent", "a", "My bicycle has a flat tyre")
    assert run_json(mabos, "index", "status")["vectors"]["backlog"] == 1
    updated = run_json(mabos, "index", "update")
    assert (updated["vectors"]["indexed"], updated["vectors"]["backlog"]) == (1, 0)
    status = run_json(mabos, "index", "status")["vectors"]
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("ready", 4, 4, 0)

    agent = run_json(mabos, "index", "rebuild", "--agent", "a")
    assert (agent["vectors"]["indexed"], agent["vectors"]["rebuilt"]) == (4, False)


def test_index_commands_without_an_embedder(mabos, seeded):
    env = {"MABOS_EMBEDDER": "none"}
    assert run_json(mabos, "index", "status", env=env)["vectors"] == {"state": "disabled"}
    result = mabos("index", "rebuild", "--all", env=env)
    assert result.exit_code == 3 and "embedder: none configured" in result.stderr


def test_recall_over_the_files_with_explain(mabos, seeded):
    text = mabos.ok("memory", "recall", "--agent", "a", "refund policy", "--source", "files", "--explain").stdout
    assert "recall (files)" in text and DAILY_LOG in text
    assert f"#1 {DAILY_LOG}:" in text and "final=" in text
    data = run_json(mabos, "memory", "recall", "--agent", "a", "refund policy", "--source", "files", "--explain")
    assert data["hits"] == [] and data["fallback"] is False and data["mode"] == "hybrid"
    top = data["files"][0]
    assert top["path"] == DAILY_LOG and "refund policy" in top["text"] and top["method"] == "hybrid"
    assert round(top["explain"]["final"], 6) == top["score"] and top["explain"]["bm25_rank"] == 1
