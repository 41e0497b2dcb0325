"""Hypothesis invariants of the fact port, on every backend.

* a stored fact reads back unchanged, whatever unicode its terms hold, and an exact query finds it;
* asserting the same batch twice changes nothing the second time.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.models import AssertStatus, agent_scope
from tests.budget import examples

# Examples share one store per test run: a function-scoped fixture is fine here on purpose.
SETTINGS = settings(
    max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

_SPECIAL = [
    'a"b',
    "it's",
    "back\\slash",
    "new\nline",
    "tab\there",
    "*",
    "?",
    "[",
    "]",
    "a*b",
    "x[1]",
    "wh?t",
    "🙂",
    "naïve café",
    "日本語",
    "  padded  ",
    "%_",
    "\u200b zero width",
    "NULL",
    "' OR 1=1 --",
]
_ANY_TEXT = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=30
)
TERMS = st.one_of(
    st.sampled_from(_SPECIAL),
    _ANY_TEXT,
    st.builds("".join, st.lists(st.sampled_from(_SPECIAL), min_size=1, max_size=6)),
)
TERMS = TERMS.filter(lambda t: t.strip() != "")

_agent_ids = itertools.count()


def _fresh_agent(mk):
    agent_id = f"prop-{next(_agent_ids)}"
    mk.agent(agent_id)
    return agent_id


def _outbox_counts(mk):
    return mk.store.outbox.counts()


@SETTINGS
@given(subject=TERMS, predicate=TERMS, obj=TERMS)
def test_stored_facts_read_back_unchanged(mk, subject, predicate, obj):
    agent_id = _fresh_agent(mk)

    fact = mk.fact(agent_id, subject, predicate, obj, confidence=0.5)

    assert (fact.subject, fact.predicate, fact.object) == (subject, predicate, obj)
    again = mk.store.facts.get_many([fact.uid])[fact.uid]
    assert again.model_dump() == fact.model_dump()
    found = mk.query([agent_scope(agent_id)], subject=subject, predicate=predicate, object=obj)
    # "*" is the pattern wildcard (it also matches itself); everything else matches literally
    assert [f.uid for f in found] == [fact.uid]


@SETTINGS
@given(
    batch=st.lists(
        st.tuples(TERMS, TERMS, TERMS, st.floats(min_value=0.0, max_value=1.0, allow_nan=False)),
        min_size=1,
        max_size=15,
        unique_by=lambda row: row[:3],
    )
)
def test_reasserting_a_batch_changes_nothing(mk, batch):
    agent_id = _fresh_agent(mk)
    scope = agent_scope(agent_id)
    inputs = [mk.fact_input(agent_id, s, p, o, confidence=c) for s, p, o, c in batch]

    first = mk.store.facts.assert_many(inputs, asserted_by=agent_id)
    facts_after_first = [f.model_dump() for f in mk.query([scope], limit=1000)]
    outbox_after_first = _outbox_counts(mk)
    second = mk.store.facts.assert_many(inputs, asserted_by=agent_id)

    assert [o.status for o in first] == [AssertStatus.CREATED] * len(batch)
    assert [o.status for o in second] == [AssertStatus.UNCHANGED] * len(batch)
    assert [o.uid for o in second] == [o.uid for o in first]
    assert len(facts_after_first) == len(batch)
    assert [f.model_dump() for f in mk.query([scope], limit=1000)] == facts_after_first
    assert _outbox_counts(mk) == outbox_after_first
