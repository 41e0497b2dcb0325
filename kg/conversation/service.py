"""Conversation service: the one facade the CLI and the tool registry call for conversation memory.

``ingest`` appends messages (JSONL rows ``{"role", "content", "created_at"}``, optionally ``name``,
``tool_call_id`` and ``token_count``) to an agent's session, validating every row first: an error names the
line and the field, and nothing is written. ``compact`` runs the summary-DAG builder
(:mod:`kg.conversation.compaction`) after the R3 checkpoint; ``trigger`` says whether a budget calls for it.
``assemble``, ``grep``, ``describe`` and ``expand`` hand over to :mod:`kg.conversation.assemble` and
:mod:`kg.conversation.tools` after resolving the agent's session and scopes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kg.clock import Clock
from kg.conversation.assemble import AssembledContext, Relevance, assemble
from kg.conversation.budget import allocate
from kg.conversation.compaction import (
    DEFAULT_SETTINGS,
    CheckpointWriter,
    CompactionReport,
    CompactionSettings,
    CompactionTrigger,
    Trigger,
    compact,
    context_tokens,
    needs_compaction,
)
from kg.conversation.requests import (
    MAX_INGEST,
    AssembleRequest,
    CompactRequest,
    DescribeRequest,
    ExpandRequest,
    GrepRequest,
    IngestRequest,
)
from kg.conversation.tools import (
    ExpandResult,
    GrepResult,
    SummaryDescription,
    lcm_describe,
    lcm_expand,
    lcm_grep,
)
from kg.conversation.tools_models import ConversationStores
from kg.errors import InputError, NotFoundError
from kg.limits import jsonl_lines, load_json
from kg.memory.checkpoints import write_checkpoint
from kg.models import Model, describe_validation_error
from kg.models.conversation import Conversation, MessageInput, TokenEstimator, estimate_tokens
from kg.models.request import requested
from kg.ports import Embedder, Summarizer
from kg.scopes import ScopePolicy

#: Messages of one ingest call (a bigger log goes in several calls).
#: Next step written into every compaction checkpoint.
EXPAND_FIRST = "Expand summaries (lcm_expand) before asserting details from the compacted history"


#: A store with the conversation ports (``SqliteGraphStore`` is one): the same protocol the lcm tools read.
ConversationBackend = ConversationStores


class IngestResult(Model):
    """What an ingest appended: ``first_seq``/``last_seq`` of the new messages and their tokens."""

    agent_id: str
    session_key: str
    conversation_uid: str
    created: bool
    appended: int
    first_seq: int
    last_seq: int
    tokens: int


def parse_rows(rows: str | Sequence[Mapping[str, Any] | MessageInput]) -> list[MessageInput]:
    """Validate messages: JSONL text (one object a line, blank lines skipped) or a sequence of rows.

    Raises:
        InputError: ``line <n>: <field>`` and the rule, for the first bad row (1-based; for JSONL the line
            number in the text).
    """
    numbered: list[tuple[int, object]] = []
    if isinstance(rows, str):
        # split on "\n" only: a JSON string may hold U+2028 or U+0085 unescaped (json.dumps(ensure_ascii=False))
        numbered = [(number, load_json(line, f"line {number}")) for number, line in jsonl_lines(rows)]
    else:
        numbered = list(enumerate(rows, 1))
    if not numbered:
        raise InputError("messages", "no messages to ingest")
    if len(numbered) > MAX_INGEST:
        raise InputError("messages", f"at most {MAX_INGEST} messages per ingest, got {len(numbered)}")
    out: list[MessageInput] = []
    for number, row in numbered:
        if isinstance(row, MessageInput):
            out.append(row)
            continue
        if not isinstance(row, Mapping):
            raise InputError(f"line {number}", f"must be a JSON object, got {type(row).__name__}")
        try:
            out.append(MessageInput.model_validate(dict(row)))
        except ValidationError as exc:
            err = describe_validation_error(exc)
            raise InputError(f"line {number}: {err.field}", err.rule) from None
    return out


class ConversationService:
    """Conversation memory for agents: ingest, compaction, assembly and the recall tools.

    Args:
        store: A store with ``conversations`` and ``summaries``.
        scopes: The scope policy (agents must exist).
        clock: Time of ingest defaults, summaries and checkpoints.
        summarizer: Writes summaries (``kg.conversation.summarize.make_summarizer``).
        fallback: The retry summariser for rejected summaries (the extractive one when ``summarizer`` is an
            LLM); None retries with ``summarizer``.
        checkpoints: The workspace directory whose ``agents/<id>/memory/checkpoints`` gets the R3 checkpoint
            before each compaction; None writes none.
        estimator: Token estimate (default chars/4).
        settings: Compaction sizes and thresholds (``fresh_tail`` is also the assembler's).
        embedder: Makes assembly by relevance hybrid (BM25 + cosine); None: BM25 only.
    """

    def __init__(self, store: ConversationBackend, scopes: ScopePolicy, clock: Clock, *, summarizer: Summarizer,
                 fallback: Summarizer | None = None, checkpoints: Path | None = None,
                 estimator: TokenEstimator = estimate_tokens, settings: CompactionSettings = DEFAULT_SETTINGS,
                 embedder: Embedder | None = None) -> None:  # fmt: skip
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.summarizer = summarizer
        self.fallback = fallback
        self.checkpoints = checkpoints
        self.estimator = estimator
        self.settings = settings
        self.embedder = embedder

    # ------------------------------------------------------------------------------ log

    def ingest(self, agent_id: str, session_key: str | IngestRequest,
               messages: str | Sequence[Mapping[str, Any] | MessageInput] | None = None,
               *, title: str | None = None) -> IngestResult:  # fmt: skip
        """Append messages to the agent's session (created if new); every row is validated before any write.

        Takes a request, or its session key, messages (a list of rows, or JSONL text: its ``jsonl``) and title as
        arguments, validated into one. A bad row is ``line <n>: <field>`` (JSONL, or a Python list of rows)."""
        listed = None if messages is None or isinstance(messages, str) else parse_rows(messages)
        rows = {"jsonl": messages} if isinstance(messages, str) else {"messages": listed}
        request = requested(IngestRequest, session_key, {**rows, "title": title}, first="session_key")
        parsed = parse_rows(request.jsonl) if request.jsonl is not None else request.messages or []
        self.scopes.require_agent(agent_id)
        key = request.session_key
        known = self.store.conversations.find(agent_id, key)
        conversation = known or self.store.conversations.open(agent_id, key, title=request.title, now=self.clock.now())
        stored = self.store.conversations.append(conversation.uid, parsed, now=self.clock.now())
        return IngestResult(agent_id=agent_id, session_key=key, conversation_uid=conversation.uid,
                            created=known is None, appended=len(stored), first_seq=stored[0].seq,
                            last_seq=stored[-1].seq, tokens=sum(m.token_count for m in stored))  # fmt: skip

    def conversation(self, agent_id: str, session_key: str) -> Conversation:
        """The agent's conversation of ``session_key``, or :class:`NotFoundError`."""
        self.scopes.require_agent(agent_id)
        found = self.store.conversations.find(agent_id, session_key)
        if found is None:
            raise NotFoundError(f"session: agent {agent_id!r} has no conversation {session_key!r}")
        return found

    # ------------------------------------------------------------------------------ compaction

    def trigger(self, agent_id: str, session_key: str, *, budget: int) -> CompactionTrigger:
        """Whether the session's context (uncovered messages + root summaries) needs compacting for ``budget``."""
        uid = self.conversation(agent_id, session_key).uid
        return needs_compaction(context_tokens(self.store.summaries, uid), budget=budget, settings=self.settings)

    def compact(self, agent_id: str, session_key: str | CompactRequest, *, budget: int | None = None,
                force: bool | None = None) -> CompactionReport:  # fmt: skip
        """Compact the session (a request, or its session key and fields): always without ``budget`` (manual); with
        one, only when the trigger fires.

        With ``budget``, a context still over the trigger after the normal sweep gets a forced condensed pass
        (fan-out 2). The R3 checkpoint is written first whenever anything is eligible.
        """
        request = requested(CompactRequest, session_key, {"budget": budget, "force": force}, first="session_key")
        budget, force = request.budget, request.force
        conversation = self.conversation(agent_id, request.session_key)
        reason: Trigger = "manual"
        if budget is not None:
            decision = needs_compaction(context_tokens(self.store.summaries, conversation.uid), budget=budget,
                                        settings=self.settings)  # fmt: skip
            if not decision.needed and not force:
                summaries = self.store.summaries
                return CompactionReport.unchanged(
                    conversation.uid, "manual", tokens=decision.context_tokens,
                    uncovered=len(summaries.uncovered_messages(conversation.uid)),
                    roots=len(summaries.roots(conversation.uid)),
                    note=f"not needed: {decision.context_tokens} tokens is within {decision.threshold_tokens} "
                         f"(threshold) and below {decision.flush_tokens} (R3 flush) of budget {budget}",
                )  # fmt: skip
            reason = decision.reason or "manual"
        return compact(self.store.conversations, self.store.summaries, self.summarizer, conversation.uid,
                       settings=self.settings, now=self.clock.now(), estimator=self.estimator,
                       checkpoint=self._checkpoint_writer(agent_id), fallback=self.fallback, force=force,
                       budget=budget, trigger=reason)  # fmt: skip

    # ------------------------------------------------------------------------------ assembly and tools

    def assemble(self, agent_id: str, session_key: str | AssembleRequest, *, budget: int | None = None,
                 window: int | None = None, prompt: str | None = None) -> AssembledContext:  # fmt: skip
        """The session's context (:func:`kg.conversation.assemble.assemble`) within ``budget`` tokens, or within
        the history share of a whole context ``window`` split by :func:`kg.conversation.budget.allocate`
        (the split is returned as ``allocation``). Exactly one of the two. A request, or its session key and
        fields."""
        asked = {"budget": budget, "window": window, "prompt": prompt}
        request = requested(AssembleRequest, session_key, asked, first="session_key")
        session_key, budget, window, prompt = request.session_key, request.budget, request.window, request.prompt
        allocation = None
        if window is not None and budget is None:
            allocation = allocate(window)
            history = allocation.history
        elif budget is not None and window is None:
            history = budget
        else:
            raise InputError("budget", "give either a budget (tokens for the history) or a window (the whole context)")
        conversation = self.conversation(agent_id, session_key)
        relevance = Relevance(self.embedder) if prompt and self.embedder is not None else None
        context = assemble(self.store.conversations, self.store.summaries, conversation.uid, budget_tokens=history,
                           prompt=prompt, fresh_tail=self.settings.fresh_tail, estimator=self.estimator,
                           relevance=relevance)  # fmt: skip
        context.allocation = allocation
        return context

    def grep(self, agent_id: str, pattern: str | GrepRequest, **fields: Any) -> GrepResult:
        """``lcm_grep`` over the agent's conversations (one, by session key or uid, when given): a request, or its
        pattern and fields (``mode``, ``scope``, ``since``, ``before``, ``limit``, ``session_key``)."""
        request = requested(GrepRequest, pattern, fields, first="pattern")
        self.scopes.require_agent(agent_id)
        return lcm_grep(self.store, agent_id, request.pattern, mode=request.mode, scope=request.scope,
                        since=request.since, before=request.before, limit=request.limit,
                        conversation=request.session_key)  # fmt: skip

    def describe(self, agent_id: str, summary_uid: str | DescribeRequest) -> SummaryDescription:
        """``lcm_describe``: one of the agent's summaries, its token counts and place in the DAG (a request, or the
        summary's uid)."""
        request = requested(DescribeRequest, summary_uid, {}, first="summary_uid")
        self.scopes.require_agent(agent_id)
        return lcm_describe(self.store, agent_id, request.summary_uid)

    def expand(self, agent_id: str, summary_uid: str | ExpandRequest, **fields: Any) -> ExpandResult:
        """``lcm_expand``: walk the DAG down from one of the agent's summaries (a request, or its uid and fields
        ``max_depth``, ``include_messages``, ``max_tokens``)."""
        request = requested(ExpandRequest, summary_uid, fields, first="summary_uid")
        self.scopes.require_agent(agent_id)
        return lcm_expand(self.store, agent_id, request.summary_uid, max_depth=request.max_depth,
                          include_messages=request.include_messages, max_tokens=request.max_tokens)  # fmt: skip

    def _checkpoint_writer(self, agent_id: str) -> CheckpointWriter | None:
        workspace = self.checkpoints
        if workspace is None:
            return None

        def write(context: str) -> str:
            path = write_checkpoint(workspace, agent_id, context=context, next_steps=[EXPAND_FIRST], clock=self.clock)
            return str(path)

        return write


__all__ = ["ConversationBackend", "ConversationService", "IngestResult", "parse_rows"]
