"""Maximal marginal relevance (stage 5 of :func:`kg.recall.fusion.rank`): diversity by greedy picking.

Each step picks the candidate with the highest ``lambda * score - (1 - lambda) * max_sim``, ``max_sim``
being its highest cosine (clamped to 0..1) to the candidates already picked; a candidate without a vector
has similarity 0 to every other. Pure and deterministic (ties by uid).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kg.errors import InputError


def _unit_rows(uids: Sequence[str], vectors: Mapping[str, npt.ArrayLike]) -> npt.NDArray[np.float64]:
    """Unit-length vectors of ``uids`` as rows; a uid without a (non-zero) vector gets a zero row."""
    arrays: dict[int, npt.NDArray[np.float64]] = {}
    for i, uid in enumerate(uids):
        if uid in vectors:
            array = np.asarray(vectors[uid], dtype=np.float64).ravel()
            if not np.all(np.isfinite(array)):
                raise InputError("vectors", f"vector of {uid!r} must hold finite numbers")
            arrays[i] = array
    dims = {a.size for a in arrays.values()}
    if len(dims) > 1:
        raise InputError("vectors", f"all vectors must have the same dimension, got {sorted(dims)}")
    rows = np.zeros((len(uids), dims.pop() if dims else 0), dtype=np.float64)
    for i, array in arrays.items():
        norm = float(np.linalg.norm(array))
        if norm > 0:
            rows[i] = array / norm
    return rows


def mmr_select(
    scores: Mapping[str, float],
    vectors: Mapping[str, npt.ArrayLike],
    *,
    lambda_: float,
    limit: int,
    min_score: float = -math.inf,
) -> list[tuple[str, float, float]]:
    """Maximal marginal relevance: ``(uid, final, mmr_penalty)`` in picking order.

    Each step picks the uid maximising ``score - (1 - lambda_) / lambda_ * max_sim`` (ties by uid),
    ``max_sim`` being its highest cosine (clamped to 0..1) to the uids already picked; uids without
    a vector have similarity 0. Stops after ``limit`` picks or when the best remaining value is
    below ``min_score`` (values never increase from one pick to the next).
    """
    uids = sorted(scores)
    rows = _unit_rows(uids, vectors)
    base = np.array([scores[u] for u in uids], dtype=np.float64)
    max_sim = np.zeros(len(uids), dtype=np.float64)
    open_ = np.ones(len(uids), dtype=bool)
    weight = (1.0 - lambda_) / lambda_
    picked: list[tuple[str, float, float]] = []
    while len(picked) < limit and open_.any():
        value = np.where(open_, base - weight * max_sim, -np.inf)
        j = int(np.argmax(value))  # first maximum = smallest uid, as uids are sorted
        if value[j] < min_score:
            break
        penalty = weight * float(max_sim[j])
        picked.append((uids[j], float(base[j]) - penalty, penalty))
        open_[j] = False
        np.maximum(max_sim, np.clip(rows @ rows[j], 0.0, 1.0), out=max_sim)
    return picked


__all__ = ["mmr_select"]
