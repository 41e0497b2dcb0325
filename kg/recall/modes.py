"""The recall modes a request may ask for (``hybrid``, ``bm25``, ``vector``), apart from :mod:`kg.recall.engine` so a
request model names them without importing the engine's numeric stack."""

from __future__ import annotations

from typing import Literal

RecallMode = Literal["hybrid", "bm25", "vector"]
RECALL_MODES: tuple[RecallMode, ...] = ("hybrid", "bm25", "vector")

__all__ = ["RECALL_MODES", "RecallMode"]
