"""Bad input never crashes a method: golden inputs of the formal, probabilistic and causal methods, mutated
at random (values replaced, keys dropped or added), either compute or raise one InputError naming the
method's inputs (found: unhashable 'actual' worlds, list-valued pairs, -0.0 standard deviations)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from reasoning.router import MethodContext, reason
from tests.budget import examples

NET = {"nodes": {"A": {"parents": [], "cpt": {"": 0.3}}, "B": {"parents": ["A"], "cpt": {"T": 0.9, "F": 0.2}}}}
RULE = {"name": "r", "conditions": [{"subject": "?x", "predicate": "is", "object": "man"}],
        "conclusion": {"subject": "?x", "predicate": "is", "object": "mortal"}}  # fmt: skip
GOLDEN: dict[str, dict[str, Any]] = {
    "deductive": {"facts": ["s is man"], "rules": [RULE], "goal": "s is mortal"},
    "inductive": {"facts": ["t1 has a", "t1 has b", "t2 has a", "t2 has b"], "min_support": 0.5},
    "abductive": {"facts": [], "rules": [RULE], "observation": "s is mortal"},
    "analogical": {"source": ["a r b", "b s c"], "target": ["x r y", "y s z"]},
    "modal": {"worlds": {"w1": ["p"], "w2": ["q"]}, "access": [["w1", "w2"]], "actual": "w1", "query": ["dia(q)"]},
    "deontic": {"norms": [{"modality": "prohibition", "action": "x", "when": ["a b c"]}], "facts": ["a b c"]},
    "temporal": {"intervals": {"a": [1, 3], "b": [2, 4]}, "pair": ["a", "b"], "as_of": 2},
    "bayesian": {"network": NET, "evidence": {"B": True}, "query": "A"},
    "decision-theory": {"acts": ["x", "y"], "states": ["s", "t"], "payoffs": [[1, 2], [3, 0]],
                        "probabilities": [0.5, 0.5]},
    "expected-utility": {"options": [{"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]}]},
    "info-theory": {"distribution": {"a": 0.5, "b": 0.5}, "joint": {"a,b": 1.0}},
    "monte-carlo": {"variables": {"x": {"dist": "normal", "sd": 1}}, "formula": "x * 2", "samples": 200},
    "causal": {"edges": [["Z", "X"], ["Z", "Y"], ["X", "Y"]], "treatment": "X", "outcome": "Y",
               "data": [{"X": 1, "Y": True, "Z": 0, "count": 3}, {"X": 0, "Y": False, "Z": 0}]},
    "counterfactual": {"facts": ["s is man"], "rules": [RULE], "goal": "s is mortal", "without": ["s is man"]},
    "interventional": {"network": NET, "do": {"A": True}, "query": "B"},
    "root-cause": {"edges": [["a", "b"], ["b", "c"]], "symptoms": ["c"]},
    "systems-thinking": {"links": [["a", "b", "+"], ["b", "a", "-"]]},
}  # fmt: skip

ATOMS = st.sampled_from([None, True, False, 0, -1, 1.5, float("nan"), float("inf"), -0.0, "", "x", "a b c", "?x",
                         [], {}, [[]], [1, 2], {"": 1}, "T,F", 10**20])  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)
    return value


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(sorted(GOLDEN)), st.data())
def test_mutated_inputs_compute_or_raise_an_input_error(method: str, data: st.DataObject) -> None:
    inputs = copy.deepcopy(GOLDEN[method])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(inputs)))
        inputs = _set(inputs, path, copy.deepcopy(data.draw(ATOMS)))  # atoms are shared objects
    try:
        result = reason(MethodContext("a"), method=method, inputs={method: inputs})
    except InputError as exc:
        assert exc.field.startswith(("inputs", "method")), exc.field
        assert "\n" not in str(exc)
        return
    json.dumps(result.model_dump(mode="json"))  # the result is plain JSON
    assert 0.0 <= result.results[0].confidence <= 1.0


@pytest.mark.parametrize("method", sorted(GOLDEN))
def test_every_golden_input_computes(method: str) -> None:
    assert reason(MethodContext("a"), method=method, inputs={method: GOLDEN[method]}).results[0].kind == "computed"
