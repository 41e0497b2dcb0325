"""The LLM extractor and the LLM dedup decisions of an extraction run.

The LLM is the one thing tests may not run: the local stub server (tests/stubs/chat_server.py, 127.0.0.1) returns
recorded replies in the seed's format (``memories`` with category, abstract, overview, content; plus ``facts``)
and the seed's dedup decisions. Everything else is real: the workspace, SQLite, admission and dedup code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.extraction import extraction_service
from kg.extraction.llm import parse_reply
from kg.extraction.service import MARK
from kg.workspace import Workspace
from tests.stubs.chat_server import ChatStub, completion

T1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def memory(category: str, abstract: str) -> dict[str, str]:
    return {"category": category, "abstract": abstract, "overview": f"## {category}\n- {abstract}",
            "content": f"The user said: {abstract}."}  # fmt: skip


SIX = [memory("profile", "Alex is a nurse in Berlin"), memory("preferences", "Likes green tea and hiking"),
       memory("entities", "Sister Anna lives in Lyon"), memory("events", "Ran a marathon on 2024-04-28"),
       memory("cases", "A flaky backup was fixed by testing restores"),
       memory("patterns", "Reviews every diff before merging")]  # fmt: skip


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as server:
        yield server


@pytest.fixture
def lws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stub: ChatStub) -> Iterator[Workspace]:
    """A workspace whose LLM is the stub (through MABOS_LLM_URL), no embedder, agent ``a``."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.setenv("MABOS_LLM_URL", stub.url)
    monkeypatch.setenv("MABOS_LLM_MODEL", "stub-model")
    ws = kg.init_workspace(tmp_path / "ws", clock=FixedClock(T1 + timedelta(hours=1)))
    ws.agents.add("a")
    yield ws
    ws.close()


def say(ws: Workspace, *texts: str) -> None:
    ws.conversations.ingest("a", "s1", [{"role": "user", "content": t, "created_at": T1} for t in texts])


def reply(memories: list[dict[str, str]], facts: list[dict[str, Any]] | None = None) -> str:
    return "```json\n" + json.dumps({"memories": memories, "facts": facts or []}) + "\n```"


def test_every_category_with_its_three_levels_at_most_five_per_window(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = [reply(SIX), reply(SIX[5:])]
    say(lws, "I am Alex, a nurse in Berlin.", "I like green tea.")
    say(lws, "I review every diff.")
    report = extraction_service(lws, extractor="llm", admission=None, window=2).extract("a")
    assert report.extractor == "llm" and report.model == "stub-model"
    assert [w.candidates for w in report.windows] == [5, 1]  # the sixth of the first reply is over the cap
    items = lws.memory.list_items("a")
    by_category = {t.split(":", 1)[1]: i for i in items for t in i.tags if t.startswith("category:")}
    assert set(by_category) == {"profile", "preferences", "entities", "events", "cases", "patterns"}
    assert by_category["profile"].type.value == "identity" and by_category["cases"].type.value == "lesson"
    profile = by_category["profile"].content
    assert profile.startswith("Alex is a nurse in Berlin\n\n## profile") and "The user said:" in profile
    request = stub.requests[0].body
    assert "Maximum 5 memories per extraction" in request["messages"][0]["content"]
    assert "I am Alex, a nurse in Berlin." in request["messages"][1]["content"]


def test_llm_facts_are_mapped_resolved_and_invalidated(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = [
        reply([], [{"subject": "user", "predicate": "lives in", "object": "Berlin", "confidence": 0.9}]),
        reply([], [{"subject": "user", "predicate": "livesIn", "object": "Paris", "confidence": 0.8}]),
    ]
    say(lws, "I live in Berlin.")
    extraction_service(lws, extractor="llm").extract("a")
    lws.clock.set(T1 + timedelta(days=30))  # type: ignore[attr-defined]
    lws.conversations.ingest("a", "s1", [{"role": "user", "content": "I moved to Paris.",
                                          "created_at": T1 + timedelta(days=30)}])  # fmt: skip
    report = extraction_service(lws, extractor="llm").extract("a")
    facts = {f.object: f for f in lws.facts.query("a", subject="user", predicate="livesIn")}
    assert facts["berlin"].valid_until == T1 + timedelta(days=30) and facts["paris"].confidence == 0.8
    assert report.totals()["facts_invalidated"] == 1


def test_a_malformed_reply_is_retried_once(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = ["Sure! Here are the memories you asked for.", reply(SIX[:1])]
    say(lws, "I am Alex, a nurse in Berlin.")
    report = extraction_service(lws, extractor="llm", admission=None).extract("a")
    assert len(stub.requests) == 2 and report.totals()["items_written"] == 1


def test_two_bad_replies_fail_the_window_and_leave_it_for_the_next_run(lws: Workspace, stub: ChatStub) -> None:
    bad = json.dumps({"memories": [{"category": "gossip", "abstract": "x", "overview": "x", "content": "x"}]})
    stub.reply = ["not json", bad, reply(SIX[:2])]
    say(lws, "I am Alex, a nurse in Berlin.", "I like green tea.")
    failed = extraction_service(lws, extractor="llm", admission=None).extract("a")
    assert failed.totals()["windows_failed"] == 1 and "memories.0.category" in failed.windows[0].error  # type: ignore[operator]
    conv = lws.store.conversations.find("a", "s1")
    assert conv is not None and lws.store.marks.get(MARK + conv.uid) == 0  # nothing half written
    assert lws.memory.list_items("a") == []
    retried = extraction_service(lws, extractor="llm", admission=None).extract("a")
    assert retried.totals()["items_written"] == 2 and lws.store.marks.get(MARK + conv.uid) == 2


def test_parse_reply_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        parse_reply("nothing here")
    with pytest.raises(ValueError, match=r"memories\.0\.abstract"):
        parse_reply('{"memories": [{"category": "profile", "overview": "o", "content": "c"}]}')
    assert parse_reply('{"memories": []}').facts == []


@pytest.mark.parametrize("action", ["create", "merge", "skip", "support", "contextualize", "contradict", "supersede"])
def test_each_dedup_decision_of_the_model_is_carried_out(lws: Workspace, stub: ChatStub, action: str) -> None:
    tea = memory("preferences", "Likes green tea in the morning")
    asked: list[dict[str, Any]] = []

    def responder(body: Any) -> tuple[int, bytes]:
        system = body["messages"][0]["content"]
        if system.startswith("You keep the long-term memory"):  # the dedup prompt
            stored = json.loads(body["messages"][1]["content"])["stored"]
            asked.append(stored[0])
            answer = {"action": action, "target": None if action == "create" else stored[0]["id"],
                      "reason": f"stub says {action}", "content": "Likes green tea, mornings and evenings"
                      if action in ("merge", "supersede") else None,
                      "context_label": "evening" if action == "contextualize" else None}  # fmt: skip
            return 200, completion(json.dumps(answer))
        return 200, completion(reply([tea]))

    stub.responder = responder
    say(lws, "I like green tea in the morning.")
    extraction_service(lws, admission=None).extract("a")
    [old] = lws.memory.list_items("a")
    say(lws, "I like green tea in the morning.")
    report = extraction_service(lws, admission=None).extract("a")
    assert asked and asked[0]["id"] == old.uid
    window = report.windows[0]
    assert window.decisions == {action: 1}
    active = lws.memory.list_items("a", include_archived=False)
    retired = {i.uid: i for i in lws.memory.list_items("a") if i.archived_at is not None}
    new = [i for i in active if i.uid != old.uid]
    if action in ("create", "contextualize"):
        assert len(active) == 2 and len(new) == 1
    if action == "contextualize":
        assert "context" in new[0].tags and new[0].derived_from[0] == old.uid
        assert "context:evening" in new[0].tags  # the seed's context label
    if action in ("skip", "support"):
        assert [i.uid for i in active] == [old.uid] and not window.written
    if action == "support":
        assert window.updated == [old.uid]
    if action in ("merge", "contradict", "supersede"):
        tag = {"merge": "merged", "contradict": "contradicted", "supersede": "superseded"}[action]
        assert old.uid in retired and tag in retired[old.uid].tags
        assert len(new) == 1 and new[0].derived_from[0] == old.uid and len(new[0].derived_from) == 2
    if action in ("merge", "supersede"):
        assert new[0].content == "Likes green tea, mornings and evenings"
