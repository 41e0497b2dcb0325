"""Token estimates live in :mod:`kg.models.conversation` (shared with the store adapters); kept importable here."""

from kg.models.conversation import CHARS_PER_TOKEN, TokenEstimator, estimate_tokens

__all__ = ["CHARS_PER_TOKEN", "TokenEstimator", "estimate_tokens"]
