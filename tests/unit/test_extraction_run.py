"""The extraction run on a real workspace (SQLite, the shipped ontologies, no embedder: token Jaccard): lineage,
scopes, idempotent re-runs, temporal invalidation, entity resolution and the session summary (issue 21)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from cli import tools
from kg.conversation.tools_models import ExpandResult
from kg.errors import NotFoundError
from kg.extraction import extraction_service
from kg.extraction.deterministic import DeterministicExtractor
from kg.extraction.service import MARK, PROGRESS
from kg.extraction.workspace import reweigh
from kg.models import Category, ExtractedMemory, WindowExtraction
from kg.models.conversation import Message, MessageQuery
from kg.workspace import Workspace
from sync.nightly import run_nightly
from sync.nightly_steps import STEP_NAMES

T1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def xws(quiet_workspace: Callable[[datetime], Workspace]) -> Workspace:
    """A workspace with agents ``a`` and ``b``, no embedder and no LLM, its clock at T1 + 1 hour."""
    return quiet_workspace(T1 + timedelta(hours=1))


def say(ws: Workspace, *texts: str, when: datetime = T1, session: str = "s1", agent: str = "a") -> list[str]:
    result = ws.conversations.ingest(
        agent, session, [{"role": "user", "content": t, "created_at": when} for t in texts]
    )
    conv = ws.ports.conversations.get(result.conversation_uid)
    query = MessageQuery(conversation_uid=conv.uid, from_seq=result.first_seq, to_seq=result.last_seq)
    return [m.uid for m in ws.ports.conversations.messages(query)]


def test_items_and_facts_keep_lineage_scope_and_message_time(xws: Workspace) -> None:
    uids = say(xws, "I live in Berlin. I love hiking.", "My sister lives in Paris.")
    report = extraction_service(xws).extract("a")
    assert report.totals()["windows_done"] == 1
    items = xws.memory.list_items("a")
    assert {i.scope for i in items} == {"agent:a"}
    assert all(i.source == "extraction" and "extracted" in i.tags for i in items)
    assert {t for i in items for t in i.tags if t.startswith("category:")} == {
        "category:profile", "category:preferences", "category:entities"}  # fmt: skip
    assert all(set(i.derived_from) <= set(uids) and i.derived_from for i in items)
    facts = xws.facts.query("a", limit=100)
    assert {(f.subject, f.predicate, f.object) for f in facts} >= {
        ("user", "livesIn", "berlin"), ("user", "likes", "hiking"), ("user", "hasSister", "user_sister"),
        ("user_sister", "livesIn", "paris")}  # fmt: skip
    assert all(f.source == "extraction" and f.valid_from == T1 and f.scope == "agent:a" for f in facts)
    assert all(set(f.derived_from) <= set(uids) and f.derived_from for f in facts)
    assert xws.memory.list_items("b") == [] and xws.facts.query("b", limit=10) == []  # b sees none of it
    logs = list((xws.path / "agents" / "a" / "memory").glob("*.md"))
    assert any(items[0].uid in p.read_text() for p in logs)  # the daily log has the new items


def test_a_rerun_reads_nothing_twice_and_new_messages_only(xws: Workspace) -> None:
    say(xws, "I live in Berlin.", "I love hiking.")
    service = extraction_service(xws)
    first = service.extract("a")
    items, facts = len(xws.memory.list_items("a")), len(xws.facts.query("a", limit=100))
    again = service.extract("a")
    assert again.windows == [] and again.messages == 0
    assert (len(xws.memory.list_items("a")), len(xws.facts.query("a", limit=100))) == (items, facts)
    say(xws, "I prefer green tea.", when=T2)
    third = extraction_service(xws).extract("a")
    assert third.messages == 1 and third.totals()["facts_asserted"] == 1
    conv = xws.ports.conversations.find("a", "s1")
    assert conv is not None and xws.ports.marks.get(MARK + conv.uid) == 3
    assert first.totals()["items_written"] == 2


def test_a_later_move_closes_the_old_home_and_valid_at_answers_for_any_moment(xws: Workspace) -> None:
    say(xws, "I live in Berlin.")
    extraction_service(xws).extract("a")
    say(xws, "I moved to Paris.", when=T2)
    report = extraction_service(xws).extract("a")
    [closed] = report.windows[0].facts_invalidated
    assert (closed.object, closed.by_object) == ("berlin", "paris")
    assert report.totals()["facts_asserted"] == 1 and closed.uid not in report.windows[0].facts_asserted
    home = {f.object: f for f in xws.facts.query("a", subject="user", predicate="livesIn")}
    assert home["berlin"].valid_until == T2 and home["paris"].valid_until is None
    before = xws.facts.query("a", subject="user", predicate="livesIn", valid_at=T2 - timedelta(days=1))
    after = xws.facts.query("a", subject="user", predicate="livesIn", valid_at=T2 + timedelta(days=1))
    assert [f.object for f in before] == ["berlin"] and [f.object for f in after] == ["paris"]
    assert "Facts invalidated" in report.markdown()


def test_an_older_statement_read_later_does_not_reopen_the_past(xws: Workspace) -> None:
    say(xws, "I moved to Paris.", when=T2, session="new")
    extraction_service(xws).extract("a", session="new")
    say(xws, "I live in Berlin.", when=T1, session="old")  # said earlier, extracted later
    extraction_service(xws).extract("a", session="old")
    home = {f.object: f for f in xws.facts.query("a", subject="user", predicate="livesIn")}
    assert home["berlin"].valid_until == T2 and home["paris"].valid_until is None


def test_non_functional_predicates_keep_every_value(xws: Workspace) -> None:
    say(xws, "I love hiking.")
    say(xws, "I love chess.", when=T2)
    extraction_service(xws).extract("a")
    likes = xws.facts.query("a", subject="user", predicate="likes")
    assert sorted(f.object for f in likes) == ["chess", "hiking"]
    assert all(f.valid_until is None for f in likes)


def test_names_resolve_to_existing_subjects_aliases_and_normalised_ids(xws: Workspace) -> None:
    xws.facts.assert_fact("a", "acme_corp", "locatedIn", "berlin")
    xws.facts.assert_fact("a", "paris_fr", "alias", "Paris", object_kind="literal")
    say(xws, "I work at Acme Corp.", "I moved to Paris.")
    report = extraction_service(xws).extract("a")
    got = {(f.predicate, f.object) for f in xws.facts.query("a", subject="user")}
    assert ("worksAt", "acme_corp") in got and ("livesIn", "paris_fr") in got
    methods = {(e.name, e.method) for w in report.windows for e in w.entities}
    assert ("Acme Corp", "normalised") in methods and ("Paris", "alias") in methods


def test_a_session_of_another_agent_is_not_found(xws: Workspace) -> None:
    say(xws, "I live in Berlin.", agent="b", session="private")
    with pytest.raises(NotFoundError):
        extraction_service(xws).extract("a", session="private")
    assert extraction_service(xws).extract("a").windows == []


def test_since_skips_earlier_messages_and_never_rereads(xws: Workspace) -> None:
    say(xws, "I live in Berlin.", "I love hiking.", "I love chess.")
    report = extraction_service(xws).extract("a", since=2)
    assert report.messages == 1
    assert [f.object for f in xws.facts.query("a", limit=10)] == ["chess"]


def test_a_long_conversation_gets_one_session_summary(xws: Workspace) -> None:
    texts = ["My name is Alex.", "We decided to use PostgreSQL.", "I prefer hostels.",
             "I am planning to visit Kyoto."] + [f"fine {i}" for i in range(20)]  # fmt: skip
    say(xws, *texts)
    service = extraction_service(xws)
    report = service.extract("a")
    [uid] = report.summaries
    [summary] = [i for i in xws.memory.list_items("a") if i.uid == uid]
    assert "session-summary" in summary.tags and "PostgreSQL" in summary.content and "Kyoto" in summary.content
    assert service.extract("a").summaries == []  # nothing new: no second summary


def test_deterministic_dedup_skips_the_same_memory_said_again(xws: Workspace) -> None:
    say(xws, "I live in Berlin.")
    extraction_service(xws).extract("a")
    say(xws, "I live in Berlin.")
    report = extraction_service(xws).extract("a")
    decisions = report.totals()["decisions"]
    assert decisions != {"create": 1}, decisions  # the same words again are not a new memory
    profiles = [i for i in xws.memory.list_items("a", include_archived=False) if "category:profile" in i.tags]
    assert len(profiles) == 1


def test_the_nightly_step_extracts_and_saves_its_report(xws: Workspace) -> None:
    say(xws, "I live in Berlin.", "I love hiking.")
    report = run_nightly(xws, ["a"], skip=[name for name in STEP_NAMES if name != "extract"])
    [step] = [s for s in report.steps if s.name == "extract"]
    assert step.status.value == "ok" and step.details["items"] == 2 and step.details["facts"] == 2
    assert list((xws.path / ".mabos" / "extraction-reports").glob("extraction-*-a-nightly.md"))
    again = run_nightly(xws, ["a"], skip=[name for name in STEP_NAMES if name != "extract"])
    assert next(s for s in again.steps if s.name == "extract").details["windows"] == 0


def test_lcm_expand_walks_from_a_memory_back_to_its_messages(xws: Workspace) -> None:
    uids = say(xws, "I live in Berlin.", "I love hiking.")
    extraction_service(xws).extract("a")
    say(xws, "I love hiking.", when=T2)  # the same words again: dedup may replace the first item
    extraction_service(xws).extract("a")
    items = xws.memory.list_items("a")
    profile = next(i for i in items if "category:profile" in i.tags)
    walked = tools.call("lcm_expand", workspace=xws.path, agent_id="a", summary_uid=profile.uid)
    assert isinstance(walked, ExpandResult)
    assert [(i.kind, i.uid, i.content) for i in walked.items] == [("message", uids[0], "I live in Berlin.")]
    with pytest.raises(NotFoundError):
        tools.call("lcm_expand", workspace=xws.path, agent_id="b", summary_uid=profile.uid)
    newest = next(i for i in reversed(items) if "category:preferences" in i.tags and i.archived_at is None)
    deep = tools.call("lcm_expand", workspace=xws.path, agent_id="a", summary_uid=newest.uid)
    assert isinstance(deep, ExpandResult)
    assert uids[1] in {i.uid for i in deep.items}  # directly or through the item it replaced


def test_importance_is_the_spec_formula_and_is_recomputed_with_access_and_age(xws: Workspace) -> None:
    say(xws, "I prefer green tea.")
    extraction_service(xws).extract("a")
    [item] = xws.memory.list_items("a")
    # content: "prefer" 0.15; type preference 0.15; recency 0.1 (just made); no access, no tags
    assert item.importance == pytest.approx(0.4)
    xws.clock.advance(timedelta(hours=200))  # type: ignore[attr-defined]
    for _ in range(5):
        xws.ports.memory.touch([item.uid], now=xws.clock.now())
    assert reweigh(xws, "a") == 1
    [after] = xws.memory.list_items("a")
    assert after.importance == pytest.approx(0.15 + 0.15 + 5 * 0.03 + 0.1 * math.exp(-0.005 * 200), abs=1e-4)
    assert reweigh(xws, "a") == 0  # nothing changed since


def test_progress_reports_messages_done_of_the_total(xws: Workspace) -> None:
    say(xws, *[f"I love topic number {i}." for i in range(5)])
    seen: list[tuple[int, int]] = []
    token = PROGRESS.set(lambda done, total: seen.append((done, total)))
    try:
        extraction_service(xws, window=2).extract("a")
    finally:
        PROGRESS.reset(token)
    assert seen == [(2, 5), (4, 5), (5, 5)]


class _RefusedWindow(DeterministicExtractor):
    """The real extractor, except that a window with the word POISON derives a memory the model refuses (an empty
    abstract), as an oversized one was refused in issue 30."""

    def extract(self, window: Sequence[Message], *, speaker: str) -> WindowExtraction:
        if any("POISON" in m.content for m in window):
            ExtractedMemory(category=Category.EVENTS, abstract="", overview="x", content="x", sources=[window[0].uid])
        return super().extract(window, speaker=speaker)


def test_a_window_the_models_refuse_is_skipped_reported_and_passed(xws: Workspace) -> None:
    say(xws, "POISON I live in Lima.", session="bad")
    say(xws, "I live in Berlin.", session="good")
    service = extraction_service(xws)
    service.extractor = _RefusedWindow()
    report = service.extract("a")
    assert [w.status for w in report.windows] == ["skipped", "done"]
    assert report.windows[0].error is not None and "ValidationError" in report.windows[0].error
    assert [f.object for f in xws.facts.query("a", predicate="livesIn", limit=10)] == ["berlin"]
    assert service.extract("a").totals()["windows"] == 0  # the mark moved past the refused window
