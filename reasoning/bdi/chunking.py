"""Belief chunking (R5): the cycle walks an agent's beliefs 50 "sections" at a time.

In the seed a section is one ``## `` block of ``Beliefs.md``; here one stored belief is one section.
Chunking bounds the work (and, for callers that hand chunks to an LLM, the prompt) per step; the
conflict index built from the chunks still sees every belief, so no conflict hides across a chunk
boundary.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from kg.errors import InputError

#: Sections per chunk (the seed's ``BELIEF_CHUNK_SIZE``).
CHUNK_SIZE = 50

T = TypeVar("T")


def chunked(items: Sequence[T], size: int = CHUNK_SIZE) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items (none for an empty sequence)."""
    if size < 1:
        raise InputError("chunk_size", "must be at least 1")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def chunk_count(total: int, size: int = CHUNK_SIZE) -> int:
    """How many chunks ``total`` sections make: ``ceil(total / size)`` (0 for 0)."""
    return -(-total // size)
