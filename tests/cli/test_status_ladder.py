"""`mabos status` shows the degradation ladder (issue 35.6): each part's rung, why, and what answers instead.

Real workspaces, a real closed port for TypeDB (nothing listens on it), a real corrupted database file."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from tests.cli.conftest import SALES, Mabos


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends: connecting is refused


def test_a_fresh_workspace_stands_on_the_embedded_store(ready: Mabos, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    found = ready.json("status")["ladder"]
    assert found["typedb"]["rung"] == "off" and "not configured" in found["typedb"]["reason"]
    assert found["store"]["rung"] == "ok"
    assert found["vector_index"]["rung"] == "off" and "MABOS_EMBEDDER" in found["vector_index"]["reason"]
    assert found["files"]["rung"] == "ready"
    assert found["recall"] == "BM25 over the store"
    human = ready.ok("status").stdout
    assert "Degradation ladder" in human and "recall answers from: BM25 over the store" in human


def test_typedb_down_says_why_and_that_writes_wait_in_the_outbox(ready: Mabos, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    ready.ok("fact", "assert", "--agent", SALES, "acme", "hasRevenue", "5")
    port = _closed_port()
    result = ready("status", "--typedb", f"127.0.0.1:{port}", "--json")
    found = json.loads(result.stdout)["ladder"]["typedb"]
    assert found["rung"] == "down", found
    assert f"127.0.0.1:{port}" in found["reason"] and "outbox" in found["reason"]
    assert "embedded store" in found["serves"]


def test_an_open_circuit_breaker_is_the_reason_without_a_probe(ready: Mabos, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    breaker = ready.workspace / ".mabos" / "typedb-breaker.json"
    breaker.write_text(json.dumps({"open_until": time.time() + 600, "failures": 3, "last_error": "boom at commit"}))
    found = ready.json("status", "--typedb", f"127.0.0.1:{_closed_port()}")["ladder"]["typedb"]
    assert found["rung"] == "down"
    assert "failed 3 time(s)" in found["reason"] and "boom at commit" in found["reason"]


def test_an_unreadable_database_leaves_the_files_answering(ready: Mabos, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    ready.ok("memory", "store", "--agent", SALES, "Renewal terms are net 30", "--type", "fact")
    db = ready.workspace / ".mabos" / "kg.sqlite"
    for leftover in db.parent.glob("kg.sqlite-*"):
        leftover.unlink()
    db.write_bytes(b"this is not a database" * 100)
    result = ready("status", "--json")
    assert result.exit_code == 3, result.output
    found = json.loads(result.stdout)["ladder"]
    assert (found["store"]["rung"], found["files"]["rung"]) == ("down", "up")
    assert "not a usable mabos database" in found["store"]["reason"]
    assert found["recall"] == "the Markdown files"
    # ... and recall does answer from them, as the ladder says.
    recalled = json.loads(ready("memory", "recall", "--agent", SALES, "renewal", "--json").stdout)
    assert recalled["fallback"] is True


def test_the_degradation_page_names_every_rung_the_code_reports() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "degradation.md").read_text(encoding="utf-8")
    from sync.ladder import Rung  # noqa: PLC0415

    for rung in Rung.__args__:  # type: ignore[attr-defined]
        assert f"`{rung}`" in page, rung
