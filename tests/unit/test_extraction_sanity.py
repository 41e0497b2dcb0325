"""The sanity checks every extracted fact passes (kg/extraction/sanity.py): real vocabulary objects, no model."""

from __future__ import annotations

import pytest

from kg.extraction.entities import Vocabulary
from kg.extraction.sanity import Refusal, SanityCheck, found_in, words
from kg.models import FactCandidate

TEXT = "I'm Jules, a freelance illustrator based in Ghent. My sister Anna works at the Louvre. I love hiking."
SOURCE = ["MS-01M8BT3GFC2TK4GRHG6G8A610R"]


def candidate(subject: str, predicate: str, obj: str, *, entity: bool = True) -> FactCandidate:
    return FactCandidate(subject=subject, predicate=predicate, object=obj, object_is_entity=entity, sources=SOURCE)


@pytest.fixture
def check() -> SanityCheck:
    vocabulary = Vocabulary(properties={"feeds": "feeds", "gives_food_to": "feeds"})
    return SanityCheck(vocabulary, speakers=["user", "Jules"], known=["user_sister"])


@pytest.mark.parametrize(
    ("subject", "predicate", "obj", "kept"),
    [
        ("I", "based in", "Ghent", ("user", "livesIn", "Ghent")),
        ("Jules", "occupation", "freelance illustrator", ("user", "occupation", "freelance illustrator")),
        ("Anna", "works for", "the Louvre", ("Anna", "worksAt", "the Louvre")),
        ("user", "hasSister", "user_sister", ("user", "hasSister", "user_sister")),
        ("user", "has_sister", "Anna", ("user", "hasSister", "Anna")),
        ("user", "loves", "hiking", ("user", "likes", "hiking")),
        ("user", "gives food to", "Anna", ("user", "feeds", "Anna")),
    ],
)
def test_facts_written_in_the_text_with_known_predicates_pass(
    check: SanityCheck, subject: str, predicate: str, obj: str, kept: tuple[str, str, str]
) -> None:
    result = check.check(candidate(subject, predicate, obj), TEXT)
    assert not isinstance(result, Refusal), result
    assert (result.subject, result.predicate, result.object) == kept


@pytest.mark.parametrize(
    ("subject", "predicate", "obj", "reason"),
    [
        ("i_am_not_sure_yet_but_i_d_love_to_move", "livesIn", "Ghent", "subject"),
        ("Bob", "livesIn", "Ghent", "subject"),  # a name the text does not hold
        ("she", "livesIn", "Ghent", "subject"),  # a pronoun is not a name
        ("user", "oneLineIndex", "Ghent", "predicate"),
        ("user", "hasSpaceship", "Ghent", "predicate"),  # has<not a relation>
        ("user", "livesIn", "Paris", "not found in the window"),
        ("user", "likes", "hiking, I go every weekend", "runs across a clause"),
        ("user", "name", "Jules", "repeats the subject"),
        ("Anna", "worksAt", "a very large famous museum in Paris", "longer than 4 words"),
    ],
)
def test_invented_or_swallowed_terms_are_refused(check: SanityCheck, subject: str, predicate: str, obj: str,
                                                 reason: str) -> None:  # fmt: skip
    result = check.check(candidate(subject, predicate, obj), TEXT + " I go every weekend.")
    assert isinstance(result, Refusal) and reason in result.reason
    assert result.line().startswith(f"{subject[:80]} {predicate} ")


def test_favorite_things_need_the_thing_in_the_text(check: SanityCheck) -> None:
    text = "My favourite colour is teal."
    kept = check.check(candidate("user", "favoriteColour", "teal", entity=False), text)
    assert not isinstance(kept, Refusal) and kept.predicate == "favoriteColour"
    assert isinstance(check.check(candidate("user", "favoriteCar", "teal", entity=False), text), Refusal)


def test_split_keeps_the_order_and_words_compare_loosely() -> None:
    check = SanityCheck(Vocabulary())
    facts = [candidate("user", "livesIn", "New York"), candidate("user", "livesIn", "Rome"),
             candidate("user", "likes", "dogs")]  # fmt: skip
    kept, refused = check.split(facts, "I live in new-york and I like my dog.")
    assert [f.object for f in kept] == ["New York", "dogs"] and [r.object for r in refused] == ["Rome"]
    assert words("newYork, Dogs") == ["new", "york", "dog"]
    assert found_in(words("I visited the Louvre"), "Louvre") and not found_in(words("I visited"), "the")
