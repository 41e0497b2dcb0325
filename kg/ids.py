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
}

ID_PATTERN = re.compile(r"^[A-Z]{1,3}-[0-9A-HJKMNP-TV-Z]{26}$")

_lock = threading.Lock()
_last_ms = -1
_last_rand = 0


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _next_value(now_ms: int) -> int:
    global _last_ms, _last_rand
    with _lock:
        if now_ms <= _last_ms:
            # Same (or an earlier, after a clock step back) millisecond: keep order by incrementing.
            now_ms = _last_ms
            _last_rand += 1
            if _last_rand > _RANDOM_MAX:  # 2^80 ids in one ms cannot happen; move to the next ms
                now_ms += 1
                _last_rand = int.from_bytes(os.urandom(10), "big") >> 1
        else:
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom for increments
        _last_ms = now_ms
        return (now_ms << _RANDOM_BITS) | _last_rand


def new_id(kind: str) -> str:
    """Return a new id for a record kind, e.g. ``new_id("fact") -> "F-01J..."``."""
    prefix = PREFIXES[kind]
    return f"{prefix}-{_encode(_next_value(time.time_ns() // 1_000_000))}"


def is_id(value: str, kind: str | None = None) -> bool:
    """Whether ``value`` is a well-formed id (of ``kind`` when given)."""
    if not ID_PATTERN.match(value):
        return False
    return kind is None or value.startswith(PREFIXES[kind] + "-")
