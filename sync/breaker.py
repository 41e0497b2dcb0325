"""The circuit breaker that keeps a dead TypeDB server from costing every write a connection attempt.

After a failed attempt it stays *open* for ``cooldown`` seconds (no attempts), then lets the next attempt
through; a success closes it. Its state lives in ``.mabos/typedb-breaker.json`` so that short-lived processes
(each CLI command) share it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BREAKER_FILE = "typedb-breaker.json"
#: Seconds the breaker stays open after a failed attempt.
DEFAULT_COOLDOWN = 60.0


class CircuitBreaker:
    """Closed (try), open (don't, until ``open_until``), shared through a small JSON file."""

    def __init__(self, path: Path, *, cooldown: float = DEFAULT_COOLDOWN, now: Callable[[], float] = time.time) -> None:
        self.path = path
        self.cooldown = cooldown
        self.now = now

    def state(self) -> dict[str, Any]:
        """``{"open_until": epoch seconds, "failures": n, "last_error": text}`` (empty when never tripped)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def allow(self) -> bool:
        """Whether an attempt may be made now."""
        return float(self.state().get("open_until", 0.0)) <= self.now()

    def record_success(self) -> None:
        """Close the breaker."""
        if self.state():
            self.path.unlink(missing_ok=True)

    def record_failure(self, error: str) -> None:
        """Open the breaker for ``cooldown`` seconds."""
        failures = int(self.state().get("failures", 0)) + 1
        state = {"open_until": self.now() + self.cooldown, "failures": failures, "last_error": error[:300]}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, self.path)


__all__ = ["BREAKER_FILE", "DEFAULT_COOLDOWN", "CircuitBreaker"]
