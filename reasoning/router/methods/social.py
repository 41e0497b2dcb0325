"""Engines of the social methods: game-theory, negotiation, social-choice, argumentation, stakeholder.

The computations live in :mod:`.games`, :mod:`.social_choice` and :mod:`.argumentation`; this module
turns them into engines and adds the stakeholder analysis. Without inputs, negotiation reads its
parties from the visible facts ``X negotiationSide buy|sell`` and ``X reservationPrice <number>``,
and argumentation its framework from the visible facts ``X attacks Y`` (semantics from the inputs,
grounded by default). Game-theory and social-choice need their inputs (a payoff matrix and ballots
have no natural form in the graph); without them the router returns the method's prompt.

Stakeholder (``inputs.stakeholder``)::

    {"stakeholders": [{"name": "cfo", "power": 0.9, "interest": 0.3}, ...], "threshold": 0.5}

places each stakeholder on Mendelow's power/interest grid (1991): power and interest at or above the
threshold -> ``manage closely``; power only -> ``keep satisfied``; interest only -> ``keep informed``;
neither -> ``monitor``. Without ``stakeholders`` the agents become the stakeholders, from the goals
the asking agent can read (optionally only those sharing a word with ``topic``):

- interest = the agent's summed priority of open goals (pending, active, suspended) on the topic,
  divided by the largest such sum among the agents;
- power = the mean level of the agent's open goals: strategic 1, tactical 0.6, operational 0.3
  (how high in the goal hierarchy the agent works) - a heuristic, and said so in the notes.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated, Any

from pydantic import Field

from kg.models import MAX_LIST, HierarchyLevel, Model, Unit
from kg.text.words import WORD_CHARS_RE
from reasoning.router.methods import argumentation, social_choice
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import parse_inputs
from reasoning.router.methods.games import (
    GAME,
    MAX_ACTIONS,
    MAX_PAIRS,
    NEGOTIATION,
    Game,
    Negotiation,
    bargain,
    equilibria,
    game_conclusion,
)
from reasoning.router.methods.voting import MAX_KEMENY
from reasoning.rules import parse_number

STAKEHOLDER = "stakeholder"
SIDE_PREDICATE, RESERVATION_PREDICATE, ATTACKS_PREDICATE = "negotiationSide", "reservationPrice", "attacks"
OPEN_GOALS = ("pending", "active", "suspended")
LEVEL_POWER = {HierarchyLevel.STRATEGIC: 1.0, HierarchyLevel.TACTICAL: 0.6, HierarchyLevel.OPERATIONAL: 0.3}
MAX_GOALS = 100_000
QUADRANTS = ("manage closely", "keep satisfied", "keep informed", "monitor")


def _require(inputs: dict[str, Any], method: str, key: str, what: str) -> None:
    """No inputs at all: the method falls back to a prompt; partial inputs are checked (InputError)."""
    if not inputs:
        raise MissingInputs(method, f"give inputs.{method}.{key} ({what})")


def game_theory(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Pure and mixed Nash equilibria of a two-player normal-form game."""
    _require(inputs, GAME, "payoffs", "players, actions and a payoff matrix")
    value, trace, notes = equilibria(inputs)
    failed = next((n for n in notes if n.startswith("vertex enumeration failed")), None)
    return computed(GAME, game_conclusion(value), 1.0 if value["equilibria"] else 0.0, value, trace=trace,
                    notes=[n for n in notes if n != failed], partial=failed)  # fmt: skip


def parties_from_facts(ctx: MethodContext) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Parties from the visible facts ``X negotiationSide buy|sell`` and ``X reservationPrice <number>``."""
    sides = {f.subject: (f.object.strip().casefold(), f.uid) for f in ctx.facts(predicate=SIDE_PREDICATE)}
    parties: dict[str, dict[str, Any]] = {}
    used: list[str] = []
    for f in ctx.facts(predicate=RESERVATION_PREDICATE):
        price = parse_number(f.object)
        side = sides.get(f.subject)
        if price is not None and side is not None and side[0] in ("buy", "sell"):
            parties[f.subject] = {"side": side[0], "reservation": price}
            used += [side[1], f.uid]
    return parties, used


def negotiation(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Zone of possible agreement and the Nash bargaining price."""
    used: list[str] = []
    if "parties" not in inputs:
        parties, used = parties_from_facts(ctx)
        if {p["side"] for p in parties.values()} != {"buy", "sell"}:
            raise MissingInputs(NEGOTIATION, "give inputs.negotiation.parties (the visible facts name no buyer and "
                                             "seller with negotiationSide and reservationPrice)")  # fmt: skip
        inputs = {**inputs, "parties": parties}
    value, trace = bargain(inputs)
    if used:
        trace.insert(0, f"parties from the visible facts ({SIDE_PREDICATE}, {RESERVATION_PREDICATE})")
    if value["zopa"] is None:
        text = f"no zone of possible agreement between {value['buyer']} and {value['seller']}"
    else:
        low, high = value["zopa"]
        text = f"ZOPA [{low:g}, {high:g}]; Nash bargaining price {value['nash_bargaining']:g}"
    return computed(NEGOTIATION, text, 1.0, value, trace=trace, used=used)


def social_choice_engine(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """The winner of an election under the chosen voting rule."""
    _require(inputs, social_choice.METHOD, "ballots", "a rule, candidates and ballots")
    value = social_choice.decide(inputs)
    trace = [f"{value['voters']} voter(s), rule {value['rule']}"]
    trace += [f"round {i + 1}: {r['counts']}" + (f", eliminate {r['eliminated']}" if "eliminated" in r else "")
              for i, r in enumerate(value.get("rounds", []))]  # fmt: skip
    if value["winner"] is not None or value.get("elected"):
        confidence = 1.0
    else:
        shared = value.get("tied") or value.get("smith_set") or value.get("scores") or [None]
        confidence = 1 / len(shared)
    return computed(social_choice.METHOD, social_choice.conclusion(value), confidence, value, trace=trace)


def argumentation_engine(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Extensions of an abstract argumentation framework (given, or the visible ``X attacks Y`` facts)."""
    used: list[str] = []
    if "arguments" not in inputs:
        facts = ctx.facts(predicate=ATTACKS_PREDICATE)
        if not facts:
            raise MissingInputs(argumentation.METHOD, "give inputs.argumentation.arguments and attacks (no visible "
                                                      f"'{ATTACKS_PREDICATE}' facts)")  # fmt: skip
        names = list(dict.fromkeys(n for f in facts for n in (f.subject, f.object)))
        inputs = {**inputs, "arguments": names, "attacks": [[f.subject, f.object] for f in facts]}
        used = [f.uid for f in facts]
    value, trace = argumentation.extensions(inputs)
    if used:
        trace.insert(0, f"{len(used)} attack(s) from the visible '{ATTACKS_PREDICATE}' facts")
    confidence = 1 / len(value["extensions"]) if value["extensions"] else 0.0
    return computed(argumentation.METHOD, argumentation.conclusion(value), confidence, value, trace=trace, used=used)


# ----------------------------------------------------------------------------------------------
# stakeholder
# ----------------------------------------------------------------------------------------------


class Stakeholder(Model):
    """A stakeholder's power over and interest in the matter, each 0..1."""

    name: Annotated[str, Field(min_length=1, max_length=256)]
    power: Unit
    interest: Unit


class StakeholderInput(Model):
    """Inputs of ``stakeholder``."""

    stakeholders: list[Stakeholder] | None = Field(default=None, min_length=1, max_length=10_000)
    threshold: Unit = 0.5
    topic: Annotated[str, Field(max_length=2_000)] = ""


def quadrant(power: float, interest: float, threshold: float) -> str:
    """Mendelow's quadrant of a stakeholder."""
    if power >= threshold:
        return QUADRANTS[0] if interest >= threshold else QUADRANTS[1]
    return QUADRANTS[2] if interest >= threshold else QUADRANTS[3]


def _topic_words(text: str) -> set[str]:
    """The case-folded words of ``text`` of three characters or more (``_`` included, as ``\\w`` has it)."""
    return {w.casefold() for w in WORD_CHARS_RE.findall(text) if len(w) >= 3}


def _from_goals(ctx: MethodContext, topic: str) -> tuple[list[Stakeholder], list[str], list[str]]:
    words = _topic_words(topic)
    interest: dict[str, float] = defaultdict(float)
    levels: dict[str, list[float]] = defaultdict(list)
    used: list[str] = []
    read = ctx.nodes("goal", limit=MAX_GOALS)
    for goal in read:
        if goal.status not in OPEN_GOALS:
            continue
        if words and not words & _topic_words(goal.content):
            continue
        used.append(goal.uid)
        interest[goal.agent_id] += goal.priority or 5
        levels[goal.agent_id].append(LEVEL_POWER.get(goal.hierarchy_level or HierarchyLevel.TACTICAL, 0.6))
    if not interest:
        raise MissingInputs(STAKEHOLDER, "give inputs.stakeholder.stakeholders (no open goals"
                            + (f" on {topic!r}" if topic else "") + " are visible to derive them from)")  # fmt: skip
    top = max(interest.values())
    people = [Stakeholder(name=agent, power=round(sum(lv) / len(lv), 6), interest=round(interest[agent] / top, 6))
              for agent, lv in sorted(levels.items())]  # fmt: skip
    notes = ["power and interest derived from the visible open goals of each agent (heuristic: interest = summed "
             "goal priority relative to the largest; power = mean goal level, strategic 1, tactical 0.6, "
             "operational 0.3)"]  # fmt: skip
    if len(read) >= MAX_GOALS:
        notes.append(f"read the first {MAX_GOALS} visible goals only (MAX_GOALS)")
    return people, used, notes


def stakeholder(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """The power/interest grid of the stakeholders (given, or the agents behind the visible goals)."""
    data = parse_inputs(StakeholderInput, inputs, STAKEHOLDER)
    used: list[str] = []
    notes: list[str] = []
    if data.stakeholders is None:
        people, used, notes = _from_goals(ctx, data.topic)
        confidence = 0.6
    else:
        people, confidence = data.stakeholders, 1.0
    grid: dict[str, list[str]] = {q: [] for q in QUADRANTS}
    rows = []
    for person in people:
        q = quadrant(person.power, person.interest, data.threshold)
        grid[q].append(person.name)
        rows.append({"name": person.name, "power": person.power, "interest": person.interest, "quadrant": q})
    trace = [f"{len(rows)} stakeholder(s), threshold {data.threshold:g}"]
    trace += [f"{r['name']}: power {r['power']:.3g}, interest {r['interest']:.3g} -> {r['quadrant']}" for r in rows]
    text = "; ".join(f"{q}: {', '.join(names)}" for q, names in grid.items() if names)
    cut = next((n for n in notes if n.endswith("(MAX_GOALS)")), None)
    return computed(STAKEHOLDER, text, confidence, {"stakeholders": rows, "grid": grid, "threshold": data.threshold},
                    trace=trace, used=used, notes=[n for n in notes if n != cut], partial=cut)  # fmt: skip


DOCS = {
    GAME: MethodDoc(
        confidence="1.0 when the equilibria listed are all of them (a nondegenerate game) or all extreme points of "
        "the equilibrium sets (a degenerate one, said in the notes); at most 0.8 when vertex enumeration "
        "failed on a degenerate game (partial); 0 when no equilibrium was found.",
        bound=f"Two players with at most {MAX_ACTIONS} actions each (MAX_ACTIONS; more: a one-line error): support "
        "enumeration grows as 4^actions, a degenerate 5x5 game takes about 1.5 s.",
        inputs=Game,
        example={
            "players": ["row", "col"],
            "actions": [["quiet", "fink"], ["quiet", "fink"]],
            "payoffs": [[[2, 2], [0, 3]], [[3, 0], [1, 1]]],
        },
        graph="nothing: a payoff matrix has no natural form in the graph",
    ),
    NEGOTIATION: MethodDoc(
        confidence="1.0: the zone of possible agreement and the Nash bargaining price follow exactly from the "
        "reservation prices and bargaining powers given (how good those are is the caller's).",
        bound="At most 1,000 parties; the best buyer and seller are found in one pass, and the pairs listed are "
        f"at most {MAX_PAIRS} (the rest are counted, not listed).",
        inputs=Negotiation,
        example={
            "parties": {"alice": {"side": "buy", "reservation": 120}, "bob": {"side": "sell", "reservation": 100}}
        },
        graph="the visible facts 'X negotiationSide buy|sell' and 'X reservationPrice <number>'",
    ),
    social_choice.METHOD: MethodDoc(
        confidence="1.0 when the rule names a single winner (or fills every STV seat): the count is exact; with a "
        "tie, 1 / the number of tied candidates (the chance a fair lot picks any one of them); with a "
        "Condorcet cycle, 1 / the size of the Smith set.",
        bound=f"At most {social_choice.MAX_CANDIDATES} candidates and {MAX_LIST} distinct ballots (input limits). The "
        "pairwise matrix costs ballots x candidates² (vectorised), Schulze candidates³, runoffs ballots x "
        f"candidates; Kemeny is exact for at most {MAX_KEMENY} candidates (MAX_KEMENY, 2^n x n² steps; more: a "
        "one-line error naming candidates).",
        inputs=social_choice.Election,
        example={
            "rule": "schulze",
            "candidates": ["a", "b", "c"],
            "ballots": [
                {"ranking": ["a", "b", "c"], "count": 4},
                {"ranking": ["b", "c", "a"], "count": 3},
                {"ranking": ["c", "a", "b"], "count": 2},
            ],
        },
        graph="nothing: ballots have no natural form in the graph",
    ),
    argumentation.METHOD: MethodDoc(
        confidence="1 / the number of extensions: 1.0 when the semantics gives one extension (the grounded one "
        "always), lower when several compete; 0 when none exists (stable semantics).",
        bound=f"At most 1,000 arguments and {argumentation.MAX_ATTACKS} attacks; grounded is polynomial "
        "(arguments x attacks). Preferred and stable enumerate labellings: at most "
        f"{argumentation.MAX_ARGUMENTS} "
        f"arguments and {argumentation.MAX_LABELLINGS} labellings (MAX_ARGUMENTS, MAX_LABELLINGS; more: a "
        "one-line error suggesting grounded).",
        inputs=argumentation.Framework,
        example={"arguments": ["a", "b", "c"], "attacks": [["a", "b"], ["b", "c"]], "semantics": "preferred"},
        graph="the visible facts 'X attacks Y'",
    ),
    STAKEHOLDER: MethodDoc(
        confidence="1.0 when power and interest are given (the grid placement is then exact); 0.6 when they are "
        "derived from the agents' open goals (a heuristic, said in the notes).",
        bound=f"At most 10,000 stakeholders given, or {MAX_GOALS} visible goals read (MAX_GOALS; more: partial); "
        "linear in either.",
        inputs=StakeholderInput,
        example={
            "stakeholders": [
                {"name": "cfo", "power": 0.9, "interest": 0.3},
                {"name": "users", "power": 0.2, "interest": 0.9},
            ]
        },
        graph="without stakeholders: the agents behind the visible open goals (optionally on a topic)",
    ),
}

ENGINES: dict[str, Engine] = {
    GAME: game_theory,
    NEGOTIATION: negotiation,
    social_choice.METHOD: social_choice_engine,
    argumentation.METHOD: argumentation_engine,
    STAKEHOLDER: stakeholder,
}

__all__ = ["DOCS", "ENGINES", "quadrant", "stakeholder"]
