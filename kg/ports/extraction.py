"""Ports of extraction: the extractor (deterministic or LLM), per-conversation high-water marks and one
write transaction spanning several ports."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import date
from typing import Protocol

from kg.errors import BackendError
from kg.models.conversation import Message
from kg.models.extraction import WindowExtraction


class ExtractionFailedError(BackendError):
    """An extractor could not produce a usable answer for a window (the window is left for the next run): the chat
    model answered, but not usably. The extraction service records the window as failed; a caller of an
    extractor's own ``extract`` meets it as a :class:`~kg.errors.BackendError` (one line, exit code 1)."""


class Extractor(Protocol):
    """Turns a window of messages (oldest first) into memory and fact candidates."""

    @property
    def method(self) -> str:
        """``deterministic`` or ``llm``."""
        ...

    def extract(self, window: Sequence[Message], *, speaker: str) -> WindowExtraction:
        """Candidates of ``window``; ``speaker`` names the user the first person refers to.

        Raises:
            ExtractionFailedError: no usable answer (the caller records the window as failed).
        """
        ...


class Marks(Protocol):
    """High-water marks by name (positions only move forward)."""

    def get(self, name: str) -> int:
        """The mark ``name`` (0 when never set)."""
        ...

    def advance(self, name: str, position: int) -> int:
        """Move the mark up to ``position`` (never down); the mark afterwards."""
        ...

    def memory_after(self, position: int, limit: int) -> list[tuple[int, str, str, date, str]]:
        """Memory items after ``position`` in insertion order: (position, uid, agent id, day created, source); the
        daily logs catch up from a mark with it."""
        ...


class Transactions(Protocol):
    """One write transaction around writes through several ports (all commit, or none does)."""

    def transaction(self) -> AbstractContextManager[None]:
        """Writes made inside join one transaction: committed at the end, rolled back on an exception."""
        ...


__all__ = ["ExtractionFailedError", "Extractor", "Marks", "Transactions"]
