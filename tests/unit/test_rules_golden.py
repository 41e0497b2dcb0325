"""Golden reasoning cases kept as data (tests/data/reasoning/*.yaml), one test per file (per query).

Each file holds rules (plain rule fields), facts (``[s, p, o]`` or ``[s, p, o, confidence]``) and the
expected outcome of one engine function (``kind``): the closure of ``forward_chain``, the proofs or gaps
of ``prove``, the ranked hypotheses of ``abduce``, the violations of ``check_constraints`` or the
firings of ``evaluate_policies``. Confidences in the files are worked out by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from kg.ids import new_id
from kg.models import Rule
from reasoning.rules import (
    ProofNode,
    Triple,
    abduce,
    build_rule,
    check_constraints,
    evaluate_policies,
    forward_chain,
    prove,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "reasoning"
NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@cache
def _cases() -> list[tuple[str, dict[str, Any]]]:
    """Every golden case, parsed once per process (libyaml's safe loader when present: several times faster
    than the pure-Python one, and this runs at collection in every worker)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [(p.stem, yaml.load(p.read_text(encoding="utf-8"), Loader=loader)) for p in sorted(DATA.glob("*.yaml"))]  # noqa: S506


def _load(kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name, case) for name, case in _cases() if case["kind"] == kind]


def _rules(case: dict[str, Any]) -> list[Rule]:
    return [build_rule(entry, agent_id="golden", now=NOW) for entry in case["rules"]]


def _facts(case: dict[str, Any]) -> list[Triple]:
    return [
        Triple(str(f[0]), str(f[1]), str(f[2]), float(f[3]) if len(f) > 3 else 1.0, new_id("fact"))
        for f in case["facts"]
    ]


def _names(rules: list[Rule]) -> dict[str, str]:
    return {rule.uid: rule.name for rule in rules}


def _keys(items: list[list[Any]]) -> list[tuple[str, str, str]]:
    return [(str(a), str(b), str(c)) for a, b, c in items]


def _rounded(data: Any) -> Any:
    """Floats rounded to 9 places, recursively: hand-computed confidences compare with the engine's."""
    if isinstance(data, float):
        return round(data, 9)
    if isinstance(data, dict):
        return {k: _rounded(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_rounded(v) for v in data]
    return data


def test_there_are_enough_golden_cases() -> None:
    assert len(list(DATA.glob("*.yaml"))) >= 12


@pytest.mark.parametrize(("name", "case"), _load("forward"), ids=[n for n, _ in _load("forward")])
def test_forward_closure(name: str, case: dict[str, Any]) -> None:
    rules = _rules(case)
    facts = _facts(case)
    result = forward_chain(facts, rules, **case.get("options", {}))
    expect = case["expect"]
    names = _names(rules)
    got = {d.triple.key: d for d in result.derived}
    wanted = {(str(e[0]), str(e[1]), str(e[2])): e for e in expect["derived"]}
    assert set(got) == set(wanted), name
    for key, entry in wanted.items():
        assert got[key].triple.confidence == pytest.approx(entry[3]), key
        if len(entry) > 4:
            assert names[got[key].rule_id] == entry[4], key
        assert got[key].triple.uid is None
    assert result.iterations == expect["iterations"]
    assert result.fixpoint is expect["fixpoint"]
    if "fired" in expect:
        assert {names[uid]: n for uid, n in result.fired.items()} == expect["fired"]


def _prove_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(f"{name}[{i}]", case, q) for name, case in _load("prove") for i, q in enumerate(case["queries"])]


def _shape(node: ProofNode, names: dict[str, str]) -> dict[str, Any]:
    if node.is_fact:
        assert node.uid is not None and node.uid.startswith("F-")
        return {"triple": list(node.triple), "fact": True, "confidence": node.confidence}
    return {
        "triple": list(node.triple),
        "rule": names[str(node.rule_id)],
        "confidence": node.confidence,
        "children": [_shape(child, names) for child in node.children],
    }


@pytest.mark.parametrize(("name", "case", "query"), _prove_cases(), ids=[n for n, _, _ in _prove_cases()])
def test_prove(name: str, case: dict[str, Any], query: dict[str, Any]) -> None:
    rules = _rules(case)
    goal = tuple(str(t) for t in query["goal"])
    result = prove((goal[0], goal[1], goal[2]), _facts(case), rules, **query.get("options", {}))
    expect = query["expect"]
    assert result.proved is expect["proved"], name
    if expect["proved"]:
        assert sorted(p.triple for p in result.proofs) == sorted(_keys(expect["answers"]))
        assert result.gaps == []
        if "proof" in expect:
            assert _rounded(_shape(result.proofs[0], _names(rules))) == _rounded(expect["proof"])
    else:
        assert result.proofs == []
        assert [str(g) for g in result.gaps] == expect["gaps"]


@pytest.mark.parametrize(("name", "case"), _load("abduce"), ids=[n for n, _ in _load("abduce")])
def test_abduce(name: str, case: dict[str, Any]) -> None:
    rules = _rules(case)
    obs = tuple(str(t) for t in case["observation"])
    hypotheses = abduce((obs[0], obs[1], obs[2]), _facts(case), rules)
    got = [
        {
            "rule": h.name,
            "score": h.score,
            "supported": [list(t.key) for t in h.supported],
            "missing": [str(m) for m in h.missing],
        }
        for h in hypotheses
    ]
    wanted = [{**h, "supported": [list(map(str, t)) for t in h["supported"]]} for h in case["expect"]["hypotheses"]]
    assert _rounded(got) == _rounded(wanted)
    assert all(t.uid is not None for h in hypotheses for t in h.supported)


@pytest.mark.parametrize(("name", "case"), _load("constraints"), ids=[n for n, _ in _load("constraints")])
def test_constraints(name: str, case: dict[str, Any]) -> None:
    violations = check_constraints(_facts(case), _rules(case))
    got = [
        {"rule": v.name, "severity": v.severity.value, "message": v.message, "facts": [list(t.key) for t in v.facts]}
        for v in violations
    ]
    wanted = [{**v, "facts": [list(map(str, t)) for t in v["facts"]]} for v in case["expect"]["violations"]]
    assert got == wanted
    assert all(t.uid is not None for v in violations for t in v.facts)


@pytest.mark.parametrize(("name", "case"), _load("policies"), ids=[n for n, _ in _load("policies")])
def test_policies(name: str, case: dict[str, Any]) -> None:
    firings = evaluate_policies(_facts(case), _rules(case), case.get("context", {}))
    got = [
        {"rule": f.name, "action": f.action, "escalate": f.escalate, "facts": [list(t.key) for t in f.facts]}
        for f in firings
    ]
    wanted = [{**f, "facts": [list(map(str, t)) for t in f["facts"]]} for f in case["expect"]["firings"]]
    assert got == wanted
