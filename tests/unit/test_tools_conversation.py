"""The conversation tools (lcm_grep, lcm_describe, lcm_expand, context_assemble) through ``cli.tools.call`` on a
real workspace: the test dialogue ingested and compacted (extractive summaries, no LLM) with the real service."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli import tools
from kg.conversation.assemble import AssembledContext
from kg.conversation.tools import ExpandResult, GrepResult, SummaryDescription
from kg.errors import InputError, NotFoundError, ScopeError
from kg.workspace import init_workspace

DIALOGUE = Path(__file__).resolve().parents[1] / "data" / "conversation" / "compaction-dialogue.jsonl"
AGENT = "sales-agent"


@pytest.fixture(scope="module")
def compacted(
    tmp_path_factory: pytest.TempPathFactory, long_dialogue: Callable[[int], list[dict[str, Any]]]
) -> tuple[Path, list[str]]:
    """A workspace whose agent has session ``long`` compacted, and the summaries compaction created."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MABOS_EMBEDDER", "none")
    path = tmp_path_factory.mktemp("conversation") / "ws"
    with init_workspace(path) as ws:
        ws.agents.add(AGENT)
        ws.agents.add("other")
        ws.conversations.ingest(AGENT, "long", long_dialogue(4))
        report = ws.conversations.compact(AGENT, "long")
    mp.undo()
    assert report.compacted and report.created
    return path, list(report.created)


@pytest.fixture
def root(compacted: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The compacted workspace (read-only use), with no embedder."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    return compacted[0]


@pytest.fixture
def summary(compacted: tuple[Path, list[str]]) -> str:
    """A summary of the compacted session."""
    return compacted[1][0]


def call(root: Path, name: str, **args: Any) -> Any:
    return tools.call(name, workspace=root, agent_id=AGENT, **args)


def test_grep_finds_messages_and_summaries(root: Path) -> None:
    found = call(root, "lcm_grep", pattern="Lisbon|Alfama")
    assert isinstance(found, GrepResult) and found.hits
    assert {h.kind for h in found.hits} == {"message", "summary"}
    only = call(root, "lcm_grep", pattern="alfama district", mode="full_text", scope="messages", limit=2)
    assert isinstance(only, GrepResult) and [h.kind for h in only.hits] == ["message", "message"]
    assert only.truncated and "limit" in only.truncated_by
    assert call(root, "lcm_grep", pattern="Lisbon", session_key="long").hits
    with pytest.raises(NotFoundError, match=r"^conversation: "):
        call(root, "lcm_grep", pattern="Lisbon", session_key="nope")
    assert call(root, "lcm_grep", pattern="Lisbon", since="2999-01-01T00:00:00Z").hits == []


def test_describe_and_expand_a_summary(root: Path, summary: str) -> None:
    described = call(root, "lcm_describe", summary_uid=summary)
    assert isinstance(described, SummaryDescription) and described.uid == summary and described.content
    expanded = call(root, "lcm_expand", summary_uid=summary, include_messages=True, max_tokens=1_000_000)
    assert isinstance(expanded, ExpandResult) and expanded.uid == summary and not expanded.truncated
    assert "message" in {i.kind for i in expanded.items}
    capped = call(root, "lcm_expand", summary_uid=summary, include_messages=True, max_tokens=1)
    assert isinstance(capped, ExpandResult) and capped.truncated and "tokens" in capped.truncated_by


def test_assemble_within_a_budget_or_a_window(root: Path) -> None:
    context = call(root, "context_assemble", session_key="long", budget=4000)
    assert isinstance(context, AssembledContext) and context.budget_tokens == 4000
    assert {i.kind for i in context.items} == {"message", "summary"} and context.total_tokens <= 4000
    assert "lcm_expand" in context.system_prompt_addition
    windowed = call(root, "context_assemble", session_key="long", window=20_000, prompt="budget for the offsite")
    assert isinstance(windowed, AssembledContext) and windowed.allocation is not None
    assert windowed.budget_tokens == windowed.allocation.history and windowed.ordering == "relevance"


@pytest.mark.parametrize(
    ("name", "args", "field"),
    [
        ("context_assemble", {"session_key": "long"}, "budget"),  # neither budget nor window
        ("context_assemble", {"session_key": "long", "budget": 10, "window": 10}, "budget"),
        ("context_assemble", {"session_key": "long", "budget": 0}, "budget"),
        ("context_assemble", {"budget": 10}, "session_key"),
        ("lcm_grep", {"pattern": ""}, "pattern"),
        ("lcm_grep", {"pattern": "("}, "pattern"),
        ("lcm_grep", {"pattern": "x", "mode": "fuzzy"}, "mode"),
        ("lcm_grep", {"pattern": "x", "limit": 1001}, "limit"),
        ("lcm_grep", {"pattern": "x", "since": "yesterday"}, "since"),
        ("lcm_describe", {"summary_uid": "nope"}, "summary_uid"),
        ("lcm_expand", {"summary_uid": "{summary}", "max_depth": 65}, "max_depth"),
        ("lcm_expand", {"summary_uid": "{summary}", "max_tokens": 0}, "max_tokens"),
        ("lcm_expand", {"summary_uid": "{summary}", "depth": 2}, "depth"),
    ],
)
def test_malformed_calls_name_the_field(root: Path, summary: str, name: str, args: dict[str, Any], field: str) -> None:
    filled = {k: v.replace("{summary}", summary) if isinstance(v, str) else v for k, v in args.items()}
    with pytest.raises(InputError) as err:
        call(root, name, **filled)
    assert err.value.field == field


def test_another_agents_session_and_summaries_are_not_found(root: Path, summary: str) -> None:
    with pytest.raises(NotFoundError):
        tools.call("context_assemble", workspace=root, agent_id="other", session_key="long", budget=4000)
    with pytest.raises(NotFoundError):
        tools.call("lcm_describe", workspace=root, agent_id="other", summary_uid=summary)
    mine = tools.call("lcm_grep", workspace=root, agent_id="other", pattern="Lisbon")
    assert isinstance(mine, GrepResult) and mine.hits == []


def test_a_bound_agent_cannot_act_as_another(root: Path, summary: str) -> None:
    with pytest.raises(ScopeError):
        tools.call("lcm_grep", workspace=root, agent=AGENT, agent_id="other", pattern="Lisbon")
    with pytest.raises(ScopeError):
        tools.call("lcm_expand", workspace=root, agent="other", agent_id=AGENT, summary_uid=summary)
    bound = tools.call("lcm_describe", workspace=root, agent=AGENT, summary_uid=summary)
    assert isinstance(bound, SummaryDescription) and bound.uid == summary


def test_grep_tool_runs_catastrophic_patterns_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the tool (what the MCP server runs) hung on '(a+)+$' over 34 a's and a '!' with Python's re."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with init_workspace(tmp_path / "ws") as ws:
        ws.agents.add("a1")
        ws.conversations.ingest("a1", "s1", [{"role": "user", "content": "a" * 34 + "!"}])
    found = tools.call("lcm_grep", workspace=tmp_path / "ws", agent_id="a1", pattern="(a+)+$", mode="regex")
    assert isinstance(found, GrepResult) and found.hits == [] and not found.truncated
    with pytest.raises(InputError, match=r"^pattern: .*lookaround"):
        tools.call("lcm_grep", workspace=tmp_path / "ws", agent_id="a1", pattern="a(?=!)", mode="regex")
