"""Dedup decisions (rules and LLM), batch-internal dedup and applying decisions without loss.

Real workspace, real store and the real embedding model (loaded once for the module). MOCK NOTICE: the LLM
is the stub chat server of ``tests/stubs/chat_server.py`` (the one thing these tests may not run for real);
it answers what each test scripts, and the real :class:`~kg.conversation.llm.OpenAIChatModel` talks to it.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.conversation.llm import OpenAIChatModel
from kg.memory.admission import MemoryCandidate
from kg.memory.dedup import (
    BATCH_SIMILARITY,
    SYSTEM_PROMPT,
    DedupDecision,
    Deduplicator,
    Neighbour,
    batch_duplicates,
    parse_reply,
)
from kg.memory.dedup_apply import apply_decision, merged_text
from kg.memory.neighbours import Neighbours
from kg.models import MemoryType
from kg.scopes import derived_scope_allowed
from tests.budget import examples
from tests.stubs.chat_server import ChatStub

WINDOW = "The user prefers window seats on long flights"
DOG = "The user's dog is named Rex"
BERLIN = "The user lives in Berlin"


@pytest.fixture
def ws(embedded_ws):
    """Agent ``a`` on the real embedder (the shared ``embedded_ws``)."""
    return embedded_ws


@pytest.fixture
def stub():
    with ChatStub() as server:
        yield server


def stored(ws, *texts: str, **fields) -> list:
    return [ws.memory.store_item("a", t, **fields).item for t in texts]


def decide(ws, text: str, *, chat=None, **fields):
    existing = Neighbours(ws.memory.list_items("a", include_archived=False), ws.embedder)
    return Deduplicator(ws.embedder, chat).decide(MemoryCandidate(content=text, **fields), existing)


# ------------------------------------------------------------------------------------------ rules


def test_nothing_similar_means_create_without_asking_the_llm(ws, stub):
    stored(ws, DOG)
    decision = decide(ws, "The gateway deploy failed on Friday", chat=OpenAIChatModel(stub.url, "stub-model"))
    assert (decision.action, decision.method, decision.neighbours) == ("create", "rules", [])
    assert decision.reason == "no existing memory at similarity >= 0.7"
    assert stub.requests == []


def test_same_words_are_skipped(ws):
    [old] = stored(ws, WINDOW)
    decision = decide(ws, WINDOW + ".")
    assert (decision.action, decision.target_uid, decision.method) == ("skip", old.uid, "rules")
    assert decision.similarity > 0.9


def test_above_point_nine_merges(ws):
    [old] = stored(ws, DOG)
    decision = decide(ws, "The user has a dog called Rex")
    assert (decision.action, decision.target_uid) == ("merge", old.uid)
    assert decision.similarity > 0.9 and "> 0.9" in decision.reason


def test_related_without_new_words_supports(ws):
    [old] = stored(ws, WINDOW)
    decision = decide(ws, "The user prefers window seats")
    assert (decision.action, decision.target_uid) == ("support", old.uid)
    assert 0.7 <= decision.similarity <= 0.9


def test_related_with_new_words_contextualizes_and_names_them(ws):
    [old] = stored(ws, DOG)
    decision = decide(ws, "Rex, the user's dog, is a beagle")
    assert (decision.action, decision.target_uid) == ("contextualize", old.uid)
    assert decision.reason.endswith("adds: beagle")


def test_at_most_three_neighbours_all_above_the_prefilter_best_first(ws):
    stored(ws, WINDOW, "The user prefers window seats on flights", "The user prefers window seats",
           "User prefers a window seat when flying", DOG)  # fmt: skip
    decision = decide(ws, "The user prefers window seats on flights to Tokyo")
    sims = [n.similarity for n in decision.neighbours]
    assert len(sims) == 3 and sims == sorted(sims, reverse=True) and min(sims) >= 0.7
    assert DOG not in [n.content for n in decision.neighbours]


def test_without_an_embedder_similarity_is_token_jaccard_and_noted(ws):
    stored(ws, WINDOW)
    existing = Neighbours(ws.memory.list_items("a"), None)
    decision = Deduplicator(None).decide(MemoryCandidate(content=WINDOW), existing)
    assert decision.action == "skip" and "similarity by token Jaccard: no embedder" in decision.notes


# ------------------------------------------------------------------------------------------ LLM path


def test_the_llm_decides_supersede_and_sees_candidate_and_neighbours(ws, stub):
    [old] = stored(ws, BERLIN, type="fact")
    stub.reply = json.dumps({"action": "supersede", "target": old.uid, "reason": "the user moved",
                             "content": "The user lives in Paris (moved from Berlin)"})  # fmt: skip
    decision = decide(ws, "The user moved from Berlin to Paris", chat=OpenAIChatModel(stub.url, "stub-model"))
    assert (decision.action, decision.method, decision.model) == ("supersede", "llm", "stub-model")
    assert decision.target_uid == old.uid and decision.reason == "the user moved" and decision.notes == []
    [request] = stub.requests
    messages = request.body["messages"]
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    shown = json.loads(messages[1]["content"])
    assert shown["candidate"]["content"] == "The user moved from Berlin to Paris"
    assert [s["id"] for s in shown["stored"]] == [old.uid]
    assert request.body["temperature"] == 0.0


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I think you should merge them.", "not a JSON object"),
        ('{"action": "obliterate", "target": null}', "unknown action 'obliterate'"),
        ('{"action": "merge", "target": "M-00000000000000000000000000"}', "is not one of the stored memories"),
        ('{"action": "merge", "target": "%s", "content": 7}', "content must be a non-empty text"),
    ],
)
def test_a_malformed_llm_reply_falls_back_to_the_rules_and_says_so(ws, stub, reply, problem):
    [old] = stored(ws, DOG)
    stub.reply = reply.replace("%s", old.uid)
    decision = decide(ws, "The user has a dog called Rex", chat=OpenAIChatModel(stub.url, "stub-model"))
    assert (decision.action, decision.method) == ("merge", "rules")
    [note] = decision.notes
    assert problem in note and note.endswith("decided by similarity rules")


def test_an_unreachable_llm_falls_back_to_the_rules(ws):
    stub = ChatStub().start()
    url = stub.url
    stub.stop()  # the port is closed now
    stored(ws, DOG)
    decision = decide(ws, "The user has a dog called Rex", chat=OpenAIChatModel(url, "stub-model", timeout=2))
    assert decision.method == "rules" and decision.action == "merge"
    assert "LLM unavailable" in decision.notes[0]


def test_a_fenced_json_reply_is_accepted():
    near = [Neighbour(uid="M-01HZX3R9V8Y7K6J5H4G3F2E1D0", content="x", similarity=0.8)]
    reply = '```json\n{"action": "support", "target": "M-01HZX3R9V8Y7K6J5H4G3F2E1D0", "reason": "same"}\n```'
    decision, problem = parse_reply(reply, near, model="m")
    assert problem == "" and decision is not None
    assert (decision.action, decision.target_uid, decision.similarity) == ("support", near[0].uid, 0.8)


# ------------------------------------------------------------------------------------------ applying


def test_create_stores_the_candidate(ws):
    candidate = MemoryCandidate(content="Deploys happen on Fridays", type=MemoryType.DECISION, tags=["deploy"])
    decision = decide(ws, candidate.content)
    applied = apply_decision(ws.memory, "a", candidate, decision)
    [item] = ws.memory.list_items("a")
    assert applied.written == [item.uid] and item.type is MemoryType.DECISION and item.tags == ["deploy"]
    assert item.importance == 0.75 and item.source == "conversation"


def test_skip_writes_nothing(ws):
    stored(ws, WINDOW)
    candidate = MemoryCandidate(content=WINDOW)
    applied = apply_decision(ws.memory, "a", candidate, decide(ws, WINDOW))
    assert (applied.written, applied.updated, applied.archived) == ([], [], [])
    assert len(ws.memory.list_items("a")) == 1


def test_merge_writes_a_new_item_and_archives_the_old_one_with_lineage(ws):
    [old] = stored(ws, DOG, type="fact", tags=["pets"])
    ws.clock.advance(timedelta(minutes=5))
    candidate = MemoryCandidate(content="The user has a dog called Rex", tags=["rex"], importance=0.9)
    applied = apply_decision(ws.memory, "a", candidate, decide(ws, candidate.content))
    [new_uid] = applied.written
    new = ws.memory.get("a", new_uid)
    assert new.content == merged_text(DOG, candidate.content) == f"{DOG} | The user has a dog called Rex"
    assert new.derived_from == [old.uid] and new.type is MemoryType.FACT and new.importance == 0.9
    assert new.tags == ["pets", "rex"]
    retired = ws.memory.get("a", old.uid)  # never deleted
    assert retired.archived_at == ws.clock.now() and "merged" in retired.tags and applied.archived == [old.uid]
    assert [i.uid for i in ws.memory.list_items("a", include_archived=False)] == [new_uid]
    # bi-temporal: asked as of before the merge, the old item is what existed
    before = ws.memory.recall("a", "dog Rex", mode="bm25", valid_at=ws.clock.now() - timedelta(minutes=1))
    assert [h.item.uid for h in before.hits] == [old.uid]


def test_support_raises_confidence_and_importance_of_the_existing_item(ws):
    [old] = stored(ws, WINDOW, type="preference", confidence=0.6)
    candidate = MemoryCandidate(content="The user prefers window seats", importance=0.95)
    applied = apply_decision(ws.memory, "a", candidate, decide(ws, candidate.content))
    item = ws.memory.get("a", old.uid)
    assert applied.updated == [old.uid] and applied.written == []
    assert item.confidence == pytest.approx(0.8) and item.importance == 0.95 and item.archived_at is None


def test_contextualize_links_a_new_item_and_keeps_the_old_one(ws):
    [old] = stored(ws, DOG)
    candidate = MemoryCandidate(content="Rex, the user's dog, is a beagle")
    applied = apply_decision(ws.memory, "a", candidate, decide(ws, candidate.content))
    new = ws.memory.get("a", applied.written[0])
    assert new.derived_from == [old.uid] and "context" in new.tags
    assert ws.memory.get("a", old.uid).archived_at is None


@pytest.mark.parametrize(
    ("action", "old_tag", "new_tag"),
    [("supersede", "superseded", None), ("contradict", "contradicted", "contradicts")],
)
def test_supersede_and_contradict_keep_history(ws, stub, action, old_tag, new_tag):
    [old] = stored(ws, BERLIN, type="fact", store="long_term")  # a day later a short-term one has expired
    ws.clock.advance(timedelta(days=1))
    content = "The user lives in Paris" if action == "supersede" else None
    stub.reply = json.dumps({"action": action, "target": old.uid, "reason": "r", "content": content})
    candidate = MemoryCandidate(content="The user moved from Berlin to Paris", type=MemoryType.FACT)
    decision = decide(ws, candidate.content, chat=OpenAIChatModel(stub.url, "stub-model"))
    applied = apply_decision(ws.memory, "a", candidate, decision)
    new = ws.memory.get("a", applied.written[0])
    assert new.content == (content or candidate.content) and new.derived_from == [old.uid]
    assert (new_tag in new.tags) if new_tag else new.tags == []
    retired = ws.memory.get("a", old.uid)
    assert retired.content == BERLIN and retired.archived_at == ws.clock.now() and old_tag in retired.tags
    assert {i.uid for i in ws.memory.list_items("a")} == {old.uid, new.uid}  # both kept


# ------------------------------------------------------------------------------------------ batch dedup


def test_batch_duplicates_by_cosine_name_the_kept_candidate(ws):
    texts = ["Production deploys happen on Fridays", DOG, "production deploys happen on fridays",
             "Deploys to production happen on Fridays"]  # fmt: skip
    dropped = batch_duplicates([MemoryCandidate(content=t) for t in texts], ws.embedder)
    assert [(d.index, d.duplicate_of) for d in dropped] == [(2, 0), (3, 0)]
    assert all(d.similarity >= BATCH_SIMILARITY and "to candidate 0 of the same batch" in d.reason for d in dropped)


def test_a_related_but_distinct_candidate_is_not_a_batch_duplicate(ws):
    texts = [WINDOW, "The user prefers aisle seats on short flights"]
    assert batch_duplicates([MemoryCandidate(content=t) for t in texts], ws.embedder) == []


_WORDS = st.lists(st.sampled_from(["deploy", "friday", "dog", "rex", "window", "seat", "paris"]), min_size=1,
                  max_size=4).map(" ".join)  # fmt: skip


@settings(max_examples=examples(100), deadline=None)
@given(texts=st.lists(_WORDS, max_size=10), threshold=st.sampled_from([0.5, 0.85, 1.0]))
def test_batch_dedup_never_drops_a_candidate_without_a_kept_original_and_a_reason(texts, threshold):
    # pure: token Jaccard (no embedder), so hypothesis can try many batches quickly
    dropped = batch_duplicates([MemoryCandidate(content=t) for t in texts], None, threshold=threshold)
    gone = {d.index for d in dropped}
    assert len(gone) == len(dropped)
    for d in dropped:
        assert d.duplicate_of < d.index and d.duplicate_of not in gone
        assert d.similarity >= threshold and d.reason
    kept = [i for i in range(len(texts)) if i not in gone]
    assert len(kept) + len(dropped) == len(texts)
    if texts:
        assert 0 in kept


# ------------------------------------------------------------------------------------------ scopes (issue 18)


def test_a_private_candidate_never_merges_into_a_global_memory(ws):
    """Before issue 18 the merge wrote the private candidate's text and tags into the global neighbour's scope."""
    [old] = stored(ws, DOG, type="fact", tags=["pets"], scope="global")
    candidate = MemoryCandidate(content="The user has a dog called Rex", tags=["private-note"], importance=0.9)
    decision = decide(ws, candidate.content)
    assert decision.action == "merge" and decision.target_uid == old.uid
    applied = apply_decision(ws.memory, "a", candidate, decision)
    [new] = [ws.memory.get("a", uid) for uid in applied.written]
    assert applied.action == "create" and applied.archived == [] and applied.updated == []
    assert (new.scope, new.content, new.derived_from) == ("agent:a", candidate.content, [])
    assert "merge only within one scope" in applied.notes[0] and "global" in applied.notes[0]
    assert ws.memory.get("a", old.uid) == old.model_copy(update={"updated_at": ws.memory.get("a", old.uid).updated_at})
    assert [i.content for i in ws.memory.list_items("a", scope="global")] == [DOG]


def test_support_never_copies_private_tags_into_a_wider_scope(ws):
    ws.agents.add("b")
    ws.scopes.grant("a", "project:x", granted_by="test")
    [old] = stored(ws, WINDOW, type="preference", confidence=0.6, tags=["travel"], scope="project:x")
    candidate = MemoryCandidate(content="The user prefers window seats", tags=["a-only"], importance=0.95)
    decision = decide(ws, candidate.content)
    assert decision.action == "support"
    applied = apply_decision(ws.memory, "a", candidate, decision)
    kept = ws.memory.get("a", old.uid)
    assert (kept.tags, kept.confidence, kept.importance) == (["travel"], 0.6, old.importance)
    assert applied.action == "create" and ws.memory.get("a", applied.written[0]).scope == "agent:a"


def test_support_in_the_same_scope_still_strengthens(ws):
    ws.scopes.grant("a", "project:x", granted_by="test")
    [old] = stored(ws, WINDOW, type="preference", confidence=0.6, scope="project:x")
    candidate = MemoryCandidate(content="The user prefers window seats", scope="project:x", tags=["seat"])
    applied = apply_decision(ws.memory, "a", candidate, decide(ws, candidate.content))
    assert applied.action == "support" and applied.updated == [old.uid] and applied.notes == []
    assert ws.memory.get("a", old.uid).tags == ["seat"]


SCOPE_MIX = ("global", "agent:a", "project:x", "user:u")


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old_scope=st.sampled_from(SCOPE_MIX), new_scope=st.sampled_from((*SCOPE_MIX, None)),
       action=st.sampled_from(["merge", "support", "contextualize", "contradict", "supersede"]))  # fmt: skip
def test_property_a_dedup_write_is_never_wider_than_its_sources(tmp_path_factory, monkeypatch, old_scope, new_scope,
                                                                action):  # fmt: skip
    """Every decision that relates a candidate to a stored memory, over every pair of scopes: what is written
    stays within the narrowest scope of its sources, and no scope but the candidate's own changes unless the
    two share it."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")  # the decision is given: no similarity is computed
    space = kg.init_workspace(tmp_path_factory.mktemp("dedup") / "ws")
    try:
        space.agents.add("a")
        for scope in ("project:x", "user:u"):
            space.scopes.grant("a", scope, granted_by="test")
        old = space.memory.store_item("a", "secret old text zqxold", tags=["old"], scope=old_scope).item
        target = new_scope or "agent:a"
        others = [s for s in SCOPE_MIX if s != target]
        before = {s: [i.model_dump() for i in space.memory.list_items("a", scope=s)] for s in others}
        candidate = MemoryCandidate(content="candidate text zqxnew", tags=["new"], scope=new_scope)
        decision = DedupDecision(action=action, target_uid=old.uid, method="llm", model="test", reason="given",
                                 content="merged zqxold and zqxnew")  # fmt: skip
        applied = apply_decision(space.memory, "a", candidate, decision)
        for uid in applied.written:
            item = space.memory.get("a", uid)
            sources = [target, *(space.memory.get("a", p).scope for p in item.derived_from)]
            assert item.scope == target and derived_scope_allowed(item.scope, sources)
            assert "zqxold" not in item.content or old_scope == target
        if old_scope != target:
            assert {s: [i.model_dump() for i in space.memory.list_items("a", scope=s)] for s in others} == before
            assert applied.action == "create" and applied.notes
    finally:
        space.close()
