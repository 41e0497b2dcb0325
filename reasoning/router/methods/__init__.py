"""Engines of the reasoning methods, one module per category of the seed's catalogue.

Each category module exposes ``ENGINES: dict[str, Engine]`` keyed by canonical (hyphenated) method
id: :mod:`.formal`, :mod:`.probabilistic`, :mod:`.causal`, :mod:`.experience`, :mod:`.social`,
:mod:`.meta`. :func:`engines` collects them; a module that fails to import is a bug and is reported
as such (never silently skipped).
"""

from __future__ import annotations

import importlib
import pkgutil

from reasoning.router.methods.base import Engine
from reasoning.router.methods.docs import MethodDoc

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


def method_docs() -> dict[str, MethodDoc]:
    """Every method's :class:`MethodDoc`, from the ``DOCS`` tables of all modules of this package."""
    found: dict[str, MethodDoc] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        table = getattr(module, "DOCS", None)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise RuntimeError(f"reasoning.router.methods.{info.name}.DOCS must be a dict[str, MethodDoc]")
        for method, doc in table.items():
            if method in found and found[method] is not doc:
                raise RuntimeError(f"DOCS of {method!r} defined twice")
            found[method] = doc
    return found


__all__ = ["CATEGORY_MODULES", "MethodDoc", "engines", "method_docs"]
