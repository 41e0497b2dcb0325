"""One process of the concurrent-writers harness (tests/reliability/test_concurrent_writers.py).

Run as a script, one process per role, all on the same workspace::

    python concurrent_worker.py agent   WS OUT --agent alpha --ops 60 [--start FILE]
    python concurrent_worker.py nightly WS OUT --runs 2 [--cli-every 2] [--start FILE]
    python concurrent_worker.py session WS OUT --agent alpha --session shared --writer w1 --ops 40 [--start FILE]

Each process touches ``OUT.ready`` once it has opened the workspace and waits for ``--start`` to exist (so
that every process has imported and opened the workspace before any writes), then does its fixed number of
operations. It writes one JSON line to ``OUT`` per acknowledged write (``{"ack": ...}``), per caught exception
(``{"error": ...}``: nothing a worker hits is hidden) and per nightly run, and a final ``{"done": ...}`` line.
Every line is flushed before the next operation starts, so the file is exactly what a user of that process was
told.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from kg.workspace import Workspace, open_workspace
from sync.nightly import run_nightly

#: Tags drawn by the agents' memory items: shared tags let the nightly consolidation merge (and archive)
#: items while the agents are still adding more.
TAGS = (["project", "alpha"], ["project", "beta"], ["ops"], ["sales", "project"])
#: The fact predicate the per-agent rule (set up by the test) turns into ``employedBy``.
FACT_PREDICATE = "worksAt"
BDI_KINDS = ("belief", "desire", "goal", "intention")


class Journal:
    """The worker's output file: one flushed JSON line per event."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, **record: Any) -> None:
        """Append one record and flush it."""
        self.stream.write(json.dumps(record, sort_keys=True) + "\n")
        self.stream.flush()

    def attempt(self, op: str, action: Callable[..., dict[str, Any]], *args: Any) -> bool:
        """Run ``action(*args)``; journal its acknowledgement, or the exception it raised."""
        try:
            ack = action(*args)
        except Exception as exc:  # the harness records everything a user would have seen
            self.write(error=type(exc).__name__, message=str(exc), op=op, trace=traceback.format_exc(limit=4))
            return False
        self.write(ack=op, **ack)
        return True


def wait_for(start: str | None) -> None:
    """Block until the start file exists (a barrier across processes; no timing is asserted)."""
    if start is None:
        return
    while not Path(start).exists():
        time.sleep(0.005)


# ------------------------------------------------------------------------------------------ agent


def memory_op(ws: Workspace, agent: str, i: int, writer: str) -> dict[str, Any]:
    """Store one memory item (a mix of stores, types and importances)."""
    content = f"{writer} memory {i}: note about topic {i % 7}"
    store = ("short_term", "working", "long_term")[i % 3]
    item = ws.memory.store_item(agent, content, type=("event", "decision", "lesson")[i % 3], store=store,
                                importance=0.5 + (i % 5) / 10, tags=TAGS[i % len(TAGS)]).item  # fmt: skip
    return {"uid": item.uid, "content": content}


def fact_op(ws: Workspace, agent: str, i: int) -> dict[str, Any]:
    """Assert one new fact (the rule derives one ``employedBy`` fact from it)."""
    subject = f"{agent}-person-{i}"
    fact, status = ws.facts.assert_fact(agent, subject, FACT_PREDICATE, "acme")
    return {"uid": fact.uid, "subject": subject, "status": status}


def bdi_op(ws: Workspace, agent: str, i: int) -> dict[str, Any]:
    """Add one BDI node (belief, desire, goal, intention in turn)."""
    kind = BDI_KINDS[(i // 4) % len(BDI_KINDS)]
    node = ws.bdi.add(kind, agent, f"{agent} {kind} {i}")
    return {"uid": node.uid, "kind": kind}


def message_op(ws: Workspace, agent: str, i: int, session: str, writer: str) -> dict[str, Any]:
    """Append a batch of one to three messages to ``session`` in one call."""
    batch = [{"role": ("user", "assistant")[j % 2], "content": f"{writer} message {i}.{j}"} for j in range(1 + i % 3)]
    result = ws.conversations.ingest(agent, session, batch)
    return {"session": session, "contents": [m["content"] for m in batch], "first_seq": result.first_seq,
            "last_seq": result.last_seq}  # fmt: skip


def recall_op(ws: Workspace, agent: str, i: int) -> dict[str, Any]:
    """A read between the writes (BM25 recall): reads must not surface a busy store either."""
    result = ws.memory.recall(agent, f"topic {i % 7}", limit=5, mode="bm25")  # touches the hits: a write too
    return {"hits": len(result.hits)}


def run_agent(ws: Workspace, journal: Journal, agent: str, ops: int) -> int:
    """``ops`` writes cycling memory, fact, BDI node, messages; a recall after every fifth write."""
    acked = 0
    for i in range(ops):
        kind = ("memory", "fact", "bdi", "message")[i % 4]
        if kind == "memory":
            ok = journal.attempt(kind, memory_op, ws, agent, i, agent)
        elif kind == "fact":
            ok = journal.attempt(kind, fact_op, ws, agent, i)
        elif kind == "bdi":
            ok = journal.attempt(kind, bdi_op, ws, agent, i)
        else:
            ok = journal.attempt(kind, message_op, ws, agent, i, "main", agent)
        acked += ok
        if i % 5 == 4:
            journal.attempt("recall", recall_op, ws, agent, i)
    return acked


def run_session(ws: Workspace, journal: Journal, agent: str, *, session: str, writer: str, ops: int) -> int:
    """Two processes of one agent: message batches to one shared session, and memory items (one daily log)."""
    acked = 0
    for i in range(ops):
        if i % 2 == 0:
            acked += journal.attempt("message", message_op, ws, agent, i, session, writer)
        else:
            acked += journal.attempt("memory", memory_op, ws, agent, i, writer)
    return acked


# ------------------------------------------------------------------------------------------ nightly


def nightly_api(ws: Workspace) -> dict[str, Any]:
    """One run through :func:`sync.nightly.run_nightly` for every agent."""
    report = run_nightly(ws, sorted(a.agent_id for a in ws.agents.list()))
    return {"via": "api", "exit_code": report.exit_code, "failed": report.failed,
            "messages": [f"{s.name}: {s.status.value}: {s.message}" for s in report.steps]}  # fmt: skip


def nightly_cli(path: str) -> dict[str, Any]:
    """One run through ``python -m cli.main sync nightly --all --json`` (what a cron job runs)."""
    cmd = [sys.executable, "-m", "cli.main", "sync", "nightly", "--all", "--json", "--workspace", path]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = {}
    steps = report.get("steps", [])
    return {"via": "cli", "exit_code": done.returncode, "failed": report.get("failed", []), "stderr": done.stderr,
            "messages": [f"{s['name']}: {s['status']}: {s['message']}" for s in steps]}  # fmt: skip


def run_nightly_job(ws: Workspace, journal: Journal, runs: int, cli_every: int) -> int:
    """``runs`` nightly runs back to back; every ``cli_every``-th goes through the CLI in a child process."""
    ok = 0
    for run in range(runs):
        began = time.time()
        via_cli = cli_every > 0 and run % cli_every == cli_every - 1
        try:
            result = nightly_cli(str(ws.path)) if via_cli else nightly_api(ws)
        except Exception as exc:
            journal.write(error=type(exc).__name__, message=str(exc), op="nightly", trace=traceback.format_exc(limit=4))
            continue
        journal.write(nightly=run, began=began, ended=time.time(), **result)
        if result["exit_code"] != 0 or result["failed"] or result.get("stderr"):
            journal.write(error="NightlyFailed", message=json.dumps(result), op="nightly")
        else:
            ok += 1
    return ok


# ------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    """Parse the role and its options, run it, journal everything; exit 0 unless the process itself broke."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", choices=["agent", "nightly", "session"])
    parser.add_argument("workspace")
    parser.add_argument("out")
    parser.add_argument("--agent")
    parser.add_argument("--session", default="shared")
    parser.add_argument("--writer", default="w")
    parser.add_argument("--ops", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cli-every", type=int, default=2)
    parser.add_argument("--start")
    args = parser.parse_args(argv)
    with open(args.out, "a", encoding="utf-8") as stream, open_workspace(args.workspace) as ws:
        journal = Journal(stream)
        Path(args.out + ".ready").touch()
        wait_for(args.start)
        began = time.time()
        if args.role == "agent":
            acked = run_agent(ws, journal, args.agent, args.ops)
        elif args.role == "session":
            acked = run_session(ws, journal, args.agent, session=args.session, writer=args.writer, ops=args.ops)
        else:
            acked = run_nightly_job(ws, journal, args.runs, args.cli_every)
        journal.write(done=args.role, acked=acked, began=began, ended=time.time())
    return 0


if __name__ == "__main__":
    sys.exit(main())
