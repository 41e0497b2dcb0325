"""The Markdown index on real files: what it indexes, incremental refresh, the sidecar, BM25 search, isolation."""

from __future__ import annotations

import itertools
import json
import logging
import os
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.memory.files import daily_log_entry, daily_log_header
from kg.recall.chunking import split_lines
from kg.recall.markdown_index import SIDECAR_DIR, MarkdownIndex, agent_files
from kg.text.stem import light_stem
from kg.text.terms import search_terms


def put(path: Path, text: str) -> None:
    """Plain write (the index must not care how a file was written; no fsync keeps the tests fast)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


FILLER = "routine status update about the weekly sync and the backlog grooming session"


def write_log(ws: Path, agent: str, day: date, entries: list[str]) -> Path:
    text = daily_log_header(day)
    for k, content in enumerate(entries):
        text += daily_log_entry(when=datetime(day.year, day.month, day.day, 9, k, tzinfo=UTC), uid=f"M-{k:026d}",
                                type_="event", importance=0.5, store="working", tags=[], content=content)  # fmt: skip
    path = ws / "agents" / agent / "memory" / f"{day.isoformat()}.md"
    put(path, text)
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace folder with agents ``a`` and ``b`` and a few Markdown files each (no database)."""
    root = tmp_path / "ws"
    for n in range(1, 6):
        write_log(root, "a", date(2024, 5, n), [f"{FILLER} number {n}", f"{FILLER} again"])
    write_log(root, "a", date(2024, 5, 6), ["Decided that JWT tokens use RS256 signing keys", FILLER])
    put(root / "agents" / "a" / "MEMORY.md", "# Long-term memory\n\n- The refund policy is 30 days\n")
    checkpoint = "# Checkpoint 2024-05-06 12:00 UTC\n\n## Current Task Context\n\nMigrating the billing service\n"
    put(root / "agents" / "a" / "memory" / "checkpoints" / "2024-05-06-1200.md", checkpoint)
    write_log(root, "b", date(2024, 5, 1), ["Agent b prefers quarterly invoices", FILLER])
    return root


def lines_cited(ws: Path, hit) -> str:
    return "\n".join(split_lines((ws / hit.path).read_text())[hit.line_start - 1 : hit.line_end])


def test_indexes_memory_tree_and_top_level_files_only(ws):
    (ws / "agents" / "a" / "notes.txt").write_text("not markdown")
    (ws / "agents" / "a" / "memory" / ".draft.md").write_text("hidden")
    (ws / "agents" / "a" / "other").mkdir()
    (ws / "agents" / "a" / "other" / "x.md").write_text("# outside memory/")
    found = agent_files(ws, "a")
    assert list(found) == sorted(found)
    assert set(found) == {
        "agents/a/MEMORY.md",
        "agents/a/memory/checkpoints/2024-05-06-1200.md",
        *(f"agents/a/memory/2024-05-0{n}.md" for n in range(1, 7)),
    }


def test_search_ranks_the_matching_entry_first_and_cites_its_lines(ws):
    hits = MarkdownIndex(ws).search("a", "which signing keys do JWT tokens use?", limit=3)
    assert hits[0].path == "agents/a/memory/2024-05-06.md" and hits[0].agent_id == "a"
    assert "RS256" in hits[0].text and hits[0].text == lines_cited(ws, hits[0])
    assert hits[0].heading.startswith("Daily log 2024-05-06")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    refund = MarkdownIndex(ws).search("a", "refund policy", limit=5)
    assert refund[0].path == "agents/a/MEMORY.md" and (refund[0].line_start, refund[0].line_end) == (1, 3)


def test_stemming_and_case_folding_match_word_forms(ws):
    assert light_stem("deployed") == light_stem("deploying") == light_stem("deploys") == light_stem("deploy")
    assert search_terms("The DEPLOYMENTS were Deployed") == ["deployment", "deploi"]
    hits = MarkdownIndex(ws).search("a", "decide migrate", limit=5)
    assert {h.path for h in hits} == {"agents/a/memory/2024-05-06.md", "agents/a/memory/checkpoints/2024-05-06-1200.md"}


def test_cjk_is_searched_by_character_bigrams(ws):
    assert search_terms("東京タワー 中") == ["東京", "京タ", "タワ", "ワー", "中"]
    put(ws / "agents" / "a" / "memory" / "2024-05-07.md", "# 日誌\n\n東京タワーに行きました。\n")
    [hit] = MarkdownIndex(ws).search("a", "東京", limit=5)
    assert hit.path.endswith("2024-05-07.md") and hit.line_end == 3


def test_a_query_without_terms_or_an_agent_without_files_finds_nothing(ws):
    index = MarkdownIndex(ws)
    assert index.search("a", "the of and", limit=5) == []
    assert index.search("a", "zebra", limit=5) == []
    assert index.search("nobody", "refund", limit=5) == []
    assert not (ws / SIDECAR_DIR / "nobody.json").exists()


def test_files_without_any_search_term_are_indexed_but_never_match(tmp_path):
    put(tmp_path / "agents" / "a" / "memory" / "rules.md", "---\n***\n")
    put(tmp_path / "agents" / "a" / "memory" / "stop.md", "the of and\n")
    index = MarkdownIndex(tmp_path)
    assert index.refresh("a").chunks == 2
    assert index.search("a", "anything at all", limit=5) == []
    assert [h.line_start for h in index.scan("a", "**", limit=5)] == [2]


def test_overlapping_chunks_of_a_file_are_returned_once(ws):
    lines = [f"line {n} about kubernetes autoscaling" for n in range(300)]
    put(ws / "agents" / "a" / "memory" / "long.md", "# Long\n\n" + "\n".join(lines) + "\n")
    hits = [h for h in MarkdownIndex(ws).search("a", "kubernetes autoscaling", limit=50) if h.path.endswith("long.md")]
    spans = sorted((h.line_start, h.line_end) for h in hits)
    assert len(spans) > 1 and all(a_end < b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


# ------------------------------------------------------------------------- incremental refresh


def test_first_refresh_builds_and_writes_the_sidecar(ws):
    stats = MarkdownIndex(ws).refresh("a")
    assert (stats.files, stats.rebuilt, stats.written) == (8, "missing", True)
    assert len(stats.added) == 8 and stats.changed == stats.removed == [] and stats.unchanged == 0
    data = json.loads((ws / SIDECAR_DIR / "a.json").read_text())
    assert data["format"] == "mabos-mdindex" and data["version"] == 1 and data["agent_id"] == "a"
    assert sum(len(f["chunks"]) for f in data["files"].values()) == stats.chunks
    assert not (ws / ".mabos" / "kg.sqlite").exists()  # the index never touches the database


def test_an_unchanged_workspace_rechunks_nothing_and_writes_nothing(ws):
    MarkdownIndex(ws).refresh("a")
    sidecar = ws / SIDECAR_DIR / "a.json"
    before = sidecar.stat().st_mtime_ns
    stats = MarkdownIndex(ws).refresh("a")  # a new instance reads the sidecar
    assert (stats.rebuilt, stats.written, stats.unchanged, stats.added, stats.changed) == (None, False, 8, [], [])
    assert sidecar.stat().st_mtime_ns == before


def test_touching_one_file_rechunks_only_that_file(ws):
    index = MarkdownIndex(ws)
    index.refresh("a")
    before = {c.id: c.path for c in index.chunks("a", refresh=False)}
    os.utime(ws / "agents" / "a" / "memory" / "2024-05-01.md")  # same bytes, newer time: nothing to do
    assert index.refresh("a").changed == []
    target = write_log(ws, "a", date(2024, 5, 2), [f"{FILLER} number 2", "Switched the CI runners to ARM"])
    stats = index.refresh("a")
    assert stats.changed == ["agents/a/memory/2024-05-02.md"] and stats.unchanged == 7 and stats.written
    after = {c.id: c.path for c in index.chunks("a", refresh=False)}
    assert {i for i in before if before[i] != "agents/a/memory/2024-05-02.md"} <= set(after)
    assert {after[i] for i in set(after) - set(before)} == {"agents/a/memory/2024-05-02.md"}
    assert MarkdownIndex(ws).search("a", "ARM runners", limit=1)[0].path == target.relative_to(ws).as_posix()


def test_a_new_and_a_deleted_file_add_and_drop_their_chunks(ws):
    index = MarkdownIndex(ws)
    total = index.refresh("a").chunks
    (ws / "agents" / "a" / "memory" / "2024-05-06.md").unlink()
    write_log(ws, "a", date(2024, 5, 8), ["Hired a second designer"])
    stats = index.refresh("a")
    assert stats.removed == ["agents/a/memory/2024-05-06.md"] and stats.added == ["agents/a/memory/2024-05-08.md"]
    assert stats.chunks == total  # one chunk each
    assert index.search("a", "RS256", limit=5) == []
    assert MarkdownIndex(ws).search("a", "designer", limit=5)[0].path.endswith("2024-05-08.md")


@pytest.mark.parametrize("garbage", [b"\x00\xffnot json", b'{"format": "mabos-mdindex"}', b"[]", b""])
def test_a_corrupt_sidecar_is_read_around_by_a_search_and_rebuilt_by_a_refresh(ws, garbage, caplog):
    MarkdownIndex(ws).refresh("a")
    (ws / SIDECAR_DIR / "a.json").write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="mabos.recall"):
        hits = MarkdownIndex(ws).search("a", "RS256", limit=1)
    assert hits and hits[0].path.endswith("2024-05-06.md")
    assert "corrupt" in caplog.text
    assert (ws / SIDECAR_DIR / "a.json").read_bytes() == garbage  # a search reads: the file is left as it was
    assert MarkdownIndex(ws).refresh("a").rebuilt == "corrupt"
    assert MarkdownIndex(ws).refresh("a").rebuilt is None  # written back, valid again


def test_a_sidecar_of_another_chunker_or_agent_is_rebuilt(ws):
    MarkdownIndex(ws).refresh("a")
    assert MarkdownIndex(ws, chunk_size=200, overlap=40).refresh("a").rebuilt == "outdated"
    (ws / SIDECAR_DIR / "b.json").write_bytes((ws / SIDECAR_DIR / "a.json").read_bytes())
    stats = MarkdownIndex(ws, chunk_size=200, overlap=40).refresh("b")
    assert stats.rebuilt == "outdated" and stats.files == 1


def test_an_unwritable_sidecar_is_logged_and_search_still_answers(ws, caplog):
    (ws / ".mabos").mkdir()
    (ws / SIDECAR_DIR).write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING, logger="mabos.recall"):
        index = MarkdownIndex(ws)
        assert index.refresh("a").written is False
        assert index.search("a", "RS256", limit=1)
    assert "cannot write the Markdown index" in caplog.text


def test_refresh_all_covers_every_agent_folder(ws):
    (ws / "agents" / "Not-An-Id").mkdir()
    stats = MarkdownIndex(ws).refresh_all()
    assert [(s.agent_id, s.files) for s in stats] == [("a", 8), ("b", 1)]


# ----------------------------------------------------------------------------- isolation


def test_an_agent_never_gets_another_agents_files(ws):
    index = MarkdownIndex(ws)
    assert index.search("b", "JWT RS256 refund", limit=10) == []
    assert [h.path for h in index.search("b", "quarterly invoices", limit=10)] == ["agents/b/memory/2024-05-01.md"]
    assert all(h.agent_id == "a" and h.path.startswith("agents/a/") for h in index.search("a", "update", limit=50))


@pytest.mark.parametrize("bad", ["../x", "..", "a/../b", "A", "", "/etc", "a\n", "x" * 65])
def test_bad_agent_ids_are_refused(ws, bad):
    index = MarkdownIndex(ws)
    for call in (lambda: index.search(bad, "x"), lambda: index.refresh(bad), lambda: agent_files(ws, bad)):
        with pytest.raises(InputError):
            call()


def test_symlinks_out_of_the_agent_folder_are_skipped(ws, tmp_path, caplog):
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\npassword hunter2\n")
    memory_b = ws / "agents" / "b" / "memory"
    (memory_b / "leak.md").symlink_to(secret)
    (memory_b / "peek.md").symlink_to(ws / "agents" / "a" / "memory" / "2024-05-06.md")
    (memory_b / "linked-dir").symlink_to(ws / "agents" / "a" / "memory", target_is_directory=True)
    (memory_b / "own.md").symlink_to(memory_b / "2024-05-01.md")  # inside its own folder: fine
    with caplog.at_level(logging.WARNING, logger="mabos.recall"):
        assert set(agent_files(ws, "b")) == {"agents/b/memory/2024-05-01.md", "agents/b/memory/own.md"}
        assert MarkdownIndex(ws).search("b", "hunter2 RS256", limit=10) == []
    assert "points outside the agent folder" in caplog.text


def test_an_agent_folder_that_is_a_symlink_is_not_indexed(ws, caplog):
    (ws / "agents" / "c").symlink_to(ws / "agents" / "a", target_is_directory=True)
    with caplog.at_level(logging.WARNING, logger="mabos.recall"):
        assert agent_files(ws, "c") == {}
        assert MarkdownIndex(ws).search("c", "RS256", limit=5) == []
    assert "symlink" in caplog.text


def test_scan_finds_substrings_case_insensitively_with_their_heading(ws):
    hits = MarkdownIndex(ws).scan("a", "rs25", limit=5)
    assert [(h.path, h.line_start) for h in hits] == [("agents/a/memory/2024-05-06.md", 5)]
    assert hits[0].text == lines_cited(ws, hits[0]) and hits[0].heading.startswith("Daily log 2024-05-06 > 09:00")
    assert MarkdownIndex(ws).scan("a", "   ", limit=5) == []


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_limits_outside_the_range_are_refused(ws, limit):
    with pytest.raises(InputError):
        MarkdownIndex(ws).search("a", "x", limit=limit)
