"""How a recall picks among its hits: the new terms of a recursive search (R4) and the token budget."""

from __future__ import annotations

from collections import Counter
from typing import Protocol, TypeVar

from kg.models import MemoryItem
from kg.text.words import lower_words


class _Hit(Protocol):
    """A recall hit as seen here: only its item matters."""

    @property
    def item(self) -> MemoryItem: ...


H = TypeVar("H", bound=_Hit)


def within_budget(hits: list[H], max_tokens: int) -> tuple[list[H], int]:
    """The hits, best first, whose contents fit in ``max_tokens`` (the default estimate), and how many did not."""
    from kg.models.conversation import estimate_tokens  # noqa: PLC0415 - the conversation models: a budget only

    kept: list[H] = []
    used = 0
    for hit in hits:
        cost = estimate_tokens(hit.item.content)
        if used + cost <= max_tokens:
            kept.append(hit)
            used += cost
    return kept, len(hits) - len(kept)


def new_terms(hits: list[H], known: set[str], *, limit: int = 5) -> list[str]:
    """The most frequent words (longer than 3 characters) and tags of ``hits`` not yet searched for."""
    counts: Counter[str] = Counter()
    for hit in hits:
        counts.update(w for w in lower_words(hit.item.content) if len(w) > 3)
        counts.update(tag.lower() for tag in hit.item.tags)
    ranked = sorted(((n, term) for term, n in counts.items() if term not in known), key=lambda p: (-p[0], p[1]))
    return [term for _, term in ranked[:limit]]


__all__ = ["new_terms", "within_budget"]
