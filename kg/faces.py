"""Package faces that load their names on first use (PEP 562), so importing one name imports one module.

A package such as :mod:`kg.models` exports many names from its submodules. Importing them all in its
``__init__`` would make ``from kg.models import Fact`` build every pydantic model of every aggregate; instead
the ``__init__`` keeps the imports for the type checker only and hands its names to :func:`lazy_names`::

    if TYPE_CHECKING:
        from kg.models.facts import Fact
    if not TYPE_CHECKING:  # mypy reads the imports above: a typo stays an error
        __getattr__, __dir__ = lazy_names(__name__, {"kg.models.facts": ("Fact",)})
    __all__ = ["Fact"]

:class:`LazyPatterns` does the same for a module's regular expressions: each is compiled on first use and then kept
as a plain module attribute.

tests/unit/test_startup_imports.py checks that each face's names, its type-checking imports and its ``__all__``
agree, and pins what a fact query and a bm25 recall import.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(
    package: str, sources: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, given its exported names by the module that
    defines them. A name is imported on first access and then kept in the package (the next access is a plain
    attribute); an unknown name is an :class:`AttributeError`, as for any module."""
    namespace = sys.modules[package].__dict__
    where = {name: module for module, names in sources.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


class LazyPatterns(dict[str, "str | tuple[str, int]"]):
    """A module's regular expressions by name (a pattern, or a pattern and its flags), each compiled on first use
    and then kept as a plain attribute of the module: :meth:`compiled`, or the attribute itself through
    :meth:`module_getattr` as the module's ``__getattr__`` (PEP 562). Compiling is what costs (a CJK range's
    character map, a month alternation ignoring case: up to ~10 ms each), which a command that never uses a
    pattern should not pay (issue 33)."""

    def __init__(self, module: str, patterns: Mapping[str, str | tuple[str, int]]) -> None:
        super().__init__(patterns)
        #: The module whose attributes the compiled patterns become.
        self.module = module

    def compiled(self, name: str) -> re.Pattern[str]:
        """The pattern ``name``, compiled once."""
        namespace = vars(sys.modules[self.module])
        found: re.Pattern[str] | None = namespace.get(name)
        if found is None:
            source = self[name]
            found = namespace[name] = re.compile(*source) if isinstance(source, tuple) else re.compile(source)
        return found

    def module_getattr(self, name: str) -> re.Pattern[str]:
        """The module's ``__getattr__``: a pattern of this table, compiled; any other name is missing."""
        if name not in self:
            raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
        return self.compiled(name)


__all__ = ["LazyPatterns", "lazy_names"]
