"""Methods as deep as their names, against textbook answers: modal validity in K, T, S4, S5 (tableau, with checked
counter-models), Copeland / Schulze / Kemeny / STV, structure mapping across renamed relations (Duncker's
radiation problem), and the fast and frugal heuristics (take-the-best, tallying, recognition)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from reasoning.router import MethodContext, reason
from reasoning.router.methods.modal import holds
from reasoning.router.methods.modal_logic import Formula, decide, parse, show
from reasoning.router.methods.social_choice import decide as elect
from tests.budget import examples
from tests.unit.test_methods_social import TENNESSEE

CTX = MethodContext("a")


def one(method: str, inputs: dict[str, Any]) -> Any:
    return reason(CTX, method=method, inputs={method: inputs}).results[0]


def formula(text: str) -> Formula:
    return parse(text, lambda rule: InputError("f", rule))


# ---------------------------------------------------------------------------------------------- modal

# Hughes & Cresswell, A New Introduction to Modal Logic (1996), ch. 2-3; Blackburn, de Rijke & Venema, Modal Logic
# (2001), table 4.1: K holds in every frame; T (box p -> p) needs reflexivity, 4 (box p -> box box p)
# transitivity, 5 (dia p -> box dia p) euclidean frames; S4 = K + T + 4, S5 = K + T + 5.
AXIOMS = {"K": "box(p -> q) -> (box p -> box q)", "T": "box p -> p", "4": "box p -> box box p",
          "5": "dia p -> box dia p"}  # fmt: skip
VALID = {  # axiom -> the logics (of K, T, S4, S5) in which it is valid
    "K": {"K", "T", "S4", "S5"}, "T": {"T", "S4", "S5"}, "4": {"S4", "S5"}, "5": {"S5"},
}  # fmt: skip


def _reflexive(n: set[str], r: set[tuple[str, str]]) -> bool:
    return all((w, w) in r for w in n)


def _transitive(r: set[tuple[str, str]]) -> bool:
    return all((a, d) in r for a, b in r for c, d in r if b == c)


FRAME: dict[str, Callable[[set[str], set[tuple[str, str]]], bool]] = {
    "K": lambda n, r: True, "T": _reflexive, "S4": lambda n, r: _reflexive(n, r) and _transitive(r),
    "S5": lambda n, r: all((a, b) in r for a in n for b in n)}  # fmt: skip


@pytest.mark.parametrize("logic", ["K", "T", "S4", "S5"])
@pytest.mark.parametrize("axiom", sorted(AXIOMS))
def test_modal_axioms_valid_exactly_in_their_logics(axiom: str, logic: str) -> None:
    row = decide(formula(AXIOMS[axiom]), logic, "validity")  # type: ignore[arg-type]
    assert row["answer"] is (logic in VALID[axiom])
    if row["answer"] is False:  # the counter-model is a frame of the logic that falsifies the axiom at its root
        model = row["counter_model"]
        names = set(model["worlds"])
        links = {(a, b) for a, b in model["access"]}
        assert FRAME[logic](names, links)
        worlds = {w: set(ps) for w, ps in model["worlds"].items()}
        access = {w: {b for a, b in links if a == w} for w in worlds}
        assert holds(AXIOMS[axiom], model["actual"], (worlds, access)) is False


def test_modal_engine_reports_validity_and_the_counter_model() -> None:
    result = one("modal", {"logic": "T", "valid": [AXIOMS["T"], AXIOMS["4"]], "satisfiable": ["dia p and box not p"]})
    assert result.kind == "computed" and not result.partial and result.confidence == 1.0
    rows = result.value["results"]
    assert [r["answer"] for r in rows] == [True, False, False]
    assert "counter_model" in rows[1] and rows[1]["counter_model"]["actual"] == "w0"
    assert "(box p -> p) is valid" in result.conclusion and "is unsatisfiable" in result.conclusion


def _brute_valid(f: Formula, logic: str) -> bool:
    """Validity on every frame of the logic with at most 2 worlds and every valuation of p, q (a necessary check)."""
    text = show(f)
    for n in (1, 2):
        names = [f"u{i}" for i in range(n)]
        pairs = [(a, b) for a in names for b in names]
        for mask in range(1 << len(pairs)):
            links = {p for i, p in enumerate(pairs) if mask >> i & 1}
            if not FRAME[logic](set(names), links):
                continue
            access = {w: {b for a, b in links if a == w} for w in names}
            for bits in product([0, 1], repeat=2 * n):
                worlds = {w: {p for j, p in enumerate("pq") if bits[2 * i + j]} for i, w in enumerate(names)}
                if not all(holds(text, w, (worlds, access)) for w in names):
                    return False
    return True


_atoms = st.sampled_from([("atom", "p"), ("atom", "q")])
_formulas = st.recursive(_atoms, lambda inner: st.one_of(
    st.tuples(st.sampled_from(["not", "box", "dia"]), inner),
    st.tuples(st.sampled_from(["and", "or", "imp"]), inner, inner)), max_leaves=5)  # fmt: skip


@settings(max_examples=examples(120), deadline=None)
@given(_formulas, st.sampled_from(["K", "T", "S4", "S5"]))
def test_tableau_validity_agrees_with_small_models(f: Formula, logic: str) -> None:
    row = decide(f, logic, "validity")  # type: ignore[arg-type]
    assert row["answer"] is not None  # small formulas are always decided within the bounds
    if row["answer"]:  # valid: no small frame of the logic falsifies it
        assert _brute_valid(f, logic)
    # not valid: decide() already checked its counter-model by evaluation before reporting it


# ---------------------------------------------------------------------------------------------- social choice

# Wikipedia, "Condorcet method" / "Schulze method" / "Copeland's method" / "Kemeny-Young method": the Tennessee
# capital election (TENNESSEE, from test_methods_social). Nashville is the Condorcet winner; Copeland scores
# 0 / 3 / 2 / 1; Kemeny's ranking is Nashville > Chattanooga > Knoxville > Memphis with score 393.


def test_tennessee_under_copeland_schulze_and_kemeny() -> None:
    copeland = elect({"rule": "copeland", **TENNESSEE})
    assert copeland["winner"] == "nashville"
    assert copeland["scores"] == {"memphis": 0, "nashville": 3, "chattanooga": 2, "knoxville": 1}
    assert elect({"rule": "schulze", **TENNESSEE})["winner"] == "nashville"
    kemeny = elect({"rule": "kemeny", **TENNESSEE})
    assert kemeny["ranking"] == ["nashville", "chattanooga", "knoxville", "memphis"] and kemeny["agreement"] == 393


def test_schulze_wikipedia_example() -> None:
    # Wikipedia, "Schulze method", example with 45 voters: strongest paths d[E, *] = 25, 28, 28, 31; winner E,
    # ranking E > A > C > B > D.
    votes = [(5, "ACBED"), (5, "ADECB"), (8, "BEDAC"), (3, "CABED"), (7, "CAEBD"), (2, "CBADE"), (7, "DCEBA"),
             (8, "EBADC")]  # fmt: skip
    value = elect({"rule": "schulze", "candidates": list("ABCDE"),
                   "ballots": [{"ranking": list(b), "count": c} for c, b in votes]})  # fmt: skip
    assert value["winner"] == "E" and value["ranking"] == list("EACBD")
    assert value["strengths"]["E"] == {"A": 25, "B": 28, "C": 28, "D": 31}


def test_stv_wikipedia_food_election() -> None:
    # Wikipedia, "Single transferable vote", the party food example: 20 voters, 3 seats, Droop quota 6;
    # chocolate is elected with a surplus of 6 passed on at half weight, then oranges (after pears are
    # eliminated), then strawberries.
    votes = [(4, ["oranges"]), (2, ["pears", "oranges"]), (8, ["chocolate", "strawberries"]),
             (4, ["chocolate", "hamburgers"]), (1, ["strawberries"]), (1, ["hamburgers"])]  # fmt: skip
    value = elect({"rule": "stv", "seats": 3, "candidates": ["oranges", "pears", "chocolate", "strawberries",
                                                             "hamburgers"],
                   "ballots": [{"ranking": r, "count": c} for c, r in votes]})  # fmt: skip
    assert value["quota"] == 6 and value["elected"] == ["chocolate", "oranges", "strawberries"]
    assert value["rounds"][1]["counts"] == {"oranges": 4, "pears": 2, "strawberries": 5, "hamburgers": 3}
    assert one("social-choice", {"rule": "stv", "seats": 3, "candidates": ["oranges", "pears", "chocolate",
               "strawberries", "hamburgers"], "ballots": [{"ranking": r, "count": c} for c, r in votes]}
               ).conclusion == "elected under stv (3 seats): chocolate, oranges, strawberries"  # fmt: skip


def test_kemeny_is_refused_past_its_exact_bound() -> None:
    names = [f"c{i}" for i in range(13)]
    with pytest.raises(InputError, match=r"^inputs\.social-choice\.candidates: kemeny is computed exactly for at "):
        elect({"rule": "kemeny", "candidates": names, "ballots": [{"ranking": names}]})


# ---------------------------------------------------------------------------------------------- analogical

# Gick & Holyoak, "Analogical problem solving" (Cognitive Psychology, 1980): the general divides his army into
# small groups that converge on the fortress from many roads; Duncker's radiation problem is solved by analogy:
# many weak rays converging on the tumour. The two stories share roles, not relation names.
FORTRESS = ["general controls army", "army canOvercome fortress", "general wantsToCapture fortress",
            "fullArmy harms villages", "fortress surroundedBy villages", "army splitInto smallGroups",
            "smallGroups convergeOn fortress", "smallGroups spare villages"]  # fmt: skip
TUMOUR = ["doctor controls rays", "rays canDestroy tumour", "doctor wantsToDestroy tumour",
          "fullRays harms healthyTissue", "tumour surroundedBy healthyTissue"]  # fmt: skip


def test_duncker_radiation_problem_suggests_splitting_the_rays() -> None:
    result = one("analogical", {"source": FORTRESS, "target": TUMOUR})
    assert result.value["mapping"] == {"general": "doctor", "army": "rays", "fortress": "tumour",
                                       "fullArmy": "fullRays", "villages": "healthyTissue"}  # fmt: skip
    assert result.value["relations"] == {"canOvercome": "canDestroy", "wantsToCapture": "wantsToDestroy"}
    assert result.value["candidate_inferences"] == ["rays splitInto [smallGroups]", "[smallGroups] convergeOn tumour",
                                                    "[smallGroups] spare healthyTissue"]  # fmt: skip
    assert "suggests rays splitInto [smallGroups]; [smallGroups] convergeOn tumour" in result.conclusion
    # without renaming only the same-named relations map: the goal relations are lost
    strict = one("analogical", {"source": FORTRESS, "target": TUMOUR, "rename": False})
    assert "army" in strict.value["mapping"] and strict.value["relations"] == {}
    assert strict.confidence < result.confidence
    groups = [["canOvercome", "canDestroy"], ["wantsToCapture", "wantsToDestroy"]]
    similar = one("analogical", {"source": FORTRESS, "target": TUMOUR, "rename": False, "similar": groups})
    assert similar.value["relations"] == result.value["relations"] and similar.confidence > result.confidence


# ---------------------------------------------------------------------------------------------- heuristics

# Gigerenzer & Goldstein, "Reasoning the fast and frugal way" (Psychological Review, 1996), table 1: the cues of
# the German-cities task, by validity. Hamburg and Cologne agree on every cue above "state capital" (Hamburg is a
# city-state, Cologne's state capital is Duesseldorf), so take-the-best stops there: Hamburg is larger (1.7 M vs
# 1.0 M inhabitants).
CUES = [("national capital", 1.0, 0, 0), ("exposition site", 0.91, 1, 1), ("soccer team", 0.87, 1, 1),
        ("intercity train", 0.78, 1, 1), ("state capital", 0.77, 1, 0), ("license plate", 0.75, 1, 1),
        ("university", 0.71, 1, 1), ("industrial belt", 0.56, 0, 0), ("east germany", 0.51, 0, 0)]  # fmt: skip
CITIES = {"options": ["cologne", "hamburg"], "criterion": "more inhabitants",
          "cues": [{"name": n, "validity": v, "values": {"hamburg": bool(h), "cologne": bool(c)}}
                   for n, v, h, c in CUES]}  # fmt: skip


def test_take_the_best_stops_at_the_first_discriminating_cue() -> None:
    result = one("heuristic", {"rule": "take-the-best", **CITIES})
    assert result.value["choice"] == "hamburg" and result.value["decided_by"] == "state capital"
    assert result.confidence == 0.77  # the validity of the cue that decided
    assert result.trace[-1].endswith("hamburg positive; stop") and len(result.trace) == 5  # four cues tied before it


def test_tallying_counts_cues_and_ignores_their_order() -> None:
    result = one("heuristic", {"rule": "tallying", **CITIES})
    assert result.value["tally"] == {"cologne": 5, "hamburg": 6} and result.value["choice"] == "hamburg"
    assert result.confidence == pytest.approx(6 / 11)


def test_recognition_heuristic_san_diego_and_san_antonio() -> None:
    # Goldstein & Gigerenzer, "Models of ecological rationality: the recognition heuristic" (Psychological Review,
    # 2002): German students who had heard of San Diego but not of San Antonio inferred that San Diego is larger
    # (it is): recognition alone decides.
    result = one("heuristic", {"rule": "recognition", "options": ["san antonio", "san diego"],
                               "recognized": ["san diego"], "recognition_validity": 0.8})  # fmt: skip
    assert result.value["choice"] == "san diego" and result.value["decided_by"] == "recognition"
    assert result.confidence == 0.8
    both = one("heuristic", {"rule": "recognition", "recognized": ["cologne", "hamburg"], **CITIES})
    assert both.value["choice"] == "hamburg" and both.value["decided_by"] == "state capital"  # then take-the-best
    neither = one("heuristic", {"rule": "recognition", "recognized": [], "options": ["x", "y"]})
    assert neither.value["decided_by"] == "guess" and neither.confidence == 0.5
