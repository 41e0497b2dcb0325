"""pydantic's plugins in the ``mabos`` process: off unless the caller asks, and then without their import cost.

pydantic builds each model's validator through ``pydantic.plugin._schema_validator.create_schema_validator``, which
imports ``pydantic.plugin._loader`` and asks its ``get_plugins()`` for plugins. That module's top imports
``importlib.metadata`` (and with it ``email``, ``zipfile``, ``csv`` ...: 7% of a cold ``mabos fact query``'s
instructions) before it reads pydantic's switch ``PYDANTIC_DISABLE_PLUGINS``, so the import is paid even when the
switch turns every plugin off, as ``mabos`` has done for its own process since the first start-up pass.

:func:`configure` (called by :func:`cli.main.main`, never on ``import kg`` or ``import cli``: a program using the
Python API keeps its host's plugins) therefore:

- leaves everything to pydantic when ``MABOS_PYDANTIC_PLUGINS`` is set (``1``, ``true``, ``yes``): pydantic's real
  loader reads ``PYDANTIC_DISABLE_PLUGINS`` as the caller set it (or not) and loads the plugins installed;
- otherwise sets ``PYDANTIC_DISABLE_PLUGINS=__all__`` unless the caller set it (any value the caller set, even an
  empty one, is pydantic's to read), and, when the value turns every plugin off, puts :class:`PluginLoaderStandIn`
  in ``sys.modules`` under the loader's name before pydantic imports it. Its ``get_plugins()`` answers as pydantic's
  would for that value, no plugins, so every validator is a plain ``pydantic_core.SchemaValidator``; anything else
  asked of it (a name pydantic's loader defines or may define later, or the switch changed in the process) loads
  pydantic's own module in its place and answers from it.

If pydantic renames or moves its loader, the stand-in sits under a name nobody imports: nothing of pydantic's is
replaced and only the speed is lost (``tests/unit/test_pydantic_plugins.py`` checks both fall-backs).
Decision record: docs/decisions/2026-11-29-pydantic-plugins.md.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

#: The module pydantic's validator factory imports to find plugins (pydantic 2.14).
LOADER = "pydantic.plugin._loader"
#: Set to ``1`` (``true``, ``yes``) to keep pydantic's plugins and its own loader in the ``mabos`` process.
PLUGINS_ENV = "MABOS_PYDANTIC_PLUGINS"
#: pydantic's documented switch: ``__all__``, ``1`` or ``true`` turn every plugin off, a list of names those plugins.
DISABLE_ENV = "PYDANTIC_DISABLE_PLUGINS"
#: The switch's values that turn every plugin off (pydantic's ``get_plugins`` compares with exactly these).
ALL_OFF = ("__all__", "1", "true")


def plugins_wanted() -> bool:
    """Whether ``MABOS_PYDANTIC_PLUGINS`` asks to keep pydantic's plugins."""
    return os.environ.get(PLUGINS_ENV, "").strip().lower() in ("1", "true", "yes")


def configure(loader: str = LOADER) -> bool:
    """Turn pydantic's plugins off for this process unless the caller chose; whether the loader was stood in for.

    ``loader`` is the module to stand in for (a parameter for the tests of a renamed module)."""
    if plugins_wanted():
        return False
    if os.environ.setdefault(DISABLE_ENV, "__all__") not in ALL_OFF or loader in sys.modules:
        return False  # plugins named by the caller are pydantic's to load; a loader imported already stays
    sys.modules[loader] = PluginLoaderStandIn(loader)
    return True


class PluginLoaderStandIn(types.ModuleType):
    """Stands in for pydantic's plugin loader while its switch turns every plugin off (see the module's doc)."""

    def get_plugins(self) -> Any:
        """No plugins while ``PYDANTIC_DISABLE_PLUGINS`` turns all off (as pydantic's); otherwise pydantic's answer."""
        if os.environ.get(DISABLE_ENV) in ALL_OFF:
            return ()
        return self._real().get_plugins()

    def __getattr__(self, name: str) -> Any:
        """Any other name: pydantic's own loader's (imported now, in the stand-in's place)."""
        if name.startswith("__"):  # what import machinery and introspection ask of any module: not a reason to load
            raise AttributeError(name)
        try:
            real = self._real()
        except ImportError as exc:  # pydantic moved its loader: nothing to answer from
            raise AttributeError(f"{self.__name__} has no attribute {name!r}") from exc
        return getattr(real, name)

    def _real(self) -> types.ModuleType:
        """pydantic's loader, imported (once) in place of the stand-in."""
        import importlib  # noqa: PLC0415 - only when pydantic's own loader is needed

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return importlib.import_module(self.__name__)
