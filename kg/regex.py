"""Regular expressions supplied by users and agents, run in linear time (RE2), with caps and a deadline.

Python's ``re`` backtracks: ``(a+)+$`` on 34 ``a`` and a ``!`` takes 2^34 steps, and one such search
froze the CLI and the MCP server. Every pattern that comes from outside goes through
:func:`compile_regex` instead, which compiles it with Google's RE2 (``google-re2``): matching time grows
linearly with the text whatever the pattern. What RE2 cannot run in linear time is refused with one line
naming the field: backreferences (``\\1``, ``(?P=name)``), lookaround (``(?=``, ``(?!``, ``(?<=``,
``(?<!``), repetition counts over 1000, and programs over :data:`MAX_MEMORY`. The rest of Python's
syntax means the same, with one difference: ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII in RE2; write
``\\pL`` (or ``\\p{Han}``...) for letters of any script. ``(?i)`` folds case in every script.

Caps: a pattern has at most :data:`MAX_PATTERN` characters; only the first :data:`MAX_TEXT` characters of
a text are searched; :meth:`UserRegex.finditer` returns at most ``limit`` spans. Linear is not free (a
pattern the DFA cannot hold falls back to RE2's NFA, about 1 MB/s), so a search over many texts runs
inside :func:`deadline`: once it passes, :meth:`UserRegex.matches` answers ``False`` without searching
and the budget says ``expired``, so the caller returns what it found and says it was cut.

This module sits on the ground floor of ``kg`` (like :mod:`kg.ids`): it imports only ``re2`` and
:mod:`kg.errors`, so the store adapters may use it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

from kg.errors import InputError

#: Characters of a pattern.
MAX_PATTERN = 1_000
#: Characters of one text that are searched (the rest is not).
MAX_TEXT = 1_000_000
#: Bytes RE2 may use for one compiled pattern (its default; a larger program is refused).
MAX_MEMORY = 8 << 20
#: Default spans of :meth:`UserRegex.finditer`.
MAX_SPANS = 10_000
#: Seconds one search over many texts may take by default (:func:`deadline`).
DEFAULT_DEADLINE = 10.0
#: The longest deadline a caller may ask for.
MAX_DEADLINE = 300.0

#: ``(start, end)`` of a match, in characters.
Span = tuple[int, int]

_HINTS = (
    ("invalid escape sequence: \\", "backreferences are not supported (RE2 runs in linear time)"),
    ("invalid perl operator: (?=", "lookaround is not supported (RE2 runs in linear time)"),
    ("invalid perl operator: (?!", "lookaround is not supported (RE2 runs in linear time)"),
    ("invalid perl operator: (?<", "lookaround is not supported (RE2 runs in linear time)"),
    ("invalid perl operator: (?P=", "backreferences are not supported (RE2 runs in linear time)"),
    ("invalid repetition size", "repetition counts may be at most 1000 (RE2)"),
    ("pattern too large", f"is too large (RE2 may use at most {MAX_MEMORY >> 20} MB for it)"),
)


@dataclass
class Budget:
    """The deadline of one search: when it ends, and whether a match was refused because it had passed."""

    ends: float
    expired: bool = False

    def over(self) -> bool:
        """Whether the deadline has passed (remembered in :attr:`expired`)."""
        if not self.expired and time.monotonic() >= self.ends:
            self.expired = True
        return self.expired


_BUDGET: ContextVar[Budget | None] = ContextVar("mabos_regex_budget", default=None)


@contextmanager
def deadline(seconds: float = DEFAULT_DEADLINE) -> Iterator[Budget]:
    """Run the searches of the block under one deadline (``seconds`` from now; 0 = already over).

    Raises:
        InputError: ``seconds`` is negative, not finite, or over :data:`MAX_DEADLINE`.
    """
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and 0 <= seconds <= MAX_DEADLINE):
        raise InputError("deadline", f"must be from 0 to {MAX_DEADLINE:g} seconds, got {seconds!r}")
    budget = Budget(time.monotonic() + seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


class UserRegex:
    """A compiled user pattern (RE2). Spans are in characters of the (capped) text."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def search(self, text: str) -> Span | None:
        """The first match in the first :data:`MAX_TEXT` characters, or ``None``."""
        found = self._compiled.search(text[:MAX_TEXT])
        return None if found is None else (found.start(), found.end())

    def finditer(self, text: str, *, limit: int = MAX_SPANS) -> list[Span]:
        """Up to ``limit`` non-overlapping matches, in order."""
        spans: list[Span] = []
        for found in self._compiled.finditer(text[:MAX_TEXT]):
            if len(spans) >= limit:
                break
            spans.append((found.start(), found.end()))
        return spans

    def matches(self, text: str) -> bool:
        """Whether the pattern occurs; ``False`` without searching once the current :func:`deadline` passed."""
        budget = _BUDGET.get()
        if budget is not None and budget.over():
            return False
        return self._compiled.search(text[:MAX_TEXT]) is not None


def _options() -> Any:
    options = re2.Options()
    options.max_mem = MAX_MEMORY
    options.log_errors = False
    return options


def _reason(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else exc
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    text = " ".join(text.split())
    for needle, hint in _HINTS:
        if needle in text:
            return f"{hint}: {text}" if not hint.startswith("is ") else hint
    return f"is not a valid regular expression ({text})"


@lru_cache(maxsize=256)
def _compile(pattern: str) -> UserRegex | str:
    """The compiled pattern, or why it is refused (cached either way: a refusal costs one compile)."""
    try:
        return UserRegex(pattern, re2.compile(pattern, _options()))
    except (re2.error, TypeError, ValueError, OverflowError) as exc:
        return _reason(exc)


def compile_regex(pattern: str, *, field: str = "pattern") -> UserRegex:
    """Compile a user's pattern for linear-time matching.

    Raises:
        InputError: naming ``field``: not a string, empty, over :data:`MAX_PATTERN` characters, a NUL, or
            a pattern RE2 cannot run (with the reason).
    """
    if not isinstance(pattern, str):
        raise InputError(field, f"must be a string, got {type(pattern).__name__}")
    if not pattern:
        raise InputError(field, "must not be empty")
    if len(pattern) > MAX_PATTERN:
        raise InputError(field, f"must be at most {MAX_PATTERN} characters, got {len(pattern)}")
    if "\x00" in pattern:
        raise InputError(field, "must not contain NUL characters")
    return _compiled(pattern, field)


def _compiled(pattern: str, field: str) -> UserRegex:
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        if compiled.startswith("is "):
            raise InputError(field, compiled)
        raise InputError(field, f"cannot be run: {compiled}")
    return compiled


def literal_regex(words: Iterable[str], *, field: str = "pattern") -> UserRegex:
    """A pattern matching any of ``words`` literally, in any case (longest first, so a word beats its prefix).

    The words come from a query the caller has already capped; escaping may make the pattern longer than
    :data:`MAX_PATTERN`, which is not held against it (RE2's memory cap still is).
    """
    ordered = sorted(dict.fromkeys(w for w in words if w), key=lambda w: (-len(w), w))
    if not ordered:
        raise InputError(field, "has no words to search for")
    if any("\x00" in w for w in ordered):
        raise InputError(field, "must not contain NUL characters")
    return _compiled("(?i)" + "|".join(re2.escape(w) for w in ordered), field)


__all__ = [
    "DEFAULT_DEADLINE",
    "MAX_DEADLINE",
    "MAX_MEMORY",
    "MAX_PATTERN",
    "MAX_SPANS",
    "MAX_TEXT",
    "Budget",
    "Span",
    "UserRegex",
    "compile_regex",
    "deadline",
    "literal_regex",
]
