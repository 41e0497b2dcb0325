"""A recall of Markdown files reads (issue 33): the index sidecar is written where the files are written, in idle time
and by the nightly job, never by the answer.

Real workspace, real SQLite, the real Markdown index (bm25s) and the packaged all-MiniLM-L6-v2. "Nothing written" is
checked on the whole workspace tree: every file's bytes and modification time, before and after. SQLite's
shared-memory file (``kg.sqlite-shm``) is left out: it is the WAL's index, which every reader updates by design.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import kg
from kg.clock import FixedClock
from kg.memory.materialize import materialize
from kg.memory.requests import RecallRequest
from kg.memory.service import RecallResult, recall_or_files
from kg.recall.markdown_index import SIDECAR_DIR, MarkdownIndex
from kg.workspace import DB_FILE, STATE_DIR, Workspace
from tests.conftest import T0

Tree = dict[str, tuple[str, int]]
NOTES = [
    ("a", "The renewal terms for acme are 12 months with a 30 day notice", {"type": "decision", "store": "long_term"}),
    ("a", "JWT tokens are signed with RS256", {"type": "fact", "store": "long_term"}),
    ("a", "Refunds for annual plans within 30 days", {"type": "fact", "store": "long_term"}),
    ("b", "Agent b keeps its own secrets: the vault is in Oslo", {"type": "fact", "store": "long_term"}),
]
QUERIES = ["renewal terms", "how are tokens signed", "refund annual", "vault Oslo"]


def tree(root: Path) -> Tree:
    """Every file under ``root`` but SQLite's shared memory: its SHA-256 and its modification time (ns)."""
    found: Tree = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith("-shm"):
                continue
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                        path.stat().st_mtime_ns)  # fmt: skip
    return found


def sidecar(ws: Workspace, agent_id: str = "a") -> Path:
    return ws.path / SIDECAR_DIR / f"{agent_id}.json"


def files_answer(result: RecallResult) -> list[tuple[str, int, int, float]]:
    return [(h.path, h.line_start, h.line_end, h.score) for h in result.files]


def items_answer(result: RecallResult) -> list[tuple[str, float]]:
    return [(h.item.uid, h.score) for h in result.hits]


@pytest.fixture(scope="module")
def noted_template(tmp_path_factory: pytest.TempPathFactory, fresh_template: Path,
                   copy_workspace: Callable[[Path, Path], None]) -> tuple[Path, datetime]:  # fmt: skip
    """Agents a and b with a few items (their daily logs), the vector index built and a's materialized files: built
    once per module, closed; and the time its clock ended at."""
    path = tmp_path_factory.mktemp("noted") / "ws"
    copy_workspace(fresh_template / "ws", path)
    clock = FixedClock(T0)
    with kg.init_workspace(path, clock=clock) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
        for agent, text, fields in NOTES:
            ws.memory.store_item(agent, text, **fields)
            ws.clock.advance(timedelta(hours=1))
        assert ws.vectors is not None and ws.vectors.sync(save=True).usable
        materialize(ws, "a")
    return path, clock.now()


@pytest.fixture
def noted(noted_template: tuple[Path, datetime], tmp_path: Path, clock: FixedClock,
          copy_workspace: Callable[[Path, Path], None]) -> Iterator[Workspace]:  # fmt: skip
    """A copy of :func:`noted_template` for the test, its clock where the template's ended. The copy has a store id of
    its own, so the vector index is built again for it (from the copied embedding cache: the model is not run)."""
    source, now = noted_template
    copy_workspace(source, tmp_path / "ws")
    clock.set(now)
    ws = kg.init_workspace(tmp_path / "ws", clock=clock)
    assert ws.vectors is not None and ws.vectors.sync(save=True).usable
    yield ws
    ws.close()


def recall_all(ws: Workspace, source: str, mode: str) -> list[RecallResult]:
    return [ws.memory.recall("a", q, source=source, mode=mode, touch=False) for q in QUERIES]


def stale(ws: Workspace) -> None:
    """A new day's log and an edited file the sidecar does not know yet (files written after the last refresh)."""
    ws.clock.advance(timedelta(days=1))
    ws.memory.store_item("a", "The renewal notice moved to 60 days for enterprise plans", type="decision")
    memory_md = ws.path / "agents" / "a" / "MEMORY.md"
    memory_md.write_text("# Long-term memory of a\n\n## Notes\n\n- Acme renewal terms are reviewed in May\n")


@pytest.mark.parametrize("state", ["fresh", "stale", "missing"])
@pytest.mark.parametrize(("source", "mode"), [("files", "bm25"), ("files", "hybrid"), ("items", "bm25"),
                                              ("items", "hybrid")])  # fmt: skip
def test_a_recall_leaves_every_file_of_the_workspace_as_it_was(noted, source, mode, state):
    ws = noted
    if state == "stale":
        stale(ws)
    elif state == "missing":
        sidecar(ws).unlink()
    before = tree(ws.path)
    results = recall_all(ws, source, mode)
    after = tree(ws.path)
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    # a hybrid recall keeps the vectors the embedding cache lacked (new chunks, a queued item) once it has answered
    assert changed <= ({f"{STATE_DIR}/{DB_FILE}", f"{STATE_DIR}/{DB_FILE}-wal"} if mode == "hybrid" else set())
    assert [files_answer(r) + items_answer(r) for r in recall_all(ws, source, mode)] == [
        files_answer(r) + items_answer(r) for r in results]  # fmt: skip
    assert tree(ws.path) == after  # and a second recall, with them cached, writes nothing at all
    assert any(r.files if source == "files" else r.hits for r in results)
    assert (state == "missing") is not sidecar(ws).exists()  # a read neither writes nor creates the sidecar


def test_a_stale_or_missing_sidecar_gives_the_answers_of_a_fresh_one(noted):
    ws = noted
    stale(ws)
    expected = {m: [files_answer(r) for r in recall_all(ws, "files", m)] for m in ("bm25", "hybrid")}
    written = sidecar(ws).read_bytes()
    assert MarkdownIndex(ws.path).refresh("a").written  # the refresh a read did not do: the answers must not care
    assert sidecar(ws).read_bytes() != written
    for mode in ("bm25", "hybrid"):
        assert [files_answer(r) for r in recall_all(ws, "files", mode)] == expected[mode]
    sidecar(ws).unlink()
    assert [files_answer(r) for r in recall_all(ws, "files", "bm25")] == expected["bm25"]
    assert any(h.path.endswith("MEMORY.md") and "May" in h.text for r in recall_all(ws, "files", "bm25")
               for h in r.files)  # the edit the sidecar never saw is found  # fmt: skip


def test_a_clean_files_recall_logs_nothing(noted, caplog):
    ws = noted
    stale(ws)  # stale is a normal state between writes and the next refresh: no news either
    with caplog.at_level(logging.DEBUG, logger="mabos"):
        recall_all(ws, "files", "bm25")
        sidecar(ws).unlink()
        recall_all(ws, "files", "hybrid")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("mabos")] == []


def test_the_file_fallback_writes_nothing_and_answers_as_before(noted, caplog):
    ws = noted
    stale(ws)
    ws.close()
    (ws.path / STATE_DIR / DB_FILE).write_bytes(b"this is not a database\x00\xff" * 512)
    for leftover in (ws.path / STATE_DIR).glob(f"{DB_FILE}-*"):
        leftover.unlink()
    request = RecallRequest(query="renewal terms", limit=5)
    before = tree(ws.path)
    with caplog.at_level(logging.WARNING, logger="mabos"):
        result = recall_or_files(lambda: kg.open_workspace(ws.path), ws.path, "a", request)
    assert tree(ws.path) == before
    assert result.fallback and "not a database" in (result.reason or "")
    assert any("60 days" in h.text for h in result.files)  # the new day's log, which the sidecar lacks
    fresh = MarkdownIndex(ws.path)
    fresh.refresh("a")  # the same answer once the sidecar is up to date
    again = recall_or_files(lambda: kg.open_workspace(ws.path), ws.path, "a", request)
    assert files_answer(again) == files_answer(result)


def test_the_writers_of_markdown_files_bring_the_index_up_to_date(noted):
    ws = noted
    index = MarkdownIndex(ws.path)
    ws.memory.store_item("a", "Acme asked for quarterly invoices", type="event")  # a daily log append: left stale
    assert index.refresh("a").changed != []  # the append left the sidecar behind (a recall reads around it)
    ws.memory.store_item("a", "Acme prefers email over calls", type="preference")
    materialize(ws, "a")  # rewrites mabos-memory-items.md and refreshes: the append is indexed with it
    stats = MarkdownIndex(ws.path).refresh("a")
    assert (stats.added, stats.changed, stats.removed, stats.written) == ([], [], [], False)
    from kg.memory.cognitive_export import export_cognitive  # noqa: PLC0415

    export_cognitive(ws, "a")
    assert "agents/a/Beliefs.md" in MarkdownIndex(ws.path).view("a").files
    assert MarkdownIndex(ws.path).refresh("a").written is False  # the export had indexed its files already


def test_an_idle_index_pass_refreshes_the_markdown_index(noted):
    """The console's and MCP server's idle pass (cli.idle_index) writes the sidecar: a recall never does."""
    from multiprocessing import Pipe  # noqa: PLC0415

    from cli.idle_index import _index_pass  # noqa: PLC0415

    ws = noted
    stale(ws)
    sidecar(ws, "b").unlink(missing_ok=True)
    ws.close()
    ours, theirs = Pipe()
    _index_pass(theirs, str(ws.path), 10, 10)  # run in this process: the pass opens the workspace itself
    assert ours.recv()[0] in {"progress", "done"}
    for agent in ("a", "b"):
        stats = MarkdownIndex(ws.path).refresh(agent)
        assert (stats.rebuilt, stats.added, stats.changed, stats.written) == (None, [], [], False), agent
    with kg.init_workspace(ws.path, clock=ws.clock) as again:  # the pass embedded the chunks too: a hybrid recall
        before = tree(ws.path)  # of the files now writes nothing at all, not even the embedding cache
        assert recall_all(again, "files", "hybrid")[0].files
        assert tree(ws.path) == before


def test_the_nightly_step_refreshes_the_index_and_embeds_the_chunks_a_recall_reads(noted):
    from sync.nightly_steps import StepContext, markdown_index_step  # noqa: PLC0415

    ws = noted
    stale(ws)
    ws.close()
    shutil.copytree(ws.path, ws.path.parent / "copy")  # the same workspace, left to the recall to embed the chunks
    with kg.init_workspace(ws.path, clock=ws.clock) as one, kg.init_workspace(ws.path.parent / "copy",
                                                                              clock=ws.clock) as two:  # fmt: skip
        counts = markdown_index_step(StepContext(one), "a")
        assert counts["added"] == 2 and counts["embedded"] > 0  # the new daily log and MEMORY.md
        assert markdown_index_step(StepContext(one), "a")["embedded"] == 0  # cached: nothing to embed again
        before = tree(one.path)
        expected = [files_answer(r) for r in recall_all(one, "files", "hybrid")]
        assert tree(one.path) == before and expected[0]  # every vector was cached: nothing written
        assert [files_answer(r) for r in recall_all(two, "files", "hybrid")] == expected  # the same answers


def test_nothing_recalled_creates_the_sidecar_folder(ws: Workspace, snapshot: Callable[[Workspace], object]):
    ws.memory.store_item("a", "The renewal terms are 12 months", type="fact")
    before = snapshot(ws)
    assert ws.memory.recall("a", "renewal", source="files", mode="bm25", touch=False).files
    assert not (ws.path / SIDECAR_DIR).exists() and snapshot(ws) == before


@pytest.mark.parametrize("command", [("index", "update"), ("index", "rebuild", "--all")])
def test_index_update_and_rebuild_embed_the_chunks_a_recall_reads(noted, command):
    """`mabos index update|rebuild` is the CLI user's write path (no server, no nightly job): after it, a hybrid
    recall of the files finds every chunk vector cached and writes nothing."""
    import json  # noqa: PLC0415

    from click.testing import CliRunner  # noqa: PLC0415

    from cli.main import cli  # noqa: PLC0415

    ws = noted
    stale(ws)
    ws.close()

    def run() -> dict[str, object]:
        result = CliRunner().invoke(cli, ["--workspace", str(ws.path), *command, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert run()["chunks_embedded"] > 0
    assert run()["chunks_embedded"] == 0  # cached: nothing to embed again
    with kg.init_workspace(ws.path, clock=ws.clock) as again:
        before = tree(ws.path)
        assert recall_all(again, "files", "hybrid")[0].files
        assert tree(ws.path) == before
