"""Token estimates: pluggable, default four characters a token (no tokenizer download, deterministic)."""

from __future__ import annotations

from collections.abc import Callable

#: A function from text to an estimated token count.
TokenEstimator = Callable[[str], int]

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the default estimate (0 for empty text)."""
    return -(-len(text) // CHARS_PER_TOKEN)


__all__ = ["CHARS_PER_TOKEN", "TokenEstimator", "estimate_tokens"]
