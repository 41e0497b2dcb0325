"""Concurrent writers (issue 10, part 2): several processes on one workspace lose nothing and never surface a lock.

The harness starts real processes (``concurrent_worker.py``) on one real workspace: three agents writing memory
items, facts, BDI nodes and conversation messages, and one process running the nightly job (through
:func:`sync.nightly.run_nightly` and, for some runs, through ``python -m cli.main sync nightly --all``). A file
barrier lets every process import and open the workspace before any of them writes. Each worker journals every
acknowledged write and every exception it caught; afterwards the test checks, against the database itself:

- every process exited cleanly and no exception reached a worker (so no ``database is locked`` and no
  :class:`~kg.errors.StoreBusyError`: the store's busy timeout and retry with backoff absorb contention);
- the store passes ``PRAGMA integrity_check``;
- lost writes = 0 and phantom writes = 0: the agent-written records of each kind are exactly the acknowledged
  ones (counts exact, contents unchanged), each with its outbox event, each memory item in its daily log;
- message ``seq`` numbers are ``0..n-1`` with no gap, in the order the writers were told;
- a final nightly run derives exactly one ``employedBy`` fact per acknowledged ``worksAt`` fact.

A second test runs two processes of one agent appending to one conversation (created by whichever comes first)
and storing memory items (one shared daily log): ``seq`` stays gap-free, each append's batch is contiguous, and
no daily-log entry is lost.

The default run is small (3 x 60 operations and 2 nightly runs; 2 x 120). The full versions (3 x 1,000
operations and 10 nightly runs, 2 of them through the CLI; 2 x 1,000) are marked ``slow`` and run only when
selected: ``pytest -m slow`` (or ``MABOS_SLOW=1``). Figures go to stdout (``-s``) as one ``concurrent-writers:``
JSON line per test. The embedder is off (``MABOS_EMBEDDER=none``): the vector index is derived data, and four
model loads would dwarf the writes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.workspace import DB_FILE, STATE_DIR, open_workspace
from reasoning.service import RuleService
from sync.nightly import run_nightly

WORKER = Path(__file__).with_name("concurrent_worker.py")
ROOT = Path(__file__).resolve().parents[2]
AGENTS = ("alpha", "beta", "gamma")
EMPLOYED = {
    "name": "employed",
    "conditions": [{"subject": "?x", "predicate": "worksAt", "object": "?y"}],
    "conclusion": {"subject": "?x", "predicate": "employedBy", "object": "?y"},
}
#: A hang guard for a whole run, not a timing assertion.
HANG_GUARD_S = 1800


@dataclass(frozen=True)
class Size:
    """How much one run does."""

    ops: int  # writes per agent (or per session writer)
    nightly_runs: int = 0
    cli_every: int = 2  # every n-th nightly run goes through the CLI in a child process


DEFAULT = Size(ops=60, nightly_runs=2)
FULL = Size(ops=1000, nightly_runs=10, cli_every=5)
SESSION_DEFAULT = Size(ops=120)
SESSION_FULL = Size(ops=1000)


def sizes(default: Size, full: Size) -> list[Any]:
    """The short version, and the full one behind the ``slow`` marker (the long run only: tests/conftest.py)."""
    return [pytest.param(default, id="short"), pytest.param(full, id="full", marks=pytest.mark.slow)]


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test process opens the workspace without an embedder too, as the workers do: its own nightly run checks
    the derived facts, and would otherwise load the model and embed every memory item the workers wrote."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


# ------------------------------------------------------------------------------------------ running workers


@dataclass
class Journal:
    """What one worker process wrote: acknowledged writes, caught exceptions, nightly runs."""

    acks: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    nightly: list[dict[str, Any]] = field(default_factory=list)
    done: dict[str, Any] | None = None

    @classmethod
    def read(cls, path: Path) -> Journal:
        """Parse a worker's output file."""
        journal = cls()
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "ack" in record:
                journal.acks.append(record)
            elif "error" in record:
                journal.errors.append(record)
            elif "nightly" in record:
                journal.nightly.append(record)
            elif "done" in record:
                journal.done = record
        return journal

    def of(self, op: str) -> list[dict[str, Any]]:
        """The acknowledgements of one kind of operation, in the order they were given."""
        return [a for a in self.acks if a["ack"] == op]


def run_workers(tmp_path: Path, ws_path: Path, roles: dict[str, list[str]]) -> tuple[dict[str, Journal], float]:
    """Start one worker per role, release them together, wait; their journals and the wall time in seconds."""
    start = tmp_path / "start"
    env = {**os.environ, "MABOS_EMBEDDER": "none", "HF_HUB_OFFLINE": "1"}
    procs = {}
    for name, args in roles.items():
        out = tmp_path / f"{name}.jsonl"
        cmd = [sys.executable, str(WORKER), args[0], str(ws_path), str(out), "--start", str(start), *args[1:]]
        procs[name] = subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    ready = [tmp_path / f"{name}.jsonl.ready" for name in roles]
    while not all(p.exists() for p in ready):  # every worker has imported and opened the workspace
        dead = [name for name, proc in procs.items() if proc.poll() is not None]
        assert not dead, f"workers {dead} exited before the start: {procs[dead[0]].communicate()[1][-2000:]}"
        time.sleep(0.01)
    began = time.perf_counter()
    start.touch()
    stderr = {name: proc.communicate(timeout=HANG_GUARD_S)[1] for name, proc in procs.items()}
    wall = time.perf_counter() - began
    for name, proc in procs.items():
        assert proc.returncode == 0, f"worker {name} exited {proc.returncode}: {stderr[name][-2000:]}"
    journals = {name: Journal.read(tmp_path / f"{name}.jsonl") for name in roles}
    for name, journal in journals.items():
        assert journal.done is not None, f"worker {name} did not finish: {stderr[name][-2000:]}"
    return journals, wall


def surfaced(journals: dict[str, Journal]) -> tuple[list[dict[str, Any]], int]:
    """Every error any worker saw, and how many were lock errors (``locked``/``busy``, StoreBusyError)."""
    errors = [e for j in journals.values() for e in j.errors]
    locks = sum(1 for e in errors if e["error"] == "StoreBusyError" or "locked" in e["message"].lower()
                or "busy" in e["message"].lower())  # fmt: skip
    return errors, locks


def readonly(ws_path: Path) -> sqlite3.Connection:
    """A read-only connection to the workspace's database (the check reads rows, not the services' views)."""
    conn = sqlite3.connect(f"file:{ws_path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def uids(conn: sqlite3.Connection, sql: str, *params: Any) -> list[str]:
    """The first column of every row."""
    return [str(row[0]) for row in conn.execute(sql, params)]


def daily_log_uids(ws_path: Path, agent: str) -> Counter[str]:
    """How often each memory uid appears in the agent's daily logs (``agents/<id>/memory/YYYY-MM-DD.md``)."""
    found: Counter[str] = Counter()
    for path in (ws_path / "agents" / agent / "memory").glob("????-??-??.md"):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert [ln for ln in lines if ln.startswith("# ")] == [lines[0]], f"{path.name}: one header, at the top"
        for line in lines:
            if line.startswith("## ") and " M-" in line:
                found[line.split()[3]] += 1
    return found


def message_log(conn: sqlite3.Connection, agent: str, session: str) -> list[tuple[int, str]]:
    """``(seq, content)`` of every message of the agent's session, in seq order."""
    rows = conn.execute(
        "SELECT m.seq, m.content FROM messages m JOIN conversations c ON c.uid = m.conversation_uid "
        "WHERE c.agent_id = ? AND c.session_key = ? ORDER BY m.seq",
        (agent, session),
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def lost(acked: list[str], stored: list[str]) -> int:
    """Acknowledged uids missing from the store."""
    return len(set(acked) - set(stored))


# ------------------------------------------------------------------------------ three agents + nightly


def make_workspace(root: Path) -> Path:
    """A workspace with the three agents and, for each, a rule that turns every ``worksAt`` into ``employedBy``."""
    with kg.init_workspace(root) as ws:
        rules = RuleService(ws.ports, ws.scopes, ws.clock)
        for agent in AGENTS:
            ws.agents.add(agent)
            rules.create(agent, **EMPLOYED)
    return root


def check_agent(conn: sqlite3.Connection, ws_path: Path, agent: str, journal: Journal) -> dict[str, int]:
    """Assert that exactly the agent's acknowledged writes are stored; return the per-kind counts."""
    memory = {a["uid"]: a["content"] for a in journal.of("memory")}
    stored = dict(conn.execute("SELECT uid, content FROM memory_items WHERE agent_id = ? AND source != "
                               "'consolidation'", (agent,)).fetchall())  # fmt: skip
    assert stored == memory, f"{agent}: memory items lost {lost(list(memory), list(stored))}"
    facts = [a["uid"] for a in journal.of("fact")]
    assert all(a["status"] == "created" for a in journal.of("fact"))
    assert sorted(uids(conn, "SELECT uid FROM facts WHERE agent_id = ? AND derived = 0 AND retracted_at IS NULL",
                       agent)) == sorted(facts), f"{agent}: facts differ"  # fmt: skip
    nodes = Counter(a["kind"] for a in journal.of("bdi"))
    stored_nodes = Counter(dict(conn.execute("SELECT kind, COUNT(*) FROM bdi_nodes WHERE agent_id = ? GROUP BY kind",
                                             (agent,)).fetchall()))  # fmt: skip
    assert stored_nodes == nodes, f"{agent}: BDI nodes differ"
    node_uids = {a["uid"] for a in journal.of("bdi")}
    assert set(uids(conn, "SELECT uid FROM bdi_nodes WHERE agent_id = ?", agent)) == node_uids
    told = [c for a in journal.of("message") for c in a["contents"]]
    log = message_log(conn, agent, "main")
    assert [seq for seq, _ in log] == list(range(len(log))), f"{agent}: message seq has a gap"
    assert [content for _, content in log] == told, f"{agent}: messages lost or reordered"
    written = [*memory, *facts, *(a["uid"] for a in journal.of("bdi"))]
    in_outbox = set(uids(conn, "SELECT DISTINCT record_uid FROM outbox WHERE agent_id = ?", agent))
    assert not set(written) - in_outbox, f"{agent}: writes without an outbox event"
    logged = daily_log_uids(ws_path, agent)
    assert all(logged[uid] == 1 for uid in memory), f"{agent}: daily-log entries lost or doubled"
    return {"memory": len(memory), "facts": len(facts), "bdi": sum(nodes.values()), "messages": len(told)}


@pytest.mark.parametrize("size", sizes(DEFAULT, FULL))
def test_three_agents_and_the_nightly_job_lose_nothing(tmp_path: Path, size: Size) -> None:
    ws_path = make_workspace(tmp_path / "ws")
    roles = {agent: ["agent", "--agent", agent, "--ops", str(size.ops)] for agent in AGENTS}
    roles["nightly"] = ["nightly", "--runs", str(size.nightly_runs), "--cli-every", str(size.cli_every)]
    journals, wall = run_workers(tmp_path, ws_path, roles)

    errors, locks = surfaced(journals)
    assert not errors, f"{len(errors)} errors reached a worker ({locks} lock errors): {errors[:3]}"
    assert len(journals["nightly"].nightly) == size.nightly_runs
    assert all(r["exit_code"] == 0 and not r["failed"] for r in journals["nightly"].nightly)
    counts: Counter[str] = Counter()
    with closing(readonly(ws_path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for agent in AGENTS:
            counts.update(check_agent(conn, ws_path, agent, journals[agent]))

    with open_workspace(ws_path) as ws:  # one more nightly run, alone: the derived facts are then exact
        report = run_nightly(ws, list(AGENTS))
    assert report.exit_code == 0, report.failed
    with closing(readonly(ws_path)) as conn:
        for agent in AGENTS:
            check_agent(conn, ws_path, agent, journals[agent])  # the nightly runs lost nothing either
            derived = conn.execute("SELECT subject, COUNT(*) FROM facts WHERE agent_id = ? AND rule_id IS NOT NULL "
                                   "AND retracted_at IS NULL GROUP BY subject", (agent,)).fetchall()  # fmt: skip
            assert sorted(s for s, _ in derived) == sorted(a["subject"] for a in journals[agent].of("fact"))
            assert all(n == 1 for _, n in derived)

    writes = sum(len(journals[a].acks) - len(journals[a].of("recall")) for a in AGENTS)
    spans = [journals[a].done or {} for a in AGENTS]
    window = (min(d["began"] for d in spans), max(d["ended"] for d in spans))
    overlapping = sum(1 for r in journals["nightly"].nightly if r["began"] < window[1] and r["ended"] > window[0])
    print("concurrent-writers: " + json.dumps({
        "test": "three-agents-plus-nightly", "processes": len(roles), "writes_per_agent": size.ops,
        "write_ops_acknowledged": writes, "records_written": dict(counts),
        "reads_acknowledged": sum(len(journals[a].of("recall")) for a in AGENTS),
        "nightly_runs_concurrent": size.nightly_runs, "nightly_runs_overlapping_writers": overlapping,
        "lost": 0, "lock_errors_surfaced": locks, "errors_surfaced": len(errors), "wall_s": round(wall, 1),
    }))  # fmt: skip


# ------------------------------------------------------------------------------ one conversation, two processes


@pytest.mark.parametrize("size", sizes(SESSION_DEFAULT, SESSION_FULL))
def test_two_processes_append_to_one_conversation_without_gaps(tmp_path: Path, size: Size) -> None:
    ws_path = tmp_path / "ws"
    with kg.init_workspace(ws_path) as ws:
        ws.agents.add("alpha")
    writers = ("w1", "w2")
    roles = {w: ["session", "--agent", "alpha", "--session", "shared", "--writer", w, "--ops", str(size.ops)]
             for w in writers}  # fmt: skip
    journals, wall = run_workers(tmp_path, ws_path, roles)

    errors, locks = surfaced(journals)
    assert not errors, f"{len(errors)} errors reached a worker ({locks} lock errors): {errors[:3]}"
    with closing(readonly(ws_path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM conversations WHERE agent_id = 'alpha'").fetchone()[0] == 1
        log = message_log(conn, "alpha", "shared")
        seq_of = {content: seq for seq, content in log}
        assert [seq for seq, _ in log] == list(range(len(log))), "seq has a gap or a duplicate"
        told = [a for w in writers for a in journals[w].of("message")]
        assert len(log) == sum(len(a["contents"]) for a in told), "messages lost or duplicated"
        for ack in told:  # each append is one transaction: its batch got the consecutive seqs it was told
            seqs = [seq_of[c] for c in ack["contents"]]
            assert seqs == list(range(ack["first_seq"], ack["last_seq"] + 1))
        memory = [a["uid"] for w in writers for a in journals[w].of("memory")]
        stored = uids(conn, "SELECT uid FROM memory_items WHERE agent_id = 'alpha'")
        assert sorted(stored) == sorted(memory)
    logged = daily_log_uids(ws_path, "alpha")
    missing = [uid for uid in memory if logged[uid] != 1]
    assert not missing, f"{len(missing)} of {len(memory)} daily-log entries lost or doubled"
    print("concurrent-writers: " + json.dumps({
        "test": "one-conversation-two-processes", "processes": 2, "writes_per_process": size.ops,
        "messages": len(log), "memory_items": len(memory), "lost": 0, "seq_gaps": 0,
        "lock_errors_surfaced": locks, "wall_s": round(wall, 1),
    }))  # fmt: skip
