"""The deterministic extractor: sentence rules, the six categories, dates, skips, the cap, compression and the
importance formula (issue 21). Pure functions over real Message records; no store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kg.extraction import DeterministicExtractor, compress, importance
from kg.extraction.dates import find_date
from kg.extraction.entities import EntityResolver, Vocabulary, camel, normalise
from kg.extraction.rules import sentences
from kg.ids import new_id
from kg.models.conversation import Message, Role

T = datetime(2023, 5, 9, 10, 0, tzinfo=UTC)  # a Tuesday


def msg(content: str, *, role: Role = Role.USER, seq: int = 0, when: datetime = T, name: str | None = None) -> Message:
    return Message(uid=new_id("message"), agent_id="a", conversation_uid=new_id("conversation"), seq=seq, role=role,
                   content=content, token_count=1, created_at=when, name=name)  # fmt: skip


def extract(*texts: str, cap: int = 20) -> list[tuple[str, str, str]]:
    window = [msg(t, seq=i) for i, t in enumerate(texts)]
    found = DeterministicExtractor(max_memories=cap).extract(window, speaker="user")
    return [(m.category.value, m.kind, m.abstract) for m in found.memories]


def facts(*texts: str) -> set[tuple[str, str, str]]:
    window = [msg(t, seq=i) for i, t in enumerate(texts)]
    return {(f.subject, f.predicate, f.object) for f in DeterministicExtractor().extract(window, speaker="user").facts}


@pytest.mark.parametrize(
    ("text", "category", "kind"),
    [
        ("My name is Alex Moreau.", "profile", "identity"),
        ("I work at Acme Corp.", "profile", "identity"),
        ("I love Italian food.", "preferences", "preference"),
        ("My sister lives in Paris.", "entities", "fact"),
        ("I went to a support group yesterday.", "events", "event"),
        ("I am going to learn Rust next month.", "events", "goal"),
        ("We decided to use PostgreSQL for the ledger.", "events", "decision"),
        ("I learned that backups must be restored to be trusted.", "cases", "lesson"),
        ("I always review the diff before I merge.", "patterns", "skill"),
        ("I have been volunteering at the youth center.", "events", "event"),
        ("I painted a sunset over the lake with my kids.", "events", "event"),
        ("I would love to make a pottery bowl next.", "events", "goal"),
    ],
)
def test_each_category_from_a_first_person_statement(text: str, category: str, kind: str) -> None:
    [(got_category, got_kind, abstract)] = extract(text)
    assert (got_category, got_kind) == (category, kind)
    assert abstract.startswith("user")


def test_preferences_are_aggregated_by_topic() -> None:
    found = extract("I love pizza and I really like sushi.", "I hate olives. I enjoy hiking in the Alps.")
    prefs = [a for c, _, a in found if c == "preferences"]
    assert len(prefs) == 2
    food = next(a for a in prefs if "food and drink" in a)
    assert "likes pizza" in food and "likes sushi" in food and "dislikes olives" in food
    assert any("sports and outdoors" in a and "hiking" in a for a in prefs)


def test_questions_recall_queries_boilerplate_and_non_user_messages_are_skipped() -> None:
    window = [
        msg("Hi there!"),
        msg("Do you remember what I like to eat?", seq=1),
        msg("You are a helpful assistant. I love rules.", role=Role.SYSTEM, seq=2),
        msg("I love helping you.", role=Role.ASSISTANT, seq=3),
        msg('{"result": "I love json"}', seq=4),
        msg("I love tea output", role=Role.TOOL, seq=5),
        msg("[Subagent Context] I love secrets", seq=6),
        msg("Thanks!", seq=7),
    ]
    assert DeterministicExtractor().extract(window, speaker="user").memories == []
    assert sentences("Do you remember X? I like tea. ok") == ["I like tea."]
    assert extract("I am feeling great and calm.", "I was wondering about that thing you said.") == []


def test_at_most_five_memories_per_window_profile_first() -> None:
    texts = [f"I went to museum number {i} yesterday." for i in range(8)] + ["My name is Alex."]
    window = [msg(t, seq=i) for i, t in enumerate(texts)]
    found = DeterministicExtractor().extract(window, speaker="user")
    assert len(found.memories) <= 5
    assert found.memories[0].category.value == "profile"
    # over the cap, events of a speaker share one memory instead of being cut: every statement is kept
    assert {u for m in found.memories for u in m.sources} == {m.uid for m in window}
    few = DeterministicExtractor().extract(window[:3], speaker="user")
    assert [len(m.sources) for m in few.memories] == [1, 1, 1]  # under the cap: one memory per message


def test_relations_become_facts_about_the_user_and_the_relative() -> None:
    assert facts("My sister lives in Paris.") == {("user", "hasSister", "user_sister"),
                                                  ("user_sister", "livesIn", "Paris")}  # fmt: skip
    assert ("anna", "livesIn", "Lyon") in facts("My sister Anna lives in Lyon.")
    assert facts("I have a dog named Rex.") == {("user", "hasDog", "rex"), ("rex", "name", "Rex")}
    assert ("user", "livesIn", "Berlin") in facts("I live in Berlin.")
    assert ("user", "worksAt", "Acme Corp") in facts("I work at Acme Corp.")
    assert ("user", "likes", "pizza") in facts("I love pizza.")


def test_a_named_speaker_is_the_subject() -> None:
    window = [msg("I live in Oslo.", name="Caroline")]
    [fact] = DeterministicExtractor().extract(window, speaker="user").facts
    assert (fact.subject, fact.object) == ("caroline", "Oslo")


@pytest.mark.parametrize(
    ("text", "expected", "precision"),
    [
        ("I went there yesterday", "2023-05-08", "day"),
        ("the day before yesterday", "2023-05-07", "day"),
        ("on 8 May", "2023-05-08", "day"),
        ("on May 8th, 2022", "2022-05-08", "day"),
        ("last week", "week of 2023-05-01", "week"),
        ("two weeks ago", "week of 2023-04-25", "week"),
        ("last month", "2023-04", "month"),
        ("last year", "2022", "year"),
        ("back in 2019", "2019", "year"),
        ("last Friday", "2023-05-05", "day"),
        ("on 2021-03-04", "2021-03-04", "day"),
    ],
)
def test_dates_are_normalised_against_the_message_time(text: str, expected: str, precision: str) -> None:
    found = find_date(text, T)
    assert found is not None
    assert (found.label(), found.precision) == (expected, precision)


def test_an_event_fact_starts_at_the_date_the_sentence_names() -> None:
    [fact] = DeterministicExtractor().extract([msg("I moved to Paris last week.")], speaker="user").facts
    assert (fact.predicate, fact.object) == ("livesIn", "Paris")
    assert fact.valid_from == datetime(2023, 5, 1, tzinfo=UTC)
    assert find_date("no date here", T) is None


def test_compression_of_a_long_conversation_keeps_facts_decisions_preferences_goals_lessons() -> None:
    texts = [
        "Hi!",
        "My name is Alex.",
        "We decided to use PostgreSQL.",
        "I prefer hostels.",
        "I am planning to visit Kyoto in March 2026.",
        "I learned that cheap flights need early booking.",
    ]
    texts += [f"ok {i}" for i in range(20)]
    window = [msg(t, seq=i, when=T + timedelta(minutes=i)) for i, t in enumerate(texts)]
    summary = compress(window, "user")
    assert summary is not None
    text = summary.content
    for part in ("User facts: name is Alex", "Decisions made:", "PostgreSQL", "Preferences: prefers hostels",
                 "Goals:", "Kyoto", "Lessons:"):  # fmt: skip
        assert part in text, part
    assert len(text.split()) <= 100 + 6  # 100 words plus the section markers' dashes
    assert compress(window[:20], "user") is None  # 20 messages or fewer: no summary


def test_compression_stays_within_one_hundred_words() -> None:
    texts = [f"I love dish number {i} with extra topping." for i in range(60)]
    window = [msg(t, seq=i) for i, t in enumerate(texts)]
    summary = compress(window, "user")
    assert summary is not None
    assert len(summary.content.replace("- ", "").split()) <= 101


def test_importance_follows_the_spec_formula() -> None:
    now = T
    # content: prefer (0.15) + decided (0.15) + plan (0.15) capped at 0.4; type preference 0.15; recency 0.1
    assert importance("I prefer and decided on a plan", "preference", created_at=now, now=now) == pytest.approx(0.65)
    # identity words 0.2 + identity type 0.2 + recency 0.1 + 5 accesses 0.15 + critical 0.1 -> 0.75
    assert importance("my name is Alex", "identity", created_at=now, now=now, access_count=5,
                      tags=["critical"]) == pytest.approx(0.75)  # fmt: skip
    old = importance("went hiking", "event", created_at=now - timedelta(hours=200), now=now)
    assert old == pytest.approx(0.05 + 0.1 * 0.36788, abs=1e-4)
    assert importance("prefer decided plan my name lesson", "identity", created_at=now, now=now, access_count=50,
                      tags=["critical"], user_reaction=True) == 1.0  # fmt: skip


def test_entity_resolution_exact_alias_normalised_ontology_then_new() -> None:
    vocab = Vocabulary(labels={"customer": "Customer"})
    resolver = EntityResolver(["acme", "New_York"], [("alex", "Alexander Moreau")], vocab)
    assert resolver.resolve("acme").method == "exact"
    assert (resolver.resolve("Alexander Moreau").entity, resolver.resolve("Alexander Moreau").method) == (
        "alex",
        "alias",
    )
    assert (resolver.resolve("new york").entity, resolver.resolve("new york").method) == ("New_York", "normalised")
    assert resolver.resolve("Customer").method == "ontology"
    made = resolver.resolve("Globex Inc")
    assert (made.entity, made.method) == ("globex_inc", "new")
    assert resolver.resolve("globex inc").entity == "globex_inc"  # learnt
    assert normalise("newYork") == "new_york" and camel("lives in") == "livesIn"
