"""Work bounds, partial results and documented confidence of the formal, social, experience and meta methods.

Every method here gets inputs that grow and must answer within its documented bound: a result, a result marked
``partial`` (confidence at most 0.8, the cut said in the notes and the trace), or a one-line InputError naming
the field. The checks read the methods' own work counters (world visits, rule applications, search nodes,
itemset occurrences, pairs listed), never the clock. The default run grows a little; ``-m slow`` grows past
every bound.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import combinations
from typing import Any

import pytest

from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.router import MethodContext, reason
from reasoning.router.methods import method_docs
from reasoning.router.methods.base import PARTIAL_CONFIDENCE_CAP, MethodOutcome
from reasoning.router.methods.experience import MAX_ITEMSET_WORK
from reasoning.router.methods.mining import occurrences
from reasoning.router.methods.modal import MAX_MODEL_WORK
from reasoning.router.methods.modal_logic import MAX_FORMULA_DEPTH, MAX_STEPS
from reasoning.router.methods.norms_time import MAX_PAIRED
from reasoning.router.methods.structure_mapping import MAX_NODES
from reasoning.service import RuleService
from tests.budget import long_run

MINE = ["deductive", "inductive", "abductive", "analogical", "modal", "deontic", "temporal", "game-theory",
        "negotiation", "social-choice", "argumentation", "stakeholder", "case-based", "heuristic", "naturalistic",
        "satisficing", "pattern-recognition", "meta-cognitive", "strategy-selection"]  # fmt: skip
CTX = MethodContext("a")
#: The large versions: marked slow, and run only in the long run (``-m slow`` or ``MABOS_SLOW=1``).
LONG = (pytest.mark.slow, pytest.mark.skipif(not long_run(), reason="long run only: -m slow or MABOS_SLOW=1"))


def one(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> MethodOutcome:
    return reason(ctx, method=method, inputs={method: inputs}).results[0]


def partial_said(result: MethodOutcome) -> None:
    """A partial result says so everywhere and is never fully confident."""
    assert result.partial and result.confidence <= PARTIAL_CONFIDENCE_CAP
    assert result.notes and any(line.startswith("partial: ") for line in result.trace)


def rule(name: str, conditions: list[str], conclusion: str) -> dict[str, Any]:
    def pattern(text: str) -> dict[str, str]:
        s, p, o = text.split()
        return {"subject": s, "predicate": p, "object": o}

    return {"name": name, "conditions": [pattern(c) for c in conditions], "conclusion": pattern(conclusion),
            "confidence_factor": 1.0}  # fmt: skip


TRANSITIVE = [rule("step", ["?x next ?y"], "?x lt ?y"), rule("trans", ["?x lt ?y", "?y lt ?z"], "?x lt ?z")]


# ---------------------------------------------------------------------------------------------- documentation


@pytest.mark.parametrize("method", MINE)
def test_each_method_documents_confidence_bound_and_an_example_that_computes(method: str) -> None:
    doc = method_docs()[method]
    assert len(doc.confidence) > 40 and len(doc.bound) > 30 and doc.inputs is not None and doc.graph
    assert doc.example is not None
    doc.inputs.model_validate(doc.example)  # the template is valid against its own model
    result = one(method, doc.example)
    assert result.kind == "computed" and not result.partial, result.conclusion


def test_bounds_are_written_from_the_constants() -> None:
    docs = method_docs()
    assert str(MAX_MODEL_WORK) in docs["modal"].bound and str(MAX_STEPS) in docs["modal"].bound
    assert str(MAX_PAIRED) in docs["temporal"].bound and str(MAX_NODES) in docs["analogical"].bound
    assert str(MAX_ITEMSET_WORK) in docs["pattern-recognition"].bound


# ---------------------------------------------------------------------------------------------- offenders of issue 30


def test_modal_on_a_thousand_worlds_with_nested_modalities_ends_partial() -> None:
    # issue 30: 1,000 worlds (each sees every other), nested boxes and diamonds never returned (one evaluation per
    # path through the worlds); now each subformula is evaluated once per world, within MAX_MODEL_WORK.
    worlds = {f"w{i}": ["p"] if i % 2 else ["q"] for i in range(1_000)}
    query = ["box(dia(box(dia(p))))", "dia(p)", "box(p or q)"]
    result = one("modal", {"worlds": worlds, "query": query})
    assert result.value["work"] <= MAX_MODEL_WORK
    assert result.value["results"] == {"box(dia(box(dia(p))))": None, "dia(p)": True, "box(p or q)": None}
    partial_said(result)
    assert "undecided" in result.conclusion


def test_modal_formula_nesting_is_bounded_with_a_one_line_error() -> None:
    with pytest.raises(InputError, match=r"^inputs\.modal\.query\[0\]: String should have at most 4000 characters"):
        one("modal", {"worlds": {"w": []}, "query": ["not " * 1_500 + "p"]})  # was a RecursionError
    with pytest.raises(InputError, match=rf"^inputs\.modal\.valid\[0\]: nests deeper than {MAX_FORMULA_DEPTH}"):
        one("modal", {"logic": "K", "valid": ["box " * (MAX_FORMULA_DEPTH + 1) + "p"]})
    ok = one("modal", {"worlds": {"w": []}, "query": ["not " * (MAX_FORMULA_DEPTH - 2) + "p"]})
    assert ok.value["results"] and not ok.partial


def test_deductive_says_when_its_closure_was_cut() -> None:
    # issue 30: a cut closure answered "600 facts follow ... forward chaining to a fixpoint" with notes: [].
    chain = [f"n{i} next n{i + 1}" for i in range(60)]
    result = one("deductive", {"facts": chain, "rules": TRANSITIVE, "max_derived": 100})
    partial_said(result)
    assert result.value["fixpoint"] is False and "cut" in result.conclusion and "max_derived 100" in result.notes[0]
    assert "to a fixpoint" not in " ".join(result.trace)
    full = one("deductive", {"facts": chain[:10], "rules": TRANSITIVE})
    assert full.value["fixpoint"] is True and not full.partial and full.confidence == 1.0
    unknown = one("deductive", {"facts": chain, "rules": TRANSITIVE, "max_derived": 100, "goal": "n59 lt n0"})
    assert unknown.value["status"] == "unknown" and unknown.confidence == 0.0
    partial_said(unknown)  # it might follow past the bound
    with pytest.raises(InputError, match=r"^inputs\.deductive\.max_derived: must be from 1 to 50000"):
        one("deductive", {"facts": chain, "rules": TRANSITIVE, "max_derived": 10**9})


@pytest.mark.parametrize("n", [6, pytest.param(14, marks=LONG)])
def test_goals_on_a_dense_graph_are_decided_on_the_bounded_closure(n: int) -> None:
    # backward chaining over a transitive rule on a complete graph of 10 nodes took 10 s at depth 5 and grew
    # exponentially with the depth; the goal is now decided on the closure (n² facts).
    edges = [f"v{i} next v{j}" for i in range(n) for j in range(n) if i != j]
    proved = one("deductive", {"facts": edges, "rules": TRANSITIVE, "goal": f"v0 lt v{n - 1}"})
    assert proved.value["proved"] and proved.confidence == 1.0
    unknown = one("deductive", {"facts": edges, "rules": TRANSITIVE, "goal": "v0 lt nowhere"})
    assert unknown.value["status"] == "unknown" and not unknown.partial and unknown.confidence == 0.0
    meta = one("meta-cognitive", {"goals": [f"v0 lt v{n - 1}", "v0 lt nowhere"], "facts": edges, "rules": TRANSITIVE})
    assert meta.value["known"] == [f"v0 lt v{n - 1}"] and meta.value["unknown"] == ["v0 lt nowhere"]


def test_deductive_over_an_agent_without_rules_is_not_computed(tool_ws: Workspace) -> None:
    # issue 31: on an agent with 7 facts, a plain question answered "0 fact(s) follow from 0 facts and 0 rules"
    # with confidence 1.0. Nothing to chain is a template, not an answer.
    for i in range(7):
        tool_ws.facts.assert_fact("a", f"acme{i}", "sells", "crm")
    ctx = MethodContext("a", tool_ws, problem="Should we enter Germany?")
    for method in ("deductive", "abductive"):
        result = one(method, {"observation": "acme0 sells crm"} if method == "abductive" else {}, ctx)
        assert result.kind == "llm_prompt" and result.confidence == 0.0
    RuleService(tool_ws.ports, tool_ws.scopes, tool_ws.clock).create("a", **rule("r", ["?x sells crm"], "?x is vendor"))
    computed = one("deductive", {}, ctx)
    assert computed.kind == "computed" and computed.value["derived"][0] == "acme0 is vendor"


def test_temporal_says_it_related_only_the_first_intervals() -> None:
    # issue 30: 5,000 intervals: 200 were kept silently while the trace said "every pair".
    start = datetime(2026, 1, 1, tzinfo=UTC)
    intervals = {f"i{k:04d}": [(start + timedelta(days=k)).isoformat(), (start + timedelta(days=k + 2)).isoformat()]
                 for k in range(5_000)}  # fmt: skip
    result = one("temporal", {"intervals": intervals, "as_of": (start + timedelta(days=4_000, hours=1)).isoformat()})
    partial_said(result)
    assert len(result.value["relations"]) == len(list(combinations(range(MAX_PAIRED), 2)))
    assert f"first {MAX_PAIRED}" in " ".join(result.trace) and "every pair (" not in " ".join(result.trace)
    assert result.value["holding_at"] == ["i3999", "i4000"]  # as_of still looks at every interval


# ---------------------------------------------------------------------------------------------- growth, per method


def _ranked(n: int) -> dict[str, Any]:
    names = [f"c{i}" for i in range(n)]
    return {"candidates": names, "ballots": [{"ranking": names[k:] + names[:k], "count": k + 1} for k in range(n)]}


def _cases(n: int) -> list[dict[str, Any]]:
    return [{"name": f"case {i}", "beliefs": [f"b{i % 7}", "market is saturated"], "desires": [f"d{i % 5}"],
             "actions": [f"act {i}"], "success": i % 3 != 0} for i in range(n)]  # fmt: skip


# fmt: off
GROWTH: dict[str, Callable[[int], dict[str, Any]]] = {
    "deductive": lambda n: {"facts": [f"n{i} next n{i + 1}" for i in range(n)], "rules": TRANSITIVE},
    "inductive": lambda n: {"facts": [f"s{i} has i{j}" for i in range(n) for j in range(min(n, 30)) if (i + j) % 3]},
    "abductive": lambda n: {"facts": [f"n{i} next n{i + 1}" for i in range(n)], "rules": TRANSITIVE,
                            "observation": f"n0 lt n{n + 1}"},
    "analogical": lambda n: {"source": [f"a{i} r{i % 4} a{(i * 7 + 1) % n}" for i in range(n)],
                             "target": [f"b{i} s{i % 5} b{(i * 3 + 2) % n}" for i in range(n)]},
    "modal": lambda n: {"logic": "S4", "valid": ["box(" * n + "p" + ")" * n + " -> p",
                                                 " and ".join(f"dia p{i}" for i in range(n)) + " -> box dia p0"]},
    "deontic": lambda n: {"norms": [{"modality": ["obligation", "prohibition"][i % 2], "action": f"act{i % 50}",
                                     "when": [f"x{j} is y" for j in range(i % 5)]} for i in range(n)],
                          "facts": [f"x{j} is y" for j in range(3)]},
    "temporal": lambda n: {"intervals": {f"t{i}": [i, i + 3] for i in range(n)}, "pair": ["t0", "t1"]},
    "game-theory": lambda n: {"players": ["r", "c"], "actions": [[f"a{i}" for i in range(n)]] * 2,
                              "payoffs": [[[(i * j) % 3, (i + j) % 2] for j in range(n)] for i in range(n)]},
    "negotiation": lambda n: {"parties": {f"p{i}": {"side": "buy" if i % 2 else "sell", "reservation": 100 + i % 17}
                                          for i in range(max(n, 2))}},
    "social-choice": lambda n: {"rule": "schulze", **_ranked(n)},
    "argumentation": lambda n: {"arguments": [f"a{i}" for i in range(n)],
                                "attacks": [[f"a{i}", f"a{(i + 1) % n}"] for i in range(n)], "semantics": "preferred"},
    "stakeholder": lambda n: {"stakeholders": [{"name": f"s{i}", "power": (i % 10) / 10, "interest": (i % 7) / 7}
                                               for i in range(n)]},
    "case-based": lambda n: {"beliefs": ["market is saturated"], "desires": ["d1"], "cases": _cases(n)},
    "heuristic": lambda n: {"options": [f"o{i}" for i in range(n)],
                            "cues": [{"name": f"c{k}", "validity": 1 - k / 100,
                                      "values": {f"o{i}": (i >> k) % 2 == 1 for i in range(n)}} for k in range(20)]},
    "naturalistic": lambda n: {"beliefs": ["market is saturated"], "desires": ["d1"], "cases": _cases(n)},
    "satisficing": lambda n: {"options": [{"name": f"o{i}", "attributes": {"price": 1000 - i}} for i in range(n)],
                              "aspirations": {"price": {"max": 1000 - n + 1}}},
    "pattern-recognition": lambda n: {"transactions": [[f"i{j}" for j in range(n)] for _ in range(3)],
                                      "max_length": 6},
    "meta-cognitive": lambda n: {"goals": [f"n0 lt n{n}", "n0 lt nowhere"],
                                 "facts": [f"n{i} next n{i + 1}" for i in range(n)], "rules": TRANSITIVE},
    "strategy-selection": lambda n: {"problem_classification": {"uncertainty": "high"}, "top": min(n, 32)},
}
# fmt: on
SMALL, LARGE = (2, 8, 24), (60, 200, 1_000)


def _within(method: str, result: MethodOutcome) -> None:
    """The method's own work counter is inside its bound."""
    value = result.value
    if method == "modal":
        assert all(r["steps"] <= MAX_STEPS + 1 for r in value["results"])
    elif method == "analogical":
        assert value["nodes"] <= MAX_NODES + 1
    elif method == "temporal":
        assert value["paired"] <= MAX_PAIRED
    elif method == "pattern-recognition":  # the baskets of GROWTH are 3 alike: every itemset occurs 3 times
        assert occurrences([["x"] * len(value["frequent_items"])] * 3, value["length"], 2) <= MAX_ITEMSET_WORK
    elif method == "negotiation":
        assert len(value["pairs"]) <= 1_000


def grow(method: str, n: int) -> None:
    try:
        result = one(method, GROWTH[method](n))
    except InputError as exc:  # refused at a documented bound: one line naming the field
        assert str(exc).startswith(f"inputs.{method}") and "\n" not in str(exc)
        return
    assert result.kind == "computed", result.conclusion
    if result.partial:
        partial_said(result)
    assert result.confidence <= (PARTIAL_CONFIDENCE_CAP if result.partial else 1.0)
    _within(method, result)


@pytest.mark.parametrize("n", SMALL)
@pytest.mark.parametrize("method", sorted(GROWTH))
def test_growing_inputs_answer_within_the_bound(method: str, n: int) -> None:
    grow(method, n)


@LONG[0]
@LONG[1]
@pytest.mark.parametrize("n", LARGE)
@pytest.mark.parametrize("method", sorted(GROWTH))
def test_large_inputs_answer_within_the_bound(method: str, n: int) -> None:
    grow(method, n)


def test_long_transactions_lower_the_itemset_length_and_say_so() -> None:
    # three baskets of 24 items at length 6 made 8 million rules (ten minutes): the length is lowered until the
    # itemsets and rules fit the bound (every itemset occurs in the 3 baskets, at least 2 are needed)
    baskets = [[f"i{j}" for j in range(24)] for _ in range(3)]
    result = one("pattern-recognition", {"transactions": baskets, "max_length": 6})
    assert result.value["length"] == 3 and occurrences(baskets, 3, 2) <= MAX_ITEMSET_WORK < occurrences(baskets, 4, 2)
    partial_said(result)
    facts = [f"s{i} has i{j}" for i in range(3) for j in range(200)]
    induced = one("inductive", {"facts": facts, "min_support": 0.5})
    partial_said(induced)
    assert "itemsets searched up to length" in induced.notes[0]
