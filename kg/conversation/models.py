"""The conversation records live in :mod:`kg.models.conversation` (shared with the store adapters); kept importable here."""

from kg.models.conversation import *  # noqa: F403
from kg.models.conversation import __all__ as __all__
