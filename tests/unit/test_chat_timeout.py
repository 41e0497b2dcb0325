"""Every user of the workspace's chat model gets the configured ``[llm] timeout`` (issue 30 leftovers).

Before: the reasoning methods (``reason``, ``cbr_*`` through :func:`cli.tools.cases.method_context`) and dedup of
``memory_admit`` built their chat model with the old default of 30 s, so a CPU model that extraction waits minutes for
timed out there, and conversation memory (``ws.conversations``) kept ``[llm] timeout`` whatever
``MABOS_LLM_TIMEOUT`` said. All now take :func:`kg.conversation.llm.configured_chat`, as extraction does:
``[llm] timeout``, else ``MABOS_LLM_TIMEOUT`` overriding it. No model runs: the chat model is only built (its
endpoint is a closed port), and ``memory_admit``'s writer is watched, not replaced, to see the model it is handed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kg
from cli.tools import ToolContext, run
from cli.tools import memory_admit as admit_module
from cli.tools.cases import method_context
from kg.conversation.llm import DEFAULT_TIMEOUT, OpenAIChatModel
from kg.conversation.summarize import FallbackSummarizer, LLMSummarizer
from kg.memory.write_policy import MemoryWriter
from kg.workspace import Workspace

AGENT = "sales-agent"
CONFIGURED = 300.0


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_TIMEOUT", raising=False)
    made = kg.init_workspace(tmp_path / "ws")
    made.agents.add(AGENT)
    made.close()
    with (tmp_path / "ws" / "mabos.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "smollm2"\ntimeout = {CONFIGURED:g}\n')
    opened = kg.open_workspace(tmp_path / "ws")
    yield opened
    opened.close()


def _admit_chat(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The chat model ``memory_admit`` hands its writer (the real writer runs: nothing to deduplicate against)."""
    seen: list[Any] = []

    class Watched(MemoryWriter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.append(kwargs.get("chat"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(admit_module, "MemoryWriter", Watched)
    run(ToolContext(workspace_obj=ws), "memory_admit", {"agent_id": AGENT, "preset": "off",
                                                        "candidates": [{"content": "Acme renews in May"}]})  # fmt: skip
    [chat] = seen
    return chat


def _summarizing_chat(ws: Workspace) -> Any:
    """The chat model conversation compaction writes summaries with (behind its extractive fall-back)."""
    summarizer = ws.conversations.summarizer
    assert isinstance(summarizer, FallbackSummarizer) and isinstance(summarizer.primary, LLMSummarizer)
    return summarizer.primary.chat


def test_the_configured_timeout_reaches_every_chat_user(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_TIMEOUT != CONFIGURED  # else the test could not tell them apart
    reasoning = method_context(ws, AGENT).chat
    admitting = _admit_chat(ws, monkeypatch)
    for chat in (reasoning, admitting, _summarizing_chat(ws)):
        assert isinstance(chat, OpenAIChatModel) and chat.timeout == CONFIGURED and chat.model == "smollm2"


def test_the_environment_overrides_it_for_them_too(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_LLM_TIMEOUT", "77")
    assert method_context(ws, AGENT).chat.timeout == 77  # type: ignore[union-attr]
    assert _admit_chat(ws, monkeypatch).timeout == 77
    assert _summarizing_chat(ws).timeout == 77  # conversation memory used to keep [llm] timeout whatever the run said


def test_no_tool_builds_a_chat_model_of_its_own() -> None:
    """One path to the chat model: a tool module that builds one itself would skip the configured timeout."""
    tools = Path(__file__).resolve().parents[2] / "cli"
    builders = [str(p.relative_to(tools.parent)) for p in sorted(tools.rglob("*.py"))
                if "chat_model_from_config(" in p.read_text(encoding="utf-8")]  # fmt: skip
    assert builders == []
