"""Outbox chaos: replay to a target that fails at random points converges to exactly the source state.

A source workspace writes a varied history (every replicated aggregate: agents, grants with a revoke, facts with
updates, retractions and inferred facts with lineage, memory with updates, archives and a consolidation, BDI
nodes with updates, relations with an unlink, rules with a toggle and a delete, cases with a delete, ontology
proposals rejected and merged, conversations with messages and a summary) while :func:`sync.replay.push` keeps
sending it to a target that fails at random points:

``before``   the target raises before applying anything;
``partial``  the target applies some events inside its transaction, then raises (the transaction rolls back);
``after``    the target commits, then raises before returning (the source does not ack: a resend);
``ack_lost`` the target commits and returns, the source's ack raises before marking (a resend);
``ack_late`` the source's ack commits, then raises (the push dies; nothing is resent).

Pushes go on until the source has nothing pending. Then the target must equal the source (canonical dumps of
every replicated table, as tests/unit/test_outbox_replay.py compares them), hold no duplicate rows, lineage
links or full-text index entries, and its own outbox must be consistent: replayed onward into a fresh store it
rebuilds the same state, and a resend never shows up in it as a change.

The same histories go through the TypeDB writer (:func:`kg.store.typedb.writes.batch_queries`): every event of
the source and of the target encodes, and every label in the queries is declared in base.tql. No TypeDB server
runs here: the queries are checked as text (they run against a server in tests/integration, marker ``typedb``).

Short version by default; the long one is marked ``slow`` and runs with ``MABOS_SLOW=1`` or ``pytest -m slow``.
Figures: docs/reliability-outbox.md.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.conversation.models import MessageInput, Role, Summary, SummaryKind, SummaryMethod
from kg.ids import new_id
from kg.memory.consolidation import consolidate
from kg.models import OutboxEvent
from kg.ontology.proposals import OntologyService
from kg.store.sqlite import SqliteGraphStore
from kg.store.typedb.schema import base_schema
from kg.store.typedb.writes import batch_queries
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.service import Reasoner, RuleService
from sync.replay import EmbeddedTarget, push
from tests.fts import check_fts


@pytest.fixture(scope="module", autouse=True)
def _no_embedder() -> Iterator[None]:
    """No embedding model in this module (replay does not embed), restored afterwards for the other tests."""
    patch = pytest.MonkeyPatch()
    patch.setenv("MABOS_EMBEDDER", "none")
    yield
    patch.undo()


# ------------------------------------------------------------------------------ canonical state
# As tests/unit/test_outbox_replay.py: columns local by design (row ids, usage statistics, derived search context)
# are left out, except where ``seq`` is data (a message's place in its conversation).
LOCAL = {"seq", "access_count", "accessed_at", "context", "id"}
KEEP = {"messages": {"seq"}}
TABLES = ("agents", "grants", "facts", "fact_history", "memory_items", "bdi_nodes", "relations", "rules", "cases",
          "ontology_proposals", "conversations", "messages", "summaries", "summary_edges")  # fmt: skip
UID_TABLES = ("agents", "facts", "memory_items", "bdi_nodes", "relations", "rules", "cases", "ontology_proposals",
              "conversations", "messages", "summaries")  # fmt: skip
FTS = ("facts_fts", "memory_fts", "messages_fts", "messages_trigram", "summaries_fts", "summaries_trigram")
ONTOLOGY_DATA = Path(__file__).resolve().parents[1] / "data" / "ontology" / "proposals"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
RULE = {"name": "taxable", "conditions": [{"subject": "?x", "predicate": "hasRevenue", "object": "?r"}],
        "conclusion": {"subject": "?x", "predicate": "isTaxable", "object": "true"}}  # fmt: skip


def state(store: SqliteGraphStore) -> dict[str, Any]:
    """Every replicated table as sorted rows (duplicates kept), without local columns; lineage as parent lists."""
    dump: dict[str, Any] = {}
    for table in TABLES:
        local = LOCAL - KEEP.get(table, set())
        rows = store.db.read(f"SELECT * FROM {table}")
        dump[table] = sorted(repr(sorted((k, r[k]) for k in r.keys() if k not in local)) for r in rows)  # noqa: SIM118
    lineage: dict[str, list[str]] = {}
    for r in store.db.read("SELECT child_uid, parent_uid FROM lineage ORDER BY child_uid, position"):
        lineage.setdefault(r[0], []).append(r[1])
    dump["lineage"] = lineage
    return dump


def duplicates(store: SqliteGraphStore) -> list[str]:
    """What the store holds twice: rows of one uid, grants, lineage links, summary edges, full-text entries."""
    found = []
    for table in UID_TABLES:
        n, distinct = store.db.read(f"SELECT COUNT(*), COUNT(DISTINCT uid) FROM {table}")[0]
        if n != distinct:
            found.append(f"{table}: {n - distinct} duplicate uids")
    unique = (  # table, the columns no two rows may share
        ("grants", "agent_id, scope"),
        ("lineage", "child_uid, parent_uid"),
        ("lineage", "child_uid, position"),
        ("summary_edges", "parent_uid, child_uid"),
        ("summary_edges", "parent_uid, position"),
        ("messages", "conversation_uid, seq"),
    )
    for table, columns in unique:
        sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} GROUP BY {columns} HAVING COUNT(*) > 1)"
        if n := store.db.read(sql)[0][0]:
            found.append(f"{table} ({columns}): {n} duplicated")
    store.facts.catch_up_search()  # facts_fts is brought up to date by searches (migration 11), as a search would
    for fts in FTS:  # external-content indexes: an entry applied twice (or lost) fails the check
        try:
            check_fts(store.db, fts)
        except Exception as exc:  # sqlite3.DatabaseError: the index and its table disagree
            found.append(f"{fts}: {exc}")
    return found


def outbox(store: SqliteGraphStore) -> list[OutboxEvent]:
    """Every event of a store's outbox, acknowledged or not, oldest first."""
    rows = store.db.read("SELECT * FROM outbox ORDER BY seq")
    return [OutboxEvent.model_validate({**dict(r), "payload": json.loads(r["payload"])}) for r in rows]


def event_key(e: OutboxEvent) -> tuple[str, str, str, str]:
    return e.aggregate, e.op, e.record_uid, json.dumps(e.payload, sort_keys=True)


# ------------------------------------------------------------------------------ fault injection


class InjectedFaultError(RuntimeError):
    """A failure the chaos harness injected."""


FAULTS = ("ok", "before", "partial", "after", "ack_lost", "ack_late")


@dataclass
class Figures:
    """What the harness did (summed over examples)."""

    examples: int = 0
    events: int = 0
    pushes: int = 0
    applies: int = 0
    sent: int = 0
    resent: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    mismatches: int = 0
    duplicates: int = 0
    onward_mismatches: int = 0
    typedb_events: int = 0
    typedb_queries: int = 0


@dataclass
class Plan:
    """The fault of each batch: the ``forced`` ones first, then drawn at ``rate`` from a seeded random stream
    until ``budget`` faults were injected; after that every batch succeeds (so pushing again always ends)."""

    seed: int
    rate: float
    budget: int
    figures: Figures
    forced: Sequence[str] = ()
    current: str = "ok"
    injected: int = 0
    committed: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.random = random.Random(self.seed)
        self.most = self.budget + len(self.forced)  # faults at most: a push that fails spends one

    def next(self) -> tuple[str, int]:
        fault = "ok"
        if self.forced:  # a fixed schedule first
            fault, self.forced = self.forced[0], self.forced[1:]
        elif self.injected < self.budget and self.random.random() < self.rate:
            fault = self.random.choice(FAULTS[1:])
        if fault != "ok":
            self.injected += 1
            self.figures.faults[fault] += 1
        self.current = fault
        return fault, self.random.randrange(1000)

    def commit(self, events: Sequence[OutboxEvent]) -> None:
        """Count the events the target committed; those it had committed before are resends."""
        for e in events:
            if e.seq in self.committed:
                self.figures.resent += 1
            self.committed.add(e.seq)


class ChaosTarget(EmbeddedTarget):
    """An :class:`EmbeddedTarget` that fails as the plan says."""

    def __init__(self, store: SqliteGraphStore, plan: Plan) -> None:
        super().__init__(store)
        self.plan = plan
        self.fail_at: int | None = None
        self.applied = 0

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        fault, n = self.plan.next()
        self.plan.figures.applies += 1
        self.plan.figures.sent += len(events)
        if fault == "before":
            raise InjectedFaultError("target down before the batch")
        self.fail_at, self.applied = (n % len(events) if fault == "partial" else None), 0
        super().apply(events)  # "partial" raises inside the transaction (see _apply_one): rolled back
        self.plan.commit(events)
        if fault == "after":
            raise InjectedFaultError("target committed, then the connection dropped")

    def _apply_one(self, conn: Any, event: OutboxEvent) -> None:
        if self.applied == self.fail_at:
            raise InjectedFaultError("target failed in the middle of the batch")
        self.applied += 1
        super()._apply_one(conn, event)


class ChaosOutbox:
    """The source's outbox, whose ack fails as the plan says."""

    def __init__(self, store: SqliteGraphStore, plan: Plan) -> None:
        self.inner = store.outbox
        self.plan = plan

    def pending(self, *, limit: int = 500, after_seq: int = 0) -> list[OutboxEvent]:
        return self.inner.pending(limit=limit, after_seq=after_seq)

    def ack(self, seqs: Sequence[int]) -> int:
        if self.plan.current == "ack_lost":
            raise InjectedFaultError("source lost the ack")
        done = self.inner.ack(seqs)
        if self.plan.current == "ack_late":
            raise InjectedFaultError("source acked, then the push died")
        return done

    def counts(self) -> dict[str, int]:
        return self.inner.counts()


class ChaosSource:
    """The source store as :func:`push` sees it, with the chaos outbox."""

    def __init__(self, store: SqliteGraphStore, plan: Plan) -> None:
        self.outbox = ChaosOutbox(store, plan)


def chaos_push(src: Workspace, dst: Workspace, plan: Plan, batch: int) -> None:
    """One push through the chaos wrappers; an injected fault ends it (as a crash would)."""
    plan.figures.pushes += 1
    with contextlib.suppress(InjectedFaultError):
        push(ChaosSource(src._store, plan), ChaosTarget(dst._store, plan), batch=batch)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ histories


class History:
    """Writes to a source workspace through its services, remembering uids for later updates and deletes."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.rules = RuleService(ws.ports, ws.scopes, ws.clock)
        self.reasoner = Reasoner(ws.ports, ws.scopes, ws.clock, ws.facts)
        self.cases = CaseService(ws.ports, ws.scopes, ws.clock, None)
        onto = ws.path / "ontologies"  # the small ontologies of the proposal workflow tests, where a merge passes
        shutil.rmtree(onto, ignore_errors=True)
        shutil.copytree(ONTOLOGY_DATA / "ontologies", onto)
        self.onto = OntologyService(ws.ports, ws.scopes, ws.clock, onto, ONTOLOGY_DATA / "shapes")
        self.made: dict[str, list[str]] = {k: [] for k in ("memory", "belief", "goal", "rule", "case", "chat")}
        self.links: dict[str, tuple[str, str]] = {}
        self.messages: list[Any] = []
        self.granted = False

    def tick(self) -> None:
        self.ws.clock.advance(timedelta(seconds=1))

    def base(self) -> None:
        """Every aggregate and every kind of change at least once."""
        ws, tick = self.ws, self.tick
        for agent in ("a", "b", "knowledge"):
            ws.agents.add(agent)
        for op in (
            "grant",
            "assert",
            "update",
            "retract",
            "assert",
            "revoke",
            "memory",
            "mem_update",
            "archive",
            "goal",
            "belief",
            "node_update",
            "link",
            "unlink",
            "link",
            "rule",
            "toggle",
            "rule",
            "rule_delete",
            "infer",
            "case",
            "case",
            "case_delete",
            "chat",
            "message",
            "summary",
            "propose",
            "reject",
        ):
            tick()
            self.run(op, 1)
        for i in range(3):  # a consolidation: one new item derived from three, which are archived
            tick()
            ws.memory.store_item("a", f"budget line {i} for q3 travel {i * 7}", importance=0.8, tags=["budget"])
        tick()
        assert consolidate(ws, "a", min_access_count=0).groups
        tick()
        definition = "A supplier is a party that provides products."
        proposal = self.onto.propose("a", domain="sbvr-business", node_type="class", node_id="Supplier",
                                     label="Supplier", parent_class="biz:Party",
                                     sbvr_definition=definition)  # fmt: skip
        tick()
        failed = [c for c in self.onto.validate(proposal.uid, "knowledge") if not c.ok]
        assert failed == []
        tick()
        self.onto.merge(proposal.uid, "knowledge")

    def run(self, op: str, n: int) -> None:  # noqa: PLR0912 - one branch per kind of change
        ws, made = self.ws, self.made
        pick = lambda kind: made[kind][n % len(made[kind])] if made[kind] else None  # noqa: E731
        if op == "assert":
            ws.facts.assert_fact("a", f"s{n}", "hasRevenue", str(100 * n))
        elif op == "update":
            ws.facts.assert_fact("a", f"s{n}", "hasRevenue", str(100 * n), confidence=(n % 4 + 1) / 4)
        elif op == "retract":
            ws.facts.retract("a", subject=f"s{n}")
        elif op == "infer" and made["rule"]:
            self.reasoner.forward("a", persist=True)
        elif op == "memory":
            made["memory"].append(ws.memory.store_item("a", f"note {n} on topic {len(made['memory'])}").item.uid)
        elif op == "mem_update" and (uid := pick("memory")):
            ws.memory.update("a", uid, importance=n % 5 / 4, tags=[f"t{n}"])
        elif op == "archive" and (uid := pick("memory")):
            ws.memory.update("a", uid, archived_at=ws.clock.now())
        elif op in ("goal", "belief"):
            made[op].append(ws.bdi.add(op, "a", f"{op} {n}").uid)
        elif op == "node_update" and (uid := pick("goal" if n % 2 else "belief")):
            ws.bdi.update("a", uid, content=f"changed {n}")
        elif op == "link" and made["belief"] and made["goal"]:
            pair = (made["belief"][n % len(made["belief"])], made["goal"][n // 2 % len(made["goal"])])
            if pair not in self.links.values():  # the same edge twice is refused; after an unlink it is a new uid
                self.links[ws.bdi.link("a", "belief-supports-goal", *pair).uid] = pair
        elif op == "unlink" and self.links:
            uid = sorted(self.links)[n % len(self.links)]
            ws.ports.relations.unlink(uid, removed_by="a")
            del self.links[uid]
        elif op == "rule":
            made["rule"].append(self.rules.create("a", **{**RULE, "name": f"r{len(made['rule'])}"}).uid)
        elif op == "toggle" and (uid := pick("rule")):
            self.rules.toggle("a", uid)
        elif op == "rule_delete" and made["rule"]:
            self.rules.delete("a", made["rule"].pop(n % len(made["rule"])))
        elif op == "case":
            situation = {"beliefs": [f"b{n}"], "desires": ["grow"]}
            outcome = {"success": n % 2 == 0}
            stored = self.cases.store_case("a", situation=situation, solution={"actions": [f"a{n}"]}, outcome=outcome)
            made["case"].append(stored.case.uid)
        elif op == "case_delete" and made["case"]:
            ws.ports.cases.delete([made["case"].pop(n % len(made["case"]))])
        elif op == "grant" and not self.granted:
            ws.scopes.grant("b", "agent:a", granted_by="a")
            self.granted = True
        elif op == "revoke" and self.granted:
            ws.scopes.revoke("b", "agent:a", revoked_by="a")
            self.granted = False
        elif op == "chat":
            made["chat"].append(ws.ports.conversations.open("a", f"session-{n}", title=f"t{n}", now=ws.clock.now()).uid)
        elif op == "message" and (uid := pick("chat")):
            said = [MessageInput(role=Role.USER, content=f"hello {n}"),
                    MessageInput(role=Role.ASSISTANT, content=f"noted {n}", tool_call_id=f"call-{n}"),
                    MessageInput(role=Role.TOOL, content='{"ok": true}', tool_call_id=f"call-{n}")]  # fmt: skip
            self.messages = ws.ports.conversations.append(uid, said, now=ws.clock.now())
        elif op == "summary" and len(self.messages) > 1:
            first, second = self.messages[0], self.messages[1]
            ws.ports.summaries.add(Summary(
                uid=new_id("summary"), agent_id="a", conversation_uid=first.conversation_uid, kind=SummaryKind.LEAF,
                depth=0, content=f"summary {n}", token_count=3, source_token_count=8, method=SummaryMethod.EXTRACTIVE,
                child_uids=[first.uid, second.uid], earliest_at=first.created_at, latest_at=second.created_at,
                descendant_count=2, created_at=ws.clock.now(),
            ))  # fmt: skip
            self.messages = []
        elif op == "propose":
            node = f"Thing{n}x{len(made['chat'])}"
            self.onto.propose("a", domain="sbvr-business", node_type="class", node_id=node, label=f"Thing {n}",
                              parent_class="biz:Party", sbvr_definition="A thing.", rationale="")  # fmt: skip
        elif op == "reject":
            pending = self.onto.list("pending")
            if pending:
                self.onto.reject(pending[n % len(pending)].uid, "knowledge", "not needed")


OPS = ("assert", "update", "retract", "infer", "memory", "mem_update", "archive", "goal", "belief", "node_update",
       "link", "unlink", "rule", "toggle", "rule_delete", "case", "case_delete", "grant", "revoke", "chat", "message",
       "summary", "propose", "reject", "push")  # fmt: skip


# ------------------------------------------------------------------------------ the harness

DECLARED = set(re.findall(r"^\s*(?:entity|relation|attribute) ([a-z-]+)", base_schema(), flags=re.MULTILINE))
LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def check_typedb(events: Sequence[OutboxEvent], figures: Figures) -> None:
    """Every event yields TypeQL that encodes, uses only declared labels and has balanced braces."""
    queries = batch_queries(events)
    for query in queries:
        bare = LITERAL.sub('""', query)
        assert bare.count("{") == bare.count("}"), query
        assert bare.rstrip().endswith(";"), query
        for label in re.findall(r"\b(?:isa!?|has) ([a-z][a-z-]*)", bare):
            assert label in DECLARED, (label, query)
    figures.typedb_events += len(events)
    figures.typedb_queries += len(queries)


def run_chaos(root: Path, ops: Sequence[tuple[str, int, bool]], plan: Plan, batches: Sequence[int]) -> None:
    """Write the history with chaos pushes in between, push until all is acknowledged, then check."""
    clock, figures = FixedClock(T0), plan.figures
    with kg.init_workspace(root / "src", clock=clock) as src, kg.init_workspace(root / "dst", clock=clock) as dst:
        history = History(src)
        history.base()
        for i, (op, n, tick) in enumerate(ops):
            if tick:  # else the same instant as the change before: equal timestamps must replay too
                clock.advance(timedelta(seconds=1))
            if op == "push":
                chaos_push(src, dst, plan, batches[i % len(batches)])
            else:
                history.run(op, n)
        attempts = 0
        while src.ports.outbox.counts()["pending"]:
            attempts += 1
            assert attempts <= plan.most + 1, "push does not make progress"
            chaos_push(src, dst, plan, batches[attempts % len(batches)])
        figures.examples += 1
        figures.events += src.ports.outbox.counts()["acked"]

        source, target = state(src._store), state(dst._store)
        figures.mismatches += sum(source[t] != target[t] for t in source)
        dupes = duplicates(dst._store)
        figures.duplicates += len(dupes)
        assert target == source
        assert dupes == []
        assert duplicates(src._store) == []
        check_target_outbox(src, dst, figures)
        check_typedb(outbox(src._store), figures)
        check_typedb(outbox(dst._store), figures)


def check_target_outbox(src: Workspace, dst: Workspace, figures: Figures) -> None:
    """The target's outbox rebuilds the state onward, and a resend never appears in it as a change."""
    events = outbox(dst._store)
    # Every source change reached the target's outbox exactly once: a resent event is recognised by its outbox
    # position (even a resent create of a record deleted later, which used to re-create it and delete it again).
    # (A rule's event gains the row's updated_at on the way, so its key differs from the source's: once is the
    # bound then; other events may repeat as often as the source wrote them.)
    copies, sent = Counter(event_key(e) for e in events), Counter(event_key(e) for e in outbox(src._store))
    extra = [k for k, n in copies.items() if n > max(1, sent[k])]
    assert extra == [], extra
    with kg.init_workspace(dst.path.parent / "onward", clock=dst.clock) as onward:
        push(dst._store, EmbeddedTarget(onward._store), batch=50)
        same = state(onward._store) == state(src._store)
        figures.onward_mismatches += not same
        assert same


# ------------------------------------------------------------------------------ the tests

# The clock moves before most changes; some happen at the same instant as the one before (equal timestamps must
# replay exactly too: test_equal_timestamps_replay_twice_equals_once below).
HISTORY = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 5), st.booleans()), max_size=40)
SEEDS = st.integers(0, 2**32 - 1)
RATES = st.sampled_from([0.1, 0.3, 0.5, 0.8])
BATCHES = st.lists(st.integers(1, 12), min_size=1, max_size=5)


def report(figures: Figures, label: str) -> None:
    """Print the figures (run with -s to see them; docs/reliability-outbox.md quotes a run)."""
    print(f"\noutbox chaos ({label}): examples={figures.examples} events={figures.events} pushes={figures.pushes} "
          f"batches={figures.applies} sent={figures.sent} resent={figures.resent} "
          f"faults={sum(figures.faults.values())} {dict(sorted(figures.faults.items()))} "
          f"mismatches={figures.mismatches} duplicates={figures.duplicates} "
          f"onward_mismatches={figures.onward_mismatches} typedb_events={figures.typedb_events} "
          f"typedb_queries={figures.typedb_queries}")  # fmt: skip


def chaos_test(max_examples: int, label: str) -> Any:
    figures = Figures()

    @settings(max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
    @given(ops=HISTORY, seed=SEEDS, rate=RATES, batches=BATCHES)
    def property_(tmp_path_factory: pytest.TempPathFactory, ops: Any, seed: int, rate: float, batches: Any) -> None:
        run_chaos(tmp_path_factory.mktemp("chaos"), ops, Plan(seed, rate, 60, figures), batches)

    def test(tmp_path_factory: pytest.TempPathFactory) -> None:
        property_(tmp_path_factory)
        report(figures, label)
        assert (figures.mismatches, figures.duplicates, figures.onward_mismatches) == (0, 0, 0)
        assert figures.faults and figures.resent  # the chaos did happen

    return test


test_chaos_replay_converges_without_duplicates = chaos_test(12, "default")
#: The long version (the long run only, tests/conftest.py).
test_chaos_replay_converges_without_duplicates_slow = pytest.mark.slow(chaos_test(300, "slow"))


def test_every_fault_kind_in_one_run(tmp_path: Path) -> None:
    """A fixed schedule with each fault at least once, over the base history (deterministic companion)."""
    figures = Figures()
    forced = [f for f in FAULTS[1:] for _ in range(2)]
    run_chaos(tmp_path, [("push", 0, True)], Plan(7, 0.3, 20, figures, forced=forced), [7, 3, 11])
    assert set(figures.faults) == set(FAULTS[1:])
    assert figures.resent > 0
    assert (figures.mismatches, figures.duplicates) == (0, 0)


def test_equal_timestamps_replay_twice_equals_once(tmp_path: Path) -> None:
    """Two changes of one record at the same instant: a full resend changes nothing (the target compares the
    outbox position of the last event it applied to the record, not ``updated_at``, which ties)."""
    clock = FixedClock(T0)
    with (
        kg.init_workspace(tmp_path / "src", clock=clock) as src,
        kg.init_workspace(tmp_path / "dst", clock=clock) as dst,
    ):
        src.agents.add("a")
        src.facts.assert_fact("a", "acme", "hasRevenue", "100")
        src.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.5)  # the same instant: an update
        push(src._store, EmbeddedTarget(dst._store))
        once, events = state(dst._store), len(outbox(dst._store))
        with src._store.db.write() as conn:  # a full resend, as after a lost ack
            conn.execute("UPDATE outbox SET acked_at = NULL")
        push(src._store, EmbeddedTarget(dst._store))
        assert (state(dst._store), len(outbox(dst._store))) == (once, events)
