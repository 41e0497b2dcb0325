"""One error tree for the whole of mabos.

Every error raised on purpose by mabos derives from :class:`MabosError`; adapters translate
their backend's exceptions at the boundary (``raise ... from exc``)::

    MabosError
    ├── InputError              bad input: names the field and the rule, nothing was changed
    ├── NotFoundError           a referenced record (agent, fact, node) does not exist
    ├── ScopeError              the agent may not read or write that scope
    ├── ConflictError           the change contradicts stored state (duplicate agent, bad link)
    ├── WorkspaceError          no workspace, unreadable config, schema newer than this code
    ├── BackendError            a reachable backend refused the request (bad query, failed commit)
    └── BackendUnavailableError a store or server cannot be reached (CLI exit code 3)
        └── StoreBusyError      the embedded store stayed locked past every retry

The CLI maps ``BackendUnavailableError`` to exit code 3 and every other ``MabosError`` to 1.
A message longer than :data:`MAX_MESSAGE` characters is clipped in the middle: a refusal that quotes the
refused value must not echo a 10 MB input back to the caller (an agent reads these messages).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

#: The longest message an error carries (longer ones keep their start and end).
MAX_MESSAGE = 600


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text``, or its start and end around a note of how much was left out when it is over ``limit``."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 6
    return f"{text[:head]}...[{len(text) - head - tail} characters left out]...{text[-tail:]}"


def one_line(text: str) -> str:
    """``text`` on one line (every run of white space one space), clipped as mabos's own messages are: what every
    surface (CLI, console, MCP) shows of an error, a foreign error's text included."""
    return clip(" ".join(text.split()))


def logger(name: str = "mabos") -> logging.Logger:
    """The ``mabos`` logger (or one of its children, ``name``), where a failure that must not fail the call is
    reported (a commit hook, write-through, a workspace's housekeeping, recall falling back); :mod:`logging` is
    imported only when something is logged, so a command that runs cleanly imports none (issue 33,
    tests/unit/test_startup_imports.py)."""
    import logging  # noqa: PLC0415

    return logging.getLogger(name)


class MabosError(Exception):
    """Root of every error mabos raises on purpose."""

    exit_code = 1

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], str):
            args = (clip(args[0]), *args[1:])
        super().__init__(*args)


class InputError(MabosError):
    """Bad input. The message names the field and the rule it broke; nothing was written."""

    def __init__(self, field: str, rule: str) -> None:
        self.field = clip(field, MAX_MESSAGE // 3)
        self.rule = clip(rule)
        super().__init__(f"{self.field}: {self.rule}")


class NotFoundError(MabosError):
    """A referenced record does not exist (or is not visible to the caller)."""


class ScopeError(MabosError):
    """The agent is not allowed to read or write the given scope."""


class ConflictError(MabosError):
    """The requested change contradicts stored state."""


class WorkspaceError(MabosError):
    """The workspace is missing, its configuration is unreadable, or its schema is too new."""


class CorruptStoreError(WorkspaceError):
    """The workspace's database file exists but is not a readable mabos database."""


class BackendError(MabosError):
    """A reachable backend (a TypeDB server) refused the request: a bad query, a failed commit."""


class BackendUnavailableError(MabosError):
    """A store or server cannot be reached right now."""

    exit_code = 3


class StoreBusyError(BackendUnavailableError):
    """The embedded store stayed locked by another writer past every retry."""


__all__ = [
    "BackendError",
    "BackendUnavailableError",
    "ConflictError",
    "CorruptStoreError",
    "InputError",
    "MabosError",
    "NotFoundError",
    "ScopeError",
    "StoreBusyError",
    "WorkspaceError",
    "logger",
]
