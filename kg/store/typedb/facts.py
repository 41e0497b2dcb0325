"""TypeDB adapter of the fact port (:class:`kg.ports.FactStore`): the SQLite adapter's behaviour on a shared graph.

The queries and the upsert logic are pure functions in :mod:`kg.store.typedb.fact_queries`; this class runs
them in transactions of a :class:`~kg.store.typedb.client.TypeDBClient`. Differences from the embedded store,
all declared through :class:`~kg.ports.Capabilities`:

* **no system-time history** (``system_time_history=False``): ``as_of`` is refused with an InputError;
* **no outbox**: the shared graph is the target of replication, not a source;
* **search is not FTS5** (``full_text=False``): a fact matches when every word of the text occurs,
  case-insensitively, as a substring of its subject, predicate or object (``acme`` also finds ``bacme``; no
  diacritic folding); hits come in (created_at, uid) order, not by relevance;
* **uniqueness of a live (scope, subject, predicate, object)** is checked inside the write transaction, not by
  an index: two concurrent writers of the same new triple can both create it (TypeDB's snapshot isolation
  only fails commits that touch the same attribute ownerships or keys);
* ``live_triples`` pages by (created_at, uid) instead of the embedded store's insertion sequence.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from kg.clock import Clock
from kg.errors import BackendError, InputError, NotFoundError
from kg.models import AssertOutcome, Fact, FactInput, FactQuery, LiveTriple, to_utc
from kg.ports.facts import FactRow, PreparedFacts
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.fact_queries import (
    BATCH,
    FactKey,
    agents_query,
    fact_from_doc,
    fact_key,
    fact_query,
    get_many_query,
    live_lookup_query,
    live_triples_query,
    plan_asserts,
    retract_find_query,
    retract_match,
    retract_update_query,
    search_query,
    search_words,
    triple_from_doc,
)
from kg.store.typedb.graph_queries import parse_datetime


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i : i + BATCH] for i in range(0, len(values), BATCH)]


def _no_history(field: str) -> InputError:
    return InputError(field, "the TypeDB store keeps no system-time history (capability system_time_history is "
                             "off); leave it out or use the embedded store")  # fmt: skip


class TypeDBFactStore:
    """Facts in a TypeDB database."""

    def __init__(self, client: TypeDBClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    # ------------------------------------------------------------------ writes

    def prepare(self, facts: Sequence[FactInput | FactRow], *, asserted_by: str) -> PreparedFacts:
        """Nothing to build ahead here: the plan needs the live facts, read in the write transaction."""
        return PreparedFacts(facts, asserted_by)

    def assert_prepared(self, prepared: PreparedFacts) -> list[AssertOutcome]:
        """:meth:`assert_many` of a batch from :meth:`prepare`."""
        facts = [f if isinstance(f, FactInput) else f.to_input() for f in prepared.facts]
        return self.assert_many(facts, asserted_by=prepared.asserted_by)

    def assert_many(self, facts: Sequence[FactInput], *, asserted_by: str) -> list[AssertOutcome]:
        """Upsert ``facts`` in one write transaction, with the same outcomes as the embedded store.

        The agents and the live facts of the batch's keys are read first, in the same transaction; the plan
        (:func:`~kg.store.typedb.fact_queries.plan_asserts`) then gives the outcomes and the writes, which are
        sent in order and committed together. An unknown agent raises NotFoundError and writes nothing.
        """
        if not facts:
            return []
        keys = list(dict.fromkeys(fact_key(fact) for fact in facts))  # InputError before any round trip
        now = to_utc(self.clock.now())
        with self.client.transaction("write", "assert facts") as tx:
            self._check_agents(tx, sorted({fact.agent_id for fact in facts}))
            live: dict[FactKey, Fact] = {}
            for chunk in _chunks(keys):
                for doc in self.client.answers(tx, live_lookup_query(chunk)):
                    fact = fact_from_doc(doc)
                    live[fact_key(fact)] = fact
            plan = plan_asserts(facts, live, asserted_by=asserted_by, now=now)
            if plan.queries:
                promises = [tx.query(query) for query in plan.queries]  # the driver keeps their order
                for promise in promises:
                    promise.resolve()
                tx.commit()
        return plan.outcomes

    def _check_agents(self, tx: Any, wanted: list[str]) -> None:
        """NotFoundError naming the first unknown owner (in id order, as the embedded store)."""
        found = {doc["agent_id"] for chunk in _chunks(wanted) for doc in self.client.answers(tx, agents_query(chunk))}
        missing = [agent_id for agent_id in wanted if agent_id not in found]
        if missing:
            raise NotFoundError(f"agent_id: no agent {missing[0]!r}")

    def retract(
        self,
        *,
        scopes: Sequence[str],
        retracted_by: str,
        uids: Sequence[str] = (),
        subject: str | None = None,
        predicate: str | None = None,
    ) -> list[str]:
        """Retract live facts by uid, or by subject and/or predicate, within ``scopes``; return their uids.

        A uid that does not exist or lies outside ``scopes`` is NotFoundError (nothing retracted); one already
        retracted keeps its first retraction and is not returned.
        """
        if not uids and subject is None and predicate is None:
            raise InputError("retract", "give fact ids, a subject or a predicate")
        if not scopes:
            raise InputError("scopes", "at least one scope is needed")
        now = to_utc(self.clock.now())
        wanted = list(dict.fromkeys(uids))
        retracted: set[str] = set()
        with self.client.transaction("write", "retract facts") as tx:
            if wanted:
                self._check_retractable(tx, wanted, scopes)
            for chunk in _chunks(wanted) if wanted else [()]:
                match = retract_match(scopes, chunk, subject, predicate)
                found = {str(doc["uid"]) for doc in self.client.answers(tx, retract_find_query(match))}
                if found:
                    tx.query(retract_update_query(match, now, retracted_by)).resolve()
                    retracted |= found
            if retracted:
                tx.commit()
        return sorted(retracted)

    def _check_retractable(self, tx: Any, uids: list[str], scopes: Sequence[str]) -> None:
        scope_of = {
            str(doc["uid"]): doc["scope"]
            for chunk in _chunks(uids)
            for doc in self.client.answers(tx, get_many_query(chunk))
        }
        for uid in uids:
            if scope_of.get(uid) not in scopes:
                raise NotFoundError(f"uids: no fact {uid!r} visible to this agent")

    # ------------------------------------------------------------------ reads

    def query(self, query: FactQuery) -> list[Fact]:
        """Facts matching ``query``, ordered by (created_at, uid); ``as_of`` is refused (no history here)."""
        if query.as_of is not None:
            raise _no_history("as_of")
        facts = [fact_from_doc(doc) for doc in self.client.read(fact_query(query))]
        return sorted(facts, key=lambda f: (f.created_at, f.uid))

    def get_many(self, uids: Iterable[str], *, as_of: datetime | None = None) -> dict[str, Fact]:
        """Facts by uid in any scope (callers filter by scope); unknown uids are left out."""
        if as_of is not None:
            raise _no_history("as_of")
        wanted = list(dict.fromkeys(uids))
        facts = [fact_from_doc(doc) for chunk in _chunks(wanted) for doc in self.client.read(get_many_query(chunk))]
        return {fact.uid: fact for fact in facts}

    def live_triples(
        self, *, scopes: Sequence[str], valid_at: datetime, derived: bool | None = None, batch: int = 50_000
    ) -> Iterator[LiveTriple]:
        """Every live fact of ``scopes`` valid at ``valid_at``, lightly, in (created_at, uid) order; only asserted
        (``derived=False``) or only derived (``True``) facts when asked. One read transaction per page of
        ``batch``, continuing after the last (created_at, uid) seen."""
        after: tuple[datetime, str] | None = None
        while True:
            docs = self.client.read(live_triples_query(scopes, valid_at, derived, batch, after))
            for doc in docs:
                yield triple_from_doc(doc)
            if len(docs) < batch:
                return
            created = parse_datetime(docs[-1]["created_at"])
            if created is None:  # the query binds created-at: only a broken answer lacks it
                raise BackendError("typedb: a live_triples page ended with a fact without created-at")
            after = (created, str(docs[-1]["uid"]))

    def search(self, text: str, *, scopes: Sequence[str], limit: int = 20) -> list[Fact]:
        """Live facts in which every word of ``text`` occurs (case-insensitive substring) in the subject,
        predicate or object, in (created_at, uid) order: no FTS5 here (``capabilities.full_text`` is False)."""
        words = search_words(text)
        if not words:
            return []
        facts = [fact_from_doc(doc) for doc in self.client.read(search_query(words, scopes, limit))]
        return sorted(facts, key=lambda f: (f.created_at, f.uid))


__all__ = ["TypeDBFactStore"]
