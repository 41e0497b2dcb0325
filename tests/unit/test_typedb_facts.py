"""The TypeDB fact adapter without a server: golden TypeQL, glob -> regex, answers -> models, the upsert plan.

* Every query template is a golden file (``tests/data/typedb/store/facts_*.tql``; regenerate with
  ``UPDATE_GOLDEN=1`` and review the diff), built with hostile values (quotes, backslashes, newlines, regex
  metacharacters in patterns).
* The pattern -> regex conversion is checked by hypothesis against a reference ``*`` matcher and against the
  SQLite adapter's real ``GLOB`` clause. The regex is written for Rust's ``regex`` crate (the server's); Python's
  ``re`` reads it the same way once ``$`` (end of text in Rust) is written ``\\Z``.
* The upsert plan is checked differentially against the real SQLite adapter: same batches, same outcomes,
  same stored facts (uids aside).
* No TypeDB server runs here, so the few store-level tests use a recording stand-in for the client (and say
  so); the contract suite (tests/contract) runs the adapter against a real server when one is available.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import Agent, AssertStatus, Fact, FactInput, FactQuery, ObjectKind, parse, pattern_parts
from kg.store.sqlite import SqliteGraphStore
from kg.store.sqlite.facts import pattern_clause
from kg.store.typedb.fact_queries import (
    FACT_FETCH,
    ORDER_ATTRIBUTE,
    RUST_REGEX_META,
    agents_query,
    escape_regex,
    fact_attributes,
    fact_from_doc,
    fact_key,
    fact_query,
    get_many_query,
    glob_regex,
    insert_query,
    live_lookup_query,
    live_triples_query,
    ordered_parents,
    pattern_lines,
    plan_asserts,
    retract_find_query,
    retract_match,
    retract_update_query,
    search_query,
    search_words,
    update_queries,
)
from kg.store.typedb.facts import TypeDBFactStore
from kg.store.typedb.literals import decode_string
from kg.store.typedb.schema import base_schema
from tests.budget import examples

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "typedb" / "store"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
NASTY = 'say "hi"; delete $x; \\ end\nnext line'
GLOB_NASTY = 'a"b*\\*^(x|y)+.?[z]{2}$ ~&-#\n*'
F1, F2, F3 = "F-01J00000000000000000000001", "F-01J00000000000000000000002", "F-01J00000000000000000000003"
R1 = "R-01J00000000000000000000009"
SCOPES = ["agent:sales-agent", "global"]
_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def _fact(**fields: Any) -> Fact:
    data = {"uid": F3, "agent_id": "sales-agent", "scope": "agent:sales-agent", "subject": "acme",
            "predicate": "hasCEO", "object": NASTY, "object_kind": "literal", "confidence": 0.30000000000000004,
            "source": "crm", "created_at": T0, "updated_at": T0, "updated_by": "sales-agent", **fields}  # fmt: skip
    return Fact.model_validate(data)


def _query(**criteria: Any) -> FactQuery:
    return parse(FactQuery, {"scopes": SCOPES, **criteria})


FULL = _fact(valid_from=T0, valid_until=T0 + 24 * HOUR, rule_id=R1, derived_from=[F2, F1])
CASES: dict[str, Callable[[], str]] = {
    "agents": lambda: agents_query(["sales-agent", 'gh"ost\\']),
    "lookup_one": lambda: live_lookup_query([("agent:sales-agent", "acme", "hasCEO", NASTY)]),
    "lookup_many": lambda: live_lookup_query([("global", "a*b", "p", "o"), ("agent:sales-agent", "x", "y", NASTY)]),
    "get_many": lambda: get_many_query([F1, 'F-"quoted" \\back\\slash']),
    "insert_full": lambda: insert_query(FULL),
    "insert_minimal": lambda: insert_query(_fact(object="bob", object_kind="entity", confidence=1.0)),
    "update_values": lambda: "\n".join(update_queries(FULL, FULL.model_copy(update={
        "confidence": 0.8, "source": "press", "valid_until": None, "updated_at": T0 + HOUR, "updated_by": "b"}))),
    "update_lineage": lambda: "\n".join(update_queries(FULL, FULL.model_copy(update={"derived_from": [F2, F1, F3]}))),
    "update_becomes_derived": lambda: "\n".join(update_queries(_fact(), _fact(rule_id=R1, derived_from=[F1],
                                                                              updated_at=T0 + HOUR))),
    "retract_find_by_uids": lambda: retract_find_query(retract_match(SCOPES, [F1, F2], None, None)),
    "retract_update_by_uids": lambda: retract_update_query(retract_match(SCOPES, [F1], None, None), T0, "b"),
    "retract_find_by_subject_predicate": lambda: retract_find_query(retract_match(["global"], [], NASTY, "p*")),
    "retract_update_by_predicate": lambda: retract_update_query(retract_match(["global"], [], None, "hasCEO"), T0,
                                                                "sales-agent"),
    "query_default": lambda: fact_query(_query()),
    "query_exact_patterns": lambda: fact_query(_query(subject=NASTY, predicate="a\\*b", object="what?")),
    "query_glob_patterns": lambda: fact_query(_query(subject=GLOB_NASTY, predicate="has*", object="*x\\\\*")),
    "query_filters": lambda: fact_query(_query(min_confidence=0.5, valid_at=T0, include_retracted=True,
                                               include_derived=False, limit=7)),
    "query_only_derived": lambda: fact_query(_query(only_derived=True, subject="*", object="")),
    "live_triples_first": lambda: live_triples_query(SCOPES, T0, None, 500, None),
    "live_triples_after_asserted": lambda: live_triples_query(["global"], T0, False, 500, (T0 + HOUR, F1)),
    "live_triples_derived": lambda: live_triples_query(["global"], T0, True, 2, None),
    "search": lambda: search_query(search_words('Acme "corp" (NEAR x*y-z)'), SCOPES, 20),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_query_text_matches_its_golden_file(name: str, golden: Callable[[Path, str], None]) -> None:
    golden(GOLDEN / f"facts_{name}.tql", CASES[name]())


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("facts_*.tql")) == sorted(f"facts_{name}" for name in CASES)


def test_every_label_is_declared_in_base_tql_or_is_the_proposed_order_attribute() -> None:
    schema = base_schema()
    types = set(re.findall(r"^\s*(?:entity|relation|attribute) ([a-z-]+)", schema, flags=re.MULTILINE))
    for name, build in CASES.items():
        unquoted = _LITERAL.sub('""', build())
        for label in re.findall(r"(?:\bisa!?|\bhas|\$x\.) ?([a-z][a-z-]*)", unquoted):
            assert label in types or label == ORDER_ATTRIBUTE, (name, label)


def test_the_order_attribute_once_declared_is_a_single_string_of_record() -> None:
    schema = base_schema()
    if ORDER_ATTRIBUTE not in schema:
        pytest.skip(f"{ORDER_ATTRIBUTE} is not in base.tql yet (proposed with this adapter)")
    assert re.search(rf"attribute {ORDER_ATTRIBUTE}, value string;", schema)
    assert re.search(rf"owns {ORDER_ATTRIBUTE}(?! @card)", schema)


def test_hostile_values_stay_inside_their_literals() -> None:
    for name in ("lookup_one", "insert_full", "query_exact_patterns", "retract_find_by_subject_predicate"):
        text = CASES[name]()
        assert NASTY in [decode_string(m.group(0)) for m in _LITERAL.finditer(text)], name
        assert "delete $x" not in _LITERAL.sub('""', text), name


# ------------------------------------------------------------------------------------------ glob -> regex


def _python(rust_regex: str) -> re.Pattern[str]:
    """Rust's ``$`` (no multi-line flag) is the end of the text; Python's also matches before a final newline."""
    assert rust_regex.endswith("$")
    return re.compile(rust_regex[:-1] + r"\Z")


def _reference(parts: tuple[str, ...], text: str) -> bool:
    """``*``-only glob matching: prefix, suffix, and the middle parts in order without overlap ("" is anything)."""
    if len(parts) == 1:
        return parts[0] in ("", text)
    first, *middle, last = parts
    start, end = len(first), len(text) - len(last)
    if end < start or not text.startswith(first) or not text.endswith(last):
        return False
    for part in middle:
        found = text.find(part, start, end)
        if found < 0:
            return False
        start = found + len(part)
    return True


def _sqlite_glob(conn: sqlite3.Connection, pattern: str, text: str) -> bool:
    clause = pattern_clause("v", pattern)
    if clause is None:
        return True
    sql, param = clause
    return bool(conn.execute(f"SELECT {sql.replace('v', '?', 1)}", (text, param)).fetchone()[0])


_ALPHABET = "ab*\\?[]^$.()|{}+#&-~\n\u00e9"
_PATTERNS = st.text(alphabet=_ALPHABET, max_size=12)


@st.composite
def _pattern_and_text(draw: st.DrawFn) -> tuple[str, str]:
    pattern = draw(_PATTERNS)
    if draw(st.booleans()):  # a text built to match: each wildcard replaced by some text
        fillers = st.text(alphabet=_ALPHABET, max_size=4)
        text = "".join(p + draw(fillers) for p in pattern_parts(pattern)[:-1]) + pattern_parts(pattern)[-1]
    else:
        text = draw(st.text(alphabet=_ALPHABET, max_size=12))
    return pattern, text


def _typedb_matches(pattern: str, text: str) -> bool:
    """Evaluate the match lines the adapter emits for ``pattern`` (an exact ``has``, a ``like``, or nothing)."""
    lines = pattern_lines("subject-term", "$subject", pattern)
    values = [decode_string(m.group(0)) for line in lines for m in _LITERAL.finditer(line)]
    if not lines:
        return True
    if len(lines) == 1:
        return text == values[0]
    assert lines[1].startswith("$subject like ") and values[0] == glob_regex(pattern_parts(pattern))
    return bool(_python(values[0]).search(text))


@settings(max_examples=examples(600), deadline=None)
@given(_pattern_and_text())
def test_patterns_match_exactly_what_the_sqlite_glob_matches(case: tuple[str, str]) -> None:
    pattern, text = case
    expected = _reference(pattern_parts(pattern), text)
    conn = sqlite3.connect(":memory:")
    try:
        assert _sqlite_glob(conn, pattern, text) == expected
    finally:
        conn.close()
    assert _typedb_matches(pattern, text) == expected


@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20), st.text(max_size=20))
def test_an_escaped_text_matches_only_itself(literal: str, other: str) -> None:
    rx = _python("(?s)^" + escape_regex(literal) + "$")
    assert rx.search(literal)
    assert bool(rx.search(other)) == (other == literal)


def test_every_rust_metacharacter_is_escaped() -> None:
    assert escape_regex("".join(sorted(RUST_REGEX_META))) == "".join("\\" + ch for ch in sorted(RUST_REGEX_META))
    assert escape_regex("plain text é 日本") == "plain text é 日本"


@pytest.mark.parametrize(
    ("pattern", "lines"),
    [("", 0), ("*", 0), ("**", 0), ("acme", 1), ("a\\*b", 1), ("ac*", 2), ("\\**", 2)],
)
def test_a_pattern_is_an_exact_has_a_like_or_nothing(pattern: str, lines: int) -> None:
    text = fact_query(_query(subject=pattern)).split("fetch {")[0]
    assert len([line for line in text.splitlines() if "subject" in line]) == lines
    assert ("$subject like" in text) == (lines == 2)


def test_search_words_are_letter_and_digit_runs() -> None:
    assert search_words('acme "Co" (NEAR x*y-z) café 42 acme') == ["acme", "Co", "NEAR", "x", "y", "z", "café", "42"]
    assert search_words('  " ( ^ ') == []


# ------------------------------------------------------------------------------------------ answers -> models


def _fetched(value: Any) -> Any:
    """A value as a fetch document carries it: datetimes as nanosecond ISO text without a zone."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000"
    return value


def _document(fact: Fact, rng: random.Random) -> dict[str, Any]:
    """What the fetch of ``fact``'s stored attributes returns (keys from FACT_FETCH; parents as an unordered set)."""
    stored = {"uid": fact.uid, **fact_attributes(fact)}
    fields = dict(re.findall(r'"([a-z_]+)": \$x\.([a-z-]+)', FACT_FETCH))
    doc = {key: _fetched(stored[attr]) for key, attr in fields.items()}
    parents = list(fact.derived_from)
    rng.shuffle(parents)
    return {**doc, "derived_from": parents}


_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1,
                max_size=20).filter(str.strip)  # fmt: skip
_MOMENTS = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC))
_PARENTS = st.lists(st.sampled_from([F1, F2, F3, R1]), unique=True, max_size=4)


@settings(max_examples=examples(200), deadline=None)
@given(texts=st.tuples(_TEXT, _TEXT), confidence=st.floats(0.0, 1.0), moments=st.tuples(_MOMENTS, st.none() | _MOMENTS),
       parents=_PARENTS, seed=st.integers(0, 1000))  # fmt: skip
def test_a_fetched_document_reads_back_as_the_stored_fact(texts, confidence, moments, parents, seed):
    (subject, obj), (created, valid) = texts, moments
    fact = _fact(subject=subject, object=obj, confidence=confidence, created_at=created, updated_at=created,
                 valid_from=valid, derived_from=parents, retracted_at=valid,
                 retracted_by="b" if valid else None)  # fmt: skip
    assert fact_from_doc(_document(fact, random.Random(seed))) == fact


def test_parents_without_a_kept_order_read_back_sorted() -> None:
    assert ordered_parents([F3, F1], None) == [F1, F3]  # written by the outbox replay, which keeps no order
    assert ordered_parents([F3, F1, F2], json.dumps([F2, F3])) == [F2, F3, F1]  # unlisted ones last
    assert ordered_parents([F1], json.dumps([F2, F1, F1])) == [F1]  # listed but no longer owned: dropped
    assert ordered_parents([F2, F1], "not json") == [F1, F2]


def test_fetched_integers_and_nanoseconds() -> None:
    doc = _document(FULL, random.Random(0))
    doc["confidence"] = 1  # the driver prints an integral double without a fraction
    doc["created_at"] = "2024-05-01T12:00:00.123456789"
    fact = fact_from_doc(doc)
    assert fact.confidence == 1.0 and isinstance(fact.confidence, float)
    assert fact.created_at == datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


# ------------------------------------------------------------------------------------------ upsert plan vs SQLite


_INPUT = st.fixed_dictionaries({
    "scope": st.sampled_from(["agent:a", "global"]), "subject": st.sampled_from(["s1", "s2"]),
    "object": st.sampled_from(["o1", "42"]), "confidence": st.sampled_from([0.5, 0.7]),
    "source": st.sampled_from(["agent", "crm"]), "valid_from": st.sampled_from([None, T0]),
    "valid_until": st.sampled_from([None, T0 + 24 * HOUR]), "derived_from": _PARENTS,
    "rule_id": st.sampled_from([None, R1]),
})  # fmt: skip
_BATCHES = st.lists(st.lists(_INPUT, min_size=1, max_size=5), min_size=1, max_size=4)


def _without_uid(fact: Fact) -> dict[str, Any]:
    return fact.model_dump(exclude={"uid"})


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BATCHES)
def test_the_upsert_plan_behaves_as_the_sqlite_adapter(batches: list[list[dict[str, Any]]]) -> None:
    clock = FixedClock(T0)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteGraphStore(Path(tmp) / "kg.sqlite", clock=clock)
        try:
            store.agents.create(parse(Agent, {"uid": new_id("agent"), "agent_id": "a", "name": "A",
                                              "created_at": T0, "updated_at": T0}))  # fmt: skip
            live: dict[Any, Fact] = {}
            same_uid: dict[str, str] = {}
            for batch in batches:
                inputs = [parse(FactInput, {"agent_id": "a", "predicate": "p", **row}) for row in batch]
                expected = store.facts.assert_many(inputs, asserted_by="a")
                plan = plan_asserts(inputs, {fact_key(i): live[fact_key(i)] for i in inputs if fact_key(i) in live},
                                    asserted_by="a", now=clock.now())  # fmt: skip
                live.update(plan.facts)
                assert [o.status for o in plan.outcomes] == [o.status for o in expected]
                for mine, theirs in zip(plan.outcomes, expected, strict=True):
                    assert same_uid.setdefault(theirs.uid, mine.uid) == mine.uid
                clock.advance(HOUR)
            stored = store.facts.query(parse(FactQuery, {"scopes": ["agent:a", "global"], "limit": 1000}))
            assert sorted(map(_without_uid, live.values()), key=repr) == sorted(map(_without_uid, stored), key=repr)
        finally:
            store.close()


def test_an_unchanged_upsert_writes_nothing_and_lineage_alone_keeps_updated_at() -> None:
    base = parse(FactInput, {"agent_id": "a", "subject": "s", "predicate": "p", "object": "o", "derived_from": [F1]})
    first = plan_asserts([base], {}, asserted_by="a", now=T0)
    live = dict(first.facts)
    again = plan_asserts([base], live, asserted_by="b", now=T0 + HOUR)
    assert [o.status for o in again.outcomes] == [AssertStatus.UNCHANGED] and again.queries == []
    more = plan_asserts([base.model_copy(update={"derived_from": [F2, F1]})], live, asserted_by="b", now=T0 + HOUR)
    fact = more.facts[fact_key(base)]
    assert [o.status for o in more.outcomes] == [AssertStatus.UPDATED]
    assert fact.derived_from == [F1, F2] and fact.updated_at == T0 and fact.updated_by == "a"
    assert len(more.queries) == 2  # the new order, then the new parent (updated-at untouched)
    assert "updated-at" not in more.queries[0] and 'derived-from-uid "F-01J00000000000000000000002"' in more.queries[1]


# ------------------------------------------------------------------------------------------ store flow
# No TypeDB server runs here: these tests drive TypeDBFactStore through a recording stand-in for TypeDBClient
# that answers read queries from a function and records the write queries and the commit.


class _Tx:
    def __init__(self) -> None:
        self.writes: list[str] = []
        self.committed = False

    def query(self, text: str) -> Any:
        self.writes.append(text)
        return type("Promise", (), {"resolve": lambda self: None})()

    def commit(self) -> None:
        self.committed = True


class _Client:
    def __init__(self, answer: Callable[[str], list[dict[str, Any]]]) -> None:
        self.answer = answer
        self.reads: list[str] = []
        self.transactions: list[_Tx] = []

    @contextmanager
    def transaction(self, kind: str, action: str) -> Iterator[_Tx]:
        assert kind == "write"
        self.transactions.append(_Tx())
        yield self.transactions[-1]

    def answers(self, tx: _Tx, query: str) -> list[dict[str, Any]]:
        self.reads.append(query)
        return self.answer(query)

    def read(self, query: str) -> list[dict[str, Any]]:
        self.reads.append(query)
        return self.answer(query)


def _store(answer: Callable[[str], list[dict[str, Any]]]) -> tuple[TypeDBFactStore, _Client]:
    client = _Client(answer)
    return TypeDBFactStore(client, FixedClock(T0)), client  # type: ignore[arg-type]


def _agents(*known: str) -> Callable[[str], list[dict[str, Any]]]:
    def answer(query: str) -> list[dict[str, Any]]:
        if "isa agent" in query:
            return [{"agent_id": a} for a in known if f'"{a}"' in query]
        return []

    return answer


def test_an_unknown_agent_fails_the_batch_before_any_write() -> None:
    store, client = _store(_agents("a"))
    batch = [parse(FactInput, {"agent_id": a, "subject": "x", "predicate": "p", "object": "o"}) for a in ("a", "ghost")]
    with pytest.raises(NotFoundError, match="ghost"):
        store.assert_many(batch, asserted_by="a")
    assert client.transactions[0].writes == [] and not client.transactions[0].committed


def test_assert_many_sends_the_plan_and_commits_once() -> None:
    existing = _document(_fact(uid=F1, agent_id="a", scope="agent:a", subject="old", predicate="p", object="o",
                               object_kind="entity", confidence=0.1, source="agent", created_at=T0 - HOUR,
                               updated_at=T0 - HOUR), random.Random(0))  # fmt: skip

    def answer(query: str) -> list[dict[str, Any]]:
        return [existing] if "isa fact" in query else _agents("a")(query)

    store, client = _store(answer)
    rows = [("new", 1.0), ("old", 0.2), ("old", 0.2)]
    batch = [parse(FactInput, {"agent_id": "a", "subject": s, "predicate": "p", "object": "o", "confidence": c})
             for s, c in rows]  # fmt: skip
    out = store.assert_many(batch, asserted_by="a")
    assert [o.status for o in out] == [AssertStatus.CREATED, AssertStatus.UPDATED, AssertStatus.UNCHANGED]
    assert out[1].uid == out[2].uid == F1
    tx = client.transactions[0]
    assert tx.committed and len(tx.writes) == 2
    assert tx.writes[0].startswith("insert") and "update $x has confidence-score 0.2, has updated-at" in tx.writes[1]
    assert store.assert_many([], asserted_by="a") == [] and len(client.transactions) == 1


def test_as_of_is_refused_naming_the_field() -> None:
    store, client = _store(_agents())
    with pytest.raises(InputError, match=r"as_of.*system-time history"):
        store.query(_query(as_of=T0))
    with pytest.raises(InputError, match="as_of"):
        store.get_many([F1], as_of=T0)
    assert client.reads == []


def test_retract_checks_before_writing() -> None:
    theirs = _document(_fact(uid=F1, scope="agent:b", agent_id="b"), random.Random(0))
    store, client = _store(lambda q: [theirs] if '"derived_from"' in q else [])  # the uid check finds it
    with pytest.raises(InputError, match="retract"):
        store.retract(scopes=["agent:a"], retracted_by="a")
    with pytest.raises(NotFoundError, match=F1):
        store.retract(scopes=["agent:a"], retracted_by="a", uids=[F1])
    assert client.transactions[0].writes == [] and not client.transactions[0].committed
    assert store.retract(scopes=["agent:a"], retracted_by="a", subject="nobody") == []  # matched nothing


def test_retract_updates_what_it_found_and_returns_it_sorted() -> None:
    store, client = _store(lambda q: [{"uid": F2}, {"uid": F1}] if "fetch" in q else [])
    assert store.retract(scopes=["global"], retracted_by="b", predicate="hasCEO") == [F1, F2]
    tx = client.transactions[0]
    assert tx.committed and len(tx.writes) == 1
    assert 'update $x has retracted-at 2024-05-01T12:00:00.000000, has retracted-by "b";' in tx.writes[0]


def test_live_triples_pages_after_the_last_answer() -> None:
    def doc(i: int) -> dict[str, Any]:
        return {"uid": f"F-{i}", "created_at": "2024-05-01T12:00:00.000000000", "scope": "global", "subject": "s",
                "predicate": "p", "object": "o", "object_kind": ObjectKind.ENTITY.value, "confidence": 1,
                "rule_id": None}  # fmt: skip

    pages = [[doc(1), doc(2)], [doc(3)]]
    store, client = _store(lambda q: pages.pop(0))
    triples = list(store.live_triples(scopes=["global"], valid_at=T0, batch=2))
    assert [t.uid for t in triples] == ["F-1", "F-2", "F-3"] and triples[0].confidence == 1.0
    assert 'created == 2024-05-01T12:00:00.000000; $uid > "F-2";' in client.reads[1]


def test_search_without_words_asks_nothing() -> None:
    store, client = _store(_agents())
    assert store.search(' "( ', scopes=["global"]) == [] and client.reads == []
