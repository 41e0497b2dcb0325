"""Contract: the fact port (upsert, retraction, pattern / time queries, lineage, search) on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kg.errors import InputError, NotFoundError
from kg.ids import is_id, new_id
from kg.models import AssertStatus, ObjectKind

A, B, G = "agent:a", "agent:b", "global"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def _agents(mk, clock):
    assert clock.now() == T0  # the clock fixture's start
    mk.agent("a")
    mk.agent("b")


def live(mk, scopes=(A,), **criteria):
    return mk.query(scopes, **criteria)


def triples(facts):
    return [(f.subject, f.predicate, f.object) for f in facts]


# ------------------------------------------------------------------------------------------ assert / upsert


def test_assert_creates_a_fact_with_every_field(mk, graph_store, clock):
    out = mk.assert_facts("a", [("acme", "hasRevenue", "$50,000")], confidence=0.9, source="crm")

    assert [o.status for o in out] == [AssertStatus.CREATED]
    uid = out[0].uid
    assert is_id(uid, "fact")
    fact = graph_store.facts.get_many([uid])[uid]
    assert (fact.subject, fact.predicate, fact.object) == ("acme", "hasRevenue", "$50,000")
    assert fact.object_kind is ObjectKind.LITERAL
    assert (fact.agent_id, fact.scope, fact.confidence, fact.source) == ("a", A, 0.9, "crm")
    assert fact.created_at == fact.updated_at == clock.now()
    assert fact.updated_by == "a"
    assert fact.retracted_at is None and fact.retracted_by is None
    assert fact.derived_from == [] and fact.rule_id is None and not fact.derived


def test_entity_objects_are_recognised(mk):
    assert mk.fact("a", "acme", "locatedIn", "berlin").object_kind is ObjectKind.ENTITY
    assert mk.fact("a", "acme", "founded", "1999").object_kind is ObjectKind.LITERAL


def test_same_triple_in_same_scope_updates_values_and_keeps_uid(mk, graph_store, clock):
    first = mk.fact("a", "acme", "hasCEO", "bob", confidence=0.5, source="rumour")
    clock.advance(HOUR)

    out = mk.assert_facts(
        "a", [("acme", "hasCEO", "bob")], confidence=0.8, source="press", valid_from=T0, valid_until=T0 + 24 * HOUR
    )

    assert [(o.uid, o.status) for o in out] == [(first.uid, AssertStatus.UPDATED)]
    fact = graph_store.facts.get_many([first.uid])[first.uid]
    assert (fact.confidence, fact.source) == (0.8, "press")
    assert (fact.valid_from, fact.valid_until) == (T0, T0 + 24 * HOUR)
    assert fact.created_at == T0 and fact.updated_at == T0 + HOUR
    assert [f.uid for f in live(mk)] == [first.uid]


def test_identical_values_leave_the_fact_unchanged(mk, graph_store, clock):
    first = mk.fact("a", "acme", "hasCEO", "bob", confidence=0.5)
    clock.advance(HOUR)

    out = mk.assert_facts("a", [("acme", "hasCEO", "bob")], confidence=0.5)

    assert [(o.uid, o.status) for o in out] == [(first.uid, AssertStatus.UNCHANGED)]
    assert graph_store.facts.get_many([first.uid])[first.uid].model_dump() == first.model_dump()


def test_same_triple_in_another_scope_is_a_new_fact(mk):
    private = mk.fact("a", "acme", "hasCEO", "bob")
    shared = mk.fact("a", "acme", "hasCEO", "bob", scope=G)

    assert private.uid != shared.uid
    assert (private.scope, shared.scope) == (A, G)
    assert sorted(f.scope for f in live(mk, (A, G))) == [A, G]


def test_duplicates_inside_one_batch_behave_as_one_by_one(mk):
    out = mk.store.facts.assert_many(
        [
            mk.fact_input("a", "x", "p", "o", confidence=0.5),
            mk.fact_input("a", "x", "p", "o", confidence=0.5),
            mk.fact_input("a", "x", "p", "o", confidence=0.7),
        ],
        asserted_by="a",
    )

    assert [o.status for o in out] == [AssertStatus.CREATED, AssertStatus.UNCHANGED, AssertStatus.UPDATED]
    assert len({o.uid for o in out}) == 1
    assert [f.confidence for f in live(mk)] == [0.7]


def test_batch_outcomes_follow_input_order(mk):
    mk.fact("a", "old", "p", "o", confidence=0.1)

    out = mk.store.facts.assert_many(
        [
            mk.fact_input("a", "new1", "p", "o"),
            mk.fact_input("a", "old", "p", "o", confidence=0.2),
            mk.fact_input("a", "new2", "p", "o"),
        ],
        asserted_by="a",
    )

    assert [o.status for o in out] == [AssertStatus.CREATED, AssertStatus.UPDATED, AssertStatus.CREATED]
    got = mk.store.facts.get_many([o.uid for o in out])
    assert [got[o.uid].subject for o in out] == ["new1", "old", "new2"]


def test_unknown_agent_in_a_batch_is_not_found_and_writes_nothing(mk):
    before = mk.state([A, "agent:ghost"])
    batch = [mk.fact_input("a", "x", "p", "o"), mk.fact_input("ghost", "y", "p", "o")]

    with pytest.raises(NotFoundError, match="ghost"):
        mk.store.facts.assert_many(batch, asserted_by="a")

    assert mk.state([A, "agent:ghost"]) == before


# ------------------------------------------------------------------------------------------ retraction


@pytest.fixture
def company_facts(mk):
    facts = {}
    for s, p, o in [
        ("acme", "hasRevenue", "100"),
        ("acme", "hasCEO", "bob"),
        ("globex", "hasRevenue", "200"),
        ("globex", "hasCEO", "alice"),
    ]:
        facts[(s, p)] = mk.fact("a", s, p, o)
    return facts


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        ({"subject": "acme"}, {("acme", "hasRevenue"), ("acme", "hasCEO")}),
        ({"predicate": "hasCEO"}, {("acme", "hasCEO"), ("globex", "hasCEO")}),
        ({"subject": "globex", "predicate": "hasRevenue"}, {("globex", "hasRevenue")}),
        ({"subject": "nobody"}, set()),
    ],
)
def test_retract_by_subject_and_or_predicate(mk, company_facts, clock, criteria, expected):
    clock.advance(HOUR)

    retracted = mk.store.facts.retract(scopes=[A], retracted_by="a", **criteria)

    assert sorted(retracted) == sorted(company_facts[k].uid for k in expected)
    remaining = {(f.subject, f.predicate) for f in live(mk)}
    assert remaining == set(company_facts) - expected


def test_retract_by_uid_never_deletes(mk, company_facts, clock):
    target = company_facts[("acme", "hasCEO")]
    clock.advance(HOUR)

    assert mk.store.facts.retract(scopes=[A], retracted_by="b", uids=[target.uid]) == [target.uid]

    assert target.uid not in {f.uid for f in live(mk)}
    shown = {f.uid: f for f in live(mk, include_retracted=True)}
    assert set(shown) == {f.uid for f in company_facts.values()}
    assert (shown[target.uid].retracted_at, shown[target.uid].retracted_by) == (T0 + HOUR, "b")
    kept = mk.store.facts.get_many([target.uid])[target.uid]
    assert kept.retracted_at == T0 + HOUR
    assert (kept.subject, kept.object, kept.confidence) == (target.subject, target.object, target.confidence)


def test_retract_several_uids(mk, company_facts):
    uids = [company_facts[("acme", "hasCEO")].uid, company_facts[("globex", "hasCEO")].uid]

    assert sorted(mk.store.facts.retract(scopes=[A], retracted_by="a", uids=uids)) == sorted(uids)
    assert {f.predicate for f in live(mk)} == {"hasRevenue"}


def test_retracting_unknown_uid_is_not_found_and_changes_nothing(mk, company_facts):
    before = mk.state([A, B, G])
    known = company_facts[("acme", "hasCEO")].uid

    with pytest.raises(NotFoundError):
        mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[new_id("fact")])
    with pytest.raises(NotFoundError):
        mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[known, new_id("fact")])

    assert mk.state([A, B, G]) == before


def test_retracting_a_uid_outside_the_given_scopes_is_not_found(mk):
    theirs = mk.fact("b", "acme", "hasCEO", "bob")

    with pytest.raises(NotFoundError):
        mk.store.facts.retract(scopes=[A, G], retracted_by="a", uids=[theirs.uid])

    assert [f.uid for f in live(mk, (B,))] == [theirs.uid]


def test_retract_by_subject_stays_inside_the_given_scopes(mk):
    private = mk.fact("a", "acme", "hasCEO", "bob")
    shared = mk.fact("a", "acme", "hasCEO", "bob", scope=G)
    theirs = mk.fact("b", "acme", "hasCEO", "bob")

    assert mk.store.facts.retract(scopes=[A], retracted_by="a", subject="acme") == [private.uid]

    assert {f.uid for f in live(mk, (A, B, G))} == {shared.uid, theirs.uid}


def test_retract_needs_a_criterion(mk, company_facts):
    with pytest.raises(InputError):
        mk.store.facts.retract(scopes=[A], retracted_by="a")
    assert len(live(mk)) == 4


def test_retracting_twice_keeps_the_first_retraction(mk, company_facts, clock):
    uid = company_facts[("acme", "hasCEO")].uid
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[uid])
    clock.advance(HOUR)

    assert mk.store.facts.retract(scopes=[A], retracted_by="b", uids=[uid]) == []
    assert mk.store.facts.retract(scopes=[A], retracted_by="b", subject="acme", predicate="hasCEO") == []

    fact = mk.store.facts.get_many([uid])[uid]
    assert (fact.retracted_at, fact.retracted_by) == (T0, "a")


def test_asserting_a_retracted_triple_again_creates_a_new_fact(mk, clock):
    old = mk.fact("a", "acme", "hasCEO", "bob")
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[old.uid])
    clock.advance(HOUR)

    out = mk.assert_facts("a", [("acme", "hasCEO", "bob")])

    assert out[0].status is AssertStatus.CREATED and out[0].uid != old.uid
    assert [f.uid for f in live(mk)] == [out[0].uid]
    assert [f.uid for f in live(mk, include_retracted=True)] == [old.uid, out[0].uid]


# ------------------------------------------------------------------------------------------ system time


def test_as_of_sees_the_fact_as_it_was(mk, clock):
    clock.advance(HOUR)  # T0+1h: created with 0.5
    fact = mk.fact("a", "acme", "hasCEO", "bob", confidence=0.5, source="rumour")
    clock.advance(HOUR)  # T0+2h: upserted to 0.9
    mk.assert_facts("a", [("acme", "hasCEO", "bob")], confidence=0.9, source="press")
    clock.advance(HOUR)  # T0+3h: retracted
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[fact.uid])

    def seen(at):
        return [(f.uid, f.confidence, f.source) for f in live(mk, as_of=at)]

    assert seen(T0 + HOUR / 2) == []  # before creation
    assert seen(T0 + HOUR) == [(fact.uid, 0.5, "rumour")]
    assert seen(T0 + HOUR * 1.5) == [(fact.uid, 0.5, "rumour")]  # before the upsert: old values
    assert seen(T0 + 2 * HOUR) == [(fact.uid, 0.9, "press")]
    assert seen(T0 + HOUR * 2.5) == [(fact.uid, 0.9, "press")]  # before the retraction: still there
    assert seen(T0 + 3 * HOUR) == []
    assert live(mk) == []


def test_get_many_as_of(mk, clock):
    fact = mk.fact("a", "acme", "hasCEO", "bob", confidence=0.5)
    clock.advance(HOUR)
    mk.assert_facts("a", [("acme", "hasCEO", "bob")], confidence=0.6)
    clock.advance(HOUR)
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[fact.uid])

    assert mk.store.facts.get_many([fact.uid], as_of=T0 - HOUR) == {}
    assert mk.store.facts.get_many([fact.uid], as_of=T0 + HOUR / 2)[fact.uid].confidence == 0.5
    assert mk.store.facts.get_many([fact.uid], as_of=T0 + HOUR)[fact.uid].confidence == 0.6
    assert mk.store.facts.get_many([fact.uid], as_of=T0 + 2 * HOUR) == {}
    assert mk.store.facts.get_many([fact.uid])[fact.uid].retracted_at == T0 + 2 * HOUR


def test_as_of_several_updates(mk, clock):
    fact = mk.fact("a", "x", "p", "o", confidence=0.1)
    for step in range(2, 6):
        clock.advance(HOUR)
        mk.assert_facts("a", [("x", "p", "o")], confidence=step / 10)

    for hours in range(5):
        assert [f.confidence for f in live(mk, as_of=T0 + hours * HOUR + HOUR / 2)] == [(hours + 1) / 10]
    assert mk.store.facts.get_many([fact.uid])[fact.uid].confidence == 0.5


# ------------------------------------------------------------------------------------------ world time


def test_valid_at_filters_on_world_time(mk):
    always = mk.fact("a", "acme", "status", "active")
    window = mk.fact("a", "acme", "hasCEO", "bob", valid_from=T0, valid_until=T0 + 10 * HOUR)
    since = mk.fact("a", "acme", "hasCFO", "carol", valid_from=T0 + 5 * HOUR)
    until = mk.fact("a", "acme", "hasCTO", "dave", valid_until=T0)

    def valid(at):
        return {f.uid for f in live(mk, valid_at=at)}

    assert valid(T0 - HOUR) == {always.uid, until.uid}
    assert valid(T0) == {always.uid, window.uid}  # valid_from inclusive, valid_until exclusive
    assert valid(T0 + 5 * HOUR) == {always.uid, window.uid, since.uid}
    assert valid(T0 + 10 * HOUR) == {always.uid, since.uid}
    assert len(live(mk)) == 4  # no valid_at: every live fact


# ------------------------------------------------------------------------------------------ patterns


@pytest.fixture
def pattern_facts(mk):
    rows = [
        ("acme", "is", "firm"),
        ("acorn", "is", "seed"),
        ("bacme", "is", "x"),
        ("Acme", "is", "firm"),
        ("a?c", "is", "q"),
        ("abc", "is", "q"),
        ("x[1]", "is", "q"),
        ("x1", "is", "q"),
        ("odd", "says", "what?"),
        ("odd", "says", "what!"),
        ("odd", "says", "[draft]"),
        ("odd", "says", "d"),
        ("star", "is", "a*b"),
        ("star", "is", "aXb"),
        ("a\\?c", "is", "q"),
    ]
    mk.assert_facts("a", rows)
    return rows


@pytest.mark.parametrize(
    ("field", "pattern", "expected"),
    [
        ("subject", "ac*", {"acme", "acorn"}),  # case-sensitive: not "Acme"
        ("subject", "*cme", {"acme", "bacme", "Acme"}),
        ("subject", "acme", {"acme"}),
        ("subject", "a?c", {"a?c"}),  # a literal question mark, not "any one character"
        ("subject", "a?*", {"a?c"}),
        ("subject", "x[1]", {"x[1]"}),  # a literal bracket, not a character class
        ("subject", "x[*", {"x[1]"}),
        ("object", "what?", {"what?"}),
        ("object", "wh*?", {"what?"}),
        ("object", "[draft]", {"[draft]"}),
        ("object", "[*", {"[draft]"}),
        ("object", "a*b", {"a*b", "aXb"}),  # "*" is the wildcard, so it also matches itself
        ("object", "a\\*b", {"a*b"}),  # an escaped star is a literal star: exact match
        ("object", "a\\**", {"a*b"}),  # literal star, then the wildcard
        ("subject", "a\\?c", {"a\\?c"}),  # a backslash before anything else is itself
        ("predicate", "say*", {"what?", "what!", "[draft]", "d"}),
        ("subject", "nothing*", set()),
    ],
)
def test_patterns(mk, pattern_facts, field, pattern, expected):
    shown = "subject" if field == "subject" else "object"
    assert {getattr(f, shown) for f in live(mk, **{field: pattern})} == expected


def test_star_and_empty_pattern_match_everything(mk, pattern_facts):
    everything = triples(live(mk))
    assert len(everything) == len(pattern_facts)
    assert triples(live(mk, subject="*", predicate="*", object="*")) == everything
    assert triples(live(mk, subject="")) == everything


def test_patterns_combine(mk, pattern_facts):
    assert triples(live(mk, subject="ac*", object="firm")) == [("acme", "is", "firm")]


# ------------------------------------------------------------------------------------------ filters


def test_min_confidence_is_inclusive(mk):
    for i, confidence in enumerate((0.2, 0.5, 0.8)):
        mk.fact("a", f"s{i}", "p", "o", confidence=confidence)

    assert [f.confidence for f in live(mk, min_confidence=0.5)] == [0.5, 0.8]
    assert [f.confidence for f in live(mk, min_confidence=0.0)] == [0.2, 0.5, 0.8]
    assert live(mk, min_confidence=0.9) == []


def test_derived_filters(mk):
    base = mk.fact("a", "acme", "hasRevenue", "100")
    by_lineage = mk.fact("a", "acme", "isBig", "true", derived_from=[base.uid])
    by_rule = mk.fact("a", "acme", "isRich", "true", rule_id=new_id("rule"))

    assert {f.uid for f in live(mk)} == {base.uid, by_lineage.uid, by_rule.uid}
    assert [f.uid for f in live(mk, include_derived=False)] == [base.uid]
    assert {f.uid for f in live(mk, only_derived=True)} == {by_lineage.uid, by_rule.uid}
    assert by_lineage.derived and by_rule.derived and not base.derived


def test_adding_lineage_to_an_existing_fact_is_an_update(mk):
    base = mk.fact("a", "acme", "hasRevenue", "100")
    plain = mk.fact("a", "acme", "isBig", "true")
    events_before = mk.outbox_state()

    out = mk.assert_facts("a", [("acme", "isBig", "true")], derived_from=[base.uid])
    again = mk.assert_facts("a", [("acme", "isBig", "true")], derived_from=[base.uid])

    assert [(o.uid, o.status) for o in out] == [(plain.uid, AssertStatus.UPDATED)]
    assert [(o.uid, o.status) for o in again] == [(plain.uid, AssertStatus.UNCHANGED)]
    assert mk.store.facts.get_many([plain.uid])[plain.uid].derived_from == [base.uid]
    if events_before is not None:  # one event carries the new lineage to replicas
        assert events_before[0]["pending"] + 1 == mk.outbox_state()[0]["pending"]


def test_adding_lineage_to_an_existing_fact_makes_it_derived(mk):
    base = mk.fact("a", "acme", "hasRevenue", "100")
    plain = mk.fact("a", "acme", "isBig", "true")

    out = mk.assert_facts("a", [("acme", "isBig", "true")], derived_from=[base.uid])

    fact = mk.store.facts.get_many([plain.uid])[plain.uid]
    assert fact.derived_from == [base.uid] and fact.derived
    assert [f.uid for f in live(mk, only_derived=True)] == [plain.uid]
    assert [f.uid for f in live(mk, include_derived=False)] == [base.uid]
    assert out[0].status is AssertStatus.UPDATED  # stored state changed: an event must carry it to replicas


def test_limit_keeps_the_first_in_order(mk):
    uids = [o.uid for o in mk.assert_facts("a", [(f"s{i}", "p", "o") for i in range(10)])]

    assert [f.uid for f in live(mk, limit=3)] == uids[:3]
    assert [f.uid for f in live(mk, limit=100)] == uids


def test_order_is_created_at_then_uid(mk, clock):
    clock.set(T0 + 2 * HOUR)
    late = mk.fact("a", "late", "p", "o")
    clock.set(T0)
    early = mk.fact("a", "early", "p", "o")  # made after `late`, so a larger uid, but an earlier created_at
    same = [o.uid for o in mk.assert_facts("a", [("tie1", "p", "o"), ("tie2", "p", "o")])]

    assert [f.uid for f in live(mk)] == [early.uid, *sorted(same), late.uid]


def test_query_reads_only_the_given_scopes(mk):
    mine = mk.fact("a", "x", "p", "o")
    shared = mk.fact("a", "x", "p", "o", scope=G)
    theirs = mk.fact("b", "x", "p", "o")

    assert [f.uid for f in live(mk, (A,))] == [mine.uid]
    assert {f.uid for f in live(mk, (A, G))} == {mine.uid, shared.uid}
    assert {f.uid for f in live(mk, (B, G))} == {theirs.uid, shared.uid}


# ------------------------------------------------------------------------------------------ lineage, get_many


def test_derived_from_reads_back_in_order(mk):
    parents = [mk.fact("a", f"p{i}", "p", "o").uid for i in range(4)]
    order = [parents[2], parents[0], parents[3], parents[1]]
    rule = new_id("rule")

    child = mk.fact("a", "child", "p", "o", derived_from=order, rule_id=rule)

    assert child.derived_from == order
    assert child.rule_id == rule
    assert [f.derived_from for f in live(mk, subject="child")] == [order]


def test_parents_added_later_come_after_the_first_ones(mk):
    early = mk.fact("a", "early", "p", "o")
    late = mk.fact("a", "late", "p", "o")  # a larger uid than `early`
    child = mk.fact("a", "child", "p", "o", derived_from=[late.uid])

    mk.assert_facts("a", [("child", "p", "o")], derived_from=[early.uid])

    assert mk.store.facts.get_many([child.uid])[child.uid].derived_from == [late.uid, early.uid]


def test_get_many(mk):
    one = mk.fact("a", "one", "p", "o")
    two = mk.fact("b", "two", "p", "o")
    gone = mk.fact("a", "gone", "p", "o")
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[gone.uid])

    got = mk.store.facts.get_many([two.uid, one.uid, new_id("fact"), one.uid, gone.uid])

    assert set(got) == {one.uid, two.uid, gone.uid}  # any scope; unknown ids are left out
    assert got[two.uid].model_dump() == two.model_dump()
    assert got[gone.uid].retracted_at is not None
    assert mk.store.facts.get_many([]) == {}


# ------------------------------------------------------------------------------------------ search


@pytest.fixture
def searchable(mk):
    facts = {
        "rev": mk.fact("a", "acme corporation", "hasRevenue", "fifty thousand dollars"),
        "ceo": mk.fact("a", "globex", "hasCEO", "Hank Scorpio"),
        "city": mk.fact("a", "acme corporation", "locatedIn", "springfield"),
        "shared": mk.fact("a", "initech", "makes", "acme compatible staplers", scope=G),
        "theirs": mk.fact("b", "acme", "secret", "plan"),
    }
    mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[facts["city"].uid])
    return facts


def test_search_finds_words_in_subject_predicate_and_object(mk, searchable):
    def hits(text, scopes=(A, G)):
        return {f.uid for f in mk.store.facts.search(text, scopes=list(scopes))}

    assert hits("acme") == {searchable["rev"].uid, searchable["shared"].uid}  # retracted and others' hidden
    assert hits("Scorpio") == {searchable["ceo"].uid}
    assert hits("fifty dollars") == {searchable["rev"].uid}
    assert hits("staplers", (A,)) == set()
    assert hits("secret", (B,)) == {searchable["theirs"].uid}
    assert hits("nonexistentword") == set()
    assert hits("   ") == set()


def test_search_limit(mk):
    mk.assert_facts("a", [(f"widget {i}", "p", "o") for i in range(5)])

    assert len(mk.store.facts.search("widget", scopes=[A], limit=2)) == 2
    assert len(mk.store.facts.search("widget", scopes=[A])) == 5


@pytest.mark.parametrize("text", ['"', "acme\"'", "a*", "(", "NOT", "acme OR", "-acme", "a:b", "^", "NEAR("])
def test_search_query_syntax_never_raises(mk, searchable, text):
    found = mk.store.facts.search(text, scopes=[A, G])
    assert all(f.scope in (A, G) and f.retracted_at is None for f in found)
