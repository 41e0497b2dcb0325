"""``fact query`` filters: wildcards, history (--as-of), validity, derived facts, confidence, limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")


def _objects(mabos: Mabos, *args: str) -> list[str]:
    return sorted(f["object"] for f in mabos.json("fact", "query", *A, *args))


def test_wildcards(populated: dict[str, str], ready: Mabos) -> None:
    assert _objects(ready, "--subject", "acme", "--predicate", "has*") == ["$50000", "saas"]
    assert _objects(ready, "--subject", "ac*", "--object", "s*") == ["saas"]
    assert _objects(ready, "--predicate", "*Target") == ["true"]
    assert _objects(ready, "--subject", "globex") == []


def test_as_of_sees_the_store_before_a_retraction(populated: dict[str, str], ready: Mabos) -> None:
    before = ready.json("fact", "query", *A, "--subject", "acme", "--predicate", "hasIndustry")[0]["updated_at"]
    ready.ok("fact", "retract", *A, populated["industry"])
    assert _objects(ready, "--predicate", "hasIndustry") == []
    assert _objects(ready, "--predicate", "hasIndustry", "--as-of", before) == ["saas"]
    retracted = ready.json("fact", "query", *A, "--predicate", "hasIndustry", "--include-retracted")
    assert retracted[0]["retracted_at"] is not None
    human = ready.ok("fact", "query", *A, "--predicate", "hasIndustry", "--include-retracted").stdout
    assert "asserted, retracted" in human


def test_derived_filters(populated: dict[str, str], ready: Mabos) -> None:
    assert _objects(ready, "--only-derived") == ["true"]
    assert "true" not in _objects(ready, "--no-derived")
    assert "true" in _objects(ready, "--derived")


def test_confidence_validity_and_limit(ready: Mabos) -> None:
    ready.ok("fact", "assert", *A, "acme", "ceo", "alice", "--confidence", "0.4",
             "--valid-from", "2020-01-01", "--valid-until", "2023-01-01T00:00:00+01:00")  # fmt: skip
    ready.ok("fact", "assert", *A, "acme", "ceo", "bob", "--valid-from", "2023-01-01")
    assert _objects(ready, "--predicate", "ceo", "--min-confidence", "0.5") == ["bob"]
    assert _objects(ready, "--predicate", "ceo", "--valid-at", "2021-06-01") == ["alice"]
    assert _objects(ready, "--predicate", "ceo", "--valid-at", "2024-06-01T00:00:00Z") == ["bob"]
    alice = ready.json("fact", "query", *A, "--object", "alice")[0]
    assert alice["valid_from"] == "2020-01-01T00:00:00.000000Z"  # a naive date is UTC
    assert alice["valid_until"] == "2022-12-31T23:00:00.000000Z"  # an offset is converted to UTC
    assert len(ready.json("fact", "query", *A, "--limit", "1")) == 1
    assert "limit 1 reached" in ready.ok("fact", "query", *A, "--limit", "1").stdout


def test_human_query_output_is_a_table(populated: dict[str, str], ready: Mabos) -> None:
    out = ready.ok("fact", "query", *A, "--subject", "acme").stdout
    assert populated["revenue"] in out and "hasRevenue" in out and "$50000" in out
    assert "3 facts" in out
