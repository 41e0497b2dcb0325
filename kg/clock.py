"""Injectable clock so that every time rule can be tested."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the current time as an aware UTC datetime."""

    def now(self) -> datetime:
        """Return the current time (aware, UTC)."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        """Return the current UTC time."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to: for tests and replays."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        """Return the frozen time."""
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by ``delta`` and return the new time."""
        self._now += delta
        return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (naive means UTC)."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        self._now = when.astimezone(UTC)
