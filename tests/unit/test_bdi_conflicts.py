"""Conflict detection (R5) on records built in memory: subjects, grouping, and agreement with all-pairs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.ids import new_id
from kg.models import Belief, Fact
from reasoning.bdi import belief_subject, chunk_count, chunked, detect_belief_conflicts, detect_fact_conflicts
from reasoning.bdi.conflicts import normalize_text, valid_overlap
from tests.budget import examples

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def belief(content: str, certainty: float | None = 0.9) -> Belief:
    return Belief(uid=new_id("belief"), agent_id="a", content=content, certainty=certainty, created_at=T0,
                  updated_at=T0)  # fmt: skip


def fact(subject: str, obj: str, *, predicate: str = "hasCEO", confidence: float = 0.9,
         start: int | None = None, end: int | None = None) -> Fact:  # fmt: skip
    """A fact valid from year ``start`` to year ``end`` (None: unbounded)."""
    return Fact(
        uid=new_id("fact"), agent_id="a", scope="agent:a", subject=subject, predicate=predicate, object=obj,
        object_kind="entity", confidence=confidence, source="test", created_at=T0, updated_at=T0, updated_by="a",
        valid_from=datetime(start, 1, 1, tzinfo=UTC) if start else None,
        valid_until=datetime(end, 1, 1, tzinfo=UTC) if end else None,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------- subjects


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ("Acme is growing fast", "acme"),
        ("Acme is shrinking", "acme"),
        ("The Acme deal will close in Q3", "acme deal"),
        ("Acme's revenue is $5M", "acme revenue"),
        ("Acme\u2019s revenue isn't growing", "acme revenue"),
        ("Revenue of Acme grows 20% a year", "revenue of acme"),
        ("JWT uses RS256", "jwt"),
        ("Customers don't churn", "customers"),
        ("Pricing: too high for SMBs", "pricing"),
        ("  an   ACME   Corp office exists in Berlin", "acme corp office"),
        ("subject: Acme CEO\nAlice runs Acme since 2020", "acme ceo"),
        ("Alice is CEO [subject: Acme CEO]", "acme ceo"),
        ("Alice is CEO (Subject:acme-ceo)", "acme-ceo"),
        ("## Acme CEO\nAlice has run Acme since 2020", "acme ceo"),
        ("Acme CEO\n\nBob", "acme ceo"),
        ("Müller GmbH is solvent", "müller gmbh"),
        ("!!! ???", ""),
        ("The is", ""),
    ],
)
def test_belief_subject(content: str, subject: str) -> None:
    assert belief_subject(content) == subject


def test_normalize_text_ignores_case_and_spacing() -> None:
    assert normalize_text("  Acme  is\nGROWING ") == normalize_text("acme is growing")


def test_chunking() -> None:
    assert [len(c) for c in chunked(list(range(101)))] == [50, 50, 1]
    assert list(chunked([])) == []
    assert [chunk_count(n) for n in (0, 1, 50, 51, 100, 101)] == [0, 1, 1, 2, 2, 3]
    with pytest.raises(InputError, match=r"^chunk_size: must be at least 1"):
        list(chunked([1], 0))


# ----------------------------------------------------------------------------------------- beliefs


def test_belief_groups_and_pairs() -> None:
    beliefs = [belief("Acme is growing"), belief("Acme is shrinking"), belief("acme IS growing"),
               belief("Acme is stable", certainty=0.6), belief("Acme is huge", certainty=None),
               belief("Globex is big"), belief("Globex is big")]  # fmt: skip
    [conflict] = detect_belief_conflicts(beliefs)
    assert conflict.subject == "acme"
    assert conflict.pairs == 2  # growing x2 against shrinking; the two "growing" agree
    assert [m.uid for m in conflict.members] == [beliefs[0].uid, beliefs[1].uid, beliefs[2].uid]


def test_beliefs_without_a_subject_never_conflict() -> None:
    assert detect_belief_conflicts([belief("!!!"), belief("???")]) == []


def naive_belief_pairs(beliefs: list[Belief]) -> int:
    """The seed's rule over every pair."""
    return sum(
        1
        for a, b in combinations(beliefs, 2)
        if (a.certainty or 0) > 0.6 and (b.certainty or 0) > 0.6
        and belief_subject(a.content) and belief_subject(a.content) == belief_subject(b.content)
        and normalize_text(a.content) != normalize_text(b.content)
    )  # fmt: skip


subjects = st.sampled_from(["Acme", "Globex", "The Initech deal", "subject: x\nbody"])
predicates = st.sampled_from(["is growing", "is shrinking", "IS growing", "has 5 staff"])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(subjects, predicates, st.sampled_from([0.5, 0.6, 0.61, 0.9, None])), max_size=40),
       st.integers(min_value=1, max_value=7))  # fmt: skip
def test_belief_index_agrees_with_all_pairs(rows: list[tuple[str, str, float | None]], chunk_size: int) -> None:
    beliefs = [belief(f"{s} {p}", c) for s, p, c in rows]
    found = detect_belief_conflicts(beliefs, chunk_size=chunk_size)
    assert sum(c.pairs for c in found) == naive_belief_pairs(beliefs)


# ------------------------------------------------------------------------------------------- facts


def test_fact_conflict_only_for_the_overlapping_part() -> None:
    old = fact("acme", "alice", start=2010, end=2020)
    new = fact("acme", "bob", start=2020)
    interim = fact("acme", "carol", start=2019, end=2021)  # overlaps both
    unrelated = fact("acme", "dave", start=2000, end=2005)
    [conflict] = detect_fact_conflicts([old, new, interim, unrelated])
    assert conflict.pairs == 2
    assert {m.uid for m in conflict.members} == {old.uid, new.uid, interim.uid}


def test_fact_conflict_rules() -> None:
    assert detect_fact_conflicts([fact("acme", "alice"), fact("acme", "alice")]) == []  # same object
    assert detect_fact_conflicts([fact("acme", "alice"), fact("acme", "bob", confidence=0.59)]) == []
    assert len(detect_fact_conflicts([fact("acme", "alice"), fact("acme", "bob", confidence=0.6)])) == 1
    assert detect_fact_conflicts([fact("acme", "alice"), fact("globex", "bob")]) == []  # other subject
    products = [fact("acme", "rockets", predicate="hasProduct"), fact("acme", "anvils", predicate="hasProduct")]
    assert detect_fact_conflicts(products) == []
    assert detect_fact_conflicts(products, functional_predicates={"hasProduct"})[0].pairs == 1


def test_valid_overlap_is_half_open() -> None:
    d = [datetime(2020 + i, 1, 1, tzinfo=UTC) for i in range(3)]
    assert not valid_overlap(d[0], d[1], d[1], d[2])
    assert valid_overlap(d[0], d[1] + timedelta(seconds=1), d[1], d[2])
    assert valid_overlap(None, None, d[1], d[2])
    assert valid_overlap(None, d[1], None, d[2])


def naive_fact_pairs(facts: list[Fact]) -> tuple[int, set[str]]:
    pairs, involved = 0, set()
    for a, b in combinations(facts, 2):
        if (a.subject, a.predicate) == (b.subject, b.predicate) and a.object != b.object \
                and valid_overlap(a.valid_from, a.valid_until, b.valid_from, b.valid_until):  # fmt: skip
            pairs += 1
            involved |= {a.uid, b.uid}
    return pairs, involved


def _interval(a: int | None, b: int | None) -> tuple[int | None, int | None]:
    """Two drawn years as a valid interval (valid_until must be later than valid_from)."""
    if a is not None and b is not None and b <= a:
        return b, (a if a > b else a + 1)
    return a, b


years = st.one_of(st.none(), st.integers(min_value=2000, max_value=2010))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["acme", "globex"]), st.sampled_from(["x", "y", "z"]), years, years),
                max_size=25))  # fmt: skip
def test_fact_sweep_agrees_with_all_pairs(rows: list[tuple[str, str, int | None, int | None]]) -> None:
    facts = [fact(subject, obj, start=a, end=b) for subject, obj, *years in rows for a, b in [_interval(*years)]]
    found = detect_fact_conflicts(facts)
    pairs, involved = naive_fact_pairs(facts)
    assert sum(c.pairs for c in found) == pairs
    assert {m.uid for c in found for m in c.members} == involved
