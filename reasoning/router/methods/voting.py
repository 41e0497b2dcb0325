"""Voting rules over ranked ballots beyond plurality and Borda: the pairwise matrix (numpy), Copeland, Schulze,
Kemeny (exact, by dynamic programming over subsets), instant runoff and the single transferable vote.

A ballot is ``(ranking, count)``: candidates best first; left-out candidates rank below every listed one and tie
among themselves. Work: the pairwise matrix costs ballots x candidates² (vectorised); Schulze candidates³;
Kemeny 2^candidates x candidates² (so at most :data:`MAX_KEMENY` candidates); runoffs move each ballot's pointer
forward at most once per candidate (ballots x candidates in all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_KEMENY = 12  # 2^12 subsets x 12² pairs: about 0.6 M steps

Ballots = Sequence[tuple[Sequence[str], float]]


def pairwise_matrix(candidates: Sequence[str], ballots: Ballots) -> np.ndarray:
    """``d[i, j]``: how many voters rank candidate i above candidate j."""
    m = len(candidates)
    index = {c: i for i, c in enumerate(candidates)}
    d = np.zeros((m, m))
    for ranking, count in ballots:
        if not count or not ranking:
            continue
        position = np.full(m, m, dtype=float)  # left out: below every listed candidate, tied among themselves
        position[[index[c] for c in ranking]] = np.arange(len(ranking))
        d += count * (position[:, None] < position[None, :])
    return d


def copeland(candidates: Sequence[str], d: np.ndarray) -> dict[str, float]:
    """Copeland scores: 1 per pairwise win, 1/2 per pairwise tie (Copeland 1951)."""
    wins = (d > d.T).sum(axis=1) + 0.5 * ((d == d.T).sum(axis=1) - 1)
    return {c: float(w) for c, w in zip(candidates, wins, strict=True)}


def schulze(candidates: Sequence[str], d: np.ndarray) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The Schulze winners (every x with p[x, y] >= p[y, x] for all y) and the strongest-path strengths p
    (Schulze 2011: widest paths over the pairwise defeats, by Floyd-Warshall)."""
    m = len(candidates)
    p = np.where(d > d.T, d, 0.0)
    for k in range(m):
        p = np.maximum(p, np.minimum(p[:, k : k + 1], p[k : k + 1, :]))
    np.fill_diagonal(p, 0.0)
    winners = [candidates[i] for i in range(m) if all(p[i, j] >= p[j, i] for j in range(m) if j != i)]
    strengths = {x: {y: float(p[i, j]) for j, y in enumerate(candidates) if j != i} for i, x in enumerate(candidates)}
    return winners, strengths


def kemeny(candidates: Sequence[str], d: np.ndarray) -> dict[str, Any]:
    """A Kemeny-Young ranking (the order agreeing with the most pairwise preferences), its score, and every
    candidate that tops some optimal ranking.

    Dynamic programming over subsets: ``bottom[S]`` is the best agreement of the candidates of S ranked below
    the others; putting c above S adds ``d[c, S]``. Exact; the caller keeps ``len(candidates) <= MAX_KEMENY``.
    """
    m = len(candidates)
    full = (1 << m) - 1
    bottom = np.full(1 << m, -np.inf)
    choice = np.zeros(1 << m, dtype=int)
    bottom[0] = 0.0
    for s in range(1, 1 << m):
        members = [i for i in range(m) if s >> i & 1]
        for c in members:
            rest = s & ~(1 << c)
            score = bottom[rest] + sum(d[c, j] for j in members if j != c)
            if score > bottom[s]:
                bottom[s], choice[s] = score, c
    ranking, s = [], full
    while s:
        ranking.append(candidates[int(choice[s])])
        s &= ~(1 << int(choice[s]))
    tops = {candidates[c]: bottom[full & ~(1 << c)] + d[c].sum() - d[c, c] for c in range(m)}
    best = float(bottom[full])
    return {"ranking": ranking, "score": best, "optimal_tops": [c for c, v in tops.items() if v >= best - 1e-9]}


class _Runoff:
    """Ballots with weights and a pointer to each ballot's first hopeful candidate."""

    def __init__(self, candidates: Sequence[str], ballots: Ballots) -> None:
        self.hopeful = list(candidates)
        self.rankings = [list(r) for r, _ in ballots]
        self.weights = [float(c) for _, c in ballots]
        self.at = [0] * len(ballots)
        self.holder: list[str | None] = [None] * len(ballots)
        self.piles: dict[str, set[int]] = {c: set() for c in candidates}
        for b in range(len(ballots)):
            self._move(b)

    def _move(self, b: int) -> None:
        ranking, live = self.rankings[b], self.piles
        while self.at[b] < len(ranking) and ranking[self.at[b]] not in live:
            self.at[b] += 1
        self.holder[b] = ranking[self.at[b]] if self.at[b] < len(ranking) else None
        if self.holder[b] is not None:
            live[str(self.holder[b])].add(b)

    def counts(self) -> dict[str, float]:
        return {c: float(sum(self.weights[b] for b in self.piles[c])) for c in self.hopeful}

    def remove(self, candidate: str, keep: float | None = None) -> None:
        """Take ``candidate`` out; its ballots pass on at ``keep`` times their weight (None: whole, eliminated)."""
        self.hopeful.remove(candidate)
        pile = self.piles.pop(candidate)
        for b in sorted(pile):
            if keep is not None:
                self.weights[b] *= keep
            self._move(b)


def runoff(candidates: Sequence[str], ballots: Ballots, seats: int, *, majority: bool) -> dict[str, Any]:
    """Instant runoff (``majority``: a majority of the ballots still in play wins) or STV with the Droop quota
    and fractional surplus transfer (Gregory: an elected candidate's ballots go on at surplus/total of their
    weight). The fewest votes are eliminated; a tie for fewest eliminates the one listed last in ``candidates``."""
    r = _Runoff(candidates, ballots)
    total = sum(r.weights)
    quota = total // (seats + 1) + 1
    elected: list[str] = []
    rounds: list[dict[str, Any]] = []
    while len(elected) < seats and r.hopeful:
        counts = r.counts()
        step: dict[str, Any] = {"counts": counts}
        rounds.append(step)
        if len(r.hopeful) <= seats - len(elected):
            step["elected"] = list(r.hopeful)
            elected += r.hopeful
            break
        in_play = sum(counts.values())
        best = max(counts.values())
        leaders = [c for c in r.hopeful if counts[c] == best]
        reached = best * 2 > in_play if majority else best >= quota
        if reached and len(leaders) == 1:
            winner = leaders[0]
            step["elected"] = [winner]
            elected.append(winner)
            r.remove(winner, keep=0.0 if majority else (best - quota) / best)  # IRV ends at its one winner
            continue
        fewest = min(counts.values())
        weakest = [c for c in r.hopeful if counts[c] == fewest]
        if majority and len(weakest) == len(r.hopeful):
            return {"elected": [], "tied": weakest, "rounds": rounds, "quota": None}
        out = weakest[-1]
        step["eliminated"] = out
        if len(weakest) > 1:
            step["tie_break"] = f"{', '.join(weakest)} tied for fewest; {out} is listed last in candidates"
        r.remove(out)
    return {"elected": elected, "tied": [], "rounds": rounds, "quota": None if majority else quota}


__all__ = ["MAX_KEMENY", "copeland", "kemeny", "pairwise_matrix", "runoff", "schulze"]
