"""The options every server shares, declared once with the bounds the worker pool checks (:class:`PoolSettings`):
``mabos serve --mcp`` and ``mabos ui`` offer the same ``--deadline`` range, and ``--workers``/``--per-agent`` the
pool's worker range, so a value the command accepts is one the pool accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from cli.pool_settings import MAX_DEADLINE, MAX_WORKERS, MIN_DEADLINE

F = TypeVar("F", bound=Callable[..., Any])


def deadline_option(default: float, help_text: str, **extra: Any) -> Callable[[F], F]:
    """``--deadline SECONDS`` within the pool's range, defaulting to the server's ``default``."""
    bounds = click.FloatRange(MIN_DEADLINE, MAX_DEADLINE)
    return click.option("--deadline", type=bounds, default=default, show_default=True, help=help_text, **extra)


def worker_count_option(name: str, help_text: str, **extra: Any) -> Callable[[F], F]:
    """A count of workers (``--workers``, ``--per-agent``) between 1 and the pool's most."""
    return click.option(name, type=click.IntRange(1, MAX_WORKERS), help=help_text, **extra)


__all__ = ["deadline_option", "worker_count_option"]
