"""``mabos demo``: builds, rebuilds its own workspace, refuses anything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

HEADINGS = [
    "Agents",
    "Facts",
    "BDI graph",
    "Scopes",
    "Memory",
    "BDI maintenance",
    "Reasoning",
    "Reasoning methods",
    "Recall indexes",
    "Status",
]


def test_demo_runs_and_reruns_on_the_same_path(mabos: Mabos, tmp_path: Path) -> None:
    first = mabos.raw("demo")
    assert first.exit_code == 0, first.output
    demo = tmp_path / "mabos-demo"
    assert (demo / ".mabos" / "demo").is_file()
    for heading in HEADINGS:
        assert f"== {heading} ==" in first.stdout
    for shown in ("updated (an upsert", "query acme has*", "as of before the retraction 1", "derived by rule",
                  "goal hierarchy", "-[goal-requires-plan]->", "without a grant: refused", "outbox:",
                  "2 oldest moved to short-term", "(depth 1)", "[Consolidated from 3 memories]",
                  "latest resolves to", "summaries", "Beliefs.md", "staleIntentionsPruned 1",
                  "conflictsDetected 1", "bdi-conflicts/", "2 derived in", "run again: 0 new (idempotent)",
                  "acme assignTo us-sales  (confidence 0.729, by rule us-outreach)",
                  "acme isTarget yes  (confidence 0.81, by rule saas-target)", "knowledge gaps: globex",
                  "ask finance to approve acme", "deductive (computed): acme assignTo us-sales: proved",
                  "counterfactual (computed): acme assignTo us-sales would no longer hold",
                  "P(Rain = true | WetGrass = true) = 0.7079", "choose small plant (by expected utility)",
                  "(us: cut price, rival: cut price)", "most likely root cause: disk",
                  "entropy 1.5000 bits"):  # fmt: skip
        assert shown in first.stdout, shown
    methods = first.stdout.split("== Reasoning methods ==")[1].split("== Recall indexes ==")[0]
    assert methods.count("(computed, confidence") >= 5
    assert f"Demo workspace: {demo.resolve()}" in first.stdout
    assert "mabos --workspace mabos-demo graph path" in first.stdout

    # the demo leaves its indexes built, so the first recall after it only reads (nothing waits to be embedded)
    indexes = mabos.json("index", "status", "--workspace", str(demo))
    assert indexes["vectors"]["state"] == "ready" and indexes["vectors"]["backlog"] == 0
    assert indexes["vectors"]["indexed"] == indexes["vectors"]["items"] > 0
    sales = next(m for m in indexes["markdown"] if m["agent_id"] == "sales-agent")
    assert sales["indexed"] and sales["chunks"] > 0
    update = mabos.json("index", "update", "--workspace", str(demo))
    assert (update["vectors"]["indexed"], update["chunks_embedded"]) == (0, 0)  # all embedded by the demo already

    second = mabos.raw("demo", "--json", env={"MABOS_EMBEDDER": "none"})
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert [s["title"] for s in report["sections"]] == HEADINGS
    assert report["sections"][-2]["lines"] == [
        "no embedder configured: recall ranks by BM25 alone, there is no vector index to build"
    ]
    status = mabos.raw("status", "--workspace", str(demo), "--json")
    assert json.loads(status.stdout)["store"]["agents"] == 2  # rebuilt, not added to


def test_demo_refuses_a_real_workspace(mabos: Mabos) -> None:
    mabos.ok("init")
    mabos.ok("agent", "add", "keep-me")
    result = mabos.raw("--workspace", str(mabos.workspace), "demo")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: workspace: ") and "not made by 'mabos demo'" in result.stderr
    assert [a["agent_id"] for a in mabos.json("agent", "list")] == ["keep-me"]


def test_demo_refuses_a_non_empty_directory_and_a_file(mabos: Mabos, tmp_path: Path) -> None:
    folder = tmp_path / "stuff"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    result = mabos.raw("demo", "--workspace", str(folder))
    assert result.exit_code == 1 and "non-empty directory" in result.stderr
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert mabos.raw("demo", "--workspace", str(folder / "notes.txt")).exit_code == 1


def test_demo_uses_an_empty_directory(mabos: Mabos, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    # Without the model: the folder is judged before any step runs, and the demo's embedding (its vector index and
    # chunk vectors) is checked above; with the model this case took 6.6 s of CPU instead of 0.2 s (load 5).
    assert mabos.raw("demo", "--workspace", str(tmp_path / "empty"), env={"MABOS_EMBEDDER": "none"}).exit_code == 0
    assert (tmp_path / "empty" / ".mabos" / "demo").is_file()
