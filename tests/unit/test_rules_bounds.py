"""Bounds of forward chaining (issue 18): a transitive rule over a chain derives n(n-1)/2 triples and examines
far more candidates; every run stops at its caps with a sound partial closure marked ``fixpoint: false``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.errors import InputError
from reasoning.rules import ChainLimits, Triple, build_rule, constraint_violations, forward_chain, policy_firings

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
TRANSITIVE = build_rule({
    "name": "transitive",
    "conditions": [{"subject": "?x", "predicate": "p", "object": "?y"},
                   {"subject": "?y", "predicate": "p", "object": "?z"}],
    "conclusion": {"subject": "?x", "predicate": "p", "object": "?z"},
}, now=NOW)  # fmt: skip


def chain(n: int) -> list[Triple]:
    return [Triple(f"n{i:04d}", "p", f"n{i + 1:04d}", uid=f"F-{i}") for i in range(n)]


def assert_sound(facts: list[Triple], result) -> None:
    """Every derived triple is in the true closure (a path forward along the chain), and each derivation's
    supports are input facts or triples derived before it."""
    known = {t.key for t in facts}
    for d in result.derived:
        s, p, o = d.triple.key
        assert p == "p" and s < o and d.triple.key not in known
        assert all(k in known for k in d.support)
        known.add(d.triple.key)


def test_the_closure_of_a_short_chain_reaches_its_fixpoint_within_the_bounds() -> None:
    facts = chain(20)
    result = forward_chain(facts, [TRANSITIVE], max_iterations=100, limits=ChainLimits(max_derived=1_000))
    assert len(result.derived) == 20 * 19 // 2 and result.fixpoint and result.stopped_by is None
    assert result.join_work > 0


def test_max_derived_stops_a_long_chain_with_exactly_that_many_sound_triples() -> None:
    facts = chain(200)  # 19,900 derivable
    result = forward_chain(facts, [TRANSITIVE], max_iterations=100, limits=ChainLimits(max_derived=1_000))
    assert len(result.derived) == 1_000
    assert not result.fixpoint and result.stopped_by == "max_derived"
    assert_sound(facts, result)


def test_max_join_stops_the_joins_and_keeps_what_they_found() -> None:
    facts = chain(200)
    result = forward_chain(facts, [TRANSITIVE], max_iterations=100, limits=ChainLimits(max_join=20_000))
    assert not result.fixpoint and result.stopped_by == "max_join"
    assert 0 < len(result.derived) < 19_900
    assert 20_000 < result.join_work <= 20_000 + len(facts) + len(result.derived)  # over by at most one bucket
    assert_sound(facts, result)


def test_max_iterations_is_named_when_it_cuts() -> None:
    result = forward_chain(chain(50), [TRANSITIVE], max_iterations=2)
    assert not result.fixpoint and result.stopped_by == "max_iterations"


@pytest.mark.parametrize("limits", [ChainLimits(max_derived=0), ChainLimits(max_join=-1)])
def test_bounds_below_one_are_refused(limits: ChainLimits) -> None:
    with pytest.raises(InputError, match=r"^max_(derived|join): must be at least 1"):
        forward_chain(chain(3), [TRANSITIVE], limits=limits)


CROSS = build_rule({  # no shared variable: every pair of p-facts matches (n^2 bindings)
    "name": "cross",
    "type": "constraint",
    "conditions": [{"subject": "?a", "predicate": "p", "object": "?b"},
                   {"subject": "?c", "predicate": "p", "object": "?d"}],
    "violation_message": "?a and ?c",
}, now=NOW)  # fmt: skip


def test_a_constraint_check_stops_at_its_result_cap_and_its_join_budget() -> None:
    facts = chain(200)  # 40,000 violating pairs
    assert len(constraint_violations(facts, [CROSS])[0]) == 40_000  # unbounded, as check_constraints
    capped, stopped = constraint_violations(facts, [CROSS], max_results=500)
    assert len(capped) == 500 and stopped == "max_results"
    joined, stopped = constraint_violations(facts, [CROSS], max_join=2_000)
    assert stopped == "max_join" and 0 < len(joined) < 2_000
    assert all(v.message == f"{v.bindings['?a']} and {v.bindings['?c']}" for v in joined)


def test_policies_share_one_budget_over_all_rules() -> None:
    policy = build_rule({**CROSS.model_dump(mode="json", include={"conditions"}), "name": "pol", "type": "policy",
                         "action": "ask"}, now=NOW)  # fmt: skip
    fired, stopped = policy_firings(chain(50), [policy, policy.model_copy(update={"uid": "R-2"})], max_results=3_000)
    assert len(fired) == 3_000 and stopped == "max_results"  # 2,500 from the first rule, 500 from the second
    assert {f.rule_id for f in fired[2_500:]} == {"R-2"}
    assert policy_firings(chain(50), [policy])[1] is None
