"""The writer process of the crash-safety harness.

Usage: ``python tests/reliability/crash_writer.py WORKSPACE SEED [MAX_OPS]``.

``MABOS_CRASH_INJECT=after_commit:P,before_rename:P`` makes the writer kill itself (SIGKILL) with probability P
at the two moments a random kill rarely hits: right after a memory store committed and before its daily-log
entry is appended (the daily log must then be completed at the next open), and right after an atomic write
made its temp file and before the rename (the temp file must then be removed at the next open).

It opens (or creates) the workspace, makes sure the agent ``crash-agent`` exists, prints ``{"op": "ready"}``
and then runs a seeded random mix of operations through the product services until it is killed (or until
``MAX_OPS`` operations are done): store memory (one item, or a batch), assert facts, retract facts, create
rules, consolidate, forward inference with ``persist``, write a checkpoint, recall (which also feeds the vector
index when an embedder is configured).

Before each operation it prints an ``intent`` line; after the call has returned it prints one ``ack`` line
saying what must be found in the workspace from then on. Every line is flushed at once, so a line that is
complete in the output is a promise the product made. The harness (``test_crash_safety.py``) kills this
process with SIGKILL at a random moment and checks every complete ``ack`` line against the reopened
workspace; the ``intent`` line of the operation in flight tells it which records may or may not have changed.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kg.layout
import kg.memory.service
from kg.errors import NotFoundError
from kg.memory.checkpoints import write_checkpoint
from kg.memory.consolidation import consolidate
from kg.workspace import Workspace, init_workspace
from reasoning.service import Reasoner, RuleService

AGENT = "crash-agent"
WORDS = ("invoice", "renewal", "sso", "latency", "pricing", "gdpr", "outage", "onboarding", "churn", "audit",
         "discount", "contract", "roadmap", "escalation", "migration", "backup")  # fmt: skip
TAGS = ("billing", "auth", "ops", "sales", "legal", "infra")
TYPES = ("event", "decision", "outcome", "lesson", "fact", "observation", "preference")
STORES = ("working", "short_term", "long_term")
#: (conditions, conclusion) of the inference rules the writer creates (names are unique, patterns repeat).
RULES = (
    (["?x is_a customer", "?x plan enterprise"], "?x tier gold"),
    (["?x is_a customer", "?x region eu"], "?x needs gdpr"),
    (["?x tier gold", "?x needs gdpr"], "?x review priority"),
)
#: At most this many rules: forward chaining stays quick however long the crash loop runs.
MAX_RULES = 12
FACT_CHOICES = (("is_a", "customer"), ("plan", "enterprise"), ("plan", "starter"), ("region", "eu"), ("region", "us"))
WEIGHTS = {"memory": 30, "batch": 6, "assert": 26, "retract": 10, "rule": 4, "consolidate": 6, "infer": 8,
           "checkpoint": 4, "recall": 8}  # fmt: skip


def emit(record: dict[str, Any]) -> None:
    """One JSON line on stdout, flushed (the harness reads complete lines only)."""
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


def _pattern(text: str) -> dict[str, str]:
    subject, predicate, obj = text.split()
    return {"subject": subject, "predicate": predicate, "object": obj}


class Writer:
    """The random mix of operations of one writer process."""

    def __init__(self, ws: Workspace, seed: int) -> None:
        self.ws = ws
        self.seed = seed
        self.rng = random.Random(seed)
        self.rules = RuleService(ws.ports, ws.scopes, ws.clock)
        self.reasoner = Reasoner(ws.ports, ws.scopes, ws.clock, ws.facts)
        self.asserted: set[tuple[str, str, str]] = set()  # triples of this run: each is asserted once
        self.ops: dict[str, Callable[[int], None]] = {
            "memory": self.memory, "batch": self.batch, "assert": self.assert_fact, "retract": self.retract,
            "rule": self.rule, "consolidate": self.consolidate, "infer": self.infer, "checkpoint": self.checkpoint,
            "recall": self.recall,
        }  # fmt: skip

    def step(self, n: int) -> None:
        """Run one randomly chosen operation."""
        kind = self.rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        self.ops[kind](n)

    def memory(self, n: int) -> None:
        """Store one memory item (content unique to this run and step)."""
        words = " ".join(self.rng.sample(WORDS, 3))
        content = f"crash memory {self.seed}-{n}: {words}"
        fields = {"type": self.rng.choice(TYPES), "store": self.rng.choice(STORES),
                  "importance": round(self.rng.uniform(0.3, 1.0), 2),
                  "tags": self.rng.sample(TAGS, self.rng.randint(1, 2))}  # fmt: skip
        emit({"intent": "memory", "n": n})
        result = self.ws.memory.store_item(AGENT, content, **fields)
        emit({"op": "memory", "n": n, "uid": result.item.uid, "content": content, "daily_log": result.daily_log})

    def batch(self, n: int) -> None:
        """Store 2-5 memory items in one call (one transaction, one daily-log append)."""
        entries = [{"content": f"crash batch {self.seed}-{n}-{k}: {' '.join(self.rng.sample(WORDS, 2))}",
                    "type": self.rng.choice(TYPES), "store": self.rng.choice(STORES),
                    "tags": self.rng.sample(TAGS, 1)} for k in range(self.rng.randint(2, 5))]  # fmt: skip
        emit({"intent": "batch", "n": n})
        result = self.ws.memory.store_many(AGENT, entries)
        log = result.daily_logs[0]
        emit({"op": "batch", "n": n, "items": [{"uid": i.uid, "content": i.content, "daily_log": log}
                                               for i in result.items]})  # fmt: skip

    def assert_fact(self, n: int) -> None:
        """Assert one fact about one of this run's customers (never the same triple twice in a run)."""
        for _ in range(20):
            predicate, obj = self.rng.choice(FACT_CHOICES)
            triple = (f"c{self.seed}x{self.rng.randint(0, 7)}", predicate, obj)
            if triple not in self.asserted:
                break
        else:
            triple = (f"c{self.seed}n{n}", "is_a", "customer")
        self.asserted.add(triple)
        emit({"intent": "assert", "n": n})
        fact, status = self.ws.facts.assert_fact(AGENT, *triple, source="crash-writer")
        emit({"op": "assert", "n": n, "uid": fact.uid, "triple": list(triple), "status": status})

    def retract(self, n: int) -> None:
        """Retract one or two live asserted facts (any run's)."""
        live = self.ws.facts.query(AGENT, include_derived=False, limit=300)
        if not live:
            return self.assert_fact(n)
        uids = [f.uid for f in self.rng.sample(live, min(len(live), self.rng.randint(1, 2)))]
        emit({"intent": "retract", "n": n, "uids": uids})
        done = self.ws.facts.retract(AGENT, uids=uids)
        emit({"op": "retract", "n": n, "uids": uids, "retracted": done})
        return None

    def rule(self, n: int) -> None:
        """Create one inference rule (up to :data:`MAX_RULES`; then assert a fact instead)."""
        if len(self.rules.list(AGENT)) >= MAX_RULES:
            return self.assert_fact(n)
        conditions, conclusion = self.rng.choice(RULES)
        emit({"intent": "rule", "n": n})
        rule = self.rules.create(
            AGENT,
            name=f"crash-rule-{self.seed}-{n}",
            type="inference",
            conditions=[_pattern(c) for c in conditions],
            conclusion=_pattern(conclusion),
        )
        emit({"op": "rule", "n": n, "uid": rule.uid})
        return None

    def consolidate(self, n: int) -> None:
        """Consolidate the agent's memory (promote, merge, rewrite MEMORY.md and the materialized files)."""
        emit({"intent": "consolidate", "n": n})
        result = consolidate(self.ws, AGENT)
        groups = [{"uid": g.consolidated_uid, "members": g.members, "content": g.content} for g in result.groups]
        emit({"op": "consolidate", "n": n, "promoted": result.promoted, "archived": result.archived,
              "groups": groups, "memory_file": result.memory_file})  # fmt: skip

    def infer(self, n: int) -> None:
        """Forward chaining with ``persist``: derived facts stored, stale ones retracted."""
        emit({"intent": "infer", "n": n})
        report = self.reasoner.forward(AGENT, persist=True)
        emit({"op": "infer", "n": n, "derived": [d.uid for d in report.derived if d.uid], "created": report.created,
              "retracted": report.retracted})  # fmt: skip

    def checkpoint(self, n: int) -> None:
        """Write a checkpoint file."""
        context = f"crash checkpoint {self.seed}-{n}"
        emit({"intent": "checkpoint", "n": n})
        path = write_checkpoint(self.ws.path, AGENT, context=context, decisions=[f"decision {n}"],
                                next_steps=["keep writing"], clock=self.ws.clock)  # fmt: skip
        emit({"op": "checkpoint", "n": n, "path": str(path), "context": context})

    def recall(self, n: int) -> None:
        """Recall (a read; with an embedder it also brings the vector index up to date and saves it)."""
        emit({"intent": "recall", "n": n})
        result = self.ws.memory.recall(AGENT, self.rng.choice(WORDS), limit=5)
        emit({"op": "recall", "n": n, "mode": str(result.mode), "hits": len(result.hits), "fallback": result.fallback})


def inject_faults(spec: str, rng: random.Random) -> None:
    """Kill this process at the moments named in ``spec`` (``after_commit:P,before_rename:P``) with chance P."""
    chances = {name: float(p) for name, _, p in (part.partition(":") for part in spec.split(",") if part)}

    def maybe_die(moment: str) -> None:
        if rng.random() < chances.get(moment, 0.0):
            emit({"injected": moment})
            os.kill(os.getpid(), signal.SIGKILL)

    append_items, durable_temp = kg.memory.service.append_items, kg.layout._durable_temp

    def append_after_commit(*args: Any, **kwargs: Any) -> Any:
        maybe_die("after_commit")  # the items are committed, their entries not yet appended
        return append_items(*args, **kwargs)

    def temp_before_rename(*args: Any, **kwargs: Any) -> Any:
        tmp = durable_temp(*args, **kwargs)
        maybe_die("before_rename")  # the temp file is written, the rename not done
        return tmp

    kg.memory.service.append_items = append_after_commit  # type: ignore[assignment]
    kg.layout._durable_temp = temp_before_rename  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    """Open the workspace and write until killed (or ``MAX_OPS`` operations)."""
    if len(argv) not in (3, 4):
        sys.stderr.write("usage: crash_writer.py WORKSPACE SEED [MAX_OPS]\n")
        return 2
    workspace, seed = Path(argv[1]), int(argv[2])
    limit = int(argv[3]) if len(argv) == 4 else None
    ws = init_workspace(workspace)
    try:
        ws.agents.get(AGENT)
    except NotFoundError:
        ws.agents.add(AGENT, name="Crash test agent")
    emit({"op": "ready", "pid": os.getpid(), "embedder": ws.embedder.model if ws.embedder else None})
    writer = Writer(ws, seed)
    inject_faults(os.environ.get("MABOS_CRASH_INJECT", ""), random.Random(seed + 1))
    for n in itertools.count() if limit is None else range(limit):
        writer.step(n)
    ws.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
