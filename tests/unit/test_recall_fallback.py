"""File fallback: recall answers from the daily logs when the database is missing, locked or corrupt."""

from __future__ import annotations

import logging
import sqlite3
from datetime import timedelta

import pytest

import kg
from kg.errors import InputError, MabosError
from kg.recall.fallback import fallback_recall
from kg.workspace import DB_FILE, STATE_DIR


@pytest.fixture
def logged(ws):
    """The ``ws`` workspace (agents a and b) after storing a few items, which writes the daily logs."""
    ws.memory.store_item("a", "JWT tokens are signed with RS256", type="decision", tags=["auth"])
    ws.clock.advance(timedelta(days=1))
    ws.memory.store_item("a", "The refund policy is 30 days for annual plans", type="fact")
    ws.memory.store_item("b", "Agent b keeps its own secrets: the vault is in Oslo", type="fact")
    ws.close()
    return ws.path


def corrupt_database(path) -> None:
    state = path / STATE_DIR
    for leftover in state.glob(f"{DB_FILE}-*"):  # WAL and shared-memory files
        leftover.unlink()
    (state / DB_FILE).write_bytes(b"this is not a database\x00\xff" * 512)


def test_a_corrupt_database_still_gets_answers_from_the_daily_logs(logged, caplog):
    corrupt_database(logged)
    with pytest.raises(MabosError), kg.open_workspace(logged) as opened:  # the store itself cannot answer
        opened.memory.recall("a", "RS256")
    with caplog.at_level(logging.INFO, logger="mabos.recall"):
        result = fallback_recall(logged, "a", "which key signs JWT tokens", limit=5, reason="database is corrupt")
    assert result.fallback is True and result.method == "bm25" and result.reason == "database is corrupt"
    top = result.hits[0]
    assert top.path == "agents/a/memory/2024-05-01.md" and "RS256" in top.text
    assert top.heading == "Daily log 2024-05-01" and (top.line_start, top.line_end) == (1, 6)
    assert all(h.fallback is True and h.reason == "database is corrupt" and h.method == "bm25" for h in result.hits)
    assert "answers from the Markdown files: database is corrupt" in caplog.text
    assert result.model_dump(mode="json")["hits"][0]["fallback"] is True


def test_a_missing_database_still_gets_answers(logged):
    (logged / STATE_DIR / DB_FILE).unlink()
    result = fallback_recall(logged, "a", "refund policy", limit=3, reason="no database")
    assert result.hits[0].path == "agents/a/memory/2024-05-02.md"
    assert not (logged / STATE_DIR / DB_FILE).exists()  # the fallback never creates one


def test_a_locked_database_does_not_block_the_fallback(logged):
    holder = sqlite3.connect(logged / STATE_DIR / DB_FILE, timeout=0)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = fallback_recall(logged, "a", "refund", limit=3, reason="database is locked")
    finally:
        holder.rollback()
        holder.close()
    assert result.hits and result.hits[0].reason == "database is locked"


def test_when_bm25_finds_nothing_a_substring_scan_answers(logged, caplog):
    corrupt_database(logged)
    with caplog.at_level(logging.INFO, logger="mabos.recall"):
        result = fallback_recall(logged, "a", "fund pol", limit=5, reason="vector index is corrupt")
    assert result.method == "substring"
    [hit] = result.hits
    assert hit.method == "substring" and hit.fallback is True and hit.reason == "vector index is corrupt"
    assert hit.path == "agents/a/memory/2024-05-02.md" and hit.line_start == hit.line_end
    assert "The refund policy" in hit.text
    assert "substring scan found 1 lines" in caplog.text


def test_nothing_found_is_an_empty_answer_not_an_error(logged):
    result = fallback_recall(logged, "a", "zeppelin", limit=5, reason="database is corrupt")
    assert (result.method, result.hits, result.fallback) == (None, [], True)
    assert result.files == 2 and result.chunks == 2


def test_the_fallback_keeps_agents_apart(logged):
    corrupt_database(logged)
    assert fallback_recall(logged, "a", "vault Oslo secrets", limit=5, reason="x").hits == []
    assert [h.agent_id for h in fallback_recall(logged, "b", "vault Oslo", limit=5, reason="x").hits] == ["b"]


@pytest.mark.parametrize("bad", ["../b", "../../etc", "A"])
def test_bad_agent_ids_are_refused_before_anything_is_read(logged, bad):
    with pytest.raises(InputError):
        fallback_recall(logged, bad, "x", limit=5, reason="x")


def test_a_workspace_without_files_answers_empty(tmp_path):
    result = fallback_recall(tmp_path / "nowhere", "a", "anything", limit=5, reason="no workspace")
    assert result.hits == [] and result.files == 0
    assert not (tmp_path / "nowhere").exists()
