"""Dates said relative to a message, resolved against the message's time (English expressions only).

Understood: ``today``, ``tonight``, ``yesterday``, ``tomorrow``, ``last/next week|month|year|weekend``,
``this week|month|year``, ``last/next/on <weekday>``, ``N days|weeks|months|years ago``, ``in N days|weeks``,
``on 8 May``, ``on May 8th``, ``8 May 2023``, ``May 2023``, ``in 2022`` and ISO dates ``2023-05-08``, and
months in words: ``in/since/during/until March``, ``at the start/beginning/end of June``, ``in the middle
of May``, ``early/mid/late April``. A day and month without a year take the message's year; a month without
a year is the latest such month not after the message's (``in March`` said in October is this March, said in
February last March). Anything else is not a date (:func:`find_date` returns None) and the message time
stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from kg.text.dates import MONTH_NUMBERS, MONTH_OR_ABBREVIATION_PATTERN, WEEKDAY_NAMES

_WEEKDAYS = [name.lower() for name in WEEKDAY_NAMES]
_MONTH_RE = rf"({MONTH_OR_ABBREVIATION_PATTERN})"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2, "couple of": 2}  # fmt: skip
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("day_month", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH_RE}\b\.?(?:,?\s+(\d{{4}}))?", re.I)),
    ("month_day", re.compile(rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)),
    ("month_year", re.compile(rf"\b{_MONTH_RE}\s+(\d{{4}})\b", re.I)),
    (
        "ago",
        re.compile(
            r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of)"
            r"\s+(day|week|month|year)s?\s+ago\b",
            re.I,
        ),
    ),
    (
        "in_n",
        re.compile(
            r"\bin\s+(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month|year)s?\b", re.I
        ),
    ),
    (
        "relative",
        re.compile(r"\b(last|next|this|past)\s+(week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")\b", re.I),
    ),
    ("on_weekday", re.compile(r"\b(?:on\s+)(" + "|".join(_WEEKDAYS) + r")\b", re.I)),
    (
        "word",
        re.compile(
            r"\b(today|tonight|this morning|this afternoon|this evening|yesterday|tomorrow|"
            r"the day before yesterday)\b",
            re.I,
        ),
    ),
    ("in_year", re.compile(r"\b(?:in|since|back in)\s+((?:19|20)\d{2})\b", re.I)),
    (
        "part_of_month",
        re.compile(
            rf"\b(?:at|by|around|towards?|in|until|since) the (start|beginning|end|middle)"
            rf" of {_MONTH_RE}\b",
            re.I,
        ),
    ),
    ("early_month", re.compile(rf"\b(early|mid|late)[- ]{_MONTH_RE}\b", re.I)),
    ("in_month", re.compile(rf"\b(?:in|since|during|until|till|from|back in) {_MONTH_RE}\b(?!\s*\d)", re.I)),
]
_PART_DAY = {"start": 1, "beginning": 1, "early": 1, "middle": 15, "mid": 15, "late": 21}


@dataclass(frozen=True)
class FoundDate:
    """A date found in a sentence: when, the words that said it, and how precise (``day``, ``week``,
    ``month`` or ``year``)."""

    when: datetime
    text: str
    precision: str

    def label(self) -> str:
        """The date as text at its precision (``2023-05-08``, ``week of 2023-05-01``, ``2023-05``, ``2023``)."""
        if self.precision == "year":
            return f"{self.when:%Y}"
        if self.precision == "month":
            return f"{self.when:%Y-%m}"
        if self.precision == "week":
            return f"week of {self.when:%Y-%m-%d}"
        return f"{self.when:%Y-%m-%d}"


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _safe(year: int, month: int, day: int, base: datetime) -> datetime | None:
    try:
        return _midnight(base).replace(year=year, month=month, day=day)
    except ValueError:
        return None


def find_date(sentence: str, now: datetime) -> FoundDate | None:
    """The first date expression of ``sentence`` resolved against ``now`` (the message time), or None."""
    best: tuple[int, FoundDate] | None = None
    for kind, pattern in _PATTERNS:
        match = pattern.search(sentence)
        if match is None:
            continue
        found = _resolve(kind, match, now)
        if found is not None and (best is None or match.start() < best[0]):
            best = (match.start(), found)
    return best[1] if best else None


def _resolve(kind: str, m: re.Match[str], now: datetime) -> FoundDate | None:  # noqa: PLR0911
    text = m[0]
    if kind == "iso":
        when = _safe(int(m[1]), int(m[2]), int(m[3]), now)
        return FoundDate(when, text, "day") if when else None
    if kind in ("day_month", "month_day"):
        day, month = (m[1], m[2]) if kind == "day_month" else (m[2], m[1])
        year = int(m[3]) if m[3] else now.year
        when = _safe(year, MONTH_NUMBERS[month.lower().rstrip(".")], int(day), now)
        return FoundDate(when, text, "day") if when else None
    if kind == "month_year":
        when = _safe(int(m[2]), MONTH_NUMBERS[m[1].lower()], 1, now)
        return FoundDate(when, text, "month") if when else None
    if kind in ("ago", "in_n"):
        raw = m[1].lower()
        n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, 1)
        unit = m[2].lower()
        sign = -1 if kind == "ago" else 1
        if unit in ("month", "year"):  # calendar months: "two months ago" on 10 June is 10 April
            when = _shift_months(_midnight(now), sign * n * (12 if unit == "year" else 1))
        else:
            when = _midnight(now) + sign * timedelta(days=n * _UNIT_DAYS[unit])
        return FoundDate(when, text, "day" if unit == "day" else unit)
    if kind == "relative":
        return _relative(m[1].lower(), m[2].lower(), text, now)
    if kind == "on_weekday":
        target = _WEEKDAYS.index(m[1].lower())
        back = (now.weekday() - target) % 7  # the most recent such day (today counts)
        return FoundDate(_midnight(now) - timedelta(days=back), text, "day")
    if kind == "word":
        word = m[1].lower()
        offset = {"yesterday": -1, "tomorrow": 1, "the day before yesterday": -2}.get(word, 0)
        return FoundDate(_midnight(now) + timedelta(days=offset), text, "day")
    if kind in ("part_of_month", "early_month", "in_month"):
        return _month_part(m, kind, now)
    if kind == "in_year":
        return FoundDate(_midnight(now).replace(year=int(m[1]), month=1, day=1), text, "year")
    return None


def _shift_months(day: datetime, months: int) -> datetime:
    """``day`` moved by ``months`` calendar months (the day of month kept, or the month's last day)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    for last in (day.day, 30, 29, 28):
        moved = _safe(year, month + 1, min(day.day, last), day)
        if moved is not None:
            return moved
    return day


def _month_part(m: re.Match[str], kind: str, now: datetime) -> FoundDate | None:
    """``in March`` / ``at the end of June`` / ``mid-April``: the latest such month not after ``now``'s."""
    name = m[1] if kind == "in_month" else m[2]
    month = MONTH_NUMBERS[name.lower()]
    year = now.year if month <= now.month else now.year - 1
    first = _safe(year, month, 1, now)
    if first is None:
        return None
    if kind == "in_month":
        return FoundDate(first, m[0], "month")
    part = m[1].lower()
    if part == "end":
        following = first.replace(year=year + month // 12, month=month % 12 + 1)
        return FoundDate(following - timedelta(days=1), m[0], "day")
    return FoundDate(first.replace(day=_PART_DAY[part]), m[0], "day")


def _relative(which: str, unit: str, text: str, now: datetime) -> FoundDate:
    sign = {"last": -1, "past": -1, "next": 1, "this": 0}[which]
    day = _midnight(now)
    if unit in _WEEKDAYS:
        target = _WEEKDAYS.index(unit)
        if sign < 0:
            back = (day.weekday() - target) % 7 or 7
            return FoundDate(day - timedelta(days=back), text, "day")
        ahead = (target - day.weekday()) % 7 or (7 if sign > 0 else 0)
        return FoundDate(day + timedelta(days=ahead), text, "day")
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=sign)
        when = monday + timedelta(days=5) if unit == "weekend" else monday
        return FoundDate(when, text, "day" if unit == "weekend" else "week")
    if unit == "month":
        month = day.month + sign
        year = day.year + (month - 1) // 12
        return FoundDate(day.replace(year=year, month=(month - 1) % 12 + 1, day=1), text, "month")
    return FoundDate(day.replace(year=day.year + sign, month=1, day=1), text, "year")


__all__ = ["FoundDate", "find_date"]
