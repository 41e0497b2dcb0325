"""Social choice: who wins an election under plurality, Borda, Condorcet, Copeland, Schulze, Kemeny, approval,
instant runoff or the single transferable vote.

Inputs (``inputs.social-choice``)::

    {"rule": "plurality" | "borda" | "condorcet" | "copeland" | "schulze" | "kemeny" | "approval" | "irv" | "stv",
     "candidates": ["a", "b", "c"], "seats": 1,                   # seats: stv only
     "ballots": [{"ranking": ["b", "a", "c"], "count": 3},        # ranked rules
                 {"approved": ["a", "c"], "count": 2}]}           # approval

A ranking lists candidates best first; it may stop early (candidates left out rank below every listed
one and tie among themselves). ``count`` (default 1) is how many voters cast that ballot.

- plurality: one point for each ballot's first choice.
- borda: with m candidates, the candidate in position i (0-based) gets m - 1 - i points; left-out
  candidates get 0.
- condorcet: pairwise majorities; the winner beats every other candidate. Without one, the majority
  graph is searched for a cycle (``cycle: true``, its members in ``smith_set``); scores are pairwise wins.
- copeland: 1 point per pairwise win and 1/2 per pairwise tie (Copeland 1951).
- schulze: strongest paths through the pairwise defeats (Schulze 2011); ``strengths`` holds them.
- kemeny: the ranking agreeing with the most pairwise preferences (Kemeny 1959), exact by dynamic programming
  over subsets, so at most :data:`~.voting.MAX_KEMENY` candidates; ``ranking`` and its ``agreement``.
- approval: one point per approving ballot (ballots must be ``{"approved": [...]}``).
- irv: rounds of first choices among the remaining candidates; a majority of the ballots still in play
  wins, else the candidate with the fewest is eliminated (a tie for fewest eliminates the one listed
  last in ``candidates``: deterministic, and stated in the trace).
- stv: ``seats`` winners with the Droop quota (floor(votes / (seats + 1)) + 1); an elected candidate's surplus
  passes on at the fraction surplus / votes of each of its ballots (Gregory); else the fewest are eliminated.

A tie for first gives ``winner: null`` and the tied candidates in ``tied``.
"""

from __future__ import annotations

from itertools import combinations
from typing import Annotated, Any, Literal

import networkx as nx
from pydantic import Field, model_validator

from kg.models import MAX_LIST, Model
from reasoning.router.methods.fields import distinct, input_error, parse_inputs
from reasoning.router.methods.voting import MAX_KEMENY, copeland, kemeny, pairwise_matrix, runoff, schulze

METHOD = "social-choice"
MAX_CANDIDATES = 200

_Name = Annotated[str, Field(min_length=1, max_length=256)]
Rule = Literal["plurality", "borda", "condorcet", "copeland", "schulze", "kemeny", "approval", "irv", "stv"]


class Ballot(Model):
    """A ranking (best first) or an approval set, cast by ``count`` voters."""

    ranking: list[_Name] | None = Field(default=None, max_length=MAX_CANDIDATES)
    approved: list[_Name] | None = Field(default=None, max_length=MAX_CANDIDATES)
    count: int = Field(default=1, ge=0, le=10**12)

    @model_validator(mode="after")
    def _one_shape(self) -> Ballot:
        if (self.ranking is None) == (self.approved is None):
            raise ValueError("@ranking: give either ranking (a list, best first) or approved (a list), not both")
        return self


class Election(Model):
    """The inputs of ``social-choice``."""

    rule: Rule
    candidates: list[_Name] = Field(min_length=1, max_length=MAX_CANDIDATES)
    ballots: list[Ballot] = Field(min_length=1, max_length=MAX_LIST)
    seats: int = Field(default=1, ge=1, le=MAX_CANDIDATES)

    @model_validator(mode="after")
    def _consistent(self) -> Election:
        known = distinct(self.candidates, "candidates")
        for index, ballot in enumerate(self.ballots):
            key = "approved" if ballot.approved is not None else "ranking"
            if (self.rule == "approval") != (key == "approved"):
                wanted = "approved" if self.rule == "approval" else "ranking"
                raise ValueError(f"@ballots.{index}: the {self.rule} rule needs ballots with {wanted!r}")
            items = ballot.approved if ballot.approved is not None else ballot.ranking or []
            for position, name in enumerate(items):
                if name not in known:
                    raise ValueError(f"@ballots.{index}.{key}.{position}: {name!r} is not a candidate")
            if len(set(items)) != len(items):
                raise ValueError(f"@ballots.{index}.{key}: a candidate appears twice")
        return self


def _top(scores: dict[str, float]) -> list[str]:
    best = max(scores.values())
    return [c for c, s in scores.items() if s == best]


def plurality(e: Election) -> dict[str, float]:
    """First-choice counts."""
    scores = dict.fromkeys(e.candidates, 0.0)
    for b in e.ballots:
        if b.ranking:
            scores[b.ranking[0]] += b.count
    return scores


def borda(e: Election) -> dict[str, float]:
    """Borda points: m - 1 - position; left-out candidates 0."""
    m = len(e.candidates)
    scores = dict.fromkeys(e.candidates, 0.0)
    for b in e.ballots:
        for position, c in enumerate(b.ranking or []):
            scores[c] += b.count * (m - 1 - position)
    return scores


def approval(e: Election) -> dict[str, float]:
    """Approvals per candidate."""
    scores = dict.fromkeys(e.candidates, 0.0)
    for b in e.ballots:
        for c in b.approved or []:
            scores[c] += b.count
    return scores


def _ranked(e: Election) -> list[tuple[list[str], float]]:
    return [(b.ranking or [], float(b.count)) for b in e.ballots]


def pairwise(e: Election) -> dict[str, dict[str, float]]:
    """``d[x][y]``: how many voters rank x above y (a listed candidate is above every left-out one)."""
    d = pairwise_matrix(e.candidates, _ranked(e))
    return {x: {y: float(d[i, j]) for j, y in enumerate(e.candidates) if j != i} for i, x in enumerate(e.candidates)}


def condorcet(e: Election) -> dict[str, Any]:
    """The Condorcet winner, or the cycle in the majority graph that leaves none."""
    d = pairwise(e)
    majority: nx.DiGraph[str] = nx.DiGraph()
    majority.add_nodes_from(e.candidates)
    for x, y in combinations(e.candidates, 2):
        if d[x][y] > d[y][x]:
            majority.add_edge(x, y)
        elif d[y][x] > d[x][y]:
            majority.add_edge(y, x)
    wins = {c: float(majority.out_degree(c)) for c in e.candidates}
    winners = [c for c in e.candidates if majority.out_degree(c) == len(e.candidates) - 1]
    cycle = not nx.is_directed_acyclic_graph(majority)
    # the Smith set: the top strongly connected component of the majority graph (no edge enters it)
    condensed = nx.condensation(majority)
    top = [n for n in condensed.nodes if condensed.in_degree(n) == 0]
    smith = sorted(condensed.nodes[top[0]]["members"], key=e.candidates.index) if len(top) == 1 else []
    return {"winner": winners[0] if winners else None, "scores": wins, "pairwise": d, "cycle": cycle,
            "smith_set": smith}  # fmt: skip


def irv(e: Election) -> dict[str, Any]:
    """Instant runoff: eliminate the weakest until someone holds a majority of the ballots in play."""
    found = runoff(e.candidates, _ranked(e), 1, majority=True)
    leader = found["elected"]
    return {"winner": leader[0] if leader else None, "tied": found["tied"], "scores": found["rounds"][0]["counts"],
            "rounds": found["rounds"]}  # fmt: skip


def ranked_rule(e: Election) -> dict[str, Any]:
    """Copeland, Schulze, Kemeny or STV."""
    names = e.candidates
    if e.rule == "stv":
        found = runoff(names, _ranked(e), e.seats, majority=False)
        elected = found["elected"]
        return {"winner": elected[0] if e.seats == 1 and elected else None, "elected": elected, "tied": [],
                "quota": found["quota"], "seats": e.seats, "scores": found["rounds"][0]["counts"],
                "rounds": found["rounds"]}  # fmt: skip
    d = pairwise_matrix(names, _ranked(e))
    if e.rule == "kemeny":
        if len(names) > MAX_KEMENY:
            raise input_error(METHOD, ["candidates"], f"kemeny is computed exactly for at most {MAX_KEMENY} "
                              f"candidates (MAX_KEMENY), got {len(names)}; use schulze or copeland")  # fmt: skip
        best = kemeny(names, d)
        tops = best["optimal_tops"]
        return {"winner": tops[0] if len(tops) == 1 else None, "tied": tops if len(tops) > 1 else [],
                "ranking": best["ranking"], "agreement": best["score"], "scores": {c: float(len(names) - i) for i, c
                in enumerate(best["ranking"])}}  # fmt: skip
    if e.rule == "schulze":
        winners, strengths = schulze(names, d)
        order = sorted(names, key=lambda c: -sum(strengths[c][y] > strengths[y][c] for y in names if y != c))
        return {
            "winner": winners[0] if len(winners) == 1 else None,
            "tied": winners if len(winners) > 1 else [],
            "strengths": strengths,
            "ranking": order,
            "scores": {c: float(sum(strengths[c][y] > strengths[y][c] for y in names if y != c)) for c in names},
        }
    scores = copeland(names, d)
    tied = _top(scores)
    return {"winner": tied[0] if len(tied) == 1 else None, "tied": tied if len(tied) > 1 else [], "scores": scores}


def decide(data: Any) -> dict[str, Any]:
    """The election's ``value``: ``rule``, ``winner`` (or null), ``scores`` and the rule's details.

    Raises:
        InputError: a field path under ``inputs.social-choice`` and the rule it breaks.
    """
    e = parse_inputs(Election, data, METHOD)
    voters = sum(b.count for b in e.ballots)
    value: dict[str, Any] = {"rule": e.rule, "voters": voters}
    if e.rule == "condorcet":
        value |= condorcet(e)
    elif e.rule == "irv":
        value |= irv(e)
    elif e.rule in ("copeland", "schulze", "kemeny", "stv"):
        value |= ranked_rule(e)
    else:
        scores = {"plurality": plurality, "borda": borda, "approval": approval}[e.rule](e)
        tied = _top(scores)
        value |= {"winner": tied[0] if len(tied) == 1 else None, "tied": tied if len(tied) > 1 else [],
                  "scores": scores}  # fmt: skip
    value.setdefault("cycle", False)
    return value


def conclusion(value: dict[str, Any]) -> str:
    """One line for the election's result."""
    if value.get("elected") and value.get("seats", 1) > 1:
        return f"elected under stv ({value['seats']} seats): {', '.join(value['elected'])}"
    if value["winner"] is not None:
        return f"{value['winner']} wins under {value['rule']}"
    if value.get("cycle"):
        return f"no Condorcet winner: majority cycle among {', '.join(value['smith_set']) or 'the candidates'}"
    return f"no single winner under {value['rule']}: tie between {', '.join(value.get('tied') or []) or 'all'}"


__all__ = ["METHOD", "Ballot", "Election", "borda", "conclusion", "condorcet", "decide", "irv", "pairwise",
           "ranked_rule"]  # fmt: skip
