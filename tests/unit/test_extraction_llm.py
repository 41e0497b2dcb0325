"""The LLM extractor and the LLM dedup decisions of an extraction run.

The LLM is the one thing tests may not run: the local stub server (tests/stubs/chat_server.py, 127.0.0.1) returns
recorded replies in the seed's format (``memories`` with category, abstract, overview, content; plus ``facts``)
and the seed's dedup decisions, refuses a ``response_format`` or never answers when a test says so. Everything
else is real: the workspace, SQLite, admission and dedup code. tests/integration/test_llm_extraction.py runs the
same path against a real model.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.conversation.llm import OpenAIChatModel
from kg.errors import InputError, WorkspaceError
from kg.extraction import extraction_service
from kg.extraction.llm import SCHEMA, LLMExtractor, _format_refused, parse_reply
from kg.extraction.service import MARK
from kg.models.conversation import MessageQuery
from kg.recall.openai_http import HTTPStatusError
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
def lws(module_ws_path: Path, monkeypatch: pytest.MonkeyPatch, stub: ChatStub) -> Iterator[Workspace]:
    """A new workspace whose LLM is the stub (through MABOS_LLM_URL), no embedder, agent ``a``; at one path for the
    module (tests/unit/conftest.py, :func:`module_ws_path`: the ontology files are parsed once)."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.setenv("MABOS_LLM_URL", stub.url)
    monkeypatch.setenv("MABOS_LLM_MODEL", "stub-model")
    shutil.rmtree(module_ws_path, ignore_errors=True)
    ws = kg.init_workspace(module_ws_path, clock=FixedClock(T1 + timedelta(hours=1)))
    try:
        ws.agents.add("a")
        yield ws
    finally:
        ws.close()
        shutil.rmtree(module_ws_path)


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
    conv = lws.ports.conversations.find("a", "s1")
    assert conv is not None and lws.ports.marks.get(MARK + conv.uid) == 0  # nothing half written
    assert lws.memory.list_items("a") == []
    retried = extraction_service(lws, extractor="llm", admission=None).extract("a")
    assert retried.totals()["items_written"] == 2 and lws.ports.marks.get(MARK + conv.uid) == 2


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


# --- structured output, tolerant parsing, sanity checks, timeouts and dates (issue 32) ---------------------------


def fact(subject: str, predicate: str, obj: str, *, when: str = "", replaces: str = "") -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": obj, "confidence": 0.9, "when": when,
            "replaces": replaces}  # fmt: skip


def test_the_request_asks_for_the_json_schema(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = reply([], [fact("user", "livesIn", "Berlin")])
    say(lws, "I live in Berlin.")
    extraction_service(lws, extractor="llm", admission=None).extract("a")
    body = stub.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema == SCHEMA and schema["required"] == ["facts", "memories"]
    assert schema["properties"]["facts"]["items"]["required"] == ["subject", "predicate", "object", "confidence",
                                                                  "when", "replaces"]  # fmt: skip
    assert body["max_tokens"] > 0 and body["temperature"] == 0.0


def test_a_server_refusing_the_schema_is_asked_with_json_object_then_nothing(lws: Workspace, stub: ChatStub) -> None:
    seen: list[Any] = []

    def responder(body: Any) -> tuple[int, bytes]:
        seen.append(body.get("response_format"))
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema" or (kind == "json_object" and len(seen) < 4):
            return 400, b'{"error": {"message": "response_format not supported"}}'
        return 200, completion(reply([], [fact("user", "livesIn", "Berlin")]))

    stub.responder = responder
    say(lws, "I live in Berlin.")
    say(lws, "I like tea.")
    report = extraction_service(lws, extractor="llm", admission=None, window=1).extract("a")
    assert [w.status for w in report.windows] == ["done", "done"]
    assert [f and f["type"] for f in seen] == ["json_schema", "json_object", "json_object", None, None]
    assert "schema" in seen[1] and "schema" not in seen[2]  # llama.cpp takes json_object with a schema
    assert report.totals()["facts_asserted"] == 1  # "Berlin" is not in the second window: refused there
    assert report.totals()["facts_refused"] == 1


@pytest.mark.parametrize(
    "text",
    [
        'Sure! Here it is: {"memories": [], "facts": []} Hope that helps.',
        '```json\n{"memories": [], "facts": []}\n```\nAnything else?',
        '```\n{"memories": [], "facts": []}\n```',
        '{"memories": [{"category": "profile", "abstract": "Lives in\tBerlin", "overview": "line one\nline two",'
        ' "content": "c"}], "facts": []}',  # raw control characters inside strings
        'Thinking: {"step": 1} then {"memories": [], "facts": []}',  # an object of another shape first
    ],
)
def test_parse_reply_tolerates_words_fences_and_control_characters(text: str) -> None:
    parsed = parse_reply(text)
    assert parsed.facts == []
    if "Lives in" in text:
        assert parsed.memories[0].overview == "line one\nline two"


def test_parse_reply_reports_truncated_json() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_reply('{"memories": [{"category": "profile", "abstract": "Lives in Ber')
    # SmolLM2-135M's reply cut at max_tokens: its first fact is a whole object, but not the reply
    cut = '{"facts":[{"subject":"user","predicate":"livesIn","object":"Lisbon","confidence":1.5}], "memories":[{"ca'
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_reply(cut)
    assert (
        parse_reply(cut + 'tegory": "profile", "abstract": "a", "overview": "o", "content": "c"}]}').facts[0].confidence
        == 1.5
    )


def test_invented_facts_are_refused_and_counted(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = reply([], [
        fact("user", "lives in", "Berlin"),                                       # kept
        fact("i_am_not_sure_yet_but_i_d_love_to_move", "livesIn", "Berlin"),      # invented subject
        fact("user", "oneLineIndex", "Berlin"),                                   # invented predicate
        fact("user", "worksAt", "Google"),                                        # object not in the window
        fact("user", "likes", "coffee, I drink three cups a day"),                # runs across a clause
        fact("Anna", "hasSister", "Lena"),                                        # names written in the window
    ])  # fmt: skip
    say(lws, "I live in Berlin and I like coffee, I drink three cups a day.", "Anna has a sister, Lena.")
    report = extraction_service(lws, extractor="llm", admission=None).extract("a")
    stored = {(f.subject, f.predicate, f.object) for f in lws.facts.query("a")}
    assert stored == {("user", "livesIn", "berlin"), ("anna", "hasSister", "lena")}
    refused = report.windows[0].facts_refused
    assert report.totals()["facts_refused"] == 4 and len(refused) == 4
    assert "subject 'i_am_not_sure_yet_but_i_d_love_to_move'" in refused[0]
    assert "predicate 'oneLineIndex' is not in the ontology" in refused[1]
    assert "'Google' is not found in the window" in refused[2] and "runs across a clause" in refused[3]
    assert "## Facts refused by the sanity checks" in report.markdown()


def test_a_predicate_of_the_workspace_ontology_is_accepted(lws: Workspace, stub: ChatStub) -> None:
    (lws.path / "ontologies" / "pets.jsonld").write_text(json.dumps({
        "@context": {"owl": "http://www.w3.org/2002/07/owl#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#"},
        "@graph": [{"@id": "http://example.org/pets#feeds", "@type": "owl:ObjectProperty",
                    "rdfs:label": "gives food to"}]}))  # fmt: skip
    stub.reply = reply([], [fact("user", "gives food to", "Rex"), fact("user", "walks", "Rex")])
    say(lws, "I feed Rex every morning and walk him.")
    report = extraction_service(lws, extractor="llm", admission=None).extract("a")
    assert [(f.predicate, f.object) for f in lws.facts.query("a")] == [("feeds", "rex")]
    assert report.totals()["facts_refused"] == 1


def test_a_timeout_retries_then_fails_the_window_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    stub: ChatStub) -> None:  # fmt: skip
    """The stub never answers the first two requests (it waits for the test's end); the client gives up after
    ``MABOS_LLM_TIMEOUT`` seconds each time, the window fails, and the next run (the model answering) writes it."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.setenv("MABOS_LLM_URL", stub.url)
    monkeypatch.setenv("MABOS_LLM_TIMEOUT", "0.2")
    ws = kg.init_workspace(tmp_path / "ws", clock=FixedClock(T1))
    ws.agents.add("a")

    def responder(body: Any) -> tuple[int, bytes]:
        if len(stub.requests) <= 2:
            stub.release.wait(10)  # longer than the client waits: it gives up first
        return 200, completion(reply([memory("profile", "Lives in Berlin")], [fact("user", "livesIn", "Berlin")]))

    stub.responder = responder
    try:
        say(ws, "I live in Berlin.")
        failed = extraction_service(ws, extractor="llm", admission=None).extract("a")
        window = failed.windows[0]
        assert window.status == "failed" and "timed out" in (window.error or "")
        assert "after 2 attempts" in (window.error or "") and len(stub.requests) == 2
        conv = ws.ports.conversations.find("a", "s1")
        assert conv is not None and ws.ports.marks.get(MARK + conv.uid) == 0
        assert ws.memory.list_items("a") == [] and ws.facts.query("a") == []
        done = extraction_service(ws, extractor="llm", admission=None).extract("a")
        assert done.windows[0].status == "done" and ws.ports.marks.get(MARK + conv.uid) == 1
        assert [f.object for f in ws.facts.query("a")] == ["berlin"]
    finally:
        ws.close()


def test_timeout_and_attempts_come_from_the_llm_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_TIMEOUT", raising=False)
    ws = kg.init_workspace(tmp_path / "ws")
    with (ws.path / "mabos.toml").open("a", encoding="utf-8") as f:
        f.write('\n[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "smollm2"\ntimeout = 300\nattempts = 3\n')
    ws.close()
    ws = kg.open_workspace(tmp_path / "ws")
    try:
        service = extraction_service(ws, extractor="llm")
        extractor = service.extractor
        assert isinstance(extractor, LLMExtractor) and extractor.attempts == 3
        assert isinstance(extractor.chat, OpenAIChatModel) and extractor.chat.timeout == 300
        assert extractor.chat.model == "smollm2"
        monkeypatch.setenv("MABOS_LLM_TIMEOUT", "soon")
        with pytest.raises(InputError, match="MABOS_LLM_TIMEOUT: must be a number of seconds"):
            extraction_service(ws, extractor="llm")
    finally:
        ws.close()
    config = tmp_path / "ws" / "mabos.toml"
    config.write_text(config.read_text().replace("[conversation]\n", '[conversation]\nllm_url = "http://h:10/v1"\n'))
    with pytest.raises(WorkspaceError, match=r"llm\.base_url: differs from conversation\.llm_url"):
        kg.open_workspace(tmp_path / "ws")


def test_llm_facts_take_their_dates_and_lineage_from_the_text(lws: Workspace, stub: ChatStub) -> None:
    stub.reply = reply([], [fact("user", "livesIn", "Paris", when="last week"), fact("user", "worksAt", "KPMG"),
                            fact("user", "comesFrom", "Porto", when="next year")])  # fmt: skip
    lws.conversations.ingest("a", "s1", [
        {"role": "user", "content": "I moved to Paris last week.", "created_at": T1},          # a Wednesday
        {"role": "user", "content": "I work at KPMG since 2019.", "created_at": T1 + timedelta(days=2)},
        {"role": "user", "content": "I am from Porto.", "created_at": T1 + timedelta(days=3)},
    ])  # fmt: skip
    extraction_service(lws, extractor="llm", admission=None).extract("a")
    messages = {m.content: m.uid for m in lws.ports.conversations.messages(MessageQuery(
        conversation_uid=lws.ports.conversations.find("a", "s1").uid))}  # type: ignore[union-attr]  # fmt: skip
    facts = {f.predicate: f for f in lws.facts.query("a")}
    assert facts["livesIn"].valid_from == datetime(2024, 4, 22, tzinfo=UTC)  # the Monday of the week before
    assert facts["livesIn"].derived_from == [messages["I moved to Paris last week."]]
    assert facts["worksAt"].valid_from == datetime(2019, 1, 1, tzinfo=UTC)  # from its sentence: "since 2019"
    # "next year" is not in the message that says Porto: that message's time stands
    assert facts["comesFrom"].valid_from == T1 + timedelta(days=3)


def test_the_model_may_say_a_statement_replaces_an_earlier_value(lws: Workspace, stub: ChatStub) -> None:
    """``replaces`` closes the earlier fact at the new one's start when the predicate allows one value at a time
    (the ontology's functional predicates and the defaults); for a predicate holding several values, or a value not
    in the text, the closing is refused and counted."""
    stub.reply = [
        reply([], [fact("user", "worksAt", "Deloitte"), fact("user", "speaks", "Danish")]),
        reply([], [fact("user", "worksAt", "KPMG", when="in August", replaces="Deloitte"),
                   fact("user", "speaks", "Dutch", replaces="Danish"),
                   fact("user", "livesIn", "Ghent", replaces="Narnia")]),
    ]  # fmt: skip
    lws.conversations.ingest("a", "s1", [{"role": "user", "content": "I work at Deloitte. I speak Danish.",
                                          "created_at": T1}])  # fmt: skip
    extraction_service(lws, extractor="llm", admission=None).extract("a")
    later = T1 + timedelta(days=120)
    lws.conversations.ingest("a", "s1", [{"role": "user", "created_at": later, "content":
                                          "I left Deloitte: in August I joined KPMG. I speak Dutch now. "
                                          "I live in Ghent."}])  # fmt: skip
    report = extraction_service(lws, extractor="llm", admission=None).extract("a")
    facts = {(f.predicate, f.object): f for f in lws.facts.query("a")}
    august = datetime(2024, 8, 1, tzinfo=UTC)
    assert facts[("worksAt", "deloitte")].valid_until == august and facts[("worksAt", "kpmg")].valid_from == august
    assert facts[("speaks", "danish")].valid_until is None  # one may speak several languages
    refused = report.windows[0].facts_refused
    assert any("speaks Danish: not closed, speaks may hold several values" in r for r in refused)
    assert any("'Narnia' is not found in the window" in r for r in refused)


def test_a_refused_response_format_is_told_from_other_errors() -> None:
    """llama-cpp-python's server answers json_schema with 500 and a validation error naming response_format (seen
    against the real server); a 500 that names nothing of the request is a failure, not a refusal."""
    refused = HTTPStatusError("llm: x answered HTTP 500: {'loc': ('body', 'response_format', 'type')}", 500)
    assert _format_refused(refused) and _format_refused(HTTPStatusError("llm: x answered HTTP 422", 422))
    assert not _format_refused(HTTPStatusError("llm: x answered HTTP 500 Internal Server Error", 500))
    assert not _format_refused(HTTPStatusError("llm: x answered HTTP 401 Unauthorized", 401))
