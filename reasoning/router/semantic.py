"""Semantic similarity of a problem to each seed method, with the local embedding model.

A method's texts are its catalogue description and its worked problems (:mod:`.exemplars`); a method's
similarity is the largest cosine between the problem and one of its texts. The method texts are embedded once
per process and embedder model. Everything goes through the :class:`~kg.ports.Embedder` port: when the model
cannot load (:class:`~kg.errors.BackendUnavailableError`) or no embedder is configured, the router runs on
cues alone and says so.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from kg.errors import BackendUnavailableError
from kg.ports import Embedder
from reasoning.router.catalogue import SEED
from reasoning.router.exemplars import WORKED

if TYPE_CHECKING:
    import numpy as np

#: Method texts' vectors per embedder model: (method of each row, unit vectors).
_VECTORS: dict[str, tuple[list[str], np.ndarray]] = {}
_LOCK = threading.Lock()


def method_texts() -> list[tuple[str, str]]:
    """(method id, text) for every seed method: its description, then its worked problems."""
    return [(m.id, text) for m in SEED for text in (m.description, *WORKED.get(m.id, ()))]


def _method_vectors(embedder: Embedder) -> tuple[list[str], np.ndarray]:
    import numpy as np  # noqa: PLC0415 - with the embedder: an explicit method or no embedder needs no NumPy

    with _LOCK:
        if embedder.model not in _VECTORS:
            pairs = method_texts()
            vectors = np.asarray(embedder.embed([t for _, t in pairs], batch=True), dtype=np.float32)
            _VECTORS[embedder.model] = ([m for m, _ in pairs], vectors)
        return _VECTORS[embedder.model]


def similarities(problem: str, embedder: Embedder | None) -> tuple[dict[str, float], str | None]:
    """Each seed method's similarity to ``problem`` (cosine, -1..1), and why there is none when it is empty.

    Returns ``({}, reason)`` without an embedder, for an empty problem, or when the model cannot load.
    """
    if embedder is None:
        return {}, "semantic similarity off: no embedder is configured"
    if not problem.strip():
        return {}, None
    try:
        owners, vectors = _method_vectors(embedder)
        [query] = embedder.embed([problem[:2000]])
    except BackendUnavailableError as exc:
        return {}, f"semantic similarity off ({exc}); routed on structural cues only"
    import numpy as np  # noqa: PLC0415 - see _method_vectors

    cosines = vectors @ np.asarray(query, dtype=np.float32)
    best: dict[str, float] = {}
    for method, cosine in zip(owners, cosines.tolist(), strict=True):
        best[method] = max(best.get(method, -1.0), float(cosine))
    return {m: round(s, 4) for m, s in best.items()}, None


def relative(sims: dict[str, float]) -> dict[str, float]:
    """Similarities rescaled to 0..1 within the problem: the closest method 1, the mean or below 0."""
    if not sims:
        return {}
    top, mean = max(sims.values()), sum(sims.values()) / len(sims)
    if top - mean <= 1e-9:
        return dict.fromkeys(sims, 0.0)
    return {m: round(max(0.0, (s - mean) / (top - mean)), 4) for m, s in sims.items()}


__all__ = ["method_texts", "relative", "similarities"]
