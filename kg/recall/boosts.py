"""Entity-, date- and time-aware boosts: what a query names that a similarity score cannot see.

A question names people ("When did Caroline go biking?") and sometimes dates ("What did Tim do in the week
before 16 November 2023?"). Neither helps BM25 or the embedding much: a name used in half of a
conversation's turns has an IDF of about 0 (and is left out of the BM25 query), and a date in the question
is not in the turn's text at all - it is the item's ``created_at``. So the item's bonus is::

    bonus  = entity_boost  if the item's subject - its first word, e.g. the speaker of "Caroline: ..." -
                           is one of the query's names (capitalised words that are not stopwords or month
                           names, possessive 's removed, case-sensitive); entity_boost * mention_share if the
                           item only mentions one (as a whole word) elsewhere
           + date_boost    if the item was created inside a date range the query names: "16 November 2023"
                           (the 8 days before it to the day after: "the week before ..."), "November 2023"
                           (that month, 3 days either side), "2023-11-16", or a month without a year ("in
                           June": the last June that began before the recall's ``now``, 3 days either side)
           + time_boost    if the query asks when ("When did ...", "What date ...", "How long ago ...") and
                           the item places something in time ("yesterday", "last Friday", "two weeks ago",
                           "next month", a month's name): the answer to a "when" is the item's date read
                           with what it says ("yesterday" on 8 May), so such an item is likelier the answer
                           than one that only mentions the same event

and the importance blend becomes ``min(1, 0.7 * (fused + bonus) + 0.3 * importance)``
(:func:`kg.recall.fusion.rank`).

Defaults (``RecallSettings``): entity and date boost 0.2, calibrated on LoCoMo's dev conversations together
with the decay strength; ``mention_share`` 0.5 and ``time_boost`` 0.15, chosen on the dev conversations and
checked on LoCoMo's three other conversations (docs/recall-scoring.md, "Subjects, months and when-questions").
A candidate must have been found by BM25 or by vector to be boosted: a boost never brings in an item that
neither branch found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from kg.faces import LazyPatterns
from kg.models import MemoryItem, to_utc
from kg.text.dates import MONTH_NAMES, MONTH_PATTERN, MONTHS, WEEKDAY_NAMES
from kg.text.stopwords import STOPWORDS

_MONTHS = MONTHS
_MONTH = MONTH_PATTERN
#: The date, name and time patterns, compiled on first use (:func:`_compiled`; also module attributes, PEP 562
#: below): the substring tests before them mean a query without a capital, a digit or a month name runs none of
#: them, and compiling the month alternations case-insensitively cost about 10 M instructions of a cold recall.
_LAZY_PATTERNS = LazyPatterns(
    __name__,
    {
        "_DAY_MONTH_YEAR": (rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})\b", re.IGNORECASE),
        "_MONTH_DAY_YEAR": (rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE),
        "_MONTH_YEAR": (rf"\b({_MONTH}),?\s+(\d{{4}})\b", re.IGNORECASE),
        "_ISO": (r"\b(\d{4})-(\d{2})-(\d{2})\b", 0),
        "_NAME": (r"\b[A-Z][\w-]*(?:'s)?", 0),
    },
)
#: Days before a named day that still count ("the week before 16 November"), and after it.
DAYS_BEFORE, DAYS_AFTER = 8, 2
#: Days either side of a named month.
MONTH_MARGIN = 3


#: ASCII upper-case letters: a name starts with one (:data:`_NAME`).
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _may_name(text: str) -> bool:
    """False only when no :data:`_NAME` can match (no ASCII capital). Substring tests cost a few milliseconds for
    10 MB, where a regex that starts with ``\\b`` tries every position (~0.3 s a pattern)."""
    return any(letter in text for letter in _UPPER)


def _may_date(text: str) -> tuple[bool, bool]:
    """Whether a month name (case-insensitive) and whether a digit may occur in ``text``: False only when none can.

    Exact for ASCII text (:meth:`str.isascii` is constant time); any other text says True to both, and the
    patterns decide (their ``\\d`` and case-insensitive matching have Unicode cases a substring test would miss)."""
    if not text.isascii():
        return True, True
    lower = text.lower()
    return any(month in lower for month in _MONTHS), any(digit in text for digit in "0123456789")


def query_entities(text: str) -> list[str]:
    """Capitalised words of the query that are not stopwords or month names, without a possessive 's."""
    if not _may_name(text):
        return []
    names = (m.removesuffix("'s") for m in _compiled("_NAME").findall(text))
    return list(dict.fromkeys(n for n in names if n.lower() not in STOPWORDS and n.lower() not in _MONTHS))


def _number(month: str) -> int:
    """The number of a month name the patterns matched. They match case-insensitively as :mod:`re` does, where a
    long s (U+017F) is an s and a dotless i (U+0131) an i, which :meth:`str.lower` leaves as they are."""
    found = _MONTHS.get(month.lower())
    if found is None:
        found = next(number for name, number in _MONTHS.items() if re.fullmatch(name, month, re.IGNORECASE))
    return found


def _day(year: str, month: str, day: str) -> tuple[datetime, datetime] | None:
    try:
        named = datetime(int(year), int(month) if month.isdigit() else _number(month), int(day), tzinfo=UTC)
    except ValueError:  # 31 February and the like: no range
        return None
    return named - timedelta(days=DAYS_BEFORE), named + timedelta(days=DAYS_AFTER)


def query_dates(text: str) -> list[tuple[datetime, datetime]]:
    """The date ranges (UTC) the query names: days, months of a year and ISO dates."""
    named, digit = _may_date(text)
    if not digit:  # every pattern holds a year
        return []
    days = [_day(y, m, d) for d, m, y in _compiled("_DAY_MONTH_YEAR").findall(text)] if named else []
    days += [_day(y, m, d) for m, d, y in _compiled("_MONTH_DAY_YEAR").findall(text)] if named else []
    days += [_day(y, m, d) for y, m, d in _compiled("_ISO").findall(text)] if "-" in text else []
    ranges = [r for r in days if r is not None]
    if ranges or not named:
        return ranges
    for month, year in _compiled("_MONTH_YEAR").findall(text):
        start = datetime(int(year), _number(month), 1, tzinfo=UTC)
        end = (start + timedelta(days=32)).replace(day=1)
        ranges.append((start - timedelta(days=MONTH_MARGIN), end + timedelta(days=MONTH_MARGIN)))
    return ranges


def without_dates(text: str) -> str:
    """``text`` with the dates :func:`query_dates` reads removed (they are matched by date, not by word)."""
    named, digit = _may_date(text)
    if not digit:
        return text
    # a substitution writes a space: it makes no month name, digit or "-" that was not there before
    steps = (("_DAY_MONTH_YEAR", named), ("_MONTH_DAY_YEAR", named), ("_ISO", "-" in text), ("_MONTH_YEAR", named))
    for pattern, needed in steps:
        if needed:
            text = _compiled(pattern).sub(" ", text)
    return text


#: A question that asks when something happened, or how long ago.
_ASKS_WHEN = re.compile(r"^\W*(?:when|(?:what|which) (?:date|day|year|month|time)|how long ago)\b", re.IGNORECASE)
_WEEKDAY = "|".join(WEEKDAY_NAMES).lower()
_UNIT = rf"week|weekend|month|year|night|summer|winter|spring|fall|autumn|{_WEEKDAY}"
_MONTH_NAMES = MONTH_NAMES
#: Words that place an event in time relative to when it was said, or name its month (capitalised only: "may"
#: the verb is not May).
_LAZY_PATTERNS["TIME_WORDS"] = (
    rf"\b(?:yesterday|today|tomorrow|tonight|ago|(?:last|next|this|past|coming)\s+(?:{_UNIT})|on\s+(?:{_WEEKDAY}))\b"
    rf"|\b(?-i:{'|'.join(_MONTH_NAMES)})\b",
    re.IGNORECASE,
)
#: Every match of TIME_WORDS contains one of these (lower-cased) or a month name: a cheap test first.
_TIME_PARTS = (
    "day",
    "week",
    "month",
    "year",
    "night",
    "summer",
    "winter",
    "spring",
    "fall",
    "autumn",
    "tomorrow",
    "ago",
)


def places_in_time(content: str) -> bool:
    """Whether ``content`` places an event in time (:data:`TIME_WORDS`: ``yesterday``, ``two weeks ago``,
    ``last Friday``, ``next month``, ``on Saturday``, ``in June`` ...). Substring tests first, the regular
    expression only for the items that pass them (it costs ~10x more)."""
    lower = content.lower()
    if not any(part in lower for part in _TIME_PARTS) and not any(m in content for m in _MONTH_NAMES):
        return False
    return _compiled("TIME_WORDS").search(content) is not None


_LAZY_PATTERNS["_BARE_MONTH"] = (rf"\b(?:in|during|since|by)\s+({_MONTH})\b(?!,?\s+\d)", re.IGNORECASE)
if TYPE_CHECKING:
    _DAY_MONTH_YEAR: re.Pattern[str]
    _MONTH_DAY_YEAR: re.Pattern[str]
    _MONTH_YEAR: re.Pattern[str]
    _ISO: re.Pattern[str]
    _NAME: re.Pattern[str]
    TIME_WORDS: re.Pattern[str]
    _BARE_MONTH: re.Pattern[str]
else:
    __getattr__ = _LAZY_PATTERNS.module_getattr

#: The pattern ``name`` of :data:`_LAZY_PATTERNS`, compiled once (then a plain module attribute).
_compiled = _LAZY_PATTERNS.compiled


def asks_when(text: str) -> bool:
    """Whether ``text`` asks when (or how long ago) something happened."""
    return _ASKS_WHEN.search(text) is not None


def bare_months(text: str, now: datetime) -> list[tuple[datetime, datetime]]:
    """The months the query names without a year ("in June"): for each, the last such month that began at or
    before ``now`` (UTC), 3 days either side."""
    now = to_utc(now)
    ranges: list[tuple[datetime, datetime]] = []
    if not _may_date(text)[0]:
        return ranges
    for month in _compiled("_BARE_MONTH").findall(text):
        number = _number(month)
        start = datetime(now.year if number <= now.month else now.year - 1, number, 1, tzinfo=UTC)
        end = (start + timedelta(days=32)).replace(day=1)
        ranges.append((start - timedelta(days=MONTH_MARGIN), end + timedelta(days=MONTH_MARGIN)))
    return ranges


def subject(content: str) -> str:
    """The item's first word without a trailing ``:`` or ``,`` or possessive ``'s`` (a turn's speaker)."""
    head = content.split(maxsplit=1)
    return head[0].rstrip(":,").removesuffix("'s") if head else ""


def bonuses(text: str, items: Mapping[str, MemoryItem], *, entity_boost: float, date_boost: float,
            mention_share: float = 1.0, time_boost: float = 0.0,
            now: datetime | None = None) -> dict[str, float]:  # fmt: skip
    """uid -> what the query's names, dates and "when" add to the item's fused score (only non-zero ones).

    ``now`` (the recall's time) places a month named without a year; without it such a month adds nothing.
    """
    names = query_entities(text) if entity_boost > 0 else []
    ranges = query_dates(text) if date_boost > 0 else []
    if date_boost > 0 and not ranges and now is not None:
        ranges = bare_months(text, now)
    when = time_boost > 0 and asks_when(text)
    if not names and not ranges and not when:
        return {}
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b") if names else None
    found: dict[str, float] = {}
    for uid, item in items.items():
        bonus = 0.0
        if pattern is not None:
            if subject(item.content) in names:
                bonus = entity_boost
            elif pattern.search(item.content):
                bonus = entity_boost * mention_share
        created = to_utc(item.created_at)
        if any(start <= created <= end for start, end in ranges):
            bonus += date_boost
        if when and places_in_time(item.content):
            bonus += time_boost
        if bonus:
            found[uid] = bonus
    return found


__all__ = [
    "TIME_WORDS",
    "asks_when",
    "bare_months",
    "bonuses",
    "places_in_time",
    "query_dates",
    "query_entities",
    "subject",
    "without_dates",
]
