"""Time-ordered, collision-free record ids (ULID-like) with a type prefix.

An id is ``<prefix>-<26 Crockford base32 chars>``: 48 bits of Unix milliseconds then 80 bits that
are random for the first id of a millisecond and incremented for the next ones, so ids made by one
process sort in creation order and ids made by different processes collide with negligible
probability (80 random bits per millisecond).
"""

from __future__ import annotations

import os
import re
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1

#: Prefix of each record kind (design.md §2).
PREFIXES: dict[str, str] = {
    "agent": "A",
    "memory": "M",
    "fact": "F",
    "rule": "R",
    "case": "C",
    "belief": "B",
    "desire": "D",
    "goal": "G",
    "intention": "I",
    "plan": "P",
    "plan_step": "S",
    "checkpoint": "K",
    "proposal": "O",
    "relation": "E",
    "event": "V",
    "conversation": "CV",
    "message": "MS",
    "summary": "SUM",
}

ID_PATTERN = re.compile(r"^[A-Z]{1,3}-[0-9A-HJKMNP-TV-Z]{26}\Z")  # \Z: "$" would accept a trailing newline

# Two base32 digits per 10-bit chunk: 8 table look-ups for the 80 random bits.
_PAIRS = [_ALPHABET[i >> 5] + _ALPHABET[i & 31] for i in range(1024)]
_SHIFTS = tuple(range(70, -1, -10))


def _encode_time(ms: int) -> str:
    """48-bit milliseconds -> 10 Crockford digits (the first carries 3 bits)."""
    return "".join(_ALPHABET[(ms >> shift) & 31] for shift in range(45, -1, -5))


def _encode(value: int) -> str:
    """128-bit value -> 26 Crockford base32 digits: 10 for the time, 16 for the 80 random bits."""
    return _encode_time(value >> _RANDOM_BITS) + _encode_random(value & _RANDOM_MAX)


def _encode_random(rand: int) -> str:
    pairs = _PAIRS
    return "".join([pairs[(rand >> shift) & 1023] for shift in _SHIFTS])


class _Generator:
    """Process-wide id state: the last millisecond, its encoded digits and its random counter."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_ms = -1
        self.rand = 0
        self.prefix = ""

    def next(self) -> str:
        now_ms = time.time_ns() // 1_000_000
        with self.lock:
            if now_ms <= self.last_ms:
                # Same (or an earlier, after a clock step back) millisecond: keep order by incrementing.
                self.rand += 1
                if self.rand > _RANDOM_MAX:  # cannot happen in practice (2^79 ids in one ms); move on
                    self._start(self.last_ms + 1)
            else:
                self._start(now_ms)
            return self.prefix + _encode_random(self.rand)

    def take(self, count: int) -> tuple[str, int]:
        """Reserve ``count`` consecutive values of one millisecond: (its encoded time, the first value)."""
        now_ms = time.time_ns() // 1_000_000
        with self.lock:
            if now_ms <= self.last_ms:
                self.rand += 1
            else:
                self._start(now_ms)
            if self.rand + count - 1 > _RANDOM_MAX:  # as in next(): cannot happen in practice
                self._start(self.last_ms + 1)
            first = self.rand
            self.rand += count - 1
            return self.prefix, first

    def _start(self, ms: int) -> None:
        self.last_ms, self.rand, self.prefix = ms, _fresh_random(), _encode_time(ms)


_generator = _Generator()


def new_id(kind: str) -> str:
    """Return a new id for a record kind, e.g. ``new_id("fact") -> "F-01J..."``."""
    return f"{PREFIXES[kind]}-{_generator.next()}"


def new_ids(kind: str, count: int) -> list[str]:
    """``count`` new ids for a record kind in one call, in order (as ``count`` calls of :func:`new_id`)."""
    if count <= 0:
        return []
    time_part, value = _generator.take(count)
    end, pairs = value + count, _PAIRS
    ids: list[str] = []
    while value < end:  # the last two digits change on every id, the rest once per 1024 ids
        block_end = min(end, (value | 1023) + 1)
        head = f"{PREFIXES[kind]}-{time_part}{_encode_random(value)[:-2]}"
        low = value & 1023
        ids.extend(map(head.__add__, pairs[low : low + block_end - value]))  # in C, no bytecode per id
        value = block_end
    return ids


def _fresh_random() -> int:
    """80 random bits with the top bit clear, leaving room for increments within a millisecond."""
    return int.from_bytes(os.urandom(10), "big") >> 1


def is_id(value: str, kind: str | None = None) -> bool:
    """Whether ``value`` is a well-formed id (of ``kind`` when given)."""
    if not ID_PATTERN.match(value):
        return False
    return kind is None or value.startswith(PREFIXES[kind] + "-")
