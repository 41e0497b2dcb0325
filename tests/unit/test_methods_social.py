"""The social reasoning engines: golden problems with textbook answers, properties, and the graph path.

game-theory, negotiation, social-choice and argumentation are pure computations on their inputs;
stakeholder also reads the agents' goals from a real SQLite workspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kg
from kg.errors import InputError
from reasoning.router.methods import engines
from reasoning.router.methods.argumentation import extensions
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs
from reasoning.router.methods.social_choice import decide, pairwise
from reasoning.router.run import reason
from tests.budget import examples

CTX = MethodContext(agent_id="a")


def run(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> MethodOutcome:
    # The social engines import nashpy and with it scipy.optimize (~1.1 s): when a test runs, not at collection,
    # where every xdist worker imports every test module.
    from reasoning.router.methods.social import ENGINES  # noqa: PLC0415

    return ENGINES[method](ctx, inputs)


def game(payoffs: list[list[list[float]]], rows: list[str], cols: list[str]) -> dict[str, Any]:
    return {"players": ["row", "col"], "actions": [rows, cols], "payoffs": payoffs}


# ---------------------------------------------------------------------------------------------- game theory


def test_prisoners_dilemma_has_one_pure_equilibrium_mutual_defection() -> None:
    # Osborne, An Introduction to Game Theory (2004), section 2.2: (Fink, Fink) is the unique equilibrium.
    pd = game([[[2, 2], [0, 3]], [[3, 0], [1, 1]]], ["quiet", "fink"], ["quiet", "fink"])
    result = run("game-theory", pd)
    assert result.kind == "computed"
    assert result.value["equilibria"] == [{"row": "fink", "col": "fink"}]
    assert result.value["payoffs"] == [[1.0, 1.0]]
    assert result.value["degenerate"] is False


def test_matching_pennies_has_only_the_half_half_mixed_equilibrium() -> None:
    # Osborne (2004), section 4.1.2: each player mixes heads and tails with probability 1/2.
    mp = game([[[1, -1], [-1, 1]], [[-1, 1], [1, -1]]], ["heads", "tails"], ["heads", "tails"])
    value = run("game-theory", mp).value
    assert value["equilibria"] == [{"row": {"heads": 0.5, "tails": 0.5}, "col": {"heads": 0.5, "tails": 0.5}}]
    assert value["pure"] == 0 and value["mixed"] == 1
    assert value["payoffs"] == [[0.0, 0.0]]


def test_battle_of_the_sexes_has_two_pure_and_one_mixed_equilibrium() -> None:
    # Osborne (2004), section 4.3 (Bach or Stravinsky): (B, B), (S, S) and ((2/3, 1/3), (1/3, 2/3)).
    bos = game([[[2, 1], [0, 0]], [[0, 0], [1, 2]]], ["bach", "stravinsky"], ["bach", "stravinsky"])
    value = run("game-theory", bos).value
    pure = [e for e in value["equilibria"] if isinstance(e["row"], str)]
    mixed = [e for e in value["equilibria"] if isinstance(e["row"], dict)]
    assert pure == [{"row": "bach", "col": "bach"}, {"row": "stravinsky", "col": "stravinsky"}]
    assert len(mixed) == 1
    assert mixed[0]["row"]["bach"] == pytest.approx(2 / 3) and mixed[0]["col"]["bach"] == pytest.approx(1 / 3)
    assert value["payoffs"][2] == pytest.approx([2 / 3, 2 / 3])


def test_a_degenerate_game_lists_its_extreme_equilibria_and_says_it_is_degenerate() -> None:
    # Every profile of a game with constant payoffs is an equilibrium: support enumeration warns
    # (degenerate), vertex enumeration is added, and the four pure corners are reported once each.
    flat = game([[[1, 1], [1, 1]], [[1, 1], [1, 1]]], ["u", "d"], ["l", "r"])
    result = run("game-theory", flat)
    assert result.value["degenerate"] is True
    assert {(e["row"], e["col"]) for e in result.value["equilibria"]} == {("u", "l"), ("u", "r"), ("d", "l"),
                                                                           ("d", "r")}  # fmt: skip
    assert "degenerate" in result.notes[0]


VON_STENGEL_A = [[3, 3], [2, 5], [0, 6]]


def _von_stengel(b: list[list[int]]) -> dict[str, Any]:
    payoffs = [[[VON_STENGEL_A[i][j], b[i][j]] for j in range(2)] for i in range(3)]
    return {"players": ["I", "II"], "actions": [["T", "M", "B"], ["l", "r"]], "payoffs": payoffs}


def test_von_stengels_3x2_game_has_three_equilibria() -> None:
    # von Stengel, "Computing equilibria for two-person games" (Handbook of Game Theory 3, 2002), the
    # nondegenerate 3x2 example: ((1,0,0),(1,0)), ((4/5,1/5,0),(2/3,1/3)) and ((0,1/3,2/3),(1/3,2/3)).
    value = run("game-theory", _von_stengel([[3, 2], [2, 6], [3, 1]])).value
    assert value["degenerate"] is False
    found = [(e["I"], e["II"]) for e in value["equilibria"]]
    assert found[0] == ("T", "l")
    assert found[1][0] == pytest.approx({"T": 0.8, "M": 0.2, "B": 0.0}) and found[1][1]["l"] == pytest.approx(2 / 3)
    assert found[2][0] == pytest.approx({"T": 0.0, "M": 1 / 3, "B": 2 / 3}) and found[2][1]["l"] == pytest.approx(1 / 3)


def test_von_stengels_degenerate_variant_reports_the_ends_of_its_equilibrium_segment() -> None:
    # Same source, the degenerate variant (II's payoffs against T tie): I plays T and II any mixture with
    # P(l) >= 2/3, a segment whose ends are (1,0) and (2/3,1/3), plus ((0,1/3,2/3),(1/3,2/3)).
    result = run("game-theory", _von_stengel([[3, 3], [2, 6], [3, 1]]))
    assert result.value["degenerate"] is True and result.notes
    found = result.value["equilibria"]
    assert {"I": "T", "II": "l"} in found
    segment_end = [e for e in found if e["I"] == {"T": 1.0, "M": 0.0, "B": 0.0}]
    assert len(segment_end) == 1 and segment_end[0]["II"]["l"] == pytest.approx(2 / 3)
    assert any(isinstance(e["I"], dict) and e["I"]["B"] == pytest.approx(2 / 3) for e in found)
    assert len(found) == 3


@st.composite
def generic_games(draw: st.DrawFn) -> dict[str, Any]:
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    payoff = st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 6))
    cells = draw(st.lists(st.tuples(payoff, payoff), min_size=rows * cols, max_size=rows * cols, unique=True))
    payoffs = [[list(cells[i * cols + j]) for j in range(cols)] for i in range(rows)]
    return game(payoffs, [f"r{i}" for i in range(rows)], [f"c{j}" for j in range(cols)])


@settings(max_examples=examples(60), deadline=None)
@given(generic_games())
def test_every_reported_equilibrium_admits_no_profitable_deviation(g: dict[str, Any]) -> None:
    value = run("game-theory", g).value
    assert value["equilibria"]  # Nash (1951): every finite game has one
    rows, cols = g["actions"]

    def mix(s: str | dict[str, float], acts: list[str]) -> list[float]:
        return [float(s == a) for a in acts] if isinstance(s, str) else [s[a] for a in acts]

    for e in value["equilibria"]:
        x, y = mix(e["row"], rows), mix(e["col"], cols)
        cell = g["payoffs"]
        u1 = [sum(y[j] * cell[i][j][0] for j in range(len(cols))) for i in range(len(rows))]
        u2 = [sum(x[i] * cell[i][j][1] for i in range(len(rows))) for j in range(len(cols))]
        assert max(u1) <= sum(x[i] * u1[i] for i in range(len(rows))) + 1e-6
        assert max(u2) <= sum(y[j] * u2[j] for j in range(len(cols))) + 1e-6
    if not value["degenerate"]:  # Wilson's oddness theorem (1971): a nondegenerate game has an odd number
        assert len(value["equilibria"]) % 2 == 1


def test_a_game_where_vertex_enumeration_fails_still_reports_its_equilibria() -> None:
    # Regression (found by the property below): nashpy's vertex enumeration raised TypeError on this
    # degenerate 2x1 game (the row player is indifferent). Support enumeration still answers.
    result = run("game-theory", game([[[0, 0]], [[0, 1]]], ["r0", "r1"], ["c0"]))
    assert result.value["degenerate"] is True
    assert {"row": "r0", "col": "c0"} in result.value["equilibria"]
    assert {"row": "r1", "col": "c0"} in result.value["equilibria"]
    assert any(n.startswith("vertex enumeration failed (TypeError)") for n in result.notes)


def test_game_inputs_are_checked_with_the_field_path() -> None:
    bad = game([[[1, 1], [1, 1]], [[1], [1, 1]]], ["u", "d"], ["l", "r"])
    with pytest.raises(InputError, match=r"^inputs\.game-theory\.payoffs\[1\]\[0\]: a cell is"):
        run("game-theory", bad)
    with pytest.raises(InputError, match=r"^inputs\.game-theory\.payoffs\[0\]\[1\]\[0\]"):
        run("game-theory", game([[[1, 1], ["x", 1]], [[1, 1], [1, 1]]], ["u", "d"], ["l", "r"]))
    with pytest.raises(InputError, match=r"^inputs\.game-theory\.actions\[1\]: action names must be unique"):
        run("game-theory", game([[[1, 1], [1, 1]]], ["u"], ["l", "l"]))
    six = [f"a{i}" for i in range(6)]
    with pytest.raises(InputError, match=r"^inputs\.game-theory\.actions\[0\]: give 1 to 5 actions, got 6"):
        run("game-theory", game([[[0, 0]] * 2] * 6, six, ["l", "r"]))
    with pytest.raises(MissingInputs):
        run("game-theory", {})


# ---------------------------------------------------------------------------------------------- negotiation


def test_negotiation_zone_and_nash_bargaining_split() -> None:
    # Nash (1950): with u_b = 120 - p, u_s = p - 100 the product (120 - p)(p - 100) peaks at p = 110.
    value = run("negotiation", {"parties": {"ann": {"side": "buy", "reservation": 120},
                                            "bob": {"side": "sell", "reservation": 100}}}).value  # fmt: skip
    assert value["zopa"] == [100.0, 120.0]
    assert value["nash_bargaining"] == 110.0
    assert value["shares"] == {"ann": 10.0, "bob": 10.0}


def test_asymmetric_bargaining_power_moves_the_price_towards_the_stronger_party() -> None:
    # Generalised Nash bargaining: maximise (120 - p)^3 (p - 100)^1 -> p = (1*120 + 3*100) / 4 = 105.
    value = run("negotiation", {"parties": {"ann": {"side": "buy", "reservation": 120, "power": 3},
                                            "bob": {"side": "sell", "reservation": 100}}}).value  # fmt: skip
    assert value["nash_bargaining"] == 105.0


def test_no_zone_of_agreement_when_the_seller_needs_more_than_the_buyer_pays() -> None:
    result = run("negotiation", {"parties": {"ann": {"side": "buy", "reservation": 90},
                                             "bob": {"side": "sell", "reservation": 100}}})  # fmt: skip
    assert result.value["zopa"] is None and result.value["nash_bargaining"] is None
    assert result.conclusion.startswith("no zone of possible agreement")
    with pytest.raises(InputError, match=r"^inputs\.negotiation\.parties\.ann\.side"):
        run("negotiation", {"parties": {"ann": {"side": "lend", "reservation": 1}, "b": {"side": "sell",
                                                                                       "reservation": 2}}})  # fmt: skip


# ---------------------------------------------------------------------------------------------- social choice

# The Tennessee capital election (a standard textbook example, e.g. Wikipedia "Condorcet method"):
# 42% Memphis > Nashville > Chattanooga > Knoxville, 26% Nashville > Chattanooga > Knoxville > Memphis,
# 15% Chattanooga > Knoxville > Nashville > Memphis, 17% Knoxville > Chattanooga > Nashville > Memphis.
TENNESSEE = {
    "candidates": ["memphis", "nashville", "chattanooga", "knoxville"],
    "ballots": [
        {"ranking": ["memphis", "nashville", "chattanooga", "knoxville"], "count": 42},
        {"ranking": ["nashville", "chattanooga", "knoxville", "memphis"], "count": 26},
        {"ranking": ["chattanooga", "knoxville", "nashville", "memphis"], "count": 15},
        {"ranking": ["knoxville", "chattanooga", "nashville", "memphis"], "count": 17},
    ],
}


@pytest.mark.parametrize(("rule", "winner"), [("plurality", "memphis"), ("borda", "nashville"),
                                              ("condorcet", "nashville"), ("irv", "knoxville")])  # fmt: skip
def test_tennessee_winners_under_each_rule(rule: str, winner: str) -> None:
    result = run("social-choice", {"rule": rule, **TENNESSEE})
    assert result.value["winner"] == winner
    assert result.conclusion == f"{winner} wins under {rule}"


def test_borda_scores_by_hand() -> None:
    # m = 4: first 3 points, second 2, third 1. Nashville: 42*2 + 26*3 + 15*1 + 17*1 = 194.
    scores = decide({"rule": "borda", **TENNESSEE})["scores"]
    assert scores == {"memphis": 126, "nashville": 194, "chattanooga": 173, "knoxville": 107}


def test_irv_rounds_eliminate_chattanooga_then_nashville() -> None:
    value = decide({"rule": "irv", **TENNESSEE})
    assert [r.get("eliminated") for r in value["rounds"]] == ["chattanooga", "nashville", None]
    assert value["rounds"][-1]["counts"] == {"memphis": 42, "knoxville": 58}


def test_a_condorcet_cycle_leaves_no_winner() -> None:
    # The Condorcet paradox: a > b > c, b > c > a, c > a > b; each pair is won 2 to 1 around a cycle.
    value = decide({"rule": "condorcet", "candidates": ["a", "b", "c"], "ballots": [
        {"ranking": ["a", "b", "c"]}, {"ranking": ["b", "c", "a"]}, {"ranking": ["c", "a", "b"]}]})  # fmt: skip
    assert value["winner"] is None and value["cycle"] is True
    assert value["smith_set"] == ["a", "b", "c"]
    assert value["pairwise"]["a"]["b"] == 2 and value["pairwise"]["b"]["a"] == 1


def test_approval_voting_counts_approvals_and_needs_approval_ballots() -> None:
    ballots = [{"approved": ["x", "y"], "count": 3}, {"approved": ["y"], "count": 2}, {"approved": ["z"], "count": 4}]
    value = decide({"rule": "approval", "candidates": ["x", "y", "z"], "ballots": ballots})
    assert value["scores"] == {"x": 3, "y": 5, "z": 4} and value["winner"] == "y"
    with pytest.raises(InputError, match=r"^inputs\.social-choice\.ballots\[0\]: the approval rule needs ballots"):
        decide({"rule": "approval", "candidates": ["x"], "ballots": [{"ranking": ["x"]}]})
    with pytest.raises(InputError, match=r"^inputs\.social-choice\.ballots\[0\]\.ranking\[1\]: 'q' is not a candidate"):
        decide({"rule": "borda", "candidates": ["x"], "ballots": [{"ranking": ["x", "q"]}]})


def test_a_plurality_tie_has_no_single_winner() -> None:
    value = decide({"rule": "plurality", "candidates": ["x", "y"], "ballots": [{"ranking": ["x"]}, {"ranking": ["y"]}]})
    assert value["winner"] is None and value["tied"] == ["x", "y"]


_NAMES = ["a", "b", "c", "d"]
_ballots = st.lists(st.fixed_dictionaries({"ranking": st.permutations(_NAMES), "count": st.integers(1, 5)}),
                    min_size=1, max_size=8)  # fmt: skip


@settings(max_examples=examples(150), deadline=None)
@given(_ballots)
def test_a_condorcet_winner_beats_every_other_candidate_pairwise(ballots: list[dict[str, Any]]) -> None:
    election = {"rule": "condorcet", "candidates": _NAMES, "ballots": ballots}
    value = decide(election)
    d = value["pairwise"]
    if value["winner"] is not None:
        assert all(d[value["winner"]][x] > d[x][value["winner"]] for x in _NAMES if x != value["winner"])
        assert value["smith_set"] == [value["winner"]]
    else:  # no candidate beats all others
        assert not any(all(d[w][x] > d[x][w] for x in _NAMES if x != w) for w in _NAMES)
    borda = decide({**election, "rule": "borda"})["scores"]
    voters = sum(b["count"] for b in ballots)
    assert sum(borda.values()) == voters * 6  # every complete ballot hands out 3 + 2 + 1 + 0 points


def test_pairwise_counts_left_out_candidates_below_listed_ones() -> None:
    from reasoning.router.methods.social_choice import Election  # noqa: PLC0415

    e = Election.model_validate({"rule": "condorcet", "candidates": ["a", "b", "c"], "ballots": [{"ranking": ["b"]}]})
    assert pairwise(e) == {"a": {"b": 0, "c": 0}, "b": {"a": 1, "c": 1}, "c": {"a": 0, "b": 0}}


# ---------------------------------------------------------------------------------------------- argumentation


def af(arguments: str, attacks: str, semantics: str) -> list[list[str]]:
    pairs = [list(p) for p in attacks.split()] if attacks else []
    value, _ = extensions({"arguments": list(arguments), "attacks": pairs, "semantics": semantics})
    return value["extensions"]  # type: ignore[no-any-return]


def test_dung_reinstatement_chain() -> None:
    # Dung (1995): a attacks b, b attacks c; a reinstates c. Grounded = preferred = stable = {a, c}.
    for semantics in ("grounded", "preferred", "stable"):
        assert af("abc", "ab bc", semantics) == [["a", "c"]]


def test_nixon_diamond_two_preferred_extensions_and_an_empty_grounded_one() -> None:
    # Dung (1995), the Nixon diamond: a and b attack each other.
    assert af("ab", "ab ba", "grounded") == [[]]
    assert af("ab", "ab ba", "preferred") == [["a"], ["b"]]
    assert af("ab", "ab ba", "stable") == [["a"], ["b"]]


def test_odd_cycle_has_the_empty_preferred_extension_and_no_stable_one() -> None:
    # Dung (1995): an odd attack cycle a -> b -> c -> a has no stable extension.
    assert af("abc", "ab bc ca", "preferred") == [[]]
    assert af("abc", "ab bc ca", "stable") == []
    cycle = {"arguments": ["a", "b", "c"], "attacks": [["a", "b"], ["b", "c"], ["c", "a"]], "semantics": "stable"}
    result = run("argumentation", cycle)
    assert result.conclusion == "no stable extension exists" and result.confidence == 0.0


def test_floating_defeat_d_is_sceptically_accepted_under_preferred_but_not_grounded() -> None:
    # Baroni & Giacomin's floating defeat: a <-> b, both attack c, c attacks d.
    value, _ = extensions({"arguments": list("abcd"), "attacks": [list(p) for p in ("ab", "ba", "ac", "bc", "cd")],
                           "semantics": "preferred"})  # fmt: skip
    assert value["extensions"] == [["a", "d"], ["b", "d"]]
    assert value["sceptical"] == ["d"] and value["grounded"] == []


def test_argumentation_inputs_are_checked_with_the_field_path() -> None:
    with pytest.raises(InputError, match=r"^inputs\.argumentation\.attacks\[1\]\[1\]: 'z' is not one of the arguments"):
        extensions({"arguments": ["a", "b"], "attacks": [["a", "b"], ["b", "z"]]})
    with pytest.raises(InputError, match=r"^inputs\.argumentation\.semantics"):
        extensions({"arguments": ["a"], "semantics": "ideal"})


def test_argumentation_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    many = [f"y{i}" for i in range(61)]
    with pytest.raises(InputError, match=r"^inputs\.argumentation\.arguments: stable semantics enumerates"):
        extensions({"arguments": many, "semantics": "stable"})
    assert extensions({"arguments": many, "semantics": "grounded"})[0]["extensions"] == [sorted(many)]  # no limit
    # three mutual-attack pairs: 27 complete labellings, 8 stable ones (2^3)
    pairs = {"arguments": list("abcdef"), "attacks": [list(p) for p in ("ab", "ba", "cd", "dc", "ef", "fe")]}
    assert len(extensions({**pairs, "semantics": "stable"})[0]["extensions"]) == 8
    monkeypatch.setattr("reasoning.router.methods.argumentation.MAX_LABELLINGS", 10)
    with pytest.raises(InputError, match=r"^inputs\.argumentation: more than 10 complete labellings"):
        extensions({**pairs, "semantics": "preferred"})


def _subsets(items: list[str]) -> Iterator[frozenset[str]]:
    return (frozenset(c) for c in chain.from_iterable(combinations(items, n) for n in range(len(items) + 1)))


def _reference(args: list[str], attacks: set[tuple[str, str]]) -> tuple[set[frozenset[str]], set[frozenset[str]]]:
    """Preferred and stable extensions straight from Dung's definitions, by trying every subset."""

    def conflict_free(s: frozenset[str]) -> bool:
        return not any((x, y) in attacks for x in s for y in s)

    def defends(s: frozenset[str], a: str) -> bool:
        return all(any((z, x) in attacks for z in s) for x in args if (x, a) in attacks)

    admissible = [s for s in _subsets(args) if conflict_free(s) and all(defends(s, a) for a in s)]
    preferred = {s for s in admissible if not any(s < t for t in admissible)}
    stable = {s for s in _subsets(args) if conflict_free(s)
              and all(any((z, x) in attacks for z in s) for x in args if x not in s)}  # fmt: skip
    return preferred, stable


@st.composite
def frameworks(draw: st.DrawFn) -> tuple[list[str], set[tuple[str, str]]]:
    args = [f"x{i}" for i in range(draw(st.integers(1, 6)))]
    pairs = [(x, y) for x in args for y in args]
    return args, set(draw(st.lists(st.sampled_from(pairs), max_size=12)))


@settings(max_examples=examples(150), deadline=None)
@given(frameworks())
def test_extensions_agree_with_dungs_definitions(framework: tuple[list[str], set[tuple[str, str]]]) -> None:
    args, attacks = framework
    data = {"arguments": args, "attacks": [list(p) for p in sorted(attacks)]}
    grounded = extensions({**data, "semantics": "grounded"})[0]["extensions"][0]
    preferred = extensions({**data, "semantics": "preferred"})[0]["extensions"]
    stable = extensions({**data, "semantics": "stable"})[0]["extensions"]
    assert all(set(grounded) <= set(p) for p in preferred)  # grounded is inside every preferred extension
    assert all(s in preferred for s in stable)  # every stable extension is preferred
    want_preferred, want_stable = _reference(args, attacks)
    assert {frozenset(p) for p in preferred} == want_preferred
    assert {frozenset(s) for s in stable} == want_stable


# ---------------------------------------------------------------------------------------------- stakeholder


def test_stakeholder_grid_from_inputs() -> None:
    # Mendelow's grid (1991): high power + high interest -> manage closely, and so on.
    people = [
        {"name": "ceo", "power": 0.9, "interest": 0.8},
        {"name": "regulator", "power": 0.8, "interest": 0.2},
        {"name": "staff", "power": 0.3, "interest": 0.9},
        {"name": "press", "power": 0.1, "interest": 0.1},
    ]
    result = run("stakeholder", {"stakeholders": people})
    assert result.value["grid"] == {"manage closely": ["ceo"], "keep satisfied": ["regulator"],
                                    "keep informed": ["staff"], "monitor": ["press"]}  # fmt: skip
    with pytest.raises(InputError, match=r"^inputs\.stakeholder\.stakeholders\[0\]\.power"):
        run("stakeholder", {"stakeholders": [{"name": "x", "power": 2, "interest": 0}]})


@pytest.fixture
def workspace_ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[kg.Workspace, MethodContext]]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "w") as ws:
        for agent in ("ceo", "ops", "intern", "outsider"):
            ws.agents.add(agent)
        yield ws, MethodContext(agent_id="ceo", workspace=ws)


def test_stakeholder_grid_from_the_visible_goals(workspace_ctx: tuple[kg.Workspace, MethodContext]) -> None:
    ws, ctx = workspace_ctx
    g1 = ws.bdi.add("goal", "ceo", "grow revenue in europe", priority=9, hierarchy_level="strategic", scope="global")
    g2 = ws.bdi.add("goal", "ops", "open the europe warehouse", priority=6, hierarchy_level="operational",
                    scope="global")  # fmt: skip
    g3 = ws.bdi.add("goal", "intern", "tidy the europe wiki", priority=2, hierarchy_level="operational", scope="global")
    ws.bdi.add("goal", "outsider", "secret europe plan", priority=10, hierarchy_level="strategic")  # private scope
    ws.bdi.add("goal", "ops", "cut costs", priority=8, hierarchy_level="tactical", scope="global")  # off topic
    result = run("stakeholder", {"topic": "Europe expansion"}, ctx)
    rows = {r["name"]: r for r in result.value["stakeholders"]}
    assert set(rows) == {"ceo", "ops", "intern"}  # the outsider's goal is private to it
    assert rows["ceo"]["power"] == 1.0 and rows["ceo"]["interest"] == 1.0
    assert rows["ops"]["power"] == 0.3 and rows["ops"]["interest"] == pytest.approx(6 / 9, abs=1e-6)
    assert rows["intern"]["interest"] == pytest.approx(2 / 9, abs=1e-6)
    assert result.value["grid"]["manage closely"] == ["ceo"] and result.value["grid"]["keep informed"] == ["ops"]
    assert sorted(result.used) == sorted([g1.uid, g2.uid, g3.uid])
    with pytest.raises(MissingInputs):
        run("stakeholder", {"topic": "antarctica"}, ctx)


def test_negotiation_and_argumentation_read_the_visible_facts(
    workspace_ctx: tuple[kg.Workspace, MethodContext],
) -> None:
    ws, ctx = workspace_ctx
    used = [ws.facts.assert_fact("ceo", "acme", "negotiationSide", "buy")[0].uid,
            ws.facts.assert_fact("ceo", "acme", "reservationPrice", "$1,200")[0].uid,
            ws.facts.assert_fact("ceo", "globex", "negotiationSide", "sell")[0].uid,
            ws.facts.assert_fact("ceo", "globex", "reservationPrice", "1000")[0].uid]  # fmt: skip
    ws.facts.assert_fact("outsider", "initech", "negotiationSide", "sell")  # private: not a party for ceo
    ws.facts.assert_fact("outsider", "initech", "reservationPrice", "500")
    deal = run("negotiation", {}, ctx)
    assert deal.value["zopa"] == [1000.0, 1200.0] and deal.value["nash_bargaining"] == 1100.0
    assert sorted(deal.used) == sorted(used)
    attacks = [ws.facts.assert_fact("ceo", x, "attacks", y)[0].uid for x, y in (("a1", "a2"), ("a2", "a3"))]
    debate = run("argumentation", {"semantics": "stable"}, ctx)
    assert debate.value["extensions"] == [["a1", "a3"]] and debate.used == attacks
    with pytest.raises(MissingInputs):
        run("negotiation", {}, MethodContext(agent_id="intern", workspace=ws))


def test_social_engines_are_registered_and_reached_through_the_router() -> None:
    assert {"game-theory", "negotiation", "social-choice", "argumentation", "stakeholder"} <= set(engines())
    result = reason(MethodContext(agent_id="a"), method="social_choice", inputs={"rule": "borda", **TENNESSEE})
    assert result.results[0].method == "social-choice" and result.results[0].value["winner"] == "nashville"


@pytest.mark.parametrize(
    ("method", "inputs", "field"),
    [
        (
            "social-choice",
            {"rule": "plurality", "candidates": ["x", "y", "x"], "ballots": [{"ranking": ["x", "y"]}]},
            "candidates",
        ),
        ("argumentation", {"arguments": ["p", "q", "p"]}, "arguments"),
        (
            "heuristic",
            {"options": ["x", "x"], "cues": [{"name": "c", "validity": 0.8, "values": {"x": True}}]},
            "options",
        ),
    ],
)
def test_a_name_given_twice_is_refused_naming_its_list(method: str, inputs: dict[str, Any], field: str) -> None:
    """The engines whose names must be distinct (fields.distinct; heuristic is an experience method) say which list."""
    with pytest.raises(InputError, match=rf"^inputs\.{method}\.{field}: {field} must be unique"):
        engines()[method](CTX, inputs)
