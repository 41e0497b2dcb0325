"""The local web console (``mabos ui``): pages over the same library services as the CLI and the tools.

See ``docs/console.md``. :func:`cli.ui.app.create_app` builds the Starlette application (imported on first use,
so other commands do not load the web stack); :mod:`cli.ui.picture` writes the pictures of ``mabos graph render``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from cli.ui.app import create_app  # noqa: PLC0415 - the web stack loads only for the console

        return create_app
    raise AttributeError(name)
