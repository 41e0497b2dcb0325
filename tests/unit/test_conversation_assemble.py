"""Context budget and context assembly on a real workspace store (SQLite), with real summaries in the DAG."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.conversation.assemble import SUMMARY_NOTE, Relevance, assemble, bm25_scores
from kg.conversation.budget import DEFAULT_RATIOS, BudgetRatios, allocate
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models.conversation import Conversation, Message, MessageInput, MessageQuery, Summary
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.workspace import Workspace

T = 100  # characters of a filler message: 25 tokens with the default estimate


@pytest.fixture
def ws(tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    workspace = kg.init_workspace(tmp_path / "ws", clock=clock)
    workspace.agents.add("a")
    yield workspace
    workspace.close()


@pytest.fixture
def conv(ws: Workspace) -> Conversation:
    return ws.ports.conversations.open("a", "s1", now=ws.clock.now())


def add(ws: Workspace, c: Conversation, specs: list[Any]) -> list[Message]:
    """Append messages one minute apart; a spec is a text (user) or (role, text[, tool_call_id])."""
    start = ws.clock.now()
    already = len(ws.ports.conversations.messages(MessageQuery(conversation_uid=c.uid)))
    inputs = []
    for i, spec in enumerate(specs):
        role, text, call = ("user", spec, None) if isinstance(spec, str) else (*spec, None)[:3]
        inputs.append(MessageInput(role=role, content=text, tool_call_id=call,
                                   created_at=start + timedelta(minutes=already + i)))  # fmt: skip
    return ws.ports.conversations.append(c.uid, inputs, now=start)


def filler(i: int) -> str:
    return f"message {i:04d} ".ljust(T, "x")


def summarise(ws: Workspace, c: Conversation, children: list[Any], content: str) -> Summary:
    """Store a leaf over messages or a condensed summary over summaries."""
    leaf = isinstance(children[0], Message)
    times = [(m.created_at, m.created_at) if leaf else (m.earliest_at, m.latest_at) for m in children]
    summary = Summary(
        uid=new_id("summary"), agent_id=c.agent_id, scope=c.scope, created_at=ws.clock.now(),
        conversation_uid=c.uid, kind="leaf" if leaf else "condensed", depth=0 if leaf else children[0].depth + 1,
        content=content, token_count=len(content) // 4, source_token_count=sum(m.token_count for m in children),
        method="extractive", child_uids=[m.uid for m in children], earliest_at=min(t[0] for t in times),
        latest_at=max(t[1] for t in times),
        descendant_count=len(children) if leaf else sum(s.descendant_count for s in children),
    )  # fmt: skip
    return ws.ports.summaries.add(summary)


def run(ws: Workspace, c: Conversation, **kw: Any) -> Any:
    return assemble(ws.ports.conversations, ws.ports.summaries, c.uid, **kw)


def uids(result: Any) -> list[str]:
    return [item.uid for item in result.items]


def seqs(result: Any) -> list[int]:
    return [item.seq for item in result.items if item.kind == "message"]


# ------------------------------------------------------------------------------------------ budget


def test_budget_defaults_split_the_window():
    b = allocate(100_000)
    assert (b.response_reserve, b.system, b.tools, b.memory, b.request, b.history) == (
        15_000, 10_000, 10_000, 20_000, 5_000, 40_000)  # fmt: skip
    assert b.total == 100_000 == sum((b.response_reserve, b.system, b.tools, b.memory, b.request, b.history))
    assert DEFAULT_RATIOS.history == pytest.approx(0.40)
    assert b.fixed == [] and b.notes == [] and "history takes the rest" in b.rule


def test_budget_unused_shares_flow_to_history_and_rounding_too():
    b = allocate(32_001, system=500, tools=0)
    assert (b.system, b.tools) == (500, 0)
    assert b.history == 32_001 - 500 - 0 - int(0.15 * 32_001) - int(0.20 * 32_001) - int(0.05 * 32_001)
    assert sum((b.response_reserve, b.system, b.tools, b.memory, b.request, b.history)) == 32_001
    assert b.fixed == ["tools", "system"] and "fixed needs as given (tools, system)" in b.rule


def test_budget_large_fixed_needs_take_from_unfixed_shares_never_negative():
    b = allocate(10_000, tools=8_000)
    assert b.tools == 8_000 and b.history == 0
    assert min(b.system, b.memory, b.request, b.response_reserve, b.history) >= 0
    assert sum((b.response_reserve, b.system, b.tools, b.memory, b.request, b.history)) == 10_000
    assert b.memory == 0 and b.notes[0].startswith("memory gave back")


def test_budget_refuses_impossible_or_bad_input():
    with pytest.raises(InputError, match=r"^total_tokens: fixed needs \(tools 900 \+ request 200 = 1100\)"):
        allocate(1_000, tools=900, request=200)
    with pytest.raises(InputError, match=r"^total_tokens: must be between 0"):
        allocate(-1)
    with pytest.raises(InputError, match=r"^memory: must be a whole number"):
        allocate(1_000, memory=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most 1"):
        BudgetRatios(memory=0.9)


def test_budget_with_custom_ratios():
    b = allocate(1_000, ratios=BudgetRatios(response_reserve=0.1, system=0, tools=0, memory=0, request=0))
    assert (b.response_reserve, b.history) == (100, 900)


# ------------------------------------------------------------------------------------------ fresh tail


def test_short_conversation_is_all_tail_in_order(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(10)])
    r = run(ws, conv, budget_tokens=10_000)
    assert uids(r) == [m.uid for m in ms]
    assert all(item.in_tail for item in r.items) and r.tail_messages == 10
    assert r.total_tokens == r.tail_tokens == 250 and not r.over_budget
    assert r.summaries == 0 and r.system_prompt_addition == "" and r.ordering == "newest_first"


def test_fresh_tail_is_included_even_over_budget(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(20)])
    r = run(ws, conv, budget_tokens=60, fresh_tail=5)
    assert uids(r) == [m.uid for m in ms[-5:]]
    assert r.over_budget and r.total_tokens == 125 > r.budget_tokens
    assert "exceeds the budget of 60 tokens" in r.notes[0]
    assert [d.uid for d in r.dropped] == [m.uid for m in reversed(ms[:-5])]  # tried newest first


def test_fresh_tail_zero_and_empty_conversation(ws, conv):
    assert run(ws, conv, budget_tokens=100).items == []
    ms = add(ws, conv, [filler(i) for i in range(6)])
    r = run(ws, conv, budget_tokens=50, fresh_tail=0)
    assert uids(r) == [m.uid for m in ms[-2:]] and r.tail_messages == 0 and not r.over_budget


def test_tail_boundary_moves_back_to_the_tool_call(ws, conv):
    ms = add(ws, conv, [
        "run the tests", ("assistant", "calling pytest", "call-1"), ("tool", "3 passed", "call-1"),
        ("assistant", "calling ruff", "call-2"), ("tool", "all good", "call-2"), ("assistant", "done"),
    ])  # fmt: skip
    # a tail of 2 would start at "all good" (call-2), whose call sits just before the boundary
    r = run(ws, conv, budget_tokens=10_000, fresh_tail=2)
    assert [i.seq for i in r.items if i.in_tail] == [3, 4, 5] and r.tail_messages == 3
    # a tail of 4 starts at "3 passed" (call-1): the boundary moves back to its call at seq 1
    r = run(ws, conv, budget_tokens=10_000, fresh_tail=4)
    assert [i.seq for i in r.items if i.in_tail] == [1, 2, 3, 4, 5]
    assert uids(r) == [m.uid for m in ms]


def test_tail_boundary_follows_the_call_id_past_other_calls(ws, conv):
    add(ws, conv, [
        "check both", ("assistant", "calling a", "a"), ("assistant", "calling b", "b"),
        ("tool", "result b", "b"), ("tool", "result a", "a"),
    ])  # fmt: skip
    r = run(ws, conv, budget_tokens=0, fresh_tail=1)  # the tail is "result a": its call is seq 1
    assert [i.seq for i in r.items] == [1, 2, 3, 4] and r.over_budget


def test_tail_boundary_without_call_ids_uses_the_nearest_assistant(ws, conv):
    add(ws, conv, ["list files", ("assistant", "calling ls"), ("tool", "a.txt b.txt"), ("tool", "c.txt")])
    r = run(ws, conv, budget_tokens=10_000, fresh_tail=1)
    assert [i.seq for i in r.items if i.in_tail] == [1, 2, 3]
    assert [i.seq for i in r.items] == [0, 1, 2, 3]


def test_tail_reaches_a_call_covered_by_a_summary(ws, conv):
    ms = add(ws, conv, ["go", ("assistant", "calling x", "x"), ("tool", "x result", "x"), "thanks"])
    summarise(ws, conv, ms[:2], "the user asked; the assistant called x")
    r = run(ws, conv, budget_tokens=10_000, fresh_tail=2)
    assert [(i.kind, i.seq) for i in r.items] == [("summary", None), ("message", 1), ("message", 2),
                                                  ("message", 3)]  # fmt: skip
    assert [i.in_tail for i in r.items] == [False, True, True, True]


# ------------------------------------------------------------------------------------------ older context


def test_newest_first_fills_the_budget_then_restores_order(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(40)])
    r = run(ws, conv, budget_tokens=4 * 25 + 5 * 25 + 10, fresh_tail=4)
    assert seqs(r) == list(range(31, 40))  # 5 older messages, newest first, then the 4 of the tail
    assert r.total_tokens == 225 <= r.budget_tokens
    assert {d.uid for d in r.dropped} == {m.uid for m in ms[:31]}
    assert (r.dropped_count, r.dropped_tokens) == (31, 31 * 25)


def test_dropped_list_is_capped_but_all_are_counted(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(150)])
    r = run(ws, conv, budget_tokens=25, fresh_tail=1)
    assert uids(r) == [ms[-1].uid] and (r.dropped_count, r.dropped_tokens) == (149, 149 * 25)
    assert [d.uid for d in r.dropped] == [m.uid for m in reversed(ms[49:149])]  # the first 100 tried


def test_a_candidate_too_large_is_skipped_and_older_ones_still_fill(ws, conv):
    add(ws, conv, [filler(0), filler(1), "y" * 2_000, filler(3), filler(4)])
    r = run(ws, conv, budget_tokens=100, fresh_tail=1)
    assert seqs(r) == [0, 1, 3, 4] and r.total_tokens == 100
    assert [d.tokens for d in r.dropped] == [500]


def test_older_tool_pairs_are_chosen_together(ws, conv):
    add(ws, conv, [
        "question", ("assistant", "calling search", "s1"), ("tool", "z" * 200, "s1"), filler(3), filler(4),
    ])  # fmt: skip
    # tokens: question 2, call 4, result 50 (the pair: 54), fillers 25 each
    r = run(ws, conv, budget_tokens=25 + 60, fresh_tail=1)
    assert seqs(r) == [0, 3, 4]  # newest first takes filler 3; the pair no longer fits, the question does
    r = run(ws, conv, budget_tokens=50 + 56, fresh_tail=2)
    assert seqs(r) == [0, 1, 2, 3, 4]
    r = run(ws, conv, budget_tokens=50 + 55, fresh_tail=2)
    assert seqs(r) == [1, 2, 3, 4]
    for budget in range(0, 200, 7):
        got = set(seqs(run(ws, conv, budget_tokens=budget, fresh_tail=1)))
        assert (1 in got) == (2 in got)


def test_roots_and_uncovered_messages_in_chronological_order(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(40)])
    leaf_a = summarise(ws, conv, ms[0:10], "first ten messages about the database schema")
    leaf_b = summarise(ws, conv, ms[10:20], "next ten messages about deployment")
    top = summarise(ws, conv, [leaf_a, leaf_b], "schema and deployment discussed")
    leaf_c = summarise(ws, conv, ms[20:25], "five messages about billing")
    r = run(ws, conv, budget_tokens=10_000, fresh_tail=8)
    assert uids(r) == [top.uid, leaf_c.uid] + [m.uid for m in ms[25:]]
    assert [i.depth for i in r.items[:2]] == [1, 0] and r.summaries == 2
    assert r.items[0].descendant_count == 20
    assert r.system_prompt_addition == SUMMARY_NOTE and "lcm_expand" in SUMMARY_NOTE
    # a tight budget keeps the newest older items: the uncovered messages before the summaries
    r = run(ws, conv, budget_tokens=8 * 25 + 7 * 25 + 12, fresh_tail=8)
    assert uids(r) == [leaf_c.uid] + [m.uid for m in ms[25:]]
    assert [d.uid for d in r.dropped] == [top.uid]


def test_relevance_picks_matching_items_then_restores_order(ws, conv):
    topics = ["we chose postgres for the billing database", "the cat photo was cute", "lunch was pasta",
              "kubernetes cluster upgrade is scheduled for friday", "the weather is nice", "coffee machine broke",
              "postgres replication lag alert fired", "nothing much happened", "holiday plans in june"]  # fmt: skip
    ms = add(ws, conv, [t.ljust(T, ".") for t in topics] + [filler(i) for i in range(3)])
    budget = 3 * 25 + 2 * 25
    plain = run(ws, conv, budget_tokens=budget, fresh_tail=3)
    assert seqs(plain) == [7, 8, 9, 10, 11]
    r = run(ws, conv, budget_tokens=budget, fresh_tail=3, prompt="Which database did we pick, postgres?")
    assert seqs(r) == [0, 6, 9, 10, 11]  # the two postgres messages, in chronological order
    assert r.ordering == "relevance" and r.relevance_mode == "bm25"
    assert r.items[0].score == pytest.approx(1.0) and r.items[2].score is None  # tail items are not scored
    assert [d.uid for d in r.dropped][:1] == [ms[8].uid]  # no match: newest first after the matches
    assert run(ws, conv, budget_tokens=budget, fresh_tail=3, prompt="Which database did we pick, postgres?") == r


def test_relevance_can_choose_a_summary_over_newer_messages(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(20)])
    leaf = summarise(ws, conv, ms[:10], "decided: the invoice service moves to rust in march")
    r = run(ws, conv, budget_tokens=4 * 25 + 14, fresh_tail=4, prompt="when does the invoice service move?")
    assert uids(r) == [leaf.uid] + [m.uid for m in ms[16:]]
    assert r.system_prompt_addition == SUMMARY_NOTE


def test_hybrid_relevance_with_the_packaged_embedder(ws, conv):
    add(ws, conv, [t.ljust(T, ".") for t in ("my dog is called rex", "the quarterly report is due",
                                              "a puppy needs walks every day")] + [filler(9)])  # fmt: skip
    relevance = Relevance(SentenceTransformerEmbedder())
    r = run(ws, conv, budget_tokens=25 + 25, fresh_tail=1, prompt="tell me about pets", relevance=relevance)
    assert r.relevance_mode == "hybrid" and len(seqs(r)) == 2
    assert seqs(r)[0] in (0, 2)  # an animal message, found by meaning alone (no shared word)


def test_an_embedder_that_cannot_load_leaves_bm25(ws, conv):
    add(ws, conv, ["alpha beta".ljust(T), "gamma".ljust(T), "delta".ljust(T)])
    relevance = Relevance(SentenceTransformerEmbedder(model_path="/nonexistent"))
    r = run(ws, conv, budget_tokens=50, fresh_tail=1, prompt="gamma", relevance=relevance)
    assert r.relevance_mode == "bm25" and "embedder unavailable" in r.notes[0]
    assert seqs(r) == [1, 2]


def test_bm25_scores():
    assert bm25_scores("postgres", ["postgres here", "nothing", "postgres postgres postgres there"])[1] == 0.0
    scores = bm25_scores("deploying", ["we deployed it", "unrelated"])
    assert scores[0] > 0 == scores[1]  # stemmed like the Markdown index
    assert bm25_scores("the a", ["the a"]) == [0.0]  # stopwords only
    assert bm25_scores("x", []) == []


def test_custom_estimator_and_determinism(ws, conv):
    add(ws, conv, [filler(i) for i in range(10)])
    r = run(ws, conv, budget_tokens=6, fresh_tail=2, estimator=lambda text: 1)
    assert [i.tokens for i in r.items] == [1] * 6 and r.total_tokens == 6
    assert run(ws, conv, budget_tokens=6, fresh_tail=2, estimator=lambda text: 1) == r
    with pytest.raises(InputError, match=r"^estimator:"):
        run(ws, conv, budget_tokens=6, estimator=lambda text: -1)


def test_bad_input(ws, conv):
    with pytest.raises(InputError, match=r"^budget_tokens: must be a whole number from 0"):
        run(ws, conv, budget_tokens=-1)
    with pytest.raises(InputError, match=r"^fresh_tail:"):
        run(ws, conv, budget_tokens=10, fresh_tail=True)
    with pytest.raises(NotFoundError):
        assemble(ws.ports.conversations, ws.ports.summaries, new_id("conversation"), budget_tokens=10)


def test_budget_feeds_assembly(ws, conv):
    add(ws, conv, [filler(i) for i in range(100)])
    budget = allocate(2_000)  # history: 800 tokens = 32 messages
    r = run(ws, conv, budget_tokens=budget.history, fresh_tail=10)
    assert r.total_tokens == 800 and seqs(r) == list(range(68, 100))


def test_everything_covered_still_gives_the_fresh_tail(ws, conv):
    ms = add(ws, conv, [filler(i) for i in range(8)])
    leaf = summarise(ws, conv, ms, "all eight messages")
    r = run(ws, conv, budget_tokens=1_000, fresh_tail=3)
    assert uids(r) == [leaf.uid] + [m.uid for m in ms[-3:]]  # the leaf also covers the tail: it comes first
    assert [i.in_tail for i in r.items] == [False, True, True, True]
