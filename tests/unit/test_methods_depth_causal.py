"""Issue 31, depth of the causal methods, against textbook answers: identification beyond the back-door (front-door,
napkin, bow arc) with estimates, and counterfactuals over probabilistic structural causal models."""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import pytest

from kg.errors import InputError
from reasoning.router import MethodContext, reason
from reasoning.router.methods.causal_effect import FRONT_DOOR_EXAMPLE
from reasoning.router.methods.discrete import DiscreteNetwork, compile_network, query
from reasoning.router.methods.factors import Budget
from reasoning.router.methods.identification import NotIdentifiable, identify, project, text

CTX = MethodContext("a")
FRONT_DOOR = [["Smoking", "Tar"], ["Tar", "Cancer"], ["Genotype", "Smoking"], ["Genotype", "Cancer"]]


def one(method: str, inputs: dict[str, Any]) -> Any:
    return reason(CTX, method=method, inputs={method: inputs}).results[0]


def formula(edges: list[tuple[str, str]], latent: list[str], x: str, y: str) -> str:
    graph = nx.DiGraph(edges)
    order = [n for n in nx.topological_sort(graph) if n not in latent]
    return text(identify(project(graph, latent), {y}, {x}, order, "causal"))


def test_front_door_is_identified_and_estimated_as_in_the_primer() -> None:
    # Pearl, Glymour & Jewell, Causal Inference in Statistics: A Primer (2016), section 3.4, table 3.1: with the
    # genotype unobserved there is no back-door set, but the front-door formula gives
    # P(cancer | do(smoking)) = 0.4525 and P(cancer | do(no smoking)) = 0.4975.
    rows = [{"Smoking": s, "Tar": t, "Cancer": c, "count": n} for s, t, c, n in FRONT_DOOR_EXAMPLE]
    base = {"edges": FRONT_DOOR, "latent": ["Genotype"], "treatment": "Smoking", "outcome": "Cancer"}
    found = one("causal", base)
    assert found.value["adjustment_set"] is None and found.value["identification"]["identifiable"] is True
    assert "not identifiable" not in found.conclusion
    assert found.value["identification"]["formula"] == (
        "P(Cancer | do(Smoking)) = Σ_{Tar} [Σ_{Smoking} P(Smoking) P(Cancer | Smoking, Tar)] P(Tar | Smoking)"
    )
    estimate = one("causal", {**base, "data": rows})
    assert estimate.value["effect"]["True"] == pytest.approx(0.4525)
    assert estimate.value["effect"]["False"] == pytest.approx(0.4975)
    assert estimate.conclusion.startswith("Smoking = False gives the most Cancer")
    assert 0.5 < estimate.confidence < 1.0  # 800 people: a sample, never certain


def test_bow_arc_is_not_identifiable() -> None:
    # Pearl, Causality (2000), fig. 3.8(a); Shpitser & Pearl (2006): the bow arc is the smallest hedge.
    with pytest.raises(NotIdentifiable):
        formula([("U", "X"), ("U", "Y"), ("X", "Y")], ["U"], "X", "Y")
    result = one("causal", {"edges": [["X", "Y"]], "bidirected": [["X", "Y"]], "treatment": "X", "outcome": "Y"})
    assert result.value["identification"]["identifiable"] is False and "not identifiable" in result.conclusion


def test_napkin_is_identifiable_and_its_estimate_equals_the_true_intervention() -> None:
    # The napkin graph (Pearl & Mackenzie, The Book of Why, 2018, ch. 7; Shpitser & Pearl 2006): Z2 -> Z1 -> X -> Y
    # with Z2 <-> X and Z2 <-> Y. No back-door or front-door set, yet P(y | do(x)) =
    # Σ_z2 P(x, y | z1, z2) P(z2) / Σ_z2 P(x | z1, z2) P(z2).
    edges = [("Z2", "Z1"), ("Z1", "X"), ("X", "Y"), ("U1", "Z2"), ("U1", "X"), ("U2", "Z2"), ("U2", "Y")]
    assert formula(edges, ["U1", "U2"], "X", "Y") == (
        "(Σ_{Z2} P(Z2) P(X | Z1, Z2) P(Y | X, Z1, Z2)) / (Σ_{Y, Z2} P(Z2) P(X | Z1, Z2) P(Y | X, Z1, Z2))"
    )
    # estimate from a network with the latents, against the truth computed by graph surgery on the full network
    network = random_network(edges, seed=7)
    result = one("causal", {"network": network, "latent": ["U1", "U2"], "treatment": "X", "outcome": "Y",
                            "outcome_value": "1"})  # fmt: skip
    truth = compile_network(DiscreteNetwork.model_validate(network), "causal")
    for x in ("0", "1"):
        done = query(truth, ["Y"], {}, Budget("causal", "network"), do={"X": x})
        assert done is not None
        assert result.value["effect"][x] == pytest.approx(float(done.table[1]), abs=1e-9)


def test_front_door_from_a_network_with_the_latent_matches_graph_surgery() -> None:
    edges = [("U", "X"), ("U", "Y"), ("X", "M"), ("M", "Y")]
    network = random_network(edges, seed=3)
    result = one("causal", {"network": network, "latent": ["U"], "treatment": "X", "outcome": "Y",
                            "outcome_value": "1"})  # fmt: skip
    truth = compile_network(DiscreteNetwork.model_validate(network), "causal")
    for x in ("0", "1"):
        done = query(truth, ["Y"], {}, Budget("causal", "network"), do={"X": x})
        assert done is not None and result.value["effect"][x] == pytest.approx(float(done.table[1]), abs=1e-9)
    observed = query(truth, ["Y"], {"X": "1"}, Budget("causal", "network"))
    assert observed is not None and abs(float(observed.table[1]) - result.value["effect"]["1"]) > 1e-3  # confounded


def random_network(edges: list[tuple[str, str]], seed: int) -> dict[str, Any]:
    """Binary variables with seeded random tables (strictly between 0.1 and 0.9: positivity holds)."""
    import numpy as np  # noqa: PLC0415 - only these helpers need it

    rng = np.random.default_rng(seed)
    graph = nx.DiGraph(edges)
    variables: dict[str, Any] = {}
    for node in nx.lexicographical_topological_sort(graph):
        parents = sorted(graph.predecessors(node))
        cpt = {}
        for row in itertools.product("01", repeat=len(parents)):
            p = float(rng.uniform(0.1, 0.9))
            cpt[",".join(row)] = [1 - p, p]
        variables[node] = {"values": ["0", "1"], "parents": parents, "cpt": cpt}
    return {"variables": variables}


def test_no_back_door_path_needs_no_adjustment() -> None:
    result = one("causal", {"edges": [["X", "Y"], ["Z", "Y"]], "treatment": "X", "outcome": "Y"})
    assert result.value["adjustment_set"] == [] and result.conclusion.startswith("no adjustment needed")
    # ID keeps Z (independent of X): Σ_z P(y | x, z) P(z), which equals P(y | x) here
    assert result.value["identification"]["formula"] == "P(Y | do(X)) = Σ_{Z} P(Y | X, Z) P(Z)"


def test_id_inputs_are_checked() -> None:
    with pytest.raises(InputError) as err:
        one("causal", {"edges": FRONT_DOOR, "latent": ["Genotype"], "treatment": "Smoking", "outcome": "Cancer",
                       "data": [{"Smoking": True, "Cancer": True}]})  # fmt: skip
    assert err.value.field == "inputs.causal.data.0.Tar"
    with pytest.raises(InputError) as err:
        one("causal", {"edges": [["A", "B"]], "treatment": "A", "outcome": "A"})
    assert err.value.field == "inputs.causal.outcome"


# ---------------------------------------------------------------------------------------------- counterfactuals


def firing_squad(p: float, q: float) -> dict[str, Any]:
    return {"exogenous": {"U": {"values": [0, 1], "probabilities": [1 - p, p]},
                          "W": {"values": [0, 1], "probabilities": [1 - q, q]}},
            "equations": {"C": "U", "A": "max(C, W)", "B": "C", "D": "max(A, B)"}}  # fmt: skip


@pytest.mark.parametrize(("p", "q"), [(0.6, 0.3), (0.9, 0.5), (0.1, 0.1)])
def test_probabilistic_firing_squad_by_abduction_action_prediction(p: float, q: float) -> None:
    # Pearl, Causality (2000), section 7.1.2 (the probabilistic firing squad): the court orders with probability p,
    # rifleman A is nervous and shoots anyway with probability q. Given the prisoner is dead, the probability he
    # would be alive had A not shot is P(not D_{not A} | D) = (1 - p) q / (1 - (1 - p)(1 - q)).
    result = one("counterfactual", {**firing_squad(p, q), "evidence": {"D": 1}, "intervention": {"A": 0},
                                    "query": "D", "query_value": 0})  # fmt: skip
    assert result.kind == "computed" and result.value["probability"] == pytest.approx(
        (1 - p) * q / (1 - (1 - p) * (1 - q))
    )
    assert result.value["factual_probability"] == 0.0  # factually he is dead in every world consistent with D
    assert result.conclusion.startswith("P(D_{A = 0} = 0 | D = 1) = ")
    assert result.confidence == pytest.approx(max(result.value["probability"], 1 - result.value["probability"]))


def test_probability_of_necessity_matches_tian_and_pearl() -> None:
    # Y = X or U with U independent of X, P(U = 1) = u (a monotonic model): Tian & Pearl (2000) give the probability
    # of necessity PN = P(Y_{x=0} = 0 | X = 1, Y = 1) = (P(y | x) - P(y | x')) / P(y | x) = (1 - u) / 1 = 1 - u.
    u = 0.3
    model = {"exogenous": {"UX": {"values": [0, 1], "probabilities": [0.5, 0.5]},
                           "U": {"values": [0, 1], "probabilities": [1 - u, u]}},
             "equations": {"X": "UX", "Y": "max(X, U)"}, "evidence": {"X": 1, "Y": 1}, "intervention": {"X": 0},
             "query": "Y", "query_value": 0}  # fmt: skip
    assert one("counterfactual", model).value["probability"] == pytest.approx(1 - u)


def test_scm_inputs_are_checked() -> None:
    base = {**firing_squad(0.5, 0.5), "intervention": {"A": 0}, "query": "D"}
    with pytest.raises(InputError) as err:
        one("counterfactual", {**base, "equations": {**base["equations"], "C": "Z"}})
    assert err.value.field == "inputs.counterfactual.equations.C" and "'Z'" in err.value.rule
    with pytest.raises(InputError, match="cyclic"):
        one("counterfactual", {**base, "equations": {**base["equations"], "C": "D"}})
    with pytest.raises(InputError) as err:
        one("counterfactual", {**base, "evidence": {"D": 5}})
    assert err.value.field == "inputs.counterfactual.evidence"
