"""The progress bar of long CLI commands: on stderr, gone when done, hidden when stderr is not a terminal.

:func:`progress` hands the block an ``update(done, total=None)`` callback; :func:`reporting` instead sets a
library's progress hook (a context variable such as :data:`kg.extraction.service.PROGRESS`) for the block.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Update(Protocol):
    """A progress callback: how many are done, and the total when it is known (None keeps the bar's)."""

    def __call__(self, done: int, total: int | None = None) -> None:
        """Move the bar."""


def _maybe_terminal() -> bool:
    """False when rich's console would surely not count stderr as a terminal: not a TTY and neither
    ``TTY_COMPATIBLE`` nor ``FORCE_COLOR`` set (``rich.console.Console.is_terminal``'s rules)."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    try:
        return sys.stderr.isatty()
    except ValueError:  # closed
        return False


def _ignore(done: int, total: int | None = None) -> None:
    """The callback of a hidden bar."""


@contextmanager
def progress(label: str, total: int | None = None) -> Iterator[Update]:
    """A bar labelled ``label`` (``total`` if known up front) and the callback that moves it."""
    if not _maybe_terminal():  # rich would hide the bar: skip importing it
        yield _ignore
        return
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn  # noqa: PLC0415

    console = Console(stderr=True)
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as bar:  # fmt: skip
        task = bar.add_task(label, total=total)

        def update(done: int, total: int | None = None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def reporting(label: str, hook: ContextVar[Callable[[int, int], None] | None]) -> Iterator[None]:
    """A bar fed by whatever the block reports through ``hook``; the hook is reset afterwards."""
    with progress(label) as update:
        token = hook.set(update)
        try:
            yield
        finally:
            hook.reset(token)


__all__ = ["Update", "progress", "reporting"]
