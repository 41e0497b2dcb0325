"""``mabos memory extract`` and ``mabos memory list`` end to end: conversation -> memories -> facts, the report,
idempotent re-runs, --valid-at before and after a move, and one-line errors (issue 21). No embedder, no LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.budget import long_run

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")


@pytest.fixture(autouse=True)
def _no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)


def ingest(ready: Mabos, tmp_path: Path, name: str, rows: list[tuple[str, str]]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"role": "user", "content": c, "created_at": t}) + "\n" for t, c in rows))
    ready.json("conversation", "ingest", *A, "--session", "s1", "--file", str(path))


def facts_of(data: object) -> list[str]:
    rows = data["facts"] if isinstance(data, dict) else data
    assert isinstance(rows, list)
    return [f["object"] for f in rows]


def test_conversation_to_memories_to_facts(ready: Mabos, tmp_path: Path) -> None:
    ingest(ready, tmp_path, "first", [("2024-05-01T09:00:00Z", "I live in Berlin. I love hiking."),
                                      ("2024-05-01T09:01:00Z", "Do you remember my sister?")])  # fmt: skip
    first = ready.json("memory", "extract", *A)
    assert first["totals"]["windows_done"] == 1 and first["totals"]["items_written"] == 2
    assert first["report"]["windows"][0]["decisions"] == {"create": 2}
    assert first["markdown"].startswith("# Extraction report: sales-agent")

    listed = ready.json("memory", "list", *A)
    assert listed["count"] == 2
    assert all(item["derived_from"] and item["source"] == "extraction" for item in listed["items"])
    prefs = ready.json("memory", "list", *A, "--category", "preferences")
    assert [i["type"] for i in prefs["items"]] == ["preference"]

    assert ready.json("memory", "extract", *A)["totals"]["windows"] == 0  # nothing new: nothing read

    ingest(ready, tmp_path, "move", [("2024-06-01T09:00:00Z", "I moved to Paris.")])
    moved = ready.json("memory", "extract", *A)
    assert moved["totals"]["facts_invalidated"] == 1
    before = ready.json("fact", "query", *A, "--subject", "user", "--predicate", "livesIn",
                        "--valid-at", "2024-05-15T00:00:00Z")  # fmt: skip
    after = ready.json("fact", "query", *A, "--subject", "user", "--predicate", "livesIn",
                       "--valid-at", "2024-06-15T00:00:00Z")  # fmt: skip
    assert facts_of(before) == ["berlin"] and facts_of(after) == ["paris"]

    text = ready.ok("memory", "extract", *A, "--markdown").stdout
    assert text.startswith("# Extraction report: sales-agent")


def test_bad_input_is_one_line_and_changes_nothing(ready: Mabos) -> None:
    missing = ready("memory", "extract", *A, "--session", "nope")
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1 and "session" in missing.stderr
    llm = ready("memory", "extract", *A, "--extractor", "llm")
    assert llm.exit_code == 1 and "extractor" in llm.stderr
    usage = ready("memory", "extract", *A, "--window", "0")
    assert usage.exit_code == 2
    assert ready.json("memory", "list", *A)["count"] == 0


def test_compaction_runs_extraction_and_saves_its_report(ready: Mabos, tmp_path: Path) -> None:
    ingest(ready, tmp_path, "first", [("2024-05-01T09:00:00Z", "I live in Berlin.")])
    assert ready.json("memory", "list", *A)["count"] == 0  # ingest alone extracts nothing by default
    ready.json("conversation", "compact", *A, "--session", "s1")
    assert ready.json("memory", "list", *A)["count"] == 1
    reports = sorted((ready.workspace / ".mabos" / "extraction-reports").glob("extraction-*-compact.*"))
    assert [p.suffix for p in reports] == [".json", ".md"]
    assert json.loads(reports[0].read_text())["agent_id"] == "sales-agent"


def test_configuration_turns_the_automatic_runs_on_and_off(ready: Mabos, tmp_path: Path) -> None:
    config = ready.workspace / "mabos.toml"
    config.write_text(config.read_text() + "\n[extraction]\nafter_compact = false\nevery_messages = 2\n")
    ingest(ready, tmp_path, "one", [("2024-05-01T09:00:00Z", "I live in Berlin.")])
    assert ready.json("memory", "list", *A)["count"] == 0  # 1 of 2 messages waiting
    ingest(ready, tmp_path, "two", [("2024-05-01T09:01:00Z", "I love hiking.")])
    assert ready.json("memory", "list", *A)["count"] == 2  # the second message made it due
    ingest(ready, tmp_path, "three", [("2024-05-01T09:02:00Z", "I prefer green tea.")])
    ready.json("conversation", "compact", *A, "--session", "s1")
    assert ready.json("memory", "list", *A)["count"] == 2  # after_compact is off


def _large_message_then_a_normal_session(ready: Mabos, tmp_path: Path, big: str) -> None:
    """Issue 30: a message of more than 77,000 characters (ingest takes up to 1,000,000) plus a normal session: the
    run ends with exit 0, what the large window derives is cut to the model's limits, the normal session is
    extracted, and the mark moves past both (a second run reads nothing). Failed before the fix with
    ``internal error: ValidationError: ... ExtractedMemory ... at most 65536 characters``."""
    assert len(big) > 77_000
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"role": "user", "content": big, "created_at": "2024-05-01T09:00:00Z"}) + "\n")
    ready.json("conversation", "ingest", *A, "--session", "big", "--file", str(path))
    normal = tmp_path / "normal.jsonl"
    normal.write_text(json.dumps({"role": "user", "content": "I live in Berlin. I love hiking.",
                                  "created_at": "2024-05-02T09:00:00Z"}) + "\n")  # fmt: skip
    ready.json("conversation", "ingest", *A, "--session", "s1", "--file", str(normal))
    result = ready("memory", "extract", *A, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["totals"]["failures"] == [] and report["totals"]["windows"] == 2
    facts = ready.json("fact", "query", *A, "--subject", "user", "--predicate", "livesIn")
    assert facts_of(facts) == ["berlin"]
    items = ready.json("memory", "list", *A)["items"]
    assert all(len(i["content"]) <= 65_536 for i in items)
    assert [w["status"] for w in report["report"]["windows"]] == ["done", "done"]  # cut to the limits, not lost
    assert ready.json("memory", "extract", *A)["totals"]["windows"] == 0  # the marks moved past both


def test_one_large_message_never_blocks_later_windows(ready: Mabos, tmp_path: Path) -> None:
    """Ten sentences of 8,000 characters each: the narrative (L2) would pass the 65,536-character limit."""
    sentence = "I went to the market with " + "my good friend " * 530 + "and bought bread."
    _large_message_then_a_normal_session(ready, tmp_path, " ".join([sentence] * 10))


@pytest.mark.slow
@pytest.mark.skipif(not long_run(), reason="the long run only (pytest -m slow or MABOS_SLOW=1)")
def test_one_large_message_of_many_statements_never_blocks_later_windows(ready: Mabos, tmp_path: Path) -> None:
    """1,100 different statements in one message: the overview (L1) would pass the limit too."""
    big = " ".join(f"I went to the market number {n} with my friends and bought fresh bread." for n in range(1100))
    _large_message_then_a_normal_session(ready, tmp_path, big)


def test_a_window_the_models_refuse_is_named_in_the_human_output(ready: Mabos, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The real extractor, made to derive a memory the model refuses for one window (an empty abstract), as an
    oversized one was in issue 30: the run ends with exit 0 and says which window it passed over."""
    from kg.extraction import workspace  # noqa: PLC0415 - the class the CLI builds is swapped for this test only
    from kg.models import Category, ExtractedMemory  # noqa: PLC0415

    class Refusing(workspace.DeterministicExtractor):
        def extract(self, window, *, speaker):  # type: ignore[no-untyped-def]
            if any("POISON" in m.content for m in window):
                ExtractedMemory(category=Category.EVENTS, abstract="", overview="x", content="x",
                                sources=[window[0].uid])  # fmt: skip
            return super().extract(window, speaker=speaker)

    monkeypatch.setattr(workspace, "DeterministicExtractor", Refusing)
    ingest(ready, tmp_path, "bad", [("2024-05-01T09:00:00Z", "POISON I live in Lima.")])
    result = ready("memory", "extract", *A)
    assert result.exit_code == 0, result.stderr
    assert "skipped (passed over)" in result.stdout and "ValidationError" in result.stdout
    assert ready.json("memory", "extract", *A)["totals"]["windows"] == 0
