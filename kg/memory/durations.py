"""Ages written as durations (``max_age`` of a recall or a listing)."""

from __future__ import annotations

import re
from datetime import timedelta

from kg.errors import InputError

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_max_age(value: str | float | timedelta | None) -> timedelta | None:
    """``"7d"``, ``"36h"``, ``"90m"``, ``"2w"`` or a number of days -> timedelta."""
    if value is None or isinstance(value, timedelta):
        return value
    if isinstance(value, int | float):
        if value <= 0:
            raise InputError("max_age", "must be positive")
        return timedelta(days=float(value))
    match = _DURATION.match(value.strip().lower())
    if not match or float(match[1]) <= 0:
        raise InputError("max_age", f"must look like 90m, 36h, 7d or 2w, got {value!r}")
    return timedelta(seconds=float(match[1]) * _UNITS[match[2]])


__all__ = ["parse_max_age"]
