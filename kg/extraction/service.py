"""The extraction run: conversation messages not yet extracted -> memory items and facts, idempotently.

Per conversation of the agent, a high-water mark (``extraction:<conversation uid>`` in the store's marks:
the next ``seq`` to read) says where the last run stopped. The messages after it are cut into windows of
``window`` messages. For each window, in order:

1. the extractor proposes candidates (no lock held: a model may be slow);
2. the window's scope is the narrowest of its messages' scopes (:func:`kg.scopes.narrowest_scope`); a
   window mixing two non-global scopes is skipped whole (reported) rather than merged;
3. memory candidates go through admission control (:mod:`kg.memory.admission`, preset ``balanced`` unless
   turned off), batch dedup and the dedup decisions (:mod:`kg.memory.dedup`: pre-filter 0.7, at most 3
   compared); fact candidates through entity resolution and temporal invalidation (:mod:`.facts`);
4. **one store transaction** writes the window's items, facts, closings and the advanced mark. A process
   killed before the commit leaves none of them and the next run redoes the window; after it, all of them.
   A second process that extracted the same window first is noticed inside the transaction (the mark has
   moved) and the window is skipped: nothing is written twice.

A window the extractor fails on is recorded as failed and the conversation stops there (the mark stays
before it), so the next run retries it. After the windows, a conversation with more than 20 messages since
its last session summary gets one (:func:`kg.extraction.deterministic.compress`), in its own transaction
with its own mark. Daily-log entries of the new items are appended after each commit (the catch-up every
workspace open runs completes them if the process dies in between).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar

from pydantic import ValidationError

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.extraction.deterministic import compress
from kg.extraction.entities import ALIAS_PREDICATES, EntityResolver, Vocabulary
from kg.extraction.facts import FactPlanner
from kg.extraction.importance import importance
from kg.extraction.report import ExtractionReport, WindowReport
from kg.extraction.requests import WINDOW
from kg.facts import FactService
from kg.ids import ID_PATTERN, PREFIXES
from kg.memory.admission import MemoryCandidate, Neighbours, evaluate, get_preset
from kg.memory.dedup import DedupDecision, Deduplicator, batch_duplicates
from kg.memory.dedup_apply import apply_decision
from kg.memory.service import MemoryService
from kg.models import ExtractedMemory, MemoryStoreKind, MemoryType, ObjectKind, WindowExtraction
from kg.models.conversation import Conversation, Message, MessageQuery
from kg.ports import ChatModel, Embedder, ExtractionFailedError, Extractor, GraphStore, Marks, Transactions
from kg.scopes import narrowest_scope

#: ``progress(messages done, messages to read)`` of the running extraction, set by a caller that shows a bar.
PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar("extraction_progress", default=None)


class _Progress:
    """Counts messages done and reports them to the caller's callback, if any."""

    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self.callback, self.total, self.done = callback, total, 0

    def add(self, n: int) -> None:
        self.done += n
        if self.callback is not None:
            self.callback(self.done, self.total)


MARK = "extraction:"
SUMMARY_MARK = "extraction-summary:"
#: Tag of every extracted item (plus ``category:<name>``).
TAG = "extracted"
_TYPES = {t.value for t in MemoryType}


def item_text(memory: ExtractedMemory) -> str:
    """The stored text of a memory: its abstract (L0), overview (L1) and narrative (L2), each once."""
    parts = list(dict.fromkeys(p.strip() for p in (memory.abstract, memory.overview, memory.content)))
    return "\n\n".join(parts)


class ExtractionService:
    """Runs extraction for an agent (module docstring)."""

    def __init__(self, store: GraphStore, marks: Marks, transactions: Transactions, memory: MemoryService,  # noqa: PLR0917
                 facts: FactService, clock: Clock, extractor: Extractor, *, embedder: Embedder | None = None,
                 chat: ChatModel | None = None, vocabulary: Vocabulary | None = None,
                 admission: str | None = "balanced", window: int = WINDOW, speaker: str = "user",
                 after_commit: Callable[[str, list[str]], None] | None = None) -> None:  # fmt: skip
        if not 1 <= window <= 200:
            raise InputError("window", f"must be between 1 and 200, got {window}")
        self.store, self.marks, self.transactions = store, marks, transactions
        self.memory, self.facts, self.clock = memory, facts, clock
        self.extractor, self.embedder = extractor, embedder
        self.dedup = Deduplicator(embedder, chat)
        self.vocabulary = vocabulary or Vocabulary()
        self.preset = get_preset(admission) if admission else None
        self.window, self.speaker = window, speaker
        self.after_commit = after_commit

    def extract(self, agent_id: str, session: str | None = None, since: int | None = None) -> ExtractionReport:
        """Extract the agent's conversations (or the one ``session`` names: a key or a conversation uid) from
        their marks (or from ``since`` when that is later: what is already extracted is never read again)."""
        self.memory.policy.require_agent(agent_id)
        if since is not None and (isinstance(since, bool) or since < 0):
            raise InputError("since", f"must be a message seq of 0 or more, got {since!r}")
        model = getattr(getattr(self.extractor, "chat", None), "model", None)
        report = ExtractionReport(agent_id=agent_id, extractor=self.extractor.method, model=model)
        resolver = self._resolver(agent_id)
        pending = []
        for conv in self._conversations(agent_id, session):
            start = max(self.marks.get(MARK + conv.uid), since or 0)
            pending.append((conv, self.store.conversations.messages(MessageQuery(conversation_uid=conv.uid,
                                                                                 from_seq=start))))  # fmt: skip
        progress = _Progress(PROGRESS.get(), sum(len(m) for _, m in pending))
        for conversation, messages in pending:
            report.conversations += 1
            self._conversation(agent_id, conversation, messages, resolver, report=report, progress=progress)
        return report

    def _conversations(self, agent_id: str, session: str | None) -> list[Conversation]:
        if session is None:
            return sorted(self.store.conversations.list(agent_id), key=lambda c: (c.created_at, c.uid))
        found: Conversation | None = None
        if ID_PATTERN.match(session) and session.startswith(PREFIXES["conversation"] + "-"):
            try:
                found = self.store.conversations.get(session)
            except NotFoundError:
                found = None
        else:
            found = self.store.conversations.find(agent_id, session)
        if found is None or found.agent_id != agent_id:
            raise NotFoundError(f"session: agent {agent_id!r} has no conversation {session[:80]!r}")
        return [found]

    def _resolver(self, agent_id: str) -> EntityResolver:
        known: list[str] = []
        aliases: list[tuple[str, str]] = []
        for fact in self.facts.query(agent_id, limit=100_000):
            known.append(fact.subject)
            if fact.object_kind is ObjectKind.ENTITY:
                known.append(fact.object)
            if fact.predicate in ALIAS_PREDICATES:
                aliases.append((fact.subject, fact.object))
        return EntityResolver(dict.fromkeys(known), aliases, self.vocabulary, self.embedder)

    def _conversation(self, agent_id: str, conv: Conversation, messages: list[Message], resolver: EntityResolver, *,
                      report: ExtractionReport, progress: _Progress) -> None:  # fmt: skip
        report.messages += len(messages)
        planner = FactPlanner(self.facts, resolver, self.vocabulary)
        for offset in range(0, len(messages), self.window):
            window = messages[offset : offset + self.window]
            result = self._window(agent_id, conv, window, planner)
            report.windows.append(result)
            progress.add(len(window))
            if result.status == "failed":
                progress.add(len(messages) - offset - len(window))
                return
        self._summary(agent_id, conv, report)

    def _window(self, agent_id: str, conv: Conversation, window: Sequence[Message],
                planner: FactPlanner) -> WindowReport:  # fmt: skip
        result = WindowReport(conversation_uid=conv.uid, from_seq=window[0].seq, to_seq=window[-1].seq, status="done")
        try:
            found = self.extractor.extract(window, speaker=self.speaker)
        except ExtractionFailedError as exc:
            result.status, result.error = "failed", str(exc)
            return result
        except (ValidationError, InputError) as exc:
            return self._unusable(conv, window, result, exc)
        try:
            return self._write(agent_id, conv, window, planner, found=found, result=result)
        except (ValidationError, InputError) as exc:  # the transaction rolled back: nothing of it is written
            return self._unusable(conv, window, result, exc)

    def _unusable(self, conv: Conversation, window: Sequence[Message], result: WindowReport,
                  exc: Exception) -> WindowReport:  # fmt: skip
        """A window whose derived data the models refuse (issue 30): skipped, reported, and the mark moved past
        it, so that one message never stops every later window."""
        first = str(exc).splitlines()
        detail = f"{type(exc).__name__}: {' '.join(line.strip() for line in first[:3])}"[:300]
        result = result.model_copy(update={"status": "skipped", "error": f"unusable window ({detail})",
                                           "written": [], "facts_asserted": [], "facts_invalidated": []})  # fmt: skip
        self._advance(conv, window[-1].seq + 1)
        return result

    def _write(self, agent_id: str, conv: Conversation, window: Sequence[Message], planner: FactPlanner, *,
               found: WindowExtraction, result: WindowReport) -> WindowReport:  # fmt: skip
        scope = narrowest_scope(m.scope for m in window)
        if scope is None:
            result.status, result.error = "skipped", "messages of different non-global scopes are never merged"
            self._advance(conv, window[-1].seq + 1)
            return result
        result.scope = scope
        result.facts_refused = list(found.refused)
        candidates = [self._candidate(m, scope, window) for m in found.memories]
        result.candidates = len(candidates)
        decisions = self._decide(agent_id, candidates, [m.abstract for m in found.memories])
        facts = planner.plan(agent_id, scope, found.facts, result, default_start=window[-1].created_at)
        with self.transactions.transaction():
            if self.marks.get(MARK + conv.uid) > window[-1].seq:  # another run wrote this window meanwhile
                result.status, result.error = "skipped", "already extracted by another run"
                return result
            self._apply(agent_id, candidates, decisions, found, result)
            if facts:
                written = self.facts.assert_many(agent_id, facts, keep_uids=True)
                closed = {i.uid for i in result.facts_invalidated}  # re-asserted only to close them
                result.facts_asserted = [u for u in dict.fromkeys(written.uids) if u not in closed]
            self.marks.advance(MARK + conv.uid, window[-1].seq + 1)
        self._committed(agent_id, result.written)
        return result

    def _candidate(self, memory: ExtractedMemory, scope: str, window: Sequence[Message]) -> MemoryCandidate:
        text = item_text(memory)
        kind = memory.kind if memory.kind in _TYPES else MemoryType.OBSERVATION.value
        now = self.clock.now()
        evidence = [m.content for m in window if m.uid in set(memory.sources)]
        return MemoryCandidate(content=text, type=MemoryType(kind), tags=[TAG, f"category:{memory.category.value}"],
                               store=MemoryStoreKind.LONG_TERM, scope=scope, source="extraction", evidence=evidence,
                               observed_at=memory.observed_at, key=",".join(memory.sources),
                               importance=importance(text, kind, created_at=now, now=now))  # fmt: skip

    def _decide(self, agent_id: str, candidates: list[MemoryCandidate],
                abstracts: list[str]) -> list[DedupDecision | str]:  # fmt: skip
        """Per candidate: its dedup decision, or why it is dropped (admission ``reject``, batch ``duplicate``)."""
        if not candidates:
            return []
        existing_items = self.memory.list_items(agent_id, include_archived=False)
        out: list[DedupDecision | str] = ["" for _ in candidates]
        if self.preset is not None:  # on the one-line abstract, at the type's default importance, as if said now
            judged = [c.model_copy(update={"content": a, "importance": None, "observed_at": None})
                      for c, a in zip(candidates, abstracts, strict=True)]  # fmt: skip
            for r in evaluate(judged, existing=existing_items, now=self.clock.now(), preset=self.preset,
                              embedder=self.embedder):  # fmt: skip
                if r.decision == "reject":
                    out[r.index] = "reject"
        for dup in batch_duplicates(candidates, self.embedder):
            out[dup.index] = out[dup.index] or "duplicate"
        neighbours = Neighbours(existing_items, self.embedder)
        for i, candidate in enumerate(candidates):
            if not out[i]:
                out[i] = self.dedup.decide(candidate, neighbours)
        return out

    def _apply(self, agent_id: str, candidates: list[MemoryCandidate], decisions: list[DedupDecision | str],
               found: WindowExtraction, result: WindowReport) -> None:  # fmt: skip
        for candidate, decision, memory in zip(candidates, decisions, found.memories, strict=True):
            action = decision if isinstance(decision, str) else decision.action
            if not isinstance(decision, str):
                done = apply_decision(self.memory, agent_id, candidate, decision, sources=memory.sources)
                action = done.action
                result.written += done.written
                result.updated += done.updated
                result.archived += done.archived
            result.decisions[action] = result.decisions.get(action, 0) + 1

    def _advance(self, conv: Conversation, position: int) -> None:
        with self.transactions.transaction():
            self.marks.advance(MARK + conv.uid, position)

    def _committed(self, agent_id: str, written: list[str]) -> None:
        """After a commit: ``after_commit`` (the daily-log entries of the new items)."""
        if self.after_commit is not None and written:
            self.after_commit(agent_id, written)

    def _summary(self, agent_id: str, conv: Conversation, report: ExtractionReport) -> None:
        done = self.marks.get(MARK + conv.uid)
        start = self.marks.get(SUMMARY_MARK + conv.uid)
        messages = self.store.conversations.messages(MessageQuery(conversation_uid=conv.uid, from_seq=start,
                                                                  to_seq=max(done - 1, 0)))  # fmt: skip
        if done <= start:
            return
        summary = compress(messages, self.speaker)
        scope = narrowest_scope(m.scope for m in messages) if messages else None
        written: list[str] = []
        with self.transactions.transaction():
            if self.marks.get(SUMMARY_MARK + conv.uid) != start:
                return
            if summary is not None and scope is not None:
                text = item_text(summary)
                now = self.clock.now()
                item = self.memory.store_item(
                    agent_id, text, type="fact", store="long_term", scope=scope, source="extraction",
                    tags=[TAG, "session-summary"], derived_from=summary.sources[:1000],
                    importance=importance(text, "fact", created_at=now, now=now),
                ).item  # fmt: skip
                report.summaries.append(item.uid)
                written.append(item.uid)
            if summary is not None or len(messages) > 20:
                self.marks.advance(SUMMARY_MARK + conv.uid, done)
        self._committed(agent_id, written)


__all__ = ["MARK", "PROGRESS", "SUMMARY_MARK", "TAG", "WINDOW", "ExtractionService", "item_text"]
