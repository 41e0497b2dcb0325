"""Engines of the reasoning methods, one module per category of the seed's catalogue.

Each category module exposes ``ENGINES: dict[str, Engine]`` keyed by canonical (hyphenated) method
id: :mod:`.formal`, :mod:`.probabilistic`, :mod:`.causal`, :mod:`.experience`, :mod:`.social`,
:mod:`.meta`. :func:`engines` collects them; a module that fails to import is a bug and is reported
as such (never silently skipped).
"""

from __future__ import annotations

import importlib

from reasoning.router.methods.base import Engine

#: The category modules, in catalogue order.
CATEGORY_MODULES = ("formal", "probabilistic", "causal", "experience", "social", "meta")

_CACHE: dict[str, Engine] = {}


def engines() -> dict[str, Engine]:
    """Every engine by canonical method id (imported once)."""
    if not _CACHE:
        found: dict[str, Engine] = {}
        for name in CATEGORY_MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            table = getattr(module, "ENGINES", None)
            if not isinstance(table, dict):
                raise RuntimeError(f"reasoning.router.methods.{name} must define ENGINES: dict[str, Engine]")
            clash = set(found) & set(table)
            if clash:
                raise RuntimeError(f"engines defined twice: {sorted(clash)}")
            found.update(table)
        _CACHE.update(found)
    return dict(_CACHE)


__all__ = ["CATEGORY_MODULES", "engines"]
