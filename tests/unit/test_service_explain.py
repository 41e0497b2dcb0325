"""fact explain: depth, truncation, cycles and supports the caller may not see."""

from __future__ import annotations

import pytest

from kg.errors import InputError, NotFoundError
from kg.ids import new_id


@pytest.fixture
def chain(ws):
    """f0 <- f1 <- f2 <- f3: each fact derived from the one before."""
    facts = [ws.facts.assert_fact("a", "acme", "level", "0")[0]]
    for i in range(1, 4):
        facts.append(ws.facts.assert_fact("a", "acme", "level", str(i), derived_from=[facts[-1].uid])[0])
    return facts


def spine(explanation):
    """(uid, truncated) down the first support at each level."""
    out = []
    node = explanation
    while node is not None:
        out.append((node.uid, node.truncated))
        node = node.supports[0] if node.supports else None
    return out


def test_default_depth_is_two_and_marks_truncation(ws, chain):
    _, f1, f2, f3 = chain

    root = ws.facts.explain("a", f3.uid)

    assert spine(root) == [(f3.uid, False), (f2.uid, False), (f1.uid, True)]  # f1 still has a support below
    assert root.fact is not None and root.fact.object == "3"
    assert root.supports[0].fact.object == "2"


def test_depth_zero_is_the_fact_alone(ws, chain):
    root = ws.facts.explain("a", chain[3].uid, depth=0)

    assert root.supports == [] and root.truncated
    base = ws.facts.explain("a", chain[0].uid, depth=0)
    assert base.supports == [] and not base.truncated  # nothing below it: nothing cut off


def test_enough_depth_reaches_the_base_facts(ws, chain):
    root = ws.facts.explain("a", chain[3].uid, depth=5)

    assert spine(root) == [(f.uid, False) for f in reversed(chain)]


@pytest.mark.parametrize("depth", [-1, 11])
def test_depth_is_bounded(ws, chain, depth):
    with pytest.raises(InputError) as err:
        ws.facts.explain("a", chain[3].uid, depth=depth)
    assert err.value.field == "depth"


def test_several_supports_and_rule_ids(ws):
    rule = new_id("rule")
    p1, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100")
    p2, _ = ws.facts.assert_fact("a", "acme", "hasStaff", "5")
    child, _ = ws.facts.assert_fact("a", "acme", "isSmall", "true", derived_from=[p2.uid, p1.uid], rule_id=rule)

    root = ws.facts.explain("a", child.uid)

    assert root.rule_id == rule
    assert [s.uid for s in root.supports] == [p2.uid, p1.uid]
    assert all(s.visible and not s.cycle and not s.truncated and s.supports == [] for s in root.supports)


def test_cycles_are_marked_and_not_followed(ws, clock):
    f1, _ = ws.facts.assert_fact("a", "x", "p", "1", confidence=0.9)
    f2, _ = ws.facts.assert_fact("a", "x", "p", "2", derived_from=[f1.uid])
    ws.facts.assert_fact("a", "x", "p", "1", confidence=0.8, derived_from=[f2.uid])  # closes f1 <- f2 <- f1

    root = ws.facts.explain("a", f1.uid, depth=10)

    assert [s.uid for s in root.supports] == [f2.uid]
    back = root.supports[0].supports
    assert [(s.uid, s.cycle) for s in back] == [(f1.uid, True)]
    assert back[0].supports == [] and back[0].fact is None


def test_invisible_supports_show_no_content(ws):
    secret, _ = ws.facts.assert_fact("a", "acme", "hasSecret", "merger-talks")
    public, _ = ws.facts.assert_fact("a", "acme", "isInteresting", "true", scope="global", derived_from=[secret.uid])

    seen_by_b = ws.facts.explain("b", public.uid)
    seen_by_a = ws.facts.explain("a", public.uid)

    [hidden] = seen_by_b.supports
    assert (hidden.uid, hidden.visible, hidden.fact, hidden.rule_id) == (secret.uid, False, None, None)
    assert hidden.supports == []
    assert "merger-talks" not in seen_by_b.model_dump_json() and "hasSecret" not in seen_by_b.model_dump_json()
    assert seen_by_a.supports[0].visible and seen_by_a.supports[0].fact.object == "merger-talks"


def test_missing_supports_look_like_invisible_ones(ws):
    ghost = new_id("fact")
    fact, _ = ws.facts.assert_fact("a", "acme", "p", "o", derived_from=[ghost])

    [support] = ws.facts.explain("a", fact.uid).supports

    assert (support.uid, support.visible, support.fact) == (ghost, False, None)


def test_explaining_an_unknown_fact_is_not_found(ws):
    with pytest.raises(NotFoundError):
        ws.facts.explain("a", new_id("fact"))
