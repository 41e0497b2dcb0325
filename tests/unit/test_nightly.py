"""The nightly job (sync.nightly): every step on a real demo workspace, isolation, exit codes, lock, report.

The workspace is the one ``mabos demo`` builds (real SQLite, real files), reopened on a fixed clock 73 years
later so the tier rules and the short-term TTL have work to do, plus a little new data so that inference,
consolidation and the hierarchy have something new. No TypeDB server runs here: "configured but unreachable"
is the real driver refused at 127.0.0.1:1 (nothing listens on port 1).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import kg
from cli.demo import FINANCE, SALES, build_demo
from kg.clock import FixedClock
from kg.errors import BackendUnavailableError, ConflictError, InputError, NotFoundError
from kg.workspace import STATE_DIR, Workspace
from sync.nightly import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    LOCK_FILE,
    StepResult,
    StepStatus,
    exit_code,
    nightly,
    nightly_lock,
    report_paths,
    run_nightly,
)
from sync.nightly_requests import NightlyRequest
from sync.nightly_steps import STEP_NAMES, STEPS, StepContext

NIGHT = datetime(2099, 1, 5, 3, 0, tzinfo=UTC)
DEAD_TYPEDB = "127.0.0.1:1"  # nothing listens on port 1: the driver is refused at once
AGENTS = ["finance-agent", "sales-agent"]
LOCAL_STEPS = [name for name in STEP_NAMES if name not in ("daily-logs", "schema", "push", "vector-index")]


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace, built once per module (copied for every test)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MABOS_EMBEDDER", "none")
        path = tmp_path_factory.mktemp("template") / "demo"
        build_demo(path)
    return path


@pytest.fixture
def night_ws(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A copy of the demo workspace on a clock at :data:`NIGHT`, with new facts and memories for tonight."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    path = tmp_path / "demo"
    shutil.copytree(demo_template, path)
    with kg.open_workspace(path) as today:  # a short-term note that has expired by tonight
        today.memory.store_item(FINANCE, "Budget review pending", store="short_term")
    with kg.open_workspace(path, clock=FixedClock(NIGHT)) as ws:
        for predicate, value in (("hasIndustry", "saas"), ("hasRevenue", "$20000"), ("locatedIn", "US")):
            ws.facts.assert_fact(SALES, "globex", predicate, value)
        for text in ("Globex wants SSO in Q2", "Globex SSO needs SCIM provisioning"):
            ws.memory.store_item(SALES, text, type="fact", importance=0.8, tags=["globex", "sso"], store="working")
        yield ws


def _steps(report_steps: list[StepResult]) -> dict[str, StepResult]:
    return {step.name: step for step in report_steps}


def _pending(ws: Workspace) -> set[int]:
    return {event.seq for event in ws.ports.outbox.pending(limit=1_000_000)}


def test_full_run_without_typedb_exits_0_and_reports_every_step(night_ws: Workspace) -> None:
    report = run_nightly(night_ws, AGENTS)
    steps = _steps(report.steps)
    assert list(steps) == list(STEP_NAMES)
    assert report.exit_code == EXIT_OK and report.failed == [] and report.typedb is None
    for name in LOCAL_STEPS:
        assert steps[name].status is StepStatus.OK, (name, steps[name].message)
    for name in ("schema", "push"):
        assert steps[name].status is StepStatus.SKIPPED
        assert steps[name].message.startswith("not configured")
    assert steps["vector-index"].status is StepStatus.SKIPPED and "no embedder" in steps["vector-index"].message
    # sensible counts: tonight's new data and the 73 years that passed
    assert steps["tiers"].details["expired"] > 0 and steps["tiers"].details["to_peripheral"] > 0
    assert steps["consolidate"].details["groups"] == 1 and steps["consolidate"].details["merged"] == 2
    assert steps["hierarchy"].details["created"] >= 1
    conflicts = steps["bdi-cycle"].details["agents"][SALES]
    assert (
        conflicts["conflicts"] == 1
        and conflicts["conflict_report"] == "agents/sales-agent/memory/bdi-conflicts/2099-01-05.md"
    )
    assert steps["infer"].details["created"] == 2  # globex isTarget yes, globex assignTo us-sales
    assert steps["infer"].details["agents"][SALES]["unchanged"] == 2  # the demo's acme derivations
    assert steps["materialize"].details["written"] >= 1
    derived = night_ws.facts.query(SALES, subject="globex", predicate="assignTo")
    assert [f.object for f in derived] == ["us-sales"] and derived[0].rule_id
    facts_md = night_ws.path / "agents" / SALES / "mabos-facts.md"
    assert "globex" in facts_md.read_text(encoding="utf-8")
    assert steps["markdown-index"].details["chunks"] > 0


def test_report_files_are_named_by_the_workspace_date_and_hold_the_report(night_ws: Workspace) -> None:
    report = run_nightly(night_ws, [SALES], skip=["vector-index"])
    json_path, md_path = report_paths(night_ws.path, "2099-01-05")
    assert report.date == "2099-01-05"
    assert report.files == [f"{STATE_DIR}/reports/{p.name}" for p in (json_path, md_path)]
    assert json_path.name == "nightly-2099-01-05.json" and md_path.name == "nightly-2099-01-05.md"
    assert json.loads(json_path.read_text(encoding="utf-8")) == report.model_dump(mode="json")
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Nightly run 2099-01-05")
    assert "| vector-index | skipped | 0 | skipped with --skip |" in markdown
    assert "| infer | ok |" in markdown and "- TypeDB: not configured" in markdown
    # a second run the same day replaces the day's report; no other files appear
    again = run_nightly(night_ws, [SALES])
    assert _steps(again.steps)["infer"].details["created"] == 0
    assert json.loads(json_path.read_text(encoding="utf-8"))["steps"] == again.model_dump(mode="json")["steps"]
    assert sorted(p.name for p in json_path.parent.iterdir()) == [json_path.name, md_path.name]


def test_unreachable_typedb_fails_push_runs_everything_else_and_exits_3(night_ws: Workspace) -> None:
    before = _pending(night_ws)
    acked = night_ws.ports.outbox.counts()["acked"]
    report = run_nightly(night_ws, AGENTS, typedb=DEAD_TYPEDB)
    steps = _steps(report.steps)
    assert report.exit_code == EXIT_UNAVAILABLE
    assert report.typedb == f"{DEAD_TYPEDB} (--typedb)"
    assert steps["push"].status is StepStatus.FAILED and steps["push"].unavailable
    assert "unreachable" in steps["push"].message and "\n" not in steps["push"].message
    assert steps["schema"].status is StepStatus.FAILED and steps["schema"].unavailable
    assert report.failed == ["schema", "push"]
    for name in LOCAL_STEPS:
        assert steps[name].status is StepStatus.OK, (name, steps[name].message)
    assert steps["infer"].details["created"] == 2
    # the outbox lost nothing: every event pending before still is, none was acknowledged
    assert before <= _pending(night_ws)
    assert night_ws.ports.outbox.counts()["acked"] == acked


def test_a_failing_step_does_not_stop_the_others_and_exits_1(night_ws: Workspace) -> None:
    # fault injection: the hierarchy step's function is replaced by one that raises (a bug in a step)
    def broken(ctx: StepContext, agent_id: str) -> dict[str, int]:
        raise RuntimeError(f"boom for {agent_id}")

    steps = [dataclasses.replace(s, for_agent=broken) if s.name == "hierarchy" else s for s in STEPS]
    report = run_nightly(night_ws, AGENTS, steps=steps)
    results = _steps(report.steps)
    assert report.exit_code == EXIT_FAILED and report.failed == ["hierarchy"]
    assert results["hierarchy"].message.startswith("2 of 2 agents failed: finance-agent: RuntimeError: boom")
    assert not results["hierarchy"].unavailable
    for name in LOCAL_STEPS:
        if name != "hierarchy":
            assert results[name].status is StepStatus.OK, name
    assert results["infer"].details["created"] == 2  # a later step still did its work


def test_a_real_fault_for_one_agent_leaves_the_other_agents_and_steps_alone(night_ws: Workspace) -> None:
    # a directory where finance-agent's mabos-facts.md should be: writing it fails (a real OSError)
    (night_ws.path / "agents" / "finance-agent" / "mabos-facts.md").mkdir(parents=True)
    report = run_nightly(night_ws, AGENTS, typedb=DEAD_TYPEDB)
    materialize = _steps(report.steps)["materialize"]
    assert materialize.status is StepStatus.FAILED
    assert materialize.message.startswith("1 of 2 agents failed: finance-agent: IsADirectoryError")
    assert materialize.details["agents"][SALES]["written"] >= 1
    assert "error" in materialize.details["agents"]["finance-agent"]
    assert _steps(report.steps)["markdown-index"].status is StepStatus.OK
    assert report.exit_code == EXIT_FAILED  # a real failure besides the unreachable TypeDB: 1, not 3


def test_exit_code_rule() -> None:
    def step(status: StepStatus, unavailable: bool = False) -> StepResult:
        return StepResult(name="s", status=status, message="", duration_s=0.0, unavailable=unavailable)

    ok, skipped = step(StepStatus.OK), step(StepStatus.SKIPPED)
    down, broken = step(StepStatus.FAILED, unavailable=True), step(StepStatus.FAILED)
    assert exit_code([]) == exit_code([ok, skipped]) == EXIT_OK
    assert exit_code([ok, down, skipped, down]) == EXIT_UNAVAILABLE
    assert exit_code([down, broken]) == exit_code([broken]) == EXIT_FAILED


def test_the_lock_refuses_an_overlapping_run_in_the_same_process(night_ws: Workspace) -> None:
    # a second descriptor on the lock file: flock conflicts even inside one process
    with nightly_lock(night_ws.path, NIGHT), pytest.raises(ConflictError, match="another run is in progress"):
        run_nightly(night_ws, AGENTS)
    assert not (night_ws.path / STATE_DIR / "reports").exists()  # nothing ran
    assert run_nightly(night_ws, AGENTS).exit_code == EXIT_OK  # released: the next run goes ahead


def test_the_lock_refuses_an_overlapping_run_of_another_process(night_ws: Workspace) -> None:
    holder = (
        "import fcntl, os, sys\n"
        f"fd = os.open({str(night_ws.path / STATE_DIR / LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, b'pid %d (test holder)' % os.getpid())\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    with subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(ConflictError, match=r"test holder"):
            run_nightly(night_ws, AGENTS)
        proc.stdin.close()  # the holder exits; the kernel releases its lock
        assert proc.wait() == 0
    assert run_nightly(night_ws, AGENTS).exit_code == EXIT_OK


def test_bad_input_is_refused_before_anything_runs(night_ws: Workspace) -> None:
    with pytest.raises(NotFoundError, match="no agent 'nobody'"):
        run_nightly(night_ws, [SALES, "nobody"])
    with pytest.raises(InputError, match="skip: vectors is not a step"):
        run_nightly(night_ws, [SALES], skip=["vectors"])
    with pytest.raises(InputError):
        run_nightly(night_ws, [SALES], typedb="not an address")
    assert not (night_ws.path / STATE_DIR / "reports").exists()
    assert night_ws.facts.query(SALES, subject="globex", predicate="assignTo") == []


def test_the_nightly_request_picks_the_agents(night_ws: Workspace) -> None:
    """nightly() takes the request ``mabos sync nightly`` generates its options from (issue 34): all_agents runs the
    per-agent steps for every agent in id order, agents for those named (once each); both at once are refused, and a
    misspelt field is refused naming it, before anything runs."""
    skip = [name for name in STEP_NAMES if name != "tiers"]
    everyone = nightly(night_ws, NightlyRequest(all_agents=True, skip=skip))
    assert everyone.agents == sorted(a.agent_id for a in night_ws.agents.list()) and len(everyone.agents) > 1
    assert nightly(night_ws, agents=[SALES, SALES], skip=skip).agents == [SALES]
    with pytest.raises(InputError) as both:
        nightly(night_ws, agents=[SALES], all_agents=True)
    assert both.value.field == "all_agents"
    with pytest.raises(InputError) as misspelt:
        nightly(night_ws, agent=[SALES])
    assert misspelt.value.field == "agent"


def test_no_agents_skips_the_per_agent_steps(night_ws: Workspace) -> None:
    report = run_nightly(night_ws, [])
    steps = _steps(report.steps)
    assert report.exit_code == EXIT_OK
    assert all(steps[name].status is StepStatus.SKIPPED and steps[name].message == "no agents" for name in LOCAL_STEPS)


def test_vector_index_step_embeds_the_backlog_with_a_real_embedder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   clock: FixedClock) -> None:  # fmt: skip
    # needs embeddings: the packaged all-MiniLM-L6-v2, offline
    monkeypatch.delenv("MABOS_EMBEDDER", raising=False)
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with kg.init_workspace(tmp_path / "ws", clock=clock) as ws:
        ws.agents.add("a")
        for text in ("JWT uses RS256", "Keys rotate every 90 days", "Acme wants SSO"):
            ws.memory.store_item("a", text)
        report = run_nightly(ws, ["a"])
        vectors = _steps(report.steps)["vector-index"]
        assert vectors.status is StepStatus.OK, vectors.message
        assert vectors.details["backlog"] == 0 and vectors.details["indexed"] >= 3
        assert ws.vectors is not None and ws.vectors.status()["backlog"] == 0


def test_backend_unavailable_from_any_step_counts_towards_exit_3(night_ws: Workspace) -> None:
    def down(ctx: StepContext, agent_id: str) -> dict[str, int]:
        raise BackendUnavailableError("store: locked by another writer")

    steps = [dataclasses.replace(s, for_agent=down) if s.name == "tiers" else s for s in STEPS]
    report = run_nightly(night_ws, AGENTS, steps=steps)
    assert report.failed == ["tiers"] and report.exit_code == EXIT_UNAVAILABLE
