"""Fact service: the seed tools fact_assert, fact_retract, fact_query and fact_explain.

Each takes its request model (:mod:`kg.facts_requests`), or, from Python, the request's fields as arguments.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from kg.errors import InputError, NotFoundError
from kg.faces import lazy_names
from kg.facts_requests import FactExplainRequest, FactQueryRequest
from kg.models import AssertOutcome, AssertStatus, Fact, FactInput, FactQuery, parse
from kg.models.request import fields_of, requested
from kg.ports import GraphStore
from kg.scopes import ScopePolicy

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from kg.facts_fast import Screened
    from kg.facts_results import BulkResult, Explanation
    from kg.facts_write_requests import FactAssertRequest, FactRetractRequest
    from kg.ports.facts import FactRow, PreparedFacts

DEFAULT_BATCH = 5_000
#: An atomic bulk assert writes its first batch in this many parts (docs/decisions/2026-11-29-lubm-import-speed.md).
LEAD_PARTS = 4
#: Batches a bulk assert reading its source in the helper thread takes ahead of the one it writes.
TAKE_AHEAD = 3
_status = itemgetter(1)  # of an AssertOutcome


# kg.facts_results' models are defined when first named: a query names neither (nor loads kg.facts_fast).
if not TYPE_CHECKING:  # mypy reads the imports above
    __getattr__, __dir__ = lazy_names(__name__, {"kg.facts_results": ("BulkResult", "Explanation")})


class FactService:
    """Assert, retract, query and explain facts with scope checks."""

    def __init__(self, store: GraphStore, policy: ScopePolicy) -> None:
        self.store = store
        self.policy = policy

    def assert_fact(self, agent_id: str, subject: str | FactAssertRequest, predicate: str | None = None,
                    obj: str | None = None, **fields: Any) -> tuple[Fact, str]:  # fmt: skip
        """Assert one fact (a request, or its subject, predicate, object and fields); return it as stored and
        ``created``/``updated``/``unchanged``."""
        from kg.facts_write_requests import FactAssertRequest  # noqa: PLC0415 - a query defines no write request

        request = requested(
            FactAssertRequest, subject, {"predicate": predicate, "object": obj, **fields}, first="subject"
        )
        fact = self._input(agent_id, fields_of(request, FactAssertRequest))
        outcome = self.store.facts.assert_many([fact], asserted_by=agent_id)[0]
        return self.store.facts.get_many([outcome.uid])[outcome.uid], outcome.status.value

    def assert_many(
        self,
        agent_id: str,
        facts: Iterable[FactInput | dict[str, Any]],
        *,
        batch_size: int = DEFAULT_BATCH,
        keep_uids: bool = False,
        tune_process: bool = False,
    ) -> BulkResult:
        """Assert many facts, one transaction per batch (facts are streamed, not all held in memory).

        Each batch is validated whole before it is written. A bad item raises :class:`InputError` naming it
        (``facts[1234].confidence``): its batch and every later one are not written, earlier batches stay
        committed (re-asserting them is harmless: identical facts come back ``unchanged``).

        With more than one batch, the next batch is screened (the fast path's checks, the store's row
        building: CPU only, no store access) in a helper thread while this thread writes the current one;
        SQLite releases the GIL while it inserts. Anything the screen does not accept, and every error, is
        handled here, in order, after the earlier batch's commit, so the outcome is that of one batch after
        the other.

        ``tune_process`` lets the call change settings of the whole process while it runs: the cyclic garbage
        collector paused (:func:`kg.facts_fast.gc_paused`) and a shorter GIL switch interval while a batch is
        screened ahead (:func:`kg.facts_fast.quick_handoff`), faster on large loads (docs/facts-bulk.md). Only
        the owner of the process may ask for that (the CLI's ``mabos fact import`` does); by default nothing
        outside the call changes.
        """
        from kg.facts_fast import agent_ok, check_batch_size, in_batches  # noqa: PLC0415 - bulk asserts only

        check_batch_size(batch_size)
        fast = agent_ok(agent_id)
        writable = frozenset(self.policy.readable(agent_id))  # also refuses an unknown agent

        def screen(batch: list[Any]) -> Screened:
            return self._screen(agent_id, batch, writable, fast)

        batches = in_batches(facts, batch_size)
        return self._pipeline(agent_id, batches, screen, keep_uids=keep_uids, tune_process=tune_process)

    def assert_triples(
        self,
        agent_id: str,
        triples: Iterable[tuple[str, str, str, str]],
        *,
        scope: str | None = None,
        source: str = "agent",
        batch_size: int = DEFAULT_BATCH,
        stored: Callable[[int], None] | None = None,
        atomic_source: bool = False,
        tune_process: bool = False,
    ) -> BulkResult:
        """:meth:`assert_many` of one fact per ``(subject, predicate, object, mark)`` triple (a non-empty ``mark``
        makes a literal object, ``""`` an entity), all with ``scope`` (the agent's own by default) and ``source``,
        confidence 1: the facts and outcomes of the same items as dicts, without building a dict per fact.

        ``triples`` is read in the helper thread, a batch at a time, with the screen that builds the batch's rows
        straight from the triples (:func:`kg.facts_fast.triple_rows`), while this thread writes the batch before:
        a parser can be the source (:class:`kg.rdf.parse.TripleStream`), so parsing and storing overlap. A batch
        with an item the screen cannot accept goes the model path as dicts, with the model's error naming the item
        (``facts[1234].object``). ``stored`` is called with the number of facts committed so far after each
        commit.

        ``atomic_source``: the source may fail after some of its triples are written (a malformed document later
        on): every batch goes in one transaction, committed when the source is exhausted; the source's error rolls
        all of them back. A batch the model refuses ends the writing; the source is read to its end (its own error
        wins), then the batches before that one are committed and the refusal raised: the outcome of reading the
        whole source first, then storing batch by batch. A store error rolls back the whole call.
        """
        from kg.facts_fast import (  # noqa: PLC0415 - bulk asserts only
            Screened,
            TermChecks,
            agent_ok,
            check_batch_size,
            in_batches,
            plain_source,
            triple_rows,
        )
        from kg.facts_results import BulkResult  # noqa: PLC0415
        from kg.ports.facts import FactColumns  # noqa: PLC0415

        check_batch_size(batch_size)
        fast = agent_ok(agent_id) and plain_source(source)
        writable = frozenset(self.policy.readable(agent_id))  # also refuses an unknown agent
        extra = {"source": source, **({"scope": scope} if scope is not None else {})}
        own = "agent:" + agent_id if scope is None else scope
        fast, checks = fast and own in writable, TermChecks()

        def screen(batch: Sequence[tuple[str, str, str, str]]) -> Screened:
            rows = triple_rows(agent_id, batch, own, source, checks) if fast else []
            if type(rows) is FactColumns:  # every row accepted, as columns: no tuple per fact
                return Screened(rows, self.store.facts.prepare(rows, asserted_by=agent_id))
            inputs: list[FactInput | FactRow | None] = list(rows)
            if fast and None not in inputs:
                ready = cast("list[FactInput | FactRow]", inputs)
                return Screened(inputs, self.store.facts.prepare(ready, asserted_by=agent_id))
            items = [{"subject": s, "predicate": p, "object": o, "object_kind": "literal" if mark else "entity",
                      **extra} for s, p, o, mark in batch]  # fmt: skip
            return Screened(inputs or [None] * len(items), None, items)

        if not atomic_source:
            return self._pipeline(agent_id, in_batches(triples, batch_size), screen, keep_uids=False,
                                  tune_process=tune_process, take_ahead=True, stored=stored)  # fmt: skip
        # The first batch is written in quarters, so writing starts sooner; in one transaction, a refusal in any
        # of them keeps nothing, as a refusal in the first batch does.
        lead = batch_size // LEAD_PARTS if batch_size % LEAD_PARTS == 0 else 0
        batches = in_batches(triples, batch_size, lead=lead)
        result, refused = BulkResult(), list[Exception]()
        with self.store.facts.bulk():  # committed when the source is exhausted; its error rolls everything back
            self._pipeline(agent_id, batches, screen, keep_uids=False, tune_process=tune_process, take_ahead=True,
                           result=result, refused=refused)  # fmt: skip
            if refused:
                for _ in batches:  # the source's own error (a malformed document further on) comes first
                    pass
                if result.created + result.updated + result.unchanged < batch_size:
                    raise refused[0]  # in the first batch: nothing stays
        if refused:
            raise refused[0]
        if stored is not None:
            stored(result.created + result.updated + result.unchanged)
        return result

    def _pipeline(
        self,
        agent_id: str,
        batches: Iterator[Sequence[Any]],
        screen: Callable[[Any], Screened],
        *,
        keep_uids: bool,
        tune_process: bool,
        take_ahead: bool = False,
        stored: Callable[[int], None] | None = None,
        result: BulkResult | None = None,
        refused: list[Exception] | None = None,
    ) -> BulkResult:
        """Write ``batches`` one transaction each (unless the caller holds one), the next one screened in a helper
        thread meanwhile; with ``take_ahead`` the helper thread also takes the next batch from ``batches``.

        A batch the model path refuses raises its error, or, given ``refused``, is added to it and ends the call
        (the caller holds the transaction and decides what the batches before it become)."""
        from kg.facts_fast import drop_batch, gc_paused, screening_pool  # noqa: PLC0415 - bulk asserts only
        from kg.facts_results import BulkResult  # noqa: PLC0415

        result = BulkResult() if result is None else result
        pool: ThreadPoolExecutor | None = None

        def write(prepared: PreparedFacts) -> None:
            self._count(result, self.store.facts.assert_prepared(prepared), keep_uids=keep_uids)
            if stored is not None:
                stored(result.created + result.updated + result.unchanged)

        def take(batch: Sequence[Any] | None = None) -> tuple[Sequence[Any], Screened] | None:
            batch = next(batches, None) if batch is None else batch
            return None if batch is None else (batch, screen(batch))

        try:
            with ExitStack() as stack:
                if tune_process:  # a batch allocates ~10 objects per fact, none of them in a cycle
                    stack.enter_context(gc_paused())
                taken, offset = take(), 0
                pending: deque[Future[tuple[Sequence[Any], Screened] | None]] = deque()
                while taken is not None:
                    try:
                        prepared = self._ready(agent_id, taken[0], offset, taken[1])
                    except Exception as exc:
                        if refused is None:
                            raise
                        for taking in pending:  # a batch taken ahead may carry the source's own error: it wins
                            taking.result()
                        refused.append(exc)
                        return result
                    offset += len(taken[0])
                    ahead: Future[tuple[Sequence[Any], Screened] | None] | None = None
                    if take_ahead:  # the source's error surfaces from ahead.result(), the batches before written
                        pool = pool or screening_pool(stack, tune_process=tune_process)
                        pending.extend(pool.submit(take) for _ in range(TAKE_AHEAD - len(pending)))
                        ahead = pending.popleft()
                    else:
                        try:
                            following = next(batches, None)
                        except BaseException:  # the caller's source failed: what it gave whole is still written
                            write(prepared)
                            raise
                        if following is not None:
                            pool = pool or screening_pool(stack, tune_process=tune_process)
                            ahead = pool.submit(take, following)
                    write(prepared)
                    if pool is not None:  # the screening thread frees the written batch, not this one
                        spent = [taken, prepared]
                        del taken, prepared  # spent holds the last references
                        pool.submit(drop_batch, spent)
                    taken = None if ahead is None else ahead.result()
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)  # the screen touches no store: it ends on its own
        return result

    @staticmethod
    def _count(result: BulkResult, outcomes: list[AssertOutcome], *, keep_uids: bool) -> None:
        # list.count compares by identity first, in C; a Counter hashed each status through Enum.__hash__, a Python
        # call per fact (70 M instructions of the writing thread for LUBM(1)'s 100,866)
        statuses = list(map(_status, outcomes))
        created = statuses.count(AssertStatus.CREATED)
        result.created += created
        if created != len(statuses):
            result.updated += statuses.count(AssertStatus.UPDATED)
            result.unchanged += statuses.count(AssertStatus.UNCHANGED)
        if keep_uids:
            result.uids.extend(outcome.uid for outcome in outcomes)

    def _screen(self, agent_id: str, batch: list[Any], writable: frozenset[str], fast: bool) -> Screened:
        """The items the fast path accepts into writable scopes (None for the rest) and, when that is every
        item, the store's prepared batch. CPU only (safe in the helper thread): no store access, no error."""
        from kg.facts_fast import Screened, fast_row  # noqa: PLC0415 - bulk asserts only

        inputs: list[FactInput | FactRow | None] = []
        for item in batch:
            fact: FactInput | FactRow | None
            if fast and type(item) is dict:
                fact = fast_row(agent_id, item)  # the model's values without a model instance (~6 µs less)
            else:
                fact = item if type(item) is FactInput and item.agent_id == agent_id else None
            inputs.append(fact if fact is not None and fact.scope in writable else None)
        if None in inputs:
            return Screened(inputs, None)
        ready = cast("list[FactInput | FactRow]", inputs)
        return Screened(inputs, self.store.facts.prepare(ready, asserted_by=agent_id))

    def _ready(self, agent_id: str, batch: Sequence[Any], offset: int, screened: Screened) -> PreparedFacts:
        """The batch validated whole (the model path for what the screen left, with its errors) and prepared."""
        if screened.prepared is not None:
            return screened.prepared
        writable = set(self.policy.readable(agent_id))
        items = batch if screened.items is None else screened.items
        inputs = [
            fact if fact is not None else self._item(agent_id, item, writable, offset + i)
            for i, (fact, item) in enumerate(zip(screened.inputs, items, strict=True))
        ]
        return self.store.facts.prepare(inputs, asserted_by=agent_id)

    def _item(self, agent_id: str, item: FactInput | dict[str, Any], writable: set[str], index: int) -> FactInput:
        try:
            return self._coerce(agent_id, item, writable)
        except InputError as exc:
            raise InputError(f"facts[{index}].{exc.field}", exc.rule) from None

    def _coerce(self, agent_id: str, item: FactInput | dict[str, Any], writable: set[str]) -> FactInput:
        fact = item if isinstance(item, FactInput) else parse(FactInput, {"agent_id": agent_id, **item})
        if fact.agent_id != agent_id:
            raise InputError("agent_id", f"a batch asserted by {agent_id!r} cannot carry facts of {fact.agent_id!r}")
        if fact.scope not in writable:
            self.policy.check_write(agent_id, fact.scope)  # raises the precise ScopeError
        return fact

    def _input(self, agent_id: str, data: dict[str, Any]) -> FactInput:
        self.policy.require_agent(agent_id)
        fact = parse(FactInput, {"agent_id": agent_id, **{k: v for k, v in data.items() if v is not None}})
        self.policy.check_write(agent_id, fact.scope)
        return fact

    def retract(self, agent_id: str, request: FactRetractRequest | None = None, /, *, uids: Sequence[str] = (),
                **fields: Any) -> list[str]:  # fmt: skip
        """Retract by id(s), subject and/or predicate in the agent's writable scopes (a request, or ``uids`` and the
        request's other fields); return the uids."""
        from kg.facts_write_requests import FactRetractRequest  # noqa: PLC0415 - a query defines no write request

        given = requested(FactRetractRequest, request, {"fact_ids": list(uids) or None, **fields})
        uids, subject, predicate, scope = given.fact_ids, given.subject, given.predicate, given.scope
        if not uids and not subject and not predicate:
            raise InputError("retract", "give fact ids, --subject or --predicate")
        for name, value in (("subject", subject), ("predicate", predicate)):
            if value is not None and not value.strip():
                raise InputError(name, "must not be empty")
        scopes = self.policy.narrow(agent_id, scope)
        return self.store.facts.retract(
            scopes=scopes, retracted_by=agent_id, uids=list(uids), subject=subject, predicate=predicate
        )

    def query(self, agent_id: str, request: FactQueryRequest | None = None, /, **criteria: Any) -> list[Fact]:
        """Facts visible to the agent matching the request (or its fields given as ``criteria``)."""
        if "scopes" in criteria:  # the readable scopes come from the policy, never from the caller
            raise InputError("scopes", "cannot be given; narrow with scope=<one readable scope>")
        given = requested(FactQueryRequest, request, criteria)
        scopes = self.policy.narrow(agent_id, given.scope)
        fields = {k: v for k, v in fields_of(given, FactQueryRequest).items() if v is not None and k != "scope"}
        query = parse(FactQuery, {"scopes": scopes, **fields})
        return self.store.facts.query(query)

    def get(self, agent_id: str, uid: str, *, as_of: datetime | None = None) -> Fact:
        """One fact visible to the agent."""
        scopes = self.policy.readable(agent_id)
        fact = self.store.facts.get_many([uid], as_of=as_of).get(uid)
        if fact is None or fact.scope not in scopes:
            raise NotFoundError(f"fact: no fact {uid!r} visible to {agent_id!r}")
        return fact

    def explain(self, agent_id: str, uid: str | FactExplainRequest, *, depth: int | None = None) -> Explanation:
        """Walk ``derived_from`` and ``rule_id`` from a fact, ``depth`` levels down (a request, or the fact's uid
        and the depth, at most :data:`~kg.facts_requests.MAX_EXPLAIN_DEPTH`)."""
        from kg.facts_results import Explanation, support  # noqa: PLC0415 - not defined for a query

        request = requested(FactExplainRequest, uid, {"depth": depth}, first="fact_id")
        uid, depth = request.fact_id, request.depth
        scopes = set(self.policy.readable(agent_id))
        root_fact = self.get(agent_id, uid)
        root = Explanation(uid=uid, fact=root_fact, rule_id=root_fact.rule_id)
        level = [(root, frozenset({uid}))]
        for _ in range(depth):
            wanted = [p for node, _ in level if node.fact for p in node.fact.derived_from]
            found = self.store.facts.get_many(wanted)
            next_level = []
            for node, ancestors in level:
                for parent_uid in node.fact.derived_from if node.fact else []:
                    child = support(parent_uid, found.get(parent_uid), scopes, ancestors)
                    node.supports.append(child)
                    if child.fact and not child.cycle:
                        next_level.append((child, ancestors | {parent_uid}))
            level = next_level
        for node, _ in level:
            node.truncated = bool(node.fact and node.fact.derived_from)
        self._name_rules(root, scopes)
        return root

    def _name_rules(self, root: Explanation, scopes: set[str]) -> None:
        """Fill in the name and confidence factor of every visible rule in the tree."""
        nodes, pending = [], [root]
        while pending:
            node = pending.pop()
            nodes.append(node)
            pending.extend(node.supports)
        rules = self.store.rules.get_many({n.rule_id for n in nodes if n.rule_id})
        for node in nodes:
            rule = rules.get(node.rule_id) if node.rule_id else None
            if rule is not None and rule.scope in scopes:
                node.rule_name, node.confidence_factor = rule.name, rule.confidence_factor


__all__ = ["DEFAULT_BATCH", "LEAD_PARTS", "TAKE_AHEAD", "BulkResult", "Explanation", "FactService"]
