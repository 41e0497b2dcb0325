"""The token counts a request may carry (a budget, a model's context window), declared once for the memory and
conversation requests and the context budget (:mod:`kg.conversation.budget` takes ``MAX_WINDOW`` from here).

Apart from the budget so that a request naming a window does not define the budget's models: a recall's request
needs these two names only (issue 33).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

#: Largest window accepted (tokens): far above any model's, small enough to catch a typo.
MAX_WINDOW = 100_000_000


def token_count(most: int, description: str) -> Any:
    """An optional field counting tokens (a budget or a model's context window): absent, or 1..``most``."""
    return Field(default=None, ge=1, le=most, description=description)


__all__ = ["MAX_WINDOW", "token_count"]
