"""How a worker pool is bounded (:class:`PoolSettings`): workers, calls per agent, each call's deadline and the memory
a worker may take. :mod:`cli.workers` runs a pool with them; :mod:`cli.server_options` offers the same bounds as the
servers' options, so a value a command accepts is one the pool accepts."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kg.errors import InputError

#: Defaults of ``mabos serve --mcp``: two warm workers, one running call per agent, a minute per call.
DEFAULT_WORKERS = 2
DEFAULT_DEADLINE = 60.0
#: The bounds of every pool (``mabos serve --mcp --workers/--deadline``, ``mabos ui --deadline``), checked by
#: PoolSettings and offered by the options of cli/server_options.py.
MAX_WORKERS = 64
MIN_DEADLINE = 0.1
MAX_DEADLINE = 86_400
#: The address space a worker may take beyond its size when ready (the preloaded libraries: ~0.5 GiB, ~1.4 GiB
#: with the local embedding model's torch), unless ``MABOS_WORKER_MEMORY`` says otherwise.
DEFAULT_MEMORY = 2 << 30
ENV_MEMORY = "MABOS_WORKER_MEMORY"
_MIN_MEMORY = 32 << 20
_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}


def memory_from_env() -> int | None:
    """The worker memory limit in bytes from ``MABOS_WORKER_MEMORY`` (``2GiB``, ``512MiB``, a byte count, or
    ``off`` for none); :data:`DEFAULT_MEMORY` when it is not set.

    Raises:
        InputError: naming ``MABOS_WORKER_MEMORY`` for a value that is not a size.
    """
    value = os.environ.get(ENV_MEMORY, "").strip().lower()
    if not value:
        return DEFAULT_MEMORY
    if value in ("off", "none", "0"):
        return None
    found = re.fullmatch(r"(\d+)\s*([a-z]*)", value)
    if found is None or found.group(2) not in _UNITS:
        raise InputError(ENV_MEMORY, f"must be a size such as 2GiB, 512MiB or a byte count, or off; got {value!r}")
    return int(found.group(1)) * _UNITS[found.group(2)]


def size_text(count: int | None) -> str:
    """A memory limit as error messages show it (``2 GiB``, ``512 MiB``, ``no limit``)."""
    return "no limit" if count is None else f"{count / (1 << 30):g} GiB" if count >= 1 << 30 else f"{count >> 20} MiB"


@dataclass(frozen=True)
class PoolSettings:
    """How many workers, how many running calls per agent, each call's deadline in seconds, and the address space
    in bytes a worker may take beyond its size when ready (None: no limit)."""

    workers: int = DEFAULT_WORKERS
    per_agent: int = 1
    deadline: float = DEFAULT_DEADLINE
    memory: int | None = field(default_factory=memory_from_env)

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= MAX_WORKERS:
            raise InputError("workers", f"must be between 1 and {MAX_WORKERS}")
        if not 1 <= self.per_agent <= self.workers:
            raise InputError("per_agent", f"must be between 1 and the number of workers ({self.workers})")
        if not MIN_DEADLINE <= self.deadline <= MAX_DEADLINE:
            raise InputError("deadline", f"must be between {MIN_DEADLINE} and {MAX_DEADLINE} seconds")
        if self.memory is not None and not _MIN_MEMORY <= self.memory <= 1 << 40:
            raise InputError("memory", f"must be between {size_text(_MIN_MEMORY)} and 1024 GiB (or no limit)")


__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MEMORY",
    "DEFAULT_WORKERS",
    "ENV_MEMORY",
    "MAX_DEADLINE",
    "MAX_WORKERS",
    "MIN_DEADLINE",
    "PoolSettings",
    "memory_from_env",
    "size_text",
]
