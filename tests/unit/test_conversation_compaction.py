"""Compaction (issue 8): the trigger, leaf chunks, condensation fan-outs, the checkpoint-first rule, rejected
summaries, the service facade, and the lossless property by hypothesis.

Everything runs on a real workspace (SQLite store, real checkpoint files). The summariser in most tests is
:class:`FirstSentences`, a tiny deterministic stand-in that keeps the first sentence of every text: these
tests are about the DAG's structure, not summary quality (the extractive summariser has its own tests).
Text: tests/data/conversation/compaction-dialogue.jsonl (48 messages with five tool-call/result pairs).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.conversation.compaction import (
    CompactionSettings,
    compact,
    context_tokens,
    leaf_chunks,
    lossless_check,
    needs_compaction,
)
from kg.conversation.requests import IngestRequest
from kg.conversation.service import ConversationService
from kg.conversation.summarize import ExtractiveSummarizer
from kg.errors import BackendUnavailableError, InputError, NotFoundError
from kg.memory.checkpoints import checkpoint_files, read_checkpoint
from kg.models.conversation import Message, MessageInput, MessageQuery, Role, Summary
from kg.ports import SummaryText
from kg.workspace import Workspace
from tests.budget import examples

DIALOGUE = Path(__file__).resolve().parents[1] / "data" / "conversation" / "compaction-dialogue.jsonl"
T0 = datetime(2025, 5, 5, 9, 0, tzinfo=UTC)
AGENT = "a"
#: Small sizes so that 48 messages make several leaves and two depths.
SMALL = CompactionSettings(leaf_chunk_tokens=160, leaf_target_tokens=24, condensed_target_tokens=24,
                           leaf_min_fanout=3, condensed_min_fanout=2, fresh_tail=6)  # fmt: skip


class FirstSentences:
    """Test summariser: the first sentence of each text, cut to the target (4 characters a token)."""

    def __init__(self, method: str = "extractive") -> None:
        self.method = method
        self.calls: list[tuple[int, int, int]] = []  # (texts, target, depth)

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        self.calls.append((len(texts), target_tokens, depth))
        firsts = [re.split(r"(?<=[.!?])\s", t.strip(), maxsplit=1)[0] for t in texts]
        return SummaryText(content=" ".join(firsts)[: target_tokens * 4], method=self.method)


class Echo:
    """Test summariser that does not summarise: it returns its input (always rejected: not 35% smaller)."""

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        self.calls += 1
        return SummaryText(content="\n".join(texts), method="llm", model="echo")


class Picky(FirstSentences):
    """Test summariser that refuses to compress some spans (by their length), on every attempt."""

    def __init__(self, modulus: int) -> None:
        super().__init__()
        self.modulus = modulus

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        if self.modulus and sum(len(t) for t in texts) % self.modulus == 0:
            return SummaryText(content="\n".join(texts), method="extractive")
        return super().summarize(texts, target_tokens=target_tokens, depth=depth)


class Down:
    """Test summariser whose endpoint is down."""

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        raise BackendUnavailableError("llm: connection refused")


def dialogue() -> list[dict[str, str]]:
    return [json.loads(line) for line in DIALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    workspace = kg.init_workspace(tmp_path / "ws", clock=FixedClock(T0 + timedelta(days=1)))
    workspace.agents.add(AGENT)
    yield workspace
    workspace.close()


def service(ws: Workspace, summarizer: object | None = None, **kwargs: object) -> ConversationService:
    return ConversationService(ws.ports, ws.scopes, ws.clock, summarizer=summarizer or FirstSentences(),  # type: ignore[arg-type]
                               checkpoints=ws.path, settings=kwargs.pop("settings", SMALL), **kwargs)  # type: ignore[arg-type]  # fmt: skip


def expand(ws: Workspace, summary: Summary) -> list[str]:
    """Message uids beneath a summary, walked independently of the code under test."""
    if summary.depth == 0:
        return list(summary.child_uids)
    children = ws.ports.summaries.get_many(summary.child_uids)
    assert set(children) == set(summary.child_uids)
    return [uid for child in summary.child_uids for uid in expand(ws, children[child])]


def assert_lossless(ws: Workspace, conversation_uid: str, fresh_tail: int) -> None:
    """Every message is beneath exactly one root or uncovered; counts, spans and the DAG's shape agree."""
    log = ws.ports.conversations.messages(MessageQuery(conversation_uid=conversation_uid))
    by_uid = {m.uid: m for m in log}
    covered = [uid for root in ws.ports.summaries.roots(conversation_uid) for uid in expand(ws, root)]
    uncovered = [m.uid for m in ws.ports.summaries.uncovered_messages(conversation_uid)]
    assert len(covered) == len(set(covered))
    assert not set(covered) & set(uncovered)
    assert set(covered) | set(uncovered) == set(by_uid)
    assert {m.uid for m in log[len(log) - fresh_tail :]} <= set(uncovered)  # the fresh tail is never covered
    for summary in ws.ports.summaries.list(conversation_uid):
        below = [by_uid[uid] for uid in expand(ws, summary)]
        assert summary.descendant_count == len(below)
        assert (summary.earliest_at, summary.latest_at) == (min(m.created_at for m in below),
                                                            max(m.created_at for m in below))  # fmt: skip
        seqs = [m.seq for m in below]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # a summary covers a contiguous span
        if summary.depth > 0:
            depths = {c.depth for c in ws.ports.summaries.get_many(summary.child_uids).values()}
            assert depths == {summary.depth - 1}
    report = lossless_check(ws.ports.conversations, ws.ports.summaries, conversation_uid)
    assert report.lossless and report.reachable == len(log), report


# ------------------------------------------------------------------------------------------ trigger


def test_the_threshold_fires_above_three_quarters_of_a_large_budget() -> None:
    assert needs_compaction(96_000, budget=128_000).needed is False
    decision = needs_compaction(96_001, budget=128_000)
    assert (decision.needed, decision.reason, decision.threshold_tokens, decision.flush_tokens) == (
        True, "threshold", 96_000, 116_000)  # fmt: skip


def test_the_r3_flush_rule_fires_first_on_a_small_budget() -> None:
    # 32,000: the flush rule says full at 32,000 - 8,000 - 4,000 = 20,000, before 0.75 x 32,000 = 24,000
    assert needs_compaction(19_999, budget=32_000).needed is False
    decision = needs_compaction(20_000, budget=32_000)
    assert (decision.needed, decision.reason) == (True, "flush")
    assert needs_compaction(0, budget=8_000).needed is False  # nothing to compact, nothing to flush


@pytest.mark.parametrize(("tokens", "budget", "field"), [(10, 0, "budget"), (10, -5, "budget"), (-1, 100, "tokens"),
                                                         (10, True, "budget")])  # fmt: skip
def test_the_trigger_refuses_bad_numbers(tokens: int, budget: int, field: str) -> None:
    with pytest.raises(InputError) as err:
        needs_compaction(tokens, budget=budget)
    assert err.value.field == field


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="hard_min_fanout"):
        CompactionSettings(hard_min_fanout=5)
    defaults = CompactionSettings()
    assert (defaults.leaf_chunk_tokens, defaults.leaf_target_tokens, defaults.condensed_target_tokens) == (
        20_000, 2_400, 2_000)  # fmt: skip
    assert (defaults.fanout(1, forced=False), defaults.fanout(2, forced=False), defaults.fanout(3, forced=True)) == (
        8, 4, 2)  # fmt: skip
    assert (defaults.fresh_tail, defaults.context_threshold, defaults.min_compression,
            defaults.max_target_ratio) == (64, 0.75, 0.35, 3.0)  # fmt: skip


# ------------------------------------------------------------------------------------------ leaves


def ingest_dialogue(ws: Workspace, session: str = "offsite") -> str:
    return service(ws).ingest(AGENT, session, dialogue()).conversation_uid


def test_leaf_chunks_respect_the_size_the_fresh_tail_and_tool_pairs(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    log = ws.ports.summaries.uncovered_messages(uid)
    chunks = leaf_chunks(log, fresh_tail=6, chunk_tokens=160)
    flat = [m for chunk in chunks for m in chunk]
    assert flat == log[: len(flat)]  # the oldest messages, in order, each once
    assert all(m.seq < len(log) - 6 for m in flat)
    for chunk in chunks:
        assert sum(m.token_count for m in chunk) <= 160 or len({m.tool_call_id for m in chunk}) == 1
    pairs = {m.tool_call_id: set() for m in log if m.tool_call_id}
    for n, chunk in enumerate(chunks):
        for m in chunk:
            if m.tool_call_id:
                pairs[m.tool_call_id].add(n)
    assert all(len(where) <= 1 for where in pairs.values())  # a call and its result never split


def test_a_tool_pair_straddling_the_fresh_tail_waits_with_it(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    log = ws.ports.summaries.uncovered_messages(uid)
    call = next(m for m in log if m.tool_call_id == "call-5")  # call at seq 41, result at 42 (of 0..47)
    tail = log[-1].seq - call.seq  # the tail starts right at the result: the call would be outside it
    flat = [m.seq for chunk in leaf_chunks(log, fresh_tail=tail, chunk_tokens=10_000) for m in chunk]
    assert flat == list(range(call.seq))


def test_compaction_builds_leaves_then_condensed_summaries(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    summarizer = FirstSentences()
    report = service(ws, summarizer).compact(AGENT, "offsite")
    assert report.compacted and report.trigger == "manual" and not report.rejected
    leaves = ws.ports.summaries.list(uid, depth=0)
    assert len(leaves) >= 4
    for leaf in leaves:
        messages = ws.ports.conversations.get_messages(leaf.child_uids).values()
        assert leaf.source_token_count == sum(m.token_count for m in messages)
        assert leaf.source_token_count <= SMALL.leaf_chunk_tokens or len(leaf.child_uids) <= 2
        assert leaf.token_count <= leaf.source_token_count * 0.65
    condensed = [s for s in ws.ports.summaries.list(uid) if s.depth >= 1]
    assert condensed, "48 messages in chunks of 160 tokens make enough leaves for a depth-1 summary"
    for summary in condensed:
        assert len(summary.child_uids) >= (3 if summary.depth == 1 else 2)
    assert {d.depth for d in report.depths} == {s.depth for s in ws.ports.summaries.list(uid)}
    for stats in report.depths:
        assert 0 < stats.compression_ratio <= 0.65
        assert stats.summaries == len(ws.ports.summaries.list(uid, depth=stats.depth))
    assert report.context_tokens_after < report.context_tokens_before
    assert report.context_tokens_after == context_tokens(ws.ports.summaries, uid)
    assert {target for _, target, depth in summarizer.calls if depth == 0} == {24}
    assert_lossless(ws, uid, fresh_tail=6)


def test_a_second_compaction_without_new_messages_does_nothing(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    svc = service(ws)
    svc.compact(AGENT, "offsite")
    before = ws.ports.summaries.list(uid)
    files = checkpoint_files(ws.path, AGENT)
    again = svc.compact(AGENT, "offsite")
    assert not again.compacted and again.checkpoint is None and again.note
    assert ws.ports.summaries.list(uid) == before and checkpoint_files(ws.path, AGENT) == files


def test_forced_compaction_condenses_with_the_hard_minimum(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    roomy = SMALL.model_copy(update={"leaf_min_fanout": 50, "condensed_min_fanout": 50})
    normal = compact(
        ws.ports.conversations, ws.ports.summaries, FirstSentences(), uid, settings=roomy, now=ws.clock.now()
    )
    assert {d.depth for d in normal.depths} == {0}  # fan-out 50 is never reached
    forced = compact(ws.ports.conversations, ws.ports.summaries, FirstSentences(), uid, settings=roomy,
                     now=ws.clock.now(), force=True)  # fmt: skip
    assert forced.forced and {d.depth for d in forced.depths} >= {1}
    assert len(ws.ports.summaries.roots(uid)) < len(ws.ports.summaries.list(uid, depth=0))
    assert all(len(s.child_uids) >= 2 for s in ws.ports.summaries.list(uid) if s.depth >= 1)
    assert_lossless(ws, uid, fresh_tail=6)


# ------------------------------------------------------------------------------------------ checkpoint


def test_the_checkpoint_is_written_before_any_summary(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    seen: list[int] = []

    def checkpoint(context: str) -> str:
        seen.append(len(ws.ports.summaries.list(uid)))
        assert "48 messages not yet summarised" in context
        return "written"

    report = compact(ws.ports.conversations, ws.ports.summaries, FirstSentences(), uid, settings=SMALL,
                     now=ws.clock.now(), checkpoint=checkpoint)  # fmt: skip
    assert seen == [0] and report.checkpoint == "written" and report.created


def test_a_failing_checkpoint_stops_the_compaction_before_it_writes(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)

    def checkpoint(context: str) -> str:
        raise InputError("checkpoint", "disk full")

    with pytest.raises(InputError):
        compact(ws.ports.conversations, ws.ports.summaries, FirstSentences(), uid, settings=SMALL,
                now=ws.clock.now(), checkpoint=checkpoint)  # fmt: skip
    assert ws.ports.summaries.list(uid) == []


def test_the_service_writes_an_r3_checkpoint_file(ws: Workspace) -> None:
    ingest_dialogue(ws)
    report = service(ws).compact(AGENT, "offsite")
    assert report.checkpoint is not None
    [(_, _, path)] = checkpoint_files(ws.path, AGENT)
    assert str(path) == report.checkpoint
    checkpoint = read_checkpoint(path, AGENT).checkpoint
    assert "Compacting conversation 'offsite'" in checkpoint.context
    assert "Dinner at Taberna Azul" not in checkpoint.context  # the last *user* message is quoted
    assert "Book the boat trip for the afternoon of 13 June" in checkpoint.context
    assert checkpoint.next_steps and "lcm_expand" in checkpoint.next_steps[0]


def test_with_a_budget_compaction_runs_only_when_the_trigger_fires(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    svc = service(ws)
    tokens = context_tokens(ws.ports.summaries, uid)
    calm = svc.compact(AGENT, "offsite", budget=tokens * 100 + 20_000)
    assert not calm.compacted and calm.note and calm.note.startswith("not needed")
    assert ws.ports.summaries.list(uid) == [] and checkpoint_files(ws.path, AGENT) == []
    assert svc.trigger(AGENT, "offsite", budget=tokens).needed
    busy = svc.compact(AGENT, "offsite", budget=tokens)  # over the threshold: compact, forced if still over
    assert busy.compacted and busy.trigger == "threshold" and busy.checkpoint is not None
    assert_lossless(ws, uid, fresh_tail=6)


# ------------------------------------------------------------------------------------------ rejection


def test_summaries_that_do_not_compress_are_never_stored(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    echo = Echo()
    report = compact(ws.ports.conversations, ws.ports.summaries, echo, uid, settings=SMALL, now=ws.clock.now())
    assert ws.ports.summaries.list(uid) == [] and report.created == [] and not report.compacted
    chunks = leaf_chunks(ws.ports.summaries.uncovered_messages(uid), fresh_tail=6, chunk_tokens=160)
    assert len(report.rejected) == len(chunks) and echo.calls == 2 * len(chunks)  # one retry each
    assert all("not 35% smaller" in r.reason and "retry" in r.reason for r in report.rejected)
    assert len(ws.ports.summaries.uncovered_messages(uid)) == 48
    assert_lossless(ws, uid, fresh_tail=6)


def test_summaries_over_three_times_the_target_are_rejected(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    wordy = SMALL.model_copy(update={"leaf_chunk_tokens": 2_000, "leaf_target_tokens": 5})
    report = compact(ws.ports.conversations, ws.ports.summaries, FirstSentences(), uid, settings=wordy,
                     now=ws.clock.now())  # fmt: skip
    # the first sentence cut at 4 x target characters is about the target: accepted
    assert report.created and not report.rejected
    uid2 = service(ws).ingest(AGENT, "other", dialogue()).conversation_uid
    long = Echo()
    long.summarize = lambda texts, **_: SummaryText(content=" ".join(texts)[:200], method="extractive")  # type: ignore[method-assign]
    report = compact(ws.ports.conversations, ws.ports.summaries, long, uid2, settings=wordy, now=ws.clock.now())
    assert not report.created and report.rejected
    assert "over 3x the target of 5" in report.rejected[0].reason


def test_a_rejected_summary_is_retried_with_the_fallback_at_a_smaller_target(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    fallback = FirstSentences()
    report = compact(ws.ports.conversations, ws.ports.summaries, Echo(), uid, settings=SMALL, now=ws.clock.now(),
                     fallback=fallback)  # fmt: skip
    assert report.created and not report.rejected and report.retried == len(report.created)
    assert {s.method.value for s in ws.ports.summaries.list(uid)} == {"extractive"}
    assert all(target <= SMALL.leaf_target_tokens for _, target, depth in fallback.calls if depth == 0)
    assert_lossless(ws, uid, fresh_tail=6)


def test_an_unavailable_llm_falls_back_when_a_fallback_is_given(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    with pytest.raises(BackendUnavailableError):
        compact(ws.ports.conversations, ws.ports.summaries, Down(), uid, settings=SMALL, now=ws.clock.now())
    assert ws.ports.summaries.list(uid) == []
    report = compact(ws.ports.conversations, ws.ports.summaries, Down(), uid, settings=SMALL, now=ws.clock.now(),
                     fallback=FirstSentences())  # fmt: skip
    assert report.created and report.retried == len(report.created)


def test_a_summariser_that_refuses_a_span_is_a_rejection_not_a_failure(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)

    class Refuses:
        def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
            raise InputError("texts", "nothing to summarise: no sentence in the texts")

    report = compact(ws.ports.conversations, ws.ports.summaries, Refuses(), uid, settings=SMALL, now=ws.clock.now())
    assert report.rejected and not report.created
    assert report.rejected[0].reason.startswith("summariser refused: texts: nothing to summarise")


def test_the_extractive_summariser_compacts_real_text(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    sizes = SMALL.model_copy(update={"leaf_chunk_tokens": 400, "leaf_target_tokens": 80,
                                     "condensed_target_tokens": 80})  # fmt: skip
    report = service(ws, ExtractiveSummarizer(), settings=sizes).compact(AGENT, "offsite")
    assert report.created and not report.rejected
    made = ws.ports.summaries.list(uid)
    assert {s.method.value for s in made} == {"extractive"} and {s.depth for s in made} >= {0, 1}
    assert all(s.content.startswith("[extractive summary:") for s in made)
    text = "\n".join(s.content for s in made if s.depth == 0)
    assert re.search(r"\d", text) and "/shared/offsite/2025/" in text  # numbers and paths survive
    assert_lossless(ws, uid, fresh_tail=6)


def test_the_service_hands_assembly_and_the_tools_over(ws: Workspace) -> None:
    uid = ingest_dialogue(ws)
    svc = service(ws, ExtractiveSummarizer(), settings=SMALL.model_copy(update={"leaf_chunk_tokens": 400}))
    svc.compact(AGENT, "offsite")
    context = svc.assemble(AGENT, "offsite", budget=600)
    assert context.conversation_uid == uid and context.tail_messages >= 6 and context.summaries >= 1
    assert context.total_tokens <= 600 and context.system_prompt_addition
    relevant = svc.assemble(AGENT, "offsite", budget=600, prompt="Which flight goes to Munich?")
    assert relevant.ordering == "relevance"
    root = ws.ports.summaries.roots(uid)[0]
    assert svc.describe(AGENT, root.uid).model_dump()["uid"] == root.uid
    expanded = svc.expand(AGENT, root.uid, max_depth=64, include_messages=True, max_tokens=1_000_000)
    assert not expanded.truncated
    assert svc.grep(AGENT, "Taberna Azul", session_key="offsite").model_dump()["hits"]
    with pytest.raises(NotFoundError):
        svc.describe("nobody", root.uid)


# ------------------------------------------------------------------------------------------ ingest


def test_ingest_appends_in_order_and_reports_the_span(ws: Workspace) -> None:
    svc = service(ws)
    rows = dialogue()
    first = svc.ingest(AGENT, "offsite", rows[:10])
    second = svc.ingest(AGENT, "offsite", "\n".join(json.dumps(r) for r in rows[10:]) + "\n\n")
    assert (first.created, first.appended, first.first_seq, first.last_seq) == (True, 10, 0, 9)
    assert (second.created, second.appended, second.first_seq, second.last_seq) == (False, 38, 10, 47)
    assert second.conversation_uid == first.conversation_uid
    log = ws.ports.conversations.messages(MessageQuery(conversation_uid=first.conversation_uid))
    assert [m.content for m in log] == [r["content"] for r in rows]
    assert log[4].tool_call_id == "call-1" and log[5].role is Role.TOOL and log[0].name == "maya"
    assert log[0].created_at == T0


@pytest.mark.parametrize(("text", "field"), [
    ('{"role": "user", "content": "hi"}\n{"role": "robot", "content": "x"}', "line 2: role"),
    ('{"role": "user", "content": "hi"}\n\n{"role": "user"}', "line 3: content"),
    ('{"role": "user", "content": "hi", "created_at": "yesterday"}', "line 1: created_at"),
    ('{"role": "user", "content": "hi", "mood": "happy"}', "line 1: mood"),
    ('{"role": "user", "content": "hi"}\nnot json', "line 2"),
    ('["user", "hi"]', "line 1"),
    ("\n\n", "messages"),
])  # fmt: skip
def test_bad_rows_name_the_line_and_the_field_and_write_nothing(ws: Workspace, text: str, field: str) -> None:
    with pytest.raises(InputError) as err:
        service(ws).ingest(AGENT, "bad", text)
    assert err.value.field == field
    assert ws.ports.conversations.find(AGENT, "bad") is None


def test_ingest_for_an_unknown_agent_writes_nothing(ws: Workspace) -> None:
    with pytest.raises(NotFoundError):
        service(ws).ingest("nobody", "s", dialogue())
    with pytest.raises(NotFoundError, match="no conversation"):
        service(ws).compact(AGENT, "never-ingested")


def test_keywords_are_validated_into_the_request(ws: Workspace) -> None:
    """The keyword path and a request are one validation (IngestRequest): the session key's rule applies to both,
    and a request comes alone."""
    svc = service(ws)
    with pytest.raises(InputError) as err:
        svc.ingest(AGENT, "bad\x07key", dialogue())
    assert err.value.field == "session_key"
    request = IngestRequest(session_key="s", messages=[MessageInput(role=Role.USER, content="hi")])
    with pytest.raises(InputError) as beside:
        svc.ingest(AGENT, request, title="a title beside the request")
    assert beside.value.field == "title"
    assert ws.ports.conversations.find(AGENT, "s") is None
    assert svc.ingest(AGENT, request).appended == 1


def test_messages_are_accepted_as_models_too(ws: Workspace) -> None:
    result = service(ws).ingest(AGENT, "models", [MessageInput(role=Role.USER, content="hello there")])
    assert result.appended == 1 and result.tokens == 3


# ------------------------------------------------------------------------------------------ lossless


_SENTENCES = [row["content"] for row in dialogue()]
_counter = itertools.count()


@st.composite
def conversations(draw: st.DrawFn) -> list[MessageInput]:
    """Random conversations: plain messages of any role and size, and tool calls with one or two results."""
    out: list[MessageInput] = []
    at = T0
    for _ in range(draw(st.integers(1, 50))):
        at += timedelta(seconds=draw(st.integers(0, 600)))  # equal times happen too
        text = " ".join(draw(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=4)))
        if draw(st.integers(0, 5)) == 0:
            call = f"call-{next(_counter)}"
            out.append(MessageInput(role=Role.ASSISTANT, content=f"call tool: {text[:80]}", created_at=at,
                                    tool_call_id=call))  # fmt: skip
            for _ in range(draw(st.integers(1, 2))):
                out.append(MessageInput(role=Role.TOOL, content=text, created_at=at, tool_call_id=call))
        else:
            role = draw(st.sampled_from([Role.USER, Role.ASSISTANT, Role.SYSTEM]))
            out.append(MessageInput(role=role, content=text, created_at=at))
    return out


compaction_settings = st.builds(
    lambda chunk, fanout, condensed, tail: CompactionSettings(
        leaf_chunk_tokens=chunk, leaf_target_tokens=16, condensed_target_tokens=16, leaf_min_fanout=fanout,
        condensed_min_fanout=condensed, fresh_tail=tail),
    st.integers(30, 400), st.integers(2, 8), st.integers(2, 4), st.integers(0, 12),
)  # fmt: skip


@pytest.fixture(scope="module")
def shared_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MABOS_EMBEDDER", "none")
        workspace = kg.init_workspace(tmp_path_factory.mktemp("lossless") / "ws", clock=FixedClock(T0))
    workspace.agents.add(AGENT)
    yield workspace
    workspace.close()


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds=st.lists(st.tuples(conversations(), st.booleans()), min_size=1, max_size=3), config=compaction_settings,
       modulus=st.sampled_from([0, 0, 2, 3]))  # fmt: skip
def test_every_message_stays_reachable_after_compaction(
    shared_ws: Workspace, rounds: list[tuple[list[MessageInput], bool]], config: CompactionSettings, modulus: int
) -> None:
    """Lossless: after any sequence of ingests and compactions (normal or forced, with some spans refused by
    the summariser) every message is beneath exactly one root summary or is still uncovered, and counts and
    time spans agree."""
    ws = shared_ws
    svc = service(ws, Picky(modulus), settings=config)
    session = f"s{next(_counter)}"
    for messages, forced in rounds:
        svc.ingest(AGENT, session, messages)
        report = svc.compact(AGENT, session, force=forced)
        assert all(0 < d.compression_ratio <= 1 - config.min_compression for d in report.depths)
        event(f"depths made: {sorted(d.depth for d in report.depths)}; rejected: {bool(report.rejected)}")
    uid = svc.conversation(AGENT, session).uid
    assert_lossless(ws, uid, fresh_tail=config.fresh_tail)
    _no_pair_split(ws, uid, ws.ports.summaries.uncovered_messages(uid))


def _no_pair_split(ws: Workspace, uid: str, uncovered: list[Message]) -> None:
    """A tool call and its results are all under one leaf, or all uncovered."""
    homes: dict[str, set[str]] = {}
    for leaf in ws.ports.summaries.list(uid, depth=0):
        for m in ws.ports.conversations.get_messages(leaf.child_uids).values():
            if m.tool_call_id:
                homes.setdefault(m.tool_call_id, set()).add(leaf.uid)
    for m in uncovered:
        if m.tool_call_id:
            homes.setdefault(m.tool_call_id, set()).add("uncovered")
    assert all(len(where) == 1 for where in homes.values()), homes
