"""Game theory: the Nash equilibria of a two-player normal-form game (nashpy), and bargaining.

Game inputs (``inputs.game-theory``)::

    {"players": ["row", "col"], "actions": [["U", "D"], ["L", "R"]],
     "payoffs": [[[pa, pb], [pa, pb]],     # row "U" against col "L", "R"
                 [[pa, pb], [pa, pb]]]}    # row "D"

Pure equilibria are found exactly (each action a best response to the other). Mixed equilibria come
from nashpy's support enumeration over supports of equal size, which is complete for nondegenerate
games. A game with tied best responses, or where nashpy finds an even number of equilibria, is
degenerate: every pair of supports is enumerated and nashpy's vertex enumeration adds the extreme
equilibria; the equilibria listed are then the extreme points of possibly infinite sets (a note says
so). Each player has at most :data:`MAX_ACTIONS` actions (enumeration grows as 4^n). Every candidate
is checked again (no player gains more than 1e-9 by deviating) before it is reported. Probabilities
are rounded to 9 decimals.

Negotiation inputs (``inputs.negotiation``)::

    {"parties": {"alice": {"side": "buy", "reservation": 120, "power": 1},
                 "bob":   {"side": "sell", "reservation": 100}}}

The zone of possible agreement (ZOPA) of a buyer and a seller is ``[seller's reservation, buyer's
reservation]`` when the first is not above the second (else there is none). With several parties on
a side, the pair with the most room (highest buyer reservation, lowest seller reservation) is
bargained over and every pair's zone is listed. The Nash bargaining solution with
utilities u_b = R_b - p and u_s = p - R_s and disagreement point (0, 0) maximises u_b^w_b · u_s^w_s
(w: each party's ``power``, default 1), so p* = (w_s·R_b + w_b·R_s) / (w_b + w_s): the midpoint
for equal bargaining power (Nash 1950).
"""

from __future__ import annotations

import warnings
from itertools import islice, product
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from kg.models import Model
from reasoning.router.methods.fields import parse_inputs

GAME = "game-theory"
NEGOTIATION = "negotiation"
MAX_ACTIONS = 5  # a degenerate 5x5 game takes about 1.5 s; 6x6 several seconds
TOLERANCE = 1e-9
MAX_PAIRS = 1_000  # buyer-seller pairs listed by negotiation

_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Number = Annotated[float, Field(allow_inf_nan=False)]


class Game(Model):
    """A two-player game in normal form."""

    players: list[_Name] = Field(min_length=2, max_length=2)
    actions: list[list[_Name]] = Field(min_length=2, max_length=2)
    payoffs: list[list[list[_Number]]]

    @model_validator(mode="after")
    def _shape(self) -> Game:
        if self.players[0] == self.players[1]:
            raise ValueError("@players.1: the two players need different names")
        for p, acts in enumerate(self.actions):
            if not 1 <= len(acts) <= MAX_ACTIONS:
                raise ValueError(f"@actions.{p}: give 1 to {MAX_ACTIONS} actions, got {len(acts)}")
            if len(set(acts)) != len(acts):
                raise ValueError(f"@actions.{p}: action names must be unique")
        rows, cols = len(self.actions[0]), len(self.actions[1])
        if len(self.payoffs) != rows:
            raise ValueError(f"@payoffs: needs one row per action of {self.players[0]} ({rows}), "
                             f"got {len(self.payoffs)}")  # fmt: skip
        for i, row in enumerate(self.payoffs):
            if len(row) != cols:
                raise ValueError(f"@payoffs.{i}: needs one cell per action of {self.players[1]} ({cols}), "
                                 f"got {len(row)}")  # fmt: skip
            for j, cell in enumerate(row):
                if len(cell) != 2:
                    raise ValueError(f"@payoffs.{i}.{j}: a cell is [payoff of {self.players[0]}, payoff of "
                                     f"{self.players[1]}], got {len(cell)} numbers")  # fmt: skip
        return self


def _matrices(g: Game) -> tuple[np.ndarray, np.ndarray]:
    cells = np.array(g.payoffs, dtype=float)
    return cells[:, :, 0], cells[:, :, 1]


def pure_equilibria(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """Cells where each player's action is a best response to the other's."""
    return [(i, j) for i, j in product(range(a.shape[0]), range(a.shape[1]))
            if a[i, j] >= a[:, j].max() - TOLERANCE and b[i, j] >= b[i, :].max() - TOLERANCE]  # fmt: skip


def _is_equilibrium(a: np.ndarray, b: np.ndarray, s: np.ndarray, t: np.ndarray) -> bool:
    return bool((a @ t).max() <= s @ a @ t + TOLERANCE and (s @ b).max() <= s @ b @ t + TOLERANCE)


def has_ties(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether some pure strategy has two best responses: a column of A or a row of B with a tied maximum
    (the usual source of degeneracy in small games)."""
    col_best = np.isclose(a, a.max(axis=0, keepdims=True), atol=TOLERANCE).sum(axis=0)
    row_best = np.isclose(b, b.max(axis=1, keepdims=True), atol=TOLERANCE).sum(axis=1)
    return bool((col_best > 1).any() or (row_best > 1).any())


def mixed_candidates(a: np.ndarray, b: np.ndarray) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool, list[str]]:
    """Candidate equilibria, and whether the game was treated as degenerate.

    A nondegenerate game has all its equilibria on supports of equal size (Nisan et al., Algorithmic
    Game Theory, 2007, ch. 3), so those are enumerated first. If best responses tie, or nashpy warns
    that the number of equilibria is even (impossible in a nondegenerate game), every pair of supports
    is enumerated and vertex enumeration adds the extreme points of the equilibrium components.
    """
    import nashpy  # noqa: PLC0415 - nashpy (and scipy under it: ~1 s) loads when a game is solved

    game = nashpy.Game(a, b)
    degenerate = has_ties(a, b)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = list(game.support_enumeration(non_degenerate=not degenerate))
    degenerate = degenerate or any("degenerate" in str(w.message) for w in caught)
    notes: list[str] = []
    if degenerate:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nashpy's own numerical warnings; results are re-checked below
            found += list(game.support_enumeration())
            try:
                found += list(game.vertex_enumeration())
            except (ArithmeticError, RuntimeError, TypeError, ValueError) as exc:  # nashpy's LP finds no interior
                notes.append(f"vertex enumeration failed ({type(exc).__name__}); the equilibria come from "
                             "support enumeration over every pair of supports")  # fmt: skip
    return found, degenerate, notes


def equilibria(data: Any) -> tuple[dict[str, Any], list[str], list[str]]:
    """``value`` (``equilibria``, ``pure``, ``mixed``, ``payoffs`` per equilibrium), the trace and notes."""
    g = parse_inputs(Game, data, GAME)
    a, b = _matrices(g)
    p1, p2 = g.players
    acts1, acts2 = g.actions
    trace = [f"{len(acts1)}x{len(acts2)} game between {p1} and {p2}"]
    pure = pure_equilibria(a, b)
    trace.append(f"best-response check of every cell: {len(pure)} pure equilibrium(s)")
    found, degenerate, failures = mixed_candidates(a, b)
    notes = []
    if degenerate:
        notes.append("the game is degenerate: vertex enumeration was added; the equilibria listed are the extreme "
                     "points of the equilibrium sets, which may contain infinitely many mixtures")  # fmt: skip
    notes += failures
    seen: set[tuple[float, ...]] = set()
    listed: list[dict[str, Any]] = []
    expected: list[list[float]] = []
    for raw_s, raw_t in [(np.eye(len(acts1))[i], np.eye(len(acts2))[j]) for i, j in pure] + found:
        s, t = np.clip(np.asarray(raw_s, dtype=float), 0, None), np.clip(np.asarray(raw_t, dtype=float), 0, None)
        if not (np.isfinite(s).all() and np.isfinite(t).all() and s.sum() > 0 and t.sum() > 0):
            continue  # a numerically broken candidate from the solver is never reported
        s, t = s / s.sum(), t / t.sum()
        key = tuple(np.round(np.concatenate([s, t]), 9))
        if key in seen or not _is_equilibrium(a, b, s, t):
            continue
        seen.add(key)
        expected.append([round(float(s @ a @ t), 9), round(float(s @ b @ t), 9)])
        if max(s) > 1 - TOLERANCE and max(t) > 1 - TOLERANCE:
            listed.append({p1: acts1[int(s.argmax())], p2: acts2[int(t.argmax())]})
        else:
            listed.append({p1: {x: round(float(v), 9) for x, v in zip(acts1, s, strict=True)},
                           p2: {x: round(float(v), 9) for x, v in zip(acts2, t, strict=True)}})  # fmt: skip
    mixed = sum(1 for e in listed if isinstance(e[p1], dict))
    trace.append(f"support enumeration{' and vertex enumeration' if degenerate else ''}: {len(listed)} distinct "
                 f"equilibrium(s) after re-checking, {mixed} mixed")  # fmt: skip
    value = {"players": g.players, "equilibria": listed, "payoffs": expected, "pure": len(listed) - mixed,
             "mixed": mixed, "degenerate": degenerate}  # fmt: skip
    return value, trace, notes


def game_conclusion(value: dict[str, Any]) -> str:
    """One line for the equilibria found."""
    shown = []
    for e in value["equilibria"][:4]:
        parts = []
        for player, s in e.items():
            parts.append(f"{player}: {s}" if isinstance(s, str) else
                         f"{player}: " + "/".join(f"{k} {v:.3g}" for k, v in s.items() if v > 0))  # fmt: skip
        shown.append("(" + ", ".join(parts) + ")")
    more = f" +{len(value['equilibria']) - 4} more" if len(value["equilibria"]) > 4 else ""
    return f"{len(value['equilibria'])} Nash equilibrium(s): {'; '.join(shown)}{more}"


# ----------------------------------------------------------------------------------------------
# negotiation
# ----------------------------------------------------------------------------------------------


class Party(Model):
    """One side of a negotiation and the worst price it would still accept."""

    side: Literal["buy", "sell"]
    reservation: _Number
    power: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0


class Negotiation(Model):
    """Buyers and sellers with reservation prices."""

    parties: dict[_Name, Party] = Field(min_length=2, max_length=1_000)

    @model_validator(mode="after")
    def _both_sides(self) -> Negotiation:
        for side in ("buy", "sell"):
            if not any(p.side == side for p in self.parties.values()):
                raise ValueError(f"@parties: needs at least one party with side {side!r}")
        return self


def bargain(data: Any) -> tuple[dict[str, Any], list[str]]:
    """``value`` (``zopa``, ``nash_bargaining``, ``surplus``, ``shares``, ``pairs``) and the trace."""
    n = parse_inputs(Negotiation, data, NEGOTIATION)
    buyers = {k: p for k, p in n.parties.items() if p.side == "buy"}
    sellers = {k: p for k, p in n.parties.items() if p.side == "sell"}
    every = ((b, bp, s, sp) for b, bp in buyers.items() for s, sp in sellers.items())
    pairs = [{"buyer": b, "seller": s, "zopa": [sp.reservation, bp.reservation] if sp.reservation <= bp.reservation
              else None} for b, bp, s, sp in islice(every, MAX_PAIRS)]  # fmt: skip
    buyer = max(buyers, key=lambda k: buyers[k].reservation)  # max/min keep the first of equals
    seller = min(sellers, key=lambda k: sellers[k].reservation)
    rb, rs = buyers[buyer].reservation, sellers[seller].reservation
    trace = [f"most room: buyer {buyer} (reservation {rb:g}) and seller {seller} (reservation {rs:g})"]
    value: dict[str, Any] = {"buyer": buyer, "seller": seller, "pairs": pairs,
                             "pair_count": len(buyers) * len(sellers)}  # fmt: skip
    if rs > rb:
        trace.append(f"the seller needs at least {rs:g}, the buyer pays at most {rb:g}: no agreement is possible")
        return value | {"zopa": None, "nash_bargaining": None, "surplus": 0.0, "shares": None}, trace
    ab, as_ = buyers[buyer].power, sellers[seller].power
    price = (as_ * rb + ab * rs) / (ab + as_)
    trace.append(f"ZOPA [{rs:g}, {rb:g}], surplus {rb - rs:g}")
    trace.append(f"Nash bargaining: maximise (R_b - p)^{ab:g}·(p - R_s)^{as_:g} -> p = {price:g}")
    shares = {buyer: rb - price, seller: price - rs}
    return value | {"zopa": [rs, rb], "nash_bargaining": price, "surplus": rb - rs, "shares": shares}, trace


__all__ = ["GAME", "NEGOTIATION", "Game", "Negotiation", "bargain", "equilibria", "game_conclusion", "pure_equilibria"]
