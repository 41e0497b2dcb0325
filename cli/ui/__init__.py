"""The local web console (``mabos ui``): pages over the same library services as the CLI and the tools.

See ``docs/console.md``. :func:`create_app` builds the Starlette application; :mod:`cli.ui.picture` writes the
static pictures of ``mabos graph render``.
"""

from __future__ import annotations

from cli.ui.app import create_app

__all__ = ["create_app"]
