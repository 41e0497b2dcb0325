"""Re-export of :mod:`kg.models.conversation` (the records the store adapters share), kept importable here."""

from kg.models.conversation import *  # noqa: F403 - its __all__, the one list of the public names
