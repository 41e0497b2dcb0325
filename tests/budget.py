"""How many examples a property test draws: a share of its full budget by default, all of it in the long run.

The default run (``pytest``, what CI runs) has to stay short on two cores; the long run (``pytest -m slow`` or
``MABOS_SLOW=1``, which ``tests/conftest.py`` sets for ``-m slow``) is where property tests search hard::

    @settings(max_examples=examples(150), deadline=None)

draws 150 examples in the long run and a third of them (never fewer than :data:`FLOOR`) by default. Hypothesis
keeps the failing examples it finds in its database and replays them first, so a bug found once is retried on
every later run whatever the budget.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: Share of the full budget drawn by the default run.
DEFAULT_SHARE = 1 / 3
#: The fewest examples a default run draws.
FLOOR = 10


def long_run() -> bool:
    """Whether the long versions were asked for (``MABOS_SLOW=1``; ``-m slow`` sets it before collection)."""
    return os.environ.get("MABOS_SLOW") == "1"


def examples(full: int) -> int:
    """``full`` in the long run, else a third of it (at least :data:`FLOOR`, at most ``full``)."""
    if long_run():
        return full
    return min(full, max(FLOOR, round(full * DEFAULT_SHARE)))


def sizes(default: tuple[int, ...], slow: tuple[int, ...]) -> list[Any]:
    """Parameters: the ``default`` sizes, and the larger ``slow`` ones marked slow (the long run only)."""
    return [*default, *(pytest.param(n, marks=pytest.mark.slow, id=f"{n}-slow") for n in slow)]
