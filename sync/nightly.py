"""The nightly job (``mabos sync nightly``): every maintenance step, isolated, under a lock, with a report.

:func:`run_nightly` takes ``.mabos/nightly.lock`` (a second run while one is going fails at once with
:class:`~kg.errors.ConflictError`), runs the steps of :data:`sync.nightly_steps.STEPS` in order, each
inside its own ``try`` (and, for per-agent steps, each agent inside its own ``try``), so one failure never
stops the others, then writes ``.mabos/reports/nightly-YYYY-MM-DD.json`` and ``.md`` (the workspace
clock's UTC date; a second run on the same day replaces that day's report) and returns the report.

Exit code (:func:`exit_code`): 0 when no step failed (ok or skipped); 3 when every failed step failed only
because a backend was unavailable (:class:`~kg.errors.BackendUnavailableError`: TypeDB configured but
unreachable, an unusable vector index, a store locked past every retry); 1 when any step failed for any
other reason. ``docs/nightly.md`` is the guide.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout

from kg.errors import BackendUnavailableError, ConflictError, InputError, MabosError
from kg.memory.files import atomic_write
from kg.models import Model, UtcDatetime, format_ts
from kg.models.request import requested
from kg.workspace import STATE_DIR, Workspace
from sync.nightly_requests import NightlyRequest
from sync.nightly_steps import STEPS, Counts, Step, StepContext, StepSkipped
from sync.shared_graph import typedb_settings

LOCK_FILE = "nightly.lock"
REPORTS_DIR = "reports"
EXIT_OK, EXIT_FAILED, EXIT_UNAVAILABLE = 0, 1, 3


class StepStatus(StrEnum):
    """How a step ended."""

    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


class StepResult(Model):
    """One step of one run.

    Attributes:
        name: The step's name.
        status: ok, failed or skipped.
        message: One line: the counts when ok, why when skipped, the error(s) when failed.
        duration_s: Wall time of the step in seconds.
        unavailable: Failed only because a backend was unavailable (counts towards exit code 3).
        details: Counts (summed over agents for a per-agent step) and, per agent, its counts or error.
    """

    name: str
    status: StepStatus
    message: str
    duration_s: float
    unavailable: bool = False
    details: dict[str, Any] = {}


class NightlyReport(Model):
    """What one nightly run did (also the content of ``nightly-YYYY-MM-DD.json``)."""

    workspace: str
    date: str
    started_at: UtcDatetime
    finished_at: UtcDatetime
    duration_s: float
    agents: list[str]
    typedb: str | None
    steps: list[StepResult]
    failed: list[str]
    exit_code: int
    files: list[str] = []


class NightlyObserver(Protocol):
    """Follows a run (the CLI draws one progress bar per step)."""

    def step_started(self, name: str) -> None:
        """The step ``name`` begins."""
        ...

    def step_progress(self, name: str, done: int, total: int | None) -> None:
        """The step ``name`` has done ``done`` of ``total`` units (agents, events, items)."""
        ...

    def step_finished(self, result: StepResult) -> None:
        """The step ended (ok, failed or skipped)."""
        ...


class SilentObserver:
    """An observer that shows nothing."""

    def step_started(self, name: str) -> None:
        """Ignore."""

    def step_progress(self, name: str, done: int, total: int | None) -> None:
        """Ignore."""

    def step_finished(self, result: StepResult) -> None:
        """Ignore."""


# ------------------------------------------------------------------------------------------- lock


@contextmanager
def nightly_lock(workspace: Path, now: datetime) -> Iterator[Path]:
    """Hold ``.mabos/nightly.lock`` (:class:`filelock.FileLock`, non-blocking) for the duration of a run.

    Raises :class:`ConflictError` at once when another run holds it. The kernel drops the lock when the
    holder exits, however it exits, so a crashed run never leaves a stale lock; the file itself stays
    (removing it could let two runs lock two different files) and says who held it last.
    """
    path = workspace / STATE_DIR / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        holder = path.read_bytes()[:200].decode("utf-8", "replace").strip() or "another process"
        raise ConflictError(f"nightly: another run is in progress ({holder}; lock {path})") from None
    try:
        path.write_text(f"pid {os.getpid()} since {format_ts(now)}\n", encoding="utf-8")  # the lock is on the inode
        yield path
    finally:
        lock.release()


# ------------------------------------------------------------------------------------------- steps


def _error_text(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, MabosError) and text else f"{type(exc).__name__}: {text}"


def _agents(count: int) -> str:
    return f"{count} agent{'' if count == 1 else 's'}"


def _totals(per_agent: dict[str, Counts]) -> Counts:
    totals: Counts = {}
    for counts in per_agent.values():
        for key, value in counts.items():
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return totals


def _summary(step: Step, counts: Counts) -> str:
    try:
        return step.summary.format(**counts)
    except (KeyError, IndexError, ValueError):
        return ", ".join(f"{k} {v}" for k, v in counts.items())


Outcome = tuple[StepStatus, str, bool, Counts]  # status, message, unavailable, details


def _run_workspace_step(step: Step, run: Callable[[StepContext], Counts], ctx: StepContext) -> Outcome:
    try:
        counts = run(ctx)
    except StepSkipped as skip:
        return StepStatus.SKIPPED, str(skip), False, {}
    except Exception as exc:  # isolation: whatever one step raises, the next still runs
        return StepStatus.FAILED, _error_text(exc), isinstance(exc, BackendUnavailableError), {}
    return StepStatus.OK, _summary(step, counts), False, counts


def _run_agent_step(step: Step, run: Callable[[StepContext, str], Counts], ctx: StepContext,
                    agents: Sequence[str]) -> Outcome:  # fmt: skip
    if not agents:
        return StepStatus.SKIPPED, "no agents", False, {}
    done: dict[str, Counts] = {}
    errors: dict[str, Exception] = {}
    for index, agent_id in enumerate(agents):
        try:
            done[agent_id] = run(ctx, agent_id)
        except Exception as exc:  # isolation per agent: the other agents still get the step
            errors[agent_id] = exc
        ctx.progress(index + 1, len(agents))
    totals = _totals(done)
    details: Counts = {**totals, "agents": {**done, **{a: {"error": _error_text(e)} for a, e in errors.items()}}}
    if errors:
        failed = "; ".join(f"{agent_id}: {_error_text(exc)}" for agent_id, exc in errors.items())
        unavailable = all(isinstance(exc, BackendUnavailableError) for exc in errors.values())
        return StepStatus.FAILED, f"{len(errors)} of {_agents(len(agents))} failed: {failed}", unavailable, details
    return StepStatus.OK, f"{_agents(len(agents))}: {_summary(step, totals)}", False, details


def run_step(step: Step, ws: Workspace, agents: Sequence[str], *, typedb: str | None = None,
             observer: NightlyObserver | None = None) -> StepResult:  # fmt: skip
    """Run one step (for every agent, or once) and never raise: a failure becomes a failed result."""
    watch = observer or SilentObserver()
    watch.step_started(step.name)
    ctx = StepContext(ws, typedb, lambda done, total: watch.step_progress(step.name, done, total))
    began = time.perf_counter()
    if step.for_agent is not None:
        status, message, unavailable, counts = _run_agent_step(step, step.for_agent, ctx, agents)
    elif step.for_workspace is not None:
        status, message, unavailable, counts = _run_workspace_step(step, step.for_workspace, ctx)
    else:
        status, message, unavailable, counts = StepStatus.SKIPPED, "nothing to run", False, {}
    result = StepResult(name=step.name, status=status, message=message, unavailable=unavailable,
                        duration_s=round(time.perf_counter() - began, 3), details=counts)  # fmt: skip
    watch.step_finished(result)
    return result


def exit_code(results: Sequence[StepResult]) -> int:
    """0 if nothing failed; 3 if every failure was an unavailable backend; else 1."""
    failed = [r for r in results if r.status is StepStatus.FAILED]
    if not failed:
        return EXIT_OK
    return EXIT_UNAVAILABLE if all(r.unavailable for r in failed) else EXIT_FAILED


# ------------------------------------------------------------------------------------------- run


def check_skip(skip: Collection[str], steps: Sequence[Step] = STEPS) -> set[str]:
    """The step names to skip; :class:`InputError` for a name that is not a step."""
    names = [s.name for s in steps]
    unknown = sorted(set(skip) - set(names))
    if unknown:
        raise InputError("skip", f"{', '.join(unknown)} is not a step; steps: {', '.join(names)}")
    return set(skip)


def nightly(ws: Workspace, request: NightlyRequest | None = None, *, typedb: str | None = None,
            observer: NightlyObserver | None = None, **fields: Any) -> NightlyReport:  # fmt: skip
    """Run the nightly job a :class:`NightlyRequest` (or its fields as keywords) asks for: :func:`run_nightly` for
    its ``agents``, or every agent (in id order) with ``all_agents``, skipping its ``skip`` steps."""
    request = requested(NightlyRequest, request, fields)
    if request.agents and request.all_agents:
        raise InputError("all_agents", "give agents or all_agents, not both")
    agents = sorted(a.agent_id for a in ws.agents.list()) if request.all_agents else list(dict.fromkeys(request.agents))
    return run_nightly(ws, agents, typedb=typedb, skip=request.skip, observer=observer)


def run_nightly(ws: Workspace, agents: Sequence[str], *, typedb: str | None = None, skip: Collection[str] = (),
                observer: NightlyObserver | None = None, steps: Sequence[Step] = STEPS) -> NightlyReport:  # fmt: skip
    """Run the nightly job for ``agents`` under the lock and write the day's report files.

    Args:
        ws: The open workspace (its clock dates the report).
        agents: The agents the per-agent steps run for (each must exist).
        typedb: ``HOST:PORT`` overriding the configured TypeDB address (the ``--typedb`` option).
        skip: Step names not to run (reported as skipped).
        observer: Told when each step starts, progresses and ends.
        steps: The steps to run (default :data:`~sync.nightly_steps.STEPS`).

    Raises:
        InputError: an unknown step in ``skip`` or a malformed ``typedb`` address (nothing was run).
        NotFoundError: an unknown agent (nothing was run).
        ConflictError: another nightly run holds the lock (nothing was run).
    """
    skipped = check_skip(skip, steps)
    for agent_id in agents:
        ws.scopes.require_agent(agent_id)
    settings = typedb_settings(ws, typedb)
    started = ws.clock.now()
    began = time.perf_counter()
    with nightly_lock(ws.path, started):
        results = [
            _skipped(step.name, observer) if step.name in skipped else run_step(step, ws, agents, typedb=typedb,
                                                                                observer=observer)
            for step in steps
        ]  # fmt: skip
        code = exit_code(results)
        report = NightlyReport(
            workspace=str(ws.path), date=started.date().isoformat(), started_at=started, finished_at=ws.clock.now(),
            duration_s=round(time.perf_counter() - began, 3), agents=list(agents),
            typedb=f"{settings.address} ({settings.origin})" if settings else None, steps=results,
            failed=[r.name for r in results if r.status is StepStatus.FAILED], exit_code=code,
        )  # fmt: skip
        return write_report(ws.path, report)


def _skipped(name: str, observer: NightlyObserver | None) -> StepResult:
    result = StepResult(name=name, status=StepStatus.SKIPPED, message="skipped with --skip", duration_s=0.0)
    (observer or SilentObserver()).step_finished(result)
    return result


# ------------------------------------------------------------------------------------------- report


def report_paths(workspace: Path, day: str) -> tuple[Path, Path]:
    """``.mabos/reports/nightly-<day>.json`` and ``.md``."""
    folder = workspace / STATE_DIR / REPORTS_DIR
    return folder / f"nightly-{day}.json", folder / f"nightly-{day}.md"


def write_report(workspace: Path, report: NightlyReport) -> NightlyReport:
    """Write the report's JSON and Markdown files atomically (replacing that day's); return it with their paths."""
    json_path, md_path = report_paths(workspace, report.date)
    report = report.model_copy(update={"files": [str(p.relative_to(workspace)) for p in (json_path, md_path)]})
    atomic_write(json_path, json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
    atomic_write(md_path, render_markdown(report))
    return report


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(report: NightlyReport) -> str:
    """The report as Markdown: a header, one table row per step, per-agent lines for per-agent steps."""
    failed = f" (failed: {', '.join(report.failed)})" if report.failed else ""
    lines = [
        f"# Nightly run {report.date}", "",
        f"- workspace: {report.workspace}",
        f"- started: {format_ts(report.started_at)}; took {report.duration_s:g} s",
        f"- agents: {', '.join(report.agents) or '(none)'}",
        f"- TypeDB: {report.typedb or 'not configured'}",
        f"- exit code: {report.exit_code}{failed}", "",
        "| step | status | seconds | message |", "|---|---|---|---|",
    ]  # fmt: skip
    lines += [f"| {r.name} | {r.status.value} | {r.duration_s:g} | {_cell(r.message)} |" for r in report.steps]
    pictures = sorted(p.name for p in (Path(report.workspace) / STATE_DIR / REPORTS_DIR).glob("graph-*.*"))
    if pictures:  # written beside this report by 'mabos graph render' (docs/console.md)
        lines += ["", "Graph pictures: " + ", ".join(f"[{name}]({name})" for name in pictures)]
    for result in report.steps:
        per_agent = result.details.get("agents")
        if per_agent:
            lines += ["", f"## {result.name}", ""]
            lines += [f"- {agent}: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                      for agent, counts in per_agent.items()]  # fmt: skip
    return "\n".join(lines) + "\n"


__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "LOCK_FILE",
    "REPORTS_DIR",
    "NightlyObserver",
    "NightlyReport",
    "SilentObserver",
    "StepResult",
    "StepStatus",
    "check_skip",
    "exit_code",
    "nightly",
    "nightly_lock",
    "render_markdown",
    "report_paths",
    "run_nightly",
    "run_step",
    "write_report",
]
